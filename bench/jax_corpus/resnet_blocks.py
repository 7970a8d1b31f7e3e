"""google/jax/examples/resnet50.py (stax): its ConvBlock and IdentityBlock in a shorter stack
than ResNet50 (the stem, two stages of a ConvBlock and an IdentityBlock, average pooling and
a classifier), initialised by stax, on 4 images of 64 x 64 (HWCN, as ResNet50 takes them).

    approxcc bench/jax_corpus/resnet_blocks.py -o build/bench-jax/resnet_blocks
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from _corpus import use
from jax.example_libraries import stax

from approxcc import approx

use("resnet_blocks")
from examples.resnet50 import ConvBlock, IdentityBlock  # noqa: E402

SIZE, BATCH, CLASSES = 64, 4, 10

# ResNet50's stem and first two stages, one IdentityBlock each (ResNet50: 2 and 3): 64 x 64
# -> 32 (stem) -> 15 (max pool) -> 15 -> 8, pooled over the last 8 x 8
INIT, APPLY = stax.serial(
    stax.GeneralConv(("HWCN", "OIHW", "NHWC"), 64, (7, 7), (2, 2), "SAME"),
    stax.BatchNorm(), stax.Relu, stax.MaxPool((3, 3), strides=(2, 2)),
    ConvBlock(3, [64, 64, 256], strides=(1, 1)),
    IdentityBlock(3, [64, 64]),
    ConvBlock(3, [128, 128, 512]),
    IdentityBlock(3, [128, 128]),
    stax.AvgPool((8, 8)), stax.Flatten, stax.Dense(CLASSES), stax.LogSoftmax)

_, PARAMS = INIT(jax.random.PRNGKey(0), (SIZE, SIZE, 3, BATCH))
PARAMS = jax.tree.map(np.asarray, PARAMS)
IMAGES = np.random.default_rng(0).random((SIZE, SIZE, 3, BATCH), dtype=np.float32)


@approx.knob("resnet_quant", transform="quantize", values=["none", "int8"])
@approx.knob("resnet_precision", transform="precision", values=["f32", "bf16"])
def resnet(params: Any, images: jax.Array) -> jax.Array:
    """Log-probabilities of 10 classes per image."""
    return APPLY(params, images)


APPROX_EXAMPLE_ARGS = {"resnet": (PARAMS, IMAGES)}
