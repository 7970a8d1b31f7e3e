"""pmocz/nbody-jax nbody.py: `do_simulation`, 100 leapfrog steps (a `lax.fori_loop`) of its
360 particles under gravity, from its own initial conditions (seed 17).

    approxcc bench/jax_corpus/nbody_leapfrog.py -o build/bench-jax/nbody_leapfrog

loop_perforate v runs the first ceil(100 / v) steps of the same dt: the state at t = 1/v,
not at t = 1 (a perforated integrator, not a coarser one).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from _corpus import stub_module, use

from approxcc import approx

use("nbody_leapfrog")
stub_module("jaxopt", ScipyMinimize=None)   # nbody.py's inverse problem only
import nbody  # noqa: E402


def initial_conditions(n: int, seed: int = 17) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """nbody.py main()'s: total mass 20, Gaussian positions and velocities, no net momentum."""
    rng = np.random.RandomState(seed)
    mass = 20.0 * np.ones((n, 1)) / n
    pos, vel = rng.randn(n, 3), rng.randn(n, 3)
    vel -= np.mean(mass * vel, 0) / np.mean(mass)
    return mass.astype(np.float32), pos.astype(np.float32), vel.astype(np.float32)


MASS, POS, VEL = initial_conditions(nbody.N)


@approx.knob("nbody_steps", transform="loop_perforate", values=[1, 2, 4])
@approx.knob("nbody_precision", transform="precision", values=["f32", "bf16"])
def simulate(params: dict[str, Any], pos: jax.Array, vel: jax.Array
             ) -> tuple[jax.Array, jax.Array]:
    """Positions and velocities after nbody.Nt steps of nbody.dt."""
    pos, vel, _, _ = nbody.do_simulation(pos, vel, params["mass"], 0.0)
    return pos, vel


APPROX_EXAMPLE_ARGS = {"simulate": ({"mass": MASS}, POS, VEL)}
