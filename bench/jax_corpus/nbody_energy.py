"""pmocz/nbody-jax nbody.py: `get_energy`, the kinetic and potential energy of 1024
particles (the potential a sum over the upper triangle of their 1024 x 1024 pairs).

    approxcc bench/jax_corpus/nbody_energy.py -o build/bench-jax/nbody_energy
"""

from __future__ import annotations

from typing import Any

import jax
from _corpus import stub_module, use
from nbody_leapfrog import initial_conditions

from approxcc import approx

use("nbody_energy")
stub_module("jaxopt", ScipyMinimize=None)   # nbody.py's inverse problem only
import nbody  # noqa: E402

MASS, POS, VEL = initial_conditions(1024)


@approx.knob("energy_precision", transform="precision", values=["f32", "bf16", "f16"])
def energy(params: dict[str, Any], pos: jax.Array, vel: jax.Array
           ) -> tuple[jax.Array, jax.Array]:
    """(kinetic, potential) energy."""
    return nbody.get_energy(pos, vel, params["mass"])


APPROX_EXAMPLE_ARGS = {"energy": ({"mass": MASS}, POS, VEL)}
