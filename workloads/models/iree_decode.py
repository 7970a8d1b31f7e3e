"""The prefill and decode steps of a ``DecoderModel`` exported with ``jax.export``, run by IREE.

Each step is one StableHLO module whose arguments are the flattened ``(cache,
tokens|token, length|pos)``; the weights are immutable globals read from parameters
(``iree_parameters``), so IREE hoists whatever it derives from a weight alone (transposes,
data-tiling layouts) into the module initializer instead of redoing it on every call.
``iree-compile`` (the wheel's executable, run as a job) turns each into a vmfb cached under
``~/.cache/approxcc/models`` keyed by model, step, a hash of the module text and the flags
(and found again without exporting while the code and the shapes stay the same).
Both steps share one runtime context and one parameter module; the cache stays on the
device between steps.

The two steps are compiled differently because they are different problems:
- prefill is matrix-matrix (the whole prompt at once, attending to itself under a causal
  mask): ``weights.linear`` traced as ``dot_general`` and IREE's data tiling with its mmt4d
  ukernels (``PREFILL_FLAGS``). It fills the cache with every token but the last, and the
  last goes through a decode step: the logits of one position are a matrix-vector product
  over the output head, which the prefill flags leave as a vecmat over a transposed copy of
  the head made at load (Gemma 3's 262144x640: 671 MB more, 16% of a 128-token prefill),
  while the decode step has it already;
- decode is matrix-vector, bound by the bytes of weights read per token. float32, bf16 and
  f16 weights and int8 x int8 -> int32 products (W8A8, and int8 weights against two-digit
  int8 activations) take ``dot_general`` (data-tiled; the packing of a weight runs once in
  the initializer); weight-only int8/int4 codes are widened inside a fused
  multiply-and-reduce (``decode_mode``), since a dequantized ``dot_general`` operand would
  be hoisted into a float32 copy of the weight.
``approxcc.ml.iree.FUSION_FLAGS`` keeps the widening ``convert`` of a narrow weight inside
the matvec rather than in a dispatch of its own that writes a float32 copy per call.

What llvm-cpu makes of a widening matvec depends on the weight's layout. Over ``(out, in)``
rows it tiles 32 rows x 16 columns and reduces each tile along its rows, transposing it
with ~130 ``vpermt2ps`` and spilling ~340 registers a step: about 1 GB/s of int8 codes,
slower than float32's data-tiled vecmat. Over tiles ``(out/32, in, 32)``
(``Int8Weight.block``) the 32 outputs of a tile sit side by side and the step is
``vpmovsxbd``/``vcvtdq2ps``/``vfmadd231ps`` against a broadcast input, near the bandwidth
floor (``bench/ml_matvec.py`` measures both and dumps the assembly).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import iree.runtime as ireert
import jax
import numpy as np
from iree.compiler.tools.binaries import find_tool
from iree.runtime.version import VERSION as IREE_VERSION

from approxcc.ml.iree import CPU_MATMUL_FLAGS, FUSION_FLAGS

from .decode import DEFAULT_MAX_LEN, DecoderModel, pad_prompt, step_functions
from .files import models_cache
from .iree_parameters import as_parameters, parameters_module
from .weights import Int4Weight, Int8Weight, Params, Quantized, linear_mode, stack_layers

BASE_CPU_FLAGS = (
    "--iree-input-type=stablehlo",
    "--iree-hal-target-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
)
# Data tiling (packed layouts, mmt4d ukernels: VNNI for int8, AVX512-BF16 for bf16); weights
# being parameters, the packing of a weight is hoisted into the initializer.
UKERNELS = "--iree-llvmcpu-enable-ukernels=all"
# Per ``linear`` mode of the decode step. "reduce" needs FUSION_FLAGS (the widening of a
# narrow weight fused into its matvec), and nothing to hoist. "dot" takes data tiling from
# the global-optimization phase: IREE 3.13's default path (--iree-opt-data-tiling) crashes in
# MaterializeDeviceEncoding on a whole decode step, and without data tiling its vecmat on a
# transposed weight is slower than the fused reduction.
MODE_FLAGS = {
    # No const-expr hoisting: it would unpack int4 codes into an int8 copy at load time.
    "reduce": BASE_CPU_FLAGS + FUSION_FLAGS + ("--iree-opt-const-expr-hoisting=false",),
    "dot": BASE_CPU_FLAGS + ("--iree-global-opt-data-tiling", UKERNELS),
}
# Prefill: the flags of approxcc's matrix-matrix variants (data tiling on IREE's default
# path, large workgroups). Not FUSION_FLAGS: prefill widens nothing per call, and with them a
# norm's reduction over a 64-token tile exceeds the llvm-cpu stack limit (36 KiB of 32).
PREFILL_FLAGS = BASE_CPU_FLAGS + CPU_MATMUL_FLAGS["matrix"]
PREFILL_MODE = "dot"
PREFILL_LEN = 64


def decode_mode(params: Params) -> str:
    """How ``weights.linear`` is traced for the decode step of ``params``: "reduce" when a
    weight-only quantized matrix must be widened inside the product, else "dot"."""
    leaves = jax.tree_util.tree_leaves(params, is_leaf=lambda a: isinstance(a, Quantized))
    weight_only = any(isinstance(a, Int4Weight) or (isinstance(a, Int8Weight)
                                                   and a.activations == "float")
                      for a in leaves)
    return "reduce" if weight_only else "dot"


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
        # keep_unused: every weight stays an argument (``as_parameters`` counts them) even
        # when a step does not read it (the cache-filling prefill and the output head)
        return jax.export.export(jax.jit(fn, keep_unused=True))(*specs).mlir_module()


@dataclass(frozen=True)
class Compiled:
    vmfb: Path
    compile_s: float  # 0.0 when read from the cache


_LOCATION_LINE = re.compile(r"^#loc\d* = .*$\n?", re.MULTILINE)
_LOCATION_REF = re.compile(r" loc\(#loc\d*\)")


def _without_locations(mlir: str) -> str:
    """The module's code alone: jax's locations name source lines, so an edit elsewhere in a
    traced file would otherwise invalidate every cached vmfb."""
    return _LOCATION_REF.sub("", _LOCATION_LINE.sub("", mlir))


def compile_mlir(mlir: str, tag: str, flags: tuple[str, ...]) -> Compiled:
    """Compile StableHLO text to a vmfb once; later calls with the same text and flags hit
    the cache."""
    key = hashlib.sha256("\0".join([_without_locations(mlir), *flags,
                                    IREE_VERSION]).encode())
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


_TRACED_CODE = sorted(Path(__file__).parent.glob("*.py"))


def _step_vmfb(model: DecoderModel, step: str, fn: Any, args: tuple[Any, ...], mode: str,
               tag: str, flags: tuple[str, ...]) -> Compiled:
    """``compile_mlir`` of ``fn`` exported for ``args`` with weights as parameters, without
    exporting again (seconds of tracing a model) when nothing the text depends on changed:
    this package's code, jax's and IREE's versions, the model's config, the arguments' shapes
    and the flags. A ``.trace`` file names the vmfb these inputs gave last time."""
    inputs = hashlib.sha256()
    for source in _TRACED_CODE:
        inputs.update(source.read_bytes())
    specs = [(np.shape(a), str(a.dtype)) for a in jax.tree_util.tree_leaves(args)]
    inputs.update(repr((jax.__version__, IREE_VERSION, model.arch.__name__, model.config, step,
                        mode, jax.tree_util.tree_structure(args), specs, flags)).encode())
    trace = models_cache() / f"{tag}-{inputs.hexdigest()[:16]}.trace"
    if trace.is_file() and (vmfb := models_cache() / trace.read_text()).is_file():
        return Compiled(vmfb, 0.0)
    n = len(jax.tree_util.tree_leaves(args[0]))
    compiled = compile_mlir(as_parameters(export_mlir(fn, *args, mode=mode), n), tag, flags)
    trace.write_text(compiled.vmfb.name)
    return compiled


def _fill_function(model: DecoderModel) -> Any:
    """``(params, cache, tokens) -> cache``: the prompt's keys and values at positions
    0.., no logits (``IreeRunner.prefill`` takes them from a decode step)."""

    def fill(params: Params, cache: Any, tokens: jax.Array) -> Any:
        return model.arch.forward(model.config, params, cache, tokens, 0)[1]

    return fill


class IreeRunner:
    """``decode.Runner`` over IREE (llvm-cpu by default). ``weights`` are the arrays served
    as parameters ``p0, p1, ...`` (the flattened params), ``compiled`` the vmfbs of the
    steps; ``prefill_len=0`` compiles no prefill step (a prompt then goes through decode
    steps, one token at a time)."""

    def __init__(
        self,
        model: DecoderModel,
        max_len: int = DEFAULT_MAX_LEN,
        prefill_len: int = PREFILL_LEN,
        variant: str = "f32",
        driver: str = "local-task",
        flags: tuple[str, ...] | None = None,
        mode: str | None = None,
        prefill_flags: tuple[str, ...] = PREFILL_FLAGS,
        prefill_mode: str = PREFILL_MODE,
        stack: bool = True,
    ) -> None:
        if stack:  # one argument a weight kind instead of one a layer and kind
            model = model.with_params(stack_layers(model.params))
        self.model = model
        self.max_len = max_len
        self.prefill_len = prefill_len
        self.mode = mode = mode or decode_mode(model.params)
        flags = flags or MODE_FLAGS[mode]
        _, decode_step = step_functions(model.arch, model.config)
        cache = model.new_cache(max_len)
        zero = np.int32(0)
        self.weights = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(model.params)]
        tag = f"{model.name}-{variant}{'-stacked' if stack else ''}-L{max_len}"
        self.compiled = {"decode": _step_vmfb(
            model, "decode", decode_step, (model.params, cache, zero, zero), mode,
            f"{tag}-{mode}-decode", flags)}
        if prefill_len:
            self.compiled["prefill"] = _step_vmfb(
                model, "fill", _fill_function(model),
                (model.params, cache, np.zeros(prefill_len, np.int32)), prefill_mode,
                f"{tag}-{prefill_mode}-fill{prefill_len}", prefill_flags)
        self.config = ireert.Config(driver)
        self.context = ireert.SystemContext(config=self.config)
        self.context.add_vm_module(parameters_module(self.config.vm_instance, self.weights))
        steps = {}
        for step, compiled in self.compiled.items():
            module = ireert.VmModule.mmap(self.config.vm_instance, str(compiled.vmfb))
            self.context.add_vm_module(module)
            steps[step] = self.context.modules[module.name]["main"]
        self._prefill, self._decode = steps.get("prefill"), steps["decode"]
        self._empty_cache = [np.asarray(c) for c in jax.tree_util.tree_leaves(cache)]
        self.cache: list[Any] = []

    @property
    def compile_s(self) -> float:
        return sum(c.compile_s for c in self.compiled.values())

    def prefill(self, ids: list[int]) -> np.ndarray:
        if self._prefill is None:  # no prefill step (prefill_len=0): one decode step a token
            self.cache = list(self._empty_cache)
            for pos, token in enumerate(ids):
                logits = self.decode(token, pos)
            return logits
        if len(ids) > self.prefill_len:
            raise ValueError(f"prompt of {len(ids)} tokens exceeds prefill_len "
                             f"{self.prefill_len}")
        self.cache = list(self._empty_cache)
        if len(ids) > 1:  # the cache after all but the last token; positions past it are
            # written by later steps before any query can see them
            self.cache = list(self._prefill(*self._empty_cache,
                                            pad_prompt(ids[:-1], self.prefill_len)))
        return self.decode(ids[-1], len(ids) - 1)

    def decode(self, token: int, pos: int) -> np.ndarray:
        logits, *self.cache = self._decode(*self.cache, np.int32(token), np.int32(pos))
        return self.model.full_logits(np.asarray(logits.to_host()))
