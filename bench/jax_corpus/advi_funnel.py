"""google/jax/examples/advi.py: its funnel density (`funnel_log_density`, exponentiated as
its plot does) on a 512 x 512 grid of points, and its Monte Carlo ELBO (`batch_elbo` of 4096
samples) of a diagonal Gaussian at fixed variational parameters: elementwise exp/log/normal
log-densities and threefry random numbers.

    approxcc bench/jax_corpus/advi_funnel.py -o build/bench-jax/advi_funnel
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from _corpus import use

from approxcc import approx

use("advi_funnel")
from examples import advi  # noqa: E402

TICKS, SAMPLES = 512, 4096

# the grid of its plot (x in (-2, 2), y in (-4, 2)) as 262,144 input points
_x, _y = np.meshgrid(np.linspace(-2, 2, TICKS), np.linspace(-4, 2, TICKS))
POINTS = np.stack([_x.ravel(), _y.ravel()], axis=1).astype(np.float32)
# the variational parameters its optimisation starts from, moved off zero
PARAMS = {"mean": np.array([-1.0, -1.0], np.float32),
          "log_std": np.array([-0.5, -0.5], np.float32)}


@approx.knob("funnel_precision", transform="precision", values=["f32", "bf16", "f16"])
def funnel(params: dict[str, Any], points: jax.Array, seed: jax.Array
           ) -> tuple[jax.Array, jax.Array]:
    """(the density at each point, the ELBO estimate from the samples of key `seed`).

    The seed is an input, not a constant: IREE 3.13 folds threefry numbers of a constant key
    into a module global whose copy to the output fails at run time ("indirect buffer
    reference slot 0 is out range", docs/ml-corpus.md)."""
    density = jnp.exp(jax.vmap(advi.funnel_log_density)(points))
    elbo = advi.batch_elbo(advi.funnel_log_density, jax.random.PRNGKey(seed),
                           (params["mean"], params["log_std"]), SAMPLES)
    return density, elbo


APPROX_EXAMPLE_ARGS = {"funnel": (PARAMS, POINTS, np.int32(0))}
