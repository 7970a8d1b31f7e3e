"""google/jax/examples/control.py: `lqr_predict`, the optimal trajectory of a time-varying
linear-quadratic regulator (a backward Riccati recursion and a forward pass, two
`lax.fori_loop`s, each step solving a 4 x 4 system with `jnp.linalg.solve`), on a random
problem of horizon 64 with 8 states and 4 controls.

    approxcc bench/jax_corpus/control_lqr.py -o build/bench-jax/control_lqr

jax lowers `jnp.linalg.solve` on the CPU to LAPACK (`stablehlo.custom_call`), which IREE
cannot compile: the build fails, and the bench reports it (docs/ml-corpus.md).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from _corpus import use

from approxcc import approx

use("control_lqr")
from examples import control  # noqa: E402

T, STATES, CONTROLS = 64, 8, 4

_rng = np.random.default_rng(0)


def _spd(n: int) -> np.ndarray:
    """T + 1 random symmetric positive definite n x n cost matrices."""
    a = _rng.standard_normal((T + 1, n, n)) / np.sqrt(n)
    return (a @ np.swapaxes(a, -1, -2) + np.eye(n)).astype(np.float32)


SPEC = control.LqrSpec(
    Q=_spd(STATES), q=_rng.standard_normal((T + 1, STATES)).astype(np.float32),
    R=_spd(CONTROLS)[:T], r=_rng.standard_normal((T, CONTROLS)).astype(np.float32),
    M=np.zeros((T, STATES, CONTROLS), np.float32),
    A=(np.eye(STATES) + 0.1 * _rng.standard_normal((T, STATES, STATES))).astype(np.float32),
    B=(0.3 * _rng.standard_normal((T, STATES, CONTROLS))).astype(np.float32))
X0 = _rng.standard_normal(STATES).astype(np.float32)


@approx.knob("lqr_steps", transform="loop_perforate", values=[1, 2])
def lqr(spec: Any, x0: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The states (T + 1, 8) and controls (T, 4) of the LQR's optimal trajectory from x0."""
    return control.lqr_predict(spec, x0)


APPROX_EXAMPLE_ARGS = {"lqr": (SPEC, X0)}
