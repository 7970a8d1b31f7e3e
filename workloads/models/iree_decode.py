"""The decode steps of a ``DecoderModel`` exported with ``jax.export`` and run by IREE.

Each step (prefill, decode) is one StableHLO module whose arguments are the flattened
``(params, cache, tokens|token, length|pos)``: weights are arguments, never constants.
``iree-compile`` (the wheel's executable, run as a job) turns it into a vmfb cached under
``~/.cache/approxcc/models`` keyed by model, step, a hash of the module text and the flags.
Weights are uploaded to the device once; the cache stays on the device between steps.

What makes low-precision weights fast or slow here (IREE 3.13, llvm-cpu, issue #8):
- IREE's default dispatch formation does not fuse the widening ``convert`` of a weight
  *argument* (bf16/f16/int8 -> f32) into the matvec that consumes it: it becomes an
  elementwise dispatch that writes a float32 copy of the whole weight on every call, then
  the matvec reads that copy (3.5x the bytes of f32). ``FUSION_FLAGS`` fuses it.
- With fusion, a widening matvec is compute-bound on this CPU (x86 without avx512-fp16;
  IREE does not use ``vdpbf16ps`` for it): bf16/f16 run at ~6-7 GB/s of weights against
  ~16-21 GB/s for f32, so they are slower than f32 per token, not faster. int8 (group 64)
  reads a quarter of the bytes and ends up about as fast as f32.
- Layers are stacked (``weights.stack_layers``) by default: 11 weight arguments instead of
  272 (SmolLM2 f32) cut a few percent (~3 ms) of a step.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import iree.runtime as ireert
import jax
import ml_dtypes
import numpy as np
from iree.compiler.tools.binaries import find_tool
from iree.runtime.version import VERSION as IREE_VERSION

from approxcc.ml.build import FUSION_FLAGS

from .decode import DEFAULT_MAX_LEN, DecoderModel, pad_prompt, step_functions
from .files import models_cache
from .weights import linear_mode, stack_layers

BASE_CPU_FLAGS = (
    "--iree-input-type=stablehlo",
    "--iree-hal-target-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
)
# FUSION_FLAGS (approxcc.ml.build) also fuse the transpose a ``dot_general`` needs of a
# weight argument into the matvec.
CPU_FLAGS = BASE_CPU_FLAGS + FUSION_FLAGS
# How ``weights.linear`` is traced for IREE. With FUSION_FLAGS "dot" and "reduce" run
# f32/bf16/f16 within noise of each other (f32 "dot" 0-10% faster), but int8 "dot" still
# materialises a dequantised, transposed float32 weight a call (a dispatch of its own, 10x
# slower); without FUSION_FLAGS "dot" transposes every weight argument a call.
DEFAULT_MODE = "reduce"
PREFILL_LEN = 64


def iree_compile_path() -> str:
    """The ``iree-compile`` of the installed ``iree-base-compiler`` wheel."""
    return find_tool("iree-compile")


def _spec(leaf: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(np.shape(leaf), leaf.dtype)


def export_mlir(fn: Any, *args: Any, mode: str = "reduce") -> str:
    """StableHLO text of ``fn`` exported for the shapes/dtypes of ``args`` (pytrees), with
    ``weights.linear`` traced in ``mode`` ("reduce" or "dot")."""
    specs = jax.tree_util.tree_map(_spec, args)
    with linear_mode(mode):
        return jax.export.export(jax.jit(fn))(*specs).mlir_module()


@dataclass(frozen=True)
class Compiled:
    vmfb: Path
    compile_s: float  # 0.0 when read from the cache


def compile_mlir(mlir: str, tag: str, flags: tuple[str, ...] = CPU_FLAGS) -> Compiled:
    """Compile StableHLO text to a vmfb once; later calls with the same text and flags hit
    the cache."""
    key = hashlib.sha256("\0".join([mlir, *flags, IREE_VERSION]).encode())
    vmfb = models_cache() / f"{tag}-{key.hexdigest()[:16]}.vmfb"
    if vmfb.is_file():
        return Compiled(vmfb, 0.0)
    src = vmfb.with_suffix(".mlir")
    src.write_text(mlir)
    tmp = vmfb.with_suffix(".tmp")
    t0 = time.perf_counter()
    done = subprocess.run([iree_compile_path(), *flags, str(src), "-o", str(tmp)],
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    src.unlink()
    if done.returncode != 0:
        raise RuntimeError(f"iree-compile failed for {tag}:\n{done.stderr[-4000:]}")
    tmp.replace(vmfb)
    return Compiled(vmfb, elapsed)


def _to_device(device: ireert.HalDevice, leaf: Any) -> ireert.DeviceArray:
    arr = np.ascontiguousarray(np.asarray(leaf))
    if arr.dtype == ml_dtypes.bfloat16:  # numpy has no bf16: upload the bits, typed bf16
        view = device.allocator.allocate_buffer_copy(
            memory_type=ireert.MemoryType.DEVICE_LOCAL,
            allowed_usage=ireert.BufferUsage.DEFAULT,
            device=device,
            buffer=arr.view(np.uint16),
            element_type=ireert.HalElementType.BFLOAT_16,
        )
        return ireert.DeviceArray(device, view, override_dtype=np.uint16)
    return ireert.asdevicearray(device, arr)


class _Step:
    """One compiled step function bound to a runtime context."""

    def __init__(self, config: ireert.Config, compiled: Compiled) -> None:
        self.context = ireert.SystemContext(config=config)
        module = ireert.VmModule.mmap(config.vm_instance, str(compiled.vmfb))
        self.context.add_vm_module(module)
        self.fn = self.context.modules[module.name]["main"]

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


class IreeRunner:
    """``decode.Runner`` over IREE (llvm-cpu by default)."""

    def __init__(
        self,
        model: DecoderModel,
        max_len: int = DEFAULT_MAX_LEN,
        prefill_len: int = PREFILL_LEN,
        variant: str = "f32",
        driver: str = "local-task",
        flags: tuple[str, ...] = CPU_FLAGS,
        mode: str = DEFAULT_MODE,
        stack: bool = True,
    ) -> None:
        if stack:  # one argument a weight kind instead of one a layer and kind
            model = model.with_params(stack_layers(model.params))
        self.model = model
        self.max_len = max_len
        self.prefill_len = prefill_len
        prefill, decode_step = step_functions(model.arch, model.config)
        cache = model.new_cache(max_len)
        zero = np.int32(0)
        self.mode = mode
        tag = f"{model.name}-{variant}-{self.mode}{'-stacked' if stack else ''}-L{max_len}"
        self.compiled = {
            "prefill": compile_mlir(export_mlir(prefill, model.params, cache,
                                                np.zeros(prefill_len, np.int32), zero,
                                                mode=self.mode),
                                    f"{tag}-prefill{prefill_len}", flags),
            "decode": compile_mlir(export_mlir(decode_step, model.params, cache, zero, zero,
                                               mode=self.mode),
                                   f"{tag}-decode", flags),
        }
        self.config = ireert.Config(driver)
        self._prefill = _Step(self.config, self.compiled["prefill"])
        self._decode = _Step(self.config, self.compiled["decode"])
        device = self.config.device
        self.weights = [_to_device(device, leaf) for leaf in jax.tree_util.tree_leaves(
            model.params)]
        self._empty_cache = [np.asarray(c) for c in jax.tree_util.tree_leaves(cache)]
        self.cache: list[Any] = []

    @property
    def compile_s(self) -> float:
        return sum(c.compile_s for c in self.compiled.values())

    def prefill(self, ids: list[int]) -> np.ndarray:
        if len(ids) > self.prefill_len:
            raise ValueError(f"prompt of {len(ids)} tokens exceeds prefill_len "
                             f"{self.prefill_len}")
        tokens = pad_prompt(ids, self.prefill_len)
        logits, *self.cache = self._prefill(*self.weights, *self._empty_cache, tokens,
                                            np.int32(len(ids)))
        return np.asarray(logits.to_host())

    def decode(self, token: int, pos: int) -> np.ndarray:
        logits, *self.cache = self._decode(*self.weights, *self.cache, np.int32(token),
                                           np.int32(pos))
        return np.asarray(logits.to_host())
