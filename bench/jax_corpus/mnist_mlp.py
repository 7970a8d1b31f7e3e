"""google/jax/examples/mnist_classifier_fromscratch.py: its `predict` (an MLP of tanh layers
and a log-softmax) over its own `init_random_params`, on a batch of random images.

    approxcc bench/jax_corpus/mnist_mlp.py -o build/bench-jax/mnist_mlp
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from _corpus import use

from approxcc import approx

use("mnist_mlp")
from examples import mnist_classifier_fromscratch as mnist  # noqa: E402

LAYER_SIZES = [784, 1024, 1024, 10]   # the example's own
BATCH = 128

# init_random_params draws float64 from numpy.random.RandomState(0); the weights are float32
PARAMS = {"layers": [(w.astype(np.float32), b.astype(np.float32)) for w, b in
                     mnist.init_random_params(0.1, LAYER_SIZES, np.random.RandomState(0))]}
IMAGES = np.random.default_rng(0).random((BATCH, LAYER_SIZES[0]), dtype=np.float32)


@approx.knob("mlp_skip", transform="task_skipping", values=[0, (1,)])
@approx.knob("mlp_quant", transform="quantize", values=["none", "int8", "w8a8"])
@approx.knob("mlp_precision", transform="precision", values=["f32", "bf16"])
def predict(params: dict[str, Any], images: jax.Array) -> jax.Array:
    """Log-probabilities of the 10 classes; (1,) skips the 1024 x 1024 hidden layer."""
    return mnist.predict(params["layers"], images)


APPROX_EXAMPLE_ARGS = {"predict": (PARAMS, IMAGES)}
