"""`approxcc build model.py`: every variant of every decorated function → StableHLO → IREE.

    python -m approxcc.ml.build model.py -o OUT_DIR --target cpu,cuda,rocm

The module is imported; each function carrying `@approx.knob` decorators (defined in it)
needs example arguments in a module-level dict

    APPROX_EXAMPLE_ARGS = {"generate": (params, tokens)}

(argument 0 the weights pytree, the rest per-call input arrays, whose shapes and dtypes
are the compiled signature). One variant is built per element of the product of the knobs'
domains (plus each knob's exact setting): exported with `jax.export` with the weights as
arguments, compiled with `iree-compile` (one job per target, in parallel; variants with
identical StableHLO share one vmfb), its weights saved as `.npz` (shared by content hash).
OUT_DIR/manifest.json describes it all; `approxcc.ml.runtime` loads it.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from approxcc.diagnostics import CompileError, SourceLocation
from approxcc.ml.approx import AnnotationError, ApproxFunction, Knob

# Without it IREE 3.13 puts the widening `convert` (bf16/f16/int8 -> f32) of a weight
# *argument* in a dispatch of its own: every call writes and re-reads an f32 copy of each
# weight, so low-precision variants run slower than f32 (Gemma's 262144x640 logits matvec in
# bf16: 0.74-1.4 s a call instead of 0.05-0.06 s). With it the widening fuses into the matvec.
FUSION_FLAGS = ("--iree-dispatch-creation-enable-aggressive-fusion",)
TARGET_FLAGS = {
    "cpu": ["--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host",
            *FUSION_FLAGS],
    "cuda": ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"],
    "rocm": ["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"],
}
MANIFEST_VERSION = "1"


@dataclass(frozen=True)
class Manifest:
    path: Path
    data: dict[str, Any]

    @property
    def functions(self) -> dict[str, Any]:
        return self.data["functions"]

    @staticmethod
    def load(path: str | Path) -> Manifest:
        return Manifest(Path(path), json.loads(Path(path).read_text()))


def build_model(path: str | Path, out_dir: str | Path, targets: Sequence[str] = ("cpu",),
                jobs: int | None = None) -> Manifest:
    """Builds every variant of every decorated function of the module at `path`."""
    for t in targets:
        if t not in TARGET_FLAGS:
            raise CompileError(f"unknown target '{t}' (expected {', '.join(TARGET_FLAGS)})")
    module = _import(Path(path))
    functions = _decorated(module)
    if not functions:
        raise CompileError(f"{path}: no function decorated with @approx.knob")
    out = Path(out_dir)
    for sub in ("mlir", "weights", *targets):
        (out / sub).mkdir(parents=True, exist_ok=True)
    examples = getattr(module, "APPROX_EXAMPLE_ARGS", {})
    compiler = _iree_compile()
    entries: dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        pending: dict[tuple[str, str], Future[float]] = {}
        for name, afn in functions.items():
            entries[name] = _build_function(name, afn, examples, out, targets, compiler, pool,
                                            pending)
        compile_s = {key: fut.result() for key, fut in pending.items()}
    for entry in entries.values():
        for variant in entry["variants"]:
            variant["compile_s"] = {t: round(compile_s[(t, variant["vmfb"][t])], 3)
                                    for t in targets}
    data = {"approxcc_ml": MANIFEST_VERSION, "program": Path(path).stem,
            "source": str(Path(path).resolve()), "targets": list(targets),
            "functions": entries}
    manifest = Manifest(out / "manifest.json", data)
    manifest.path.write_text(json.dumps(data, indent=1))
    return manifest


def _build_function(name: str, afn: ApproxFunction, examples: dict[str, Any], out: Path,
                    targets: Sequence[str], compiler: str, pool: ThreadPoolExecutor,
                    pending: dict[tuple[str, str], Future[float]]) -> dict[str, Any]:
    import jax
    import numpy as np

    from approxcc.ml.transforms import exact_value, make_variant

    if name not in examples:
        raise AnnotationError(f"no example arguments for '{name}': add "
                              f"APPROX_EXAMPLE_ARGS = {{\"{name}\": (weights, *inputs)}} "
                              "to the module", afn.loc)
    example = examples[name]
    if not isinstance(example, tuple | list) or not example:
        raise AnnotationError(f"APPROX_EXAMPLE_ARGS[\"{name}\"] must be a tuple "
                              "(weights, *inputs)", afn.loc)
    weights, inputs = example[0], [_input_array(name, i, x, afn.loc)
                                   for i, x in enumerate(example[1:], 1)]
    exact_out = jax.eval_shape(afn.fn, weights, *inputs)
    leaves = jax.tree.leaves(exact_out)
    if not (jax.tree.structure(exact_out).num_leaves == 1 and not isinstance(exact_out, tuple)
            or isinstance(exact_out, tuple | list) and len(leaves) == len(exact_out)):
        raise AnnotationError(f"'{name}' must return an array or a tuple of arrays", afn.loc)
    exact = {k.name: exact_value(k, weights) for k in afn.knobs}
    domains = [list(dict.fromkeys([*k.domain, exact[k.name]])) for k in afn.knobs]
    variants = []
    for i, values in enumerate(itertools.product(*domains)):
        choice = dict(zip([k.name for k in afn.knobs], values, strict=True))
        start = time.perf_counter()
        variant = make_variant(afn, weights, inputs, choice)
        structs = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in variant.stored]
        in_structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
        exported = jax.export.export(jax.jit(variant.fn))(structs, *in_structs)
        text = exported.mlir_module()
        export_s = time.perf_counter() - start
        n_w = len(variant.stored)
        kept = exported.module_kept_var_idx
        stored = [variant.stored[j] for j in kept if j < n_w]
        code_hash = hashlib.sha1(text.encode()).hexdigest()[:12]
        mlir = out / "mlir" / f"{name}-{code_hash}.mlir"
        mlir.write_text(text)
        vmfbs = {}
        for t in targets:
            vmfb = f"{t}/{name}-{code_hash}.vmfb"
            if (t, vmfb) not in pending:
                pending[(t, vmfb)] = pool.submit(_compile, compiler, mlir, out / vmfb, t)
            vmfbs[t] = vmfb
        variants.append({
            "id": f"{name}.v{i}", "choice": choice,
            "weights": _save_weights(out, stored),
            "weight_args": [_sig(a) for a in stored],
            "input_args": [j - n_w for j in kept if j >= n_w],
            "mlir": str(mlir.relative_to(out)), "vmfb": vmfbs,
            "export_s": round(export_s, 3),
        })
    return {
        "loc": f"{afn.loc.file}:{afn.loc.line}",
        "inputs": [_sig(a) for a in inputs],
        "outputs": [_sig(a) for a in leaves],
        "output_kind": "tuple" if isinstance(exact_out, tuple | list) else "array",
        "knobs": [_knob_entry(k, exact[k.name]) for k in afn.knobs],
        "variants": variants,
    }


def _knob_entry(k: Knob, exact: int | None) -> dict[str, Any]:
    labels: list[Any]
    if k.transform == "func_substitute":
        names = ["exact", *(getattr(v, "__name__", repr(v)) for v in k.variants)]
        labels = [names[v] for v in k.values]
    else:
        labels = [list(v) if isinstance(v, tuple) else v for v in k.values]
    return {"name": k.name, "transform": k.transform, "values": labels, "domain": k.domain,
            "exact": exact, "state": k.state, "thresholds": k.thresholds,
            "range": list(k.range), "loc": str(k.loc)}


def _input_array(name: str, index: int, x: Any, loc: SourceLocation) -> Any:
    import numpy as np

    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype == object:
        raise AnnotationError(f"argument {index} of APPROX_EXAMPLE_ARGS[\"{name}\"] must be an "
                              "array (only argument 0, the weights, may be a pytree)", loc)
    narrow = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}
    return a.astype(narrow[a.dtype]) if a.dtype in narrow else a


def _sig(a: Any) -> dict[str, Any]:
    return {"shape": [int(d) for d in a.shape], "dtype": str(a.dtype)}


def _save_weights(out: Path, arrays: list[Any]) -> str:
    import numpy as np

    h = hashlib.sha1()
    for a in arrays:
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    rel = f"weights/{h.hexdigest()[:12]}.npz"
    if not (out / rel).exists():
        # bfloat16 has no npz dtype: stored as its bits, the manifest keeps the dtype
        np.savez(out / rel, *[a.view(np.uint16) if a.dtype.name == "bfloat16" else a
                              for a in arrays])
    return rel


def _compile(compiler: str, mlir: Path, vmfb: Path, target: str) -> float:
    start = time.perf_counter()
    cmd = [compiler, str(mlir), "--iree-input-type=stablehlo", *TARGET_FLAGS[target],
           "-o", str(vmfb)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise CompileError(f"iree-compile failed for {mlir.name} ({target}):\n{tail}")
    return time.perf_counter() - start


def _iree_compile() -> str:
    local = Path(sys.executable).parent / "iree-compile"
    found = str(local) if local.exists() else shutil.which("iree-compile")
    if not found:
        raise CompileError("iree-compile not found (pip install iree-base-compiler)")
    return found


def _import(path: Path) -> ModuleType:
    if not path.is_file():
        raise CompileError(f"no such file: '{path}'")
    name = f"approxcc_model_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.resolve().parent))
    return module


def _decorated(module: ModuleType) -> dict[str, ApproxFunction]:
    found: dict[str, ApproxFunction] = {}
    owner: dict[str, str] = {}
    for attr, obj in vars(module).items():
        afn = getattr(obj, "__approx__", None)
        if not isinstance(afn, ApproxFunction) or afn.fn.__module__ != module.__name__:
            continue
        for k in afn.knobs:
            if k.name in owner:
                raise AnnotationError(f"duplicate knob name '{k.name}' (also on "
                                      f"'{owner[k.name]}')", k.loc)
            owner[k.name] = attr
        found[attr] = afn
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """The click-free entry of `approxcc build model.py`."""
    ap = argparse.ArgumentParser(prog="approxcc build", description=__doc__.split("\n")[0])
    ap.add_argument("model", help="Python module with @approx.knob functions")
    ap.add_argument("-o", dest="out", default=None, help="output folder (default: MODEL stem)")
    ap.add_argument("--target", default="cpu", help="comma list of cpu, cuda, rocm")
    ap.add_argument("-j", dest="jobs", type=int, default=None, help="parallel compile jobs")
    args = ap.parse_args(argv)
    out = args.out or Path(args.model).stem
    start = time.perf_counter()
    try:
        manifest = build_model(args.model, out, args.target.split(","), args.jobs)
    except CompileError as err:
        print(err.diagnostic.render(), file=sys.stderr)
        return 1
    n = sum(len(f["variants"]) for f in manifest.functions.values())
    print(f"{manifest.path}: {len(manifest.functions)} function(s), {n} variant(s), "
          f"targets {args.target} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
