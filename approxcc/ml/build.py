"""`approxcc model.py -o OUT --target=cpu,cuda,rocm`: every variant through IREE.

The program's approx IR (`ml/ir.py`) goes through every ML pass (`ml/passes.py`); each
dispatch function (`ml/dispatch.py`) and each variant function no dispatch runs becomes a
StableHLO module of its own (`@main` and its callees), compiled by `iree-compile` for each
target (one job per target and distinct StableHLO and flags, in parallel; a vmfb already in
OUT is kept), its weights saved as `.npz` (shared by content hash; one parameter a distinct
array). CPU flags follow the module's matmuls (`iree.target_flags`: matrix-vector or
matrix-matrix, widened weight codes or not): a model's prefill and decode step each get
theirs. Where a dispatch fails for a target, its variants are
compiled one by one for it instead (a variant table).
OUT/manifest.json describes it all; `approxcc.ml.runtime` loads it.

The weights are not arguments of a variant's `@main` but immutable `util.global`s read from
IREE parameters `p0, p1, ...` (`#flow.parameter.named<"model"::"pK">`, served by the runtime
from the `.npz`): IREE treats an argument as a new value on every call, a global as a
constant, so what it derives from a weight alone (a transpose, a packed layout, a widened
copy) is hoisted into the module initializer and done once, not on every call.

A variant IREE cannot compile for a target is reported as `variant <knob=label,...> for
target T: <IREE's first error line>` at the decorator of its first knob off exact: for the
CPU (the target every build has and checks) an error, a warning with `keep_going`; for a
GPU target always a warning, the variants that compile being built. The manifest lists it
under `failed` (per target) with no vmfb for that target, so neither the runtime nor the
tuner can pick it there.

Every variant the CPU build has then runs on the example inputs and is compared with the
exact function (`accuracy`): its relL2 and max |err| go into the manifest (`accuracy`); one
past the bound is a warning at its knob's decorator, `broken` there, and left out of the
tuner's space. A broken module compiled with `iree.NO_HOISTING` is compiled again without
it, and the better of the two kept (`flags`, `flags_tried`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    UnregisteredOp,
    i64,
)

from approxcc.config import KnobSetting, load_config, parse_config
from approxcc.diagnostics import CompileError, warn
from approxcc.dialect import knobs
from approxcc.dialect.settings import configured_params
from approxcc.ml import accuracy, unsigned_int4, xla
from approxcc.ml.approx import Knob
from approxcc.ml.dispatch import BRANCHES_ATTR, KNOBS_ATTR, dispatch_values, dispatches_of
from approxcc.ml.ir import (
    approx_module,
    exact_choice,
    export_variant,
    knob_label,
    ml_context,
    print_ir,
    responsible_loc,
    variant_name,
)
from approxcc.ml.iree import (
    NO_HOISTING,
    TARGET_FLAGS,
    IreeFailure,
    compile_stablehlo,
    iree_compile,
    multiplies_natively,
    target_flags,
)
from approxcc.ml.passes import choice_of, expand_all, variants_of
from approxcc.ml.program import DecoratedFunction, MLProgram, load_program, user_errors
from approxcc.ml.transforms import shared_conversions
from approxcc.transforms.quantize import INTEGER_PRODUCTS

MANIFEST_VERSION = "3"   # 2: weights are IREE parameters; 3: dispatches
PARAMETER_SCOPE = "model"
UINT4 = IntegerType(4, Signedness.UNSIGNED)
__all__ = ["Manifest", "build_model", "checked_config", "describe"]


@dataclass(frozen=True)
class Manifest:
    path: Path
    data: dict[str, Any]

    @property
    def functions(self) -> dict[str, Any]:
        return self.data["functions"]

    @staticmethod
    def load(path: str | Path) -> Manifest:
        """The manifest of a build: `path` is its folder (`approxcc model.py -o DIR`) or
        the folder's manifest.json."""
        file = Path(path) / "manifest.json" if Path(path).is_dir() else Path(path)
        expected = "expected the folder of `approxcc model.py -o DIR` or its manifest.json"
        try:
            data = json.loads(file.read_text())
        except OSError as err:
            raise CompileError(f"cannot read the manifest '{file}': {err.strerror} "
                               f"({expected})") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CompileError(f"'{file}' is not a build manifest ({expected})") from None
        if not isinstance(data, dict) or "approxcc_ml" not in data:
            raise CompileError(f"'{file}' is not a build manifest ({expected})")
        return Manifest(file, data)


@shared_conversions()   # variants (of every function) converting a weight alike share it
def build_model(path: str | Path, out_dir: str | Path, targets: Sequence[str] = ("cpu",),
                jobs: int | None = None, keep_going: bool = False,
                config: str | Path | None = None,
                broken_rel_l2: float | None = None, cpu_backend: str | None = None
                ) -> Manifest:
    """Builds every variant of every decorated function of the module at `path`, or with
    `config` (a configuration file) the variants it selects only; an error in the module's
    own code is a diagnostic at its line (`program.user_errors`). With a CPU target every
    CPU variant is checked against exact on the example inputs; past its relL2 bound
    (`broken_rel_l2` for all, else `accuracy.rel_l2_bound`) it is broken (the module
    docstring). `cpu_backend` (else $APPROXCC_ML_CPU_BACKEND, else "auto") picks what runs
    a CPU variant: its XLA form unless its vmfb is clearly faster, or forced (`ml/xla.py`)."""
    bound = accuracy.bound_override(broken_rel_l2)
    mode = xla.cpu_backend(cpu_backend)
    with user_errors(path):
        return _build(path, out_dir, targets, jobs, keep_going, config, bound, mode)


def _build(path: str | Path, out_dir: str | Path, targets: Sequence[str], jobs: int | None,
           keep_going: bool, config: str | Path | None, bound: float | None,
           mode: str = "auto") -> Manifest:
    for t in targets:
        if t not in TARGET_FLAGS:
            raise CompileError(f"unknown target '{t}' (expected {', '.join(TARGET_FLAGS)})")
    compiler = iree_compile()
    program = load_program(path)
    module = approx_module(program)
    settings = None if config is None else _configure(module, program, config)
    expand_all(module)
    out = Path(out_dir)
    for sub in ("mlir", "weights", *targets):
        (out / sub).mkdir(parents=True, exist_ok=True)
    entries: dict[str, Any] = {}
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        compiles = _Compiles(compiler, out, pool)
        for name, fn in program.functions.items():
            entries[name] = _function_entry(fn, module, out, targets, compiles, settings)
        for name, entry in entries.items():
            _fall_back(program.functions[name], entry, targets, compiles)
        errors = _collect(program.functions, entries, compiles, targets, mode)
        if errors and not keep_going:
            raise errors[0]
        for err in errors:
            warn(f"{err.diagnostic.message} (not built; --keep-going)", err.diagnostic.loc)
        data = {"approxcc_ml": MANIFEST_VERSION, "program": Path(path).stem,
                "source": str(Path(path).resolve()), "targets": list(targets),
                "functions": entries}
        if config is not None and settings is not None:
            data["config"] = {"file": str(config),
                              "knobs": {k: _setting_json(s) for k, s in settings.items()}}
        manifest = Manifest(out / "manifest.json", data)
        if CHECK_TARGET in targets:
            data["accuracy"] = {"target": CHECK_TARGET, "against": "jax"}
            _check_accuracy(program, manifest, compiles, bound, mode)
    manifest.path.write_text(json.dumps(data, indent=1))
    return manifest


@dataclass
class _Compiles:
    """The `iree-compile` jobs of a build, one per target and distinct module and flags."""
    compiler: str
    out: Path
    pool: ThreadPoolExecutor
    pending: dict[tuple[str, str], Future[float]] = field(default_factory=dict)
    stored: dict[str, list[Any]] = field(default_factory=dict)   # item id -> its parameters

    def submit(self, item: dict[str, Any], name: str, target: str,
               flags: list[str] | None = None) -> None:
        """Compiles `item["mlir"]` for `target` with `flags`, by default those of its matmuls
        (`widens`, `rows`), recording the vmfb in `item["vmfb"]` and the flags in
        `item["flags"]`. A vmfb the build folder already has (same module, flags and
        compiler) is kept: a rebuild compiles what changed."""
        if "weights" not in item:   # saved once a vmfb will read them, then let go (a
            # model's variants each hold a copy of its weights: a 270M-parameter decoder's
            # 64 variants kept in memory took 22 GB and the build was killed)
            item["weights"] = _save_weights(self.out, self.stored.pop(item["id"]))
        mlir = self.out / item["mlir"]
        if flags is None:
            flags = target_flags(target, item["widens"], item["rows"])
        item.setdefault("flags", {})[target] = flags
        key = "\0".join([mlir.read_text(), *flags, _compiler_version(self.compiler)])
        vmfb = f"{target}/{name}-{hashlib.sha1(key.encode()).hexdigest()[:12]}.vmfb"
        if (target, vmfb) not in self.pending:
            if (self.out / vmfb).exists():
                done: Future[float] = Future()
                done.set_result(0.0)
                self.pending[(target, vmfb)] = done
            else:
                self.pending[(target, vmfb)] = self.pool.submit(
                    compile_stablehlo, self.compiler, mlir, self.out / vmfb, flags)
        item["vmfb"][target] = vmfb

    def result(self, item: dict[str, Any], target: str) -> float | str:
        """The compile seconds of `item` for `target`, or IREE's first error line."""
        try:
            return self.pending[(target, item["vmfb"][target])].result()
        except IreeFailure as failure:
            return failure.line


def _configure(module: ModuleOp, program: MLProgram, config: str | Path
               ) -> dict[str, KnobSetting]:
    """`config` checked against the program's knobs (a clang-style error at its key in the
    file), and written into the module's knobs, so that the ML passes add the variants it
    selects only: a knob's value, a decision tree's values; a knob it does not name stays
    exact (docs/config.md)."""
    exact = {k: v for fn in program.functions.values() for k, v in exact_choice(fn).items()}
    settings = checked_config([_knob_entry(k, exact[k.name]) for fn in
                               program.functions.values() for k in fn.afn.knobs], config)
    for knob in knobs(module):
        name = knob.knob_name.data
        if name in settings:
            knob.params = configured_params(knob, settings[name])
        elif exact[name] is not None:
            knob.params = DictionaryAttr({**knob.params.data,
                                          "value": IntegerAttr(exact[name], i64)})
    return settings


def _selected(fn: DecoratedFunction, choice: Mapping[str, int | None],
              settings: Mapping[str, KnobSetting] | None, names: Sequence[str]) -> bool:
    """Whether the configuration (`settings`; None: a build of every variant) selects the
    knobs `names` of `choice`: a value it gives or decides, exact where it names none."""
    if settings is None:
        return True
    exact = exact_choice(fn)
    for name in names:
        s = settings.get(name)
        allowed = [exact[name]] if s is None else [s.value] if s.value is not None \
            else list(s.decisions or ())
        if choice[name] not in allowed:
            return False
    return True


def _setting_json(s: KnobSetting) -> dict[str, Any]:
    """A setting as its configuration writes it (labels as their values)."""
    if s.value is not None:
        return {"value": s.value}
    return {"thresholds": list(s.thresholds or ()), "decisions": list(s.decisions or ())}


def _function_entry(fn: DecoratedFunction, module: ModuleOp, out: Path, targets: Sequence[str],
                    compiles: _Compiles, settings: Mapping[str, KnobSetting] | None
                    ) -> dict[str, Any]:
    """The manifest entry of `fn`; compiles its dispatches and the variants no dispatch runs
    (those `_fall_back` compiles where a dispatch fails). With a configuration (`settings`)
    only what it selects: its variants, a dispatch where it gives a decision tree to every
    state-driven knob of the dispatch (else the selected variant alone)."""
    import jax

    def standalone(item_id: str, function: func.FuncOp, weights: list[Any],
                   widens: bool) -> dict[str, Any]:
        """`function` as its own module, its weight arguments read from parameters: one a
        distinct array (a dispatch's branches often share theirs), saved when compiled."""
        slots, stored = _distinct(weights)
        alone = _standalone(module, function, slots)
        text = print_ir(alone)
        mlir = out / "mlir" / f"{fn.name}-{hashlib.sha1(text.encode()).hexdigest()[:12]}.mlir"
        if not mlir.exists():
            mlir.write_text(text)
        compiles.stored[item_id] = stored
        return {"id": item_id, "weight_args": [_sig(a) for a in stored],
                "mlir": str(mlir.relative_to(out)), "widens": widens,
                "rows": _matrix_rows(alone), "vmfb": {}}

    knob_names = [k.name for k in fn.afn.knobs]
    kept_dispatches = []
    for dispatch_fn in dispatches_of(module, fn.name):
        knobs_of = [k.data for k in dispatch_fn.attributes[KNOBS_ATTR].data]  # type: ignore[attr-defined]
        static = [k for k in knob_names if k not in knobs_of]
        if settings is None or (
                all(k in settings and settings[k].decisions is not None for k in knobs_of)
                and _selected(fn, choice_of(dispatch_fn, fn), settings, static)):
            kept_dispatches.append(dispatch_fn)
    branch_names = {b.root_reference.data for d in kept_dispatches  # type: ignore[attr-defined]
                    for b in d.attributes[BRANCHES_ATTR].data}  # type: ignore[attr-defined]
    variants, by_name, weights_of = [], {}, {}
    for i, variant_fn in enumerate(variants_of(module, fn.name)):
        choice = choice_of(variant_fn, fn)
        if not (variant_fn.sym_name.data in branch_names
                or _selected(fn, choice, settings, knob_names)):
            continue
        exported = export_variant(fn, choice)
        n_w = len(exported.stored)
        stored = [exported.stored[j] for j in exported.kept if j < n_w]
        variant = {**standalone(f"{fn.name}.v{i}", variant_fn, stored,
                                _widens_weights(fn, choice)),
                   "name": variant_name(fn, choice), "choice": choice,
                   "labels": describe(fn, choice),
                   "input_args": [j - n_w for j in exported.kept if j >= n_w]}
        variants.append(variant)
        by_name[variant["name"]] = variant
        if variant_fn.sym_name.data in branch_names:
            weights_of[variant["name"]] = stored    # a dispatch compiles them together
        else:   # compiled alone: submitted now, so that its weights are written and let go
            for t in targets:
                compiles.submit(variant, fn.name, t)
    dispatches = []
    for i, dispatch_fn in enumerate(kept_dispatches):
        branches = [by_name[b.root_reference.data]  # type: ignore[attr-defined]
                    for b in dispatch_fn.attributes[BRANCHES_ATTR].data]  # type: ignore[attr-defined]
        knobs = [k.data for k in dispatch_fn.attributes[KNOBS_ATTR].data]  # type: ignore[attr-defined]
        dispatch = {
            **standalone(f"{fn.name}.d{i}", dispatch_fn,
                         [a for b in branches for a in weights_of[b["name"]]],
                         any(b["widens"] for b in branches)),
            "name": dispatch_fn.sym_name.data,
            "static": {k: v for k, v in choice_of(dispatch_fn, fn).items() if k not in knobs},
            "knobs": knobs, "values": dispatch_values(dispatch_fn),
            "branches": [b["id"] for b in branches],
            "input_args": list(range(len(fn.inputs))), "failed": {}}
        for t in targets:
            compiles.submit(dispatch, fn.name, t)
        for b in branches:
            b["dispatch"] = dispatch["id"]
        dispatches.append(dispatch)
    return {
        "loc": f"{fn.afn.loc.file}:{fn.afn.loc.line}",
        "inputs": [_sig(a) for a in fn.inputs],
        "outputs": [_sig(a) for a in jax.tree.leaves(fn.exact_out)],
        "output_kind": "tuple" if fn.is_tuple else "array",
        "knobs": [_knob_entry(k, exact_choice(fn)[k.name]) for k in fn.afn.knobs],
        "variants": variants,
        "dispatches": dispatches,
        "failed": {},
    }


def _fall_back(fn: DecoratedFunction, entry: dict[str, Any], targets: Sequence[str],
               compiles: _Compiles) -> None:
    """Where IREE cannot compile a dispatch, its variants are compiled one by one (a variant
    table): the dispatch records IREE's error under `failed`, without a vmfb there."""
    by_id = {v["id"]: v for v in entry["variants"]}
    for dispatch in entry["dispatches"]:
        dispatch["compile_s"] = {}
        for t in targets:
            result = compiles.result(dispatch, t)
            if isinstance(result, str):
                del dispatch["vmfb"][t]
                dispatch["failed"][t] = result
                for b in dispatch["branches"]:
                    compiles.submit(by_id[b], fn.name, t)
            else:
                dispatch["compile_s"][t] = round(result, 3)


def _collect(functions: dict[str, DecoratedFunction], entries: dict[str, Any],
             compiles: _Compiles, targets: Sequence[str], mode: str) -> list[CompileError]:
    """Waits for the variants' compile jobs; records compile seconds, or the failure (the
    variant listed under `failed[target]`, without a vmfb there). A variant a dispatch runs
    has no vmfb of its own for that target."""
    errors = []
    for name, entry in entries.items():
        for variant in entry["variants"]:
            variant["compile_s"] = {}
            for t in targets:
                if t not in variant["vmfb"]:
                    continue
                result = compiles.result(variant, t)
                if isinstance(result, str):
                    del variant["vmfb"][t]
                    entry["failed"].setdefault(t, []).append(variant["id"])
                    labels = ",".join(f"{k}={v}" for k, v in variant["labels"].items())
                    error = CompileError(f"variant <{labels}> of '{name}' for target {t}: "
                                         f"{result}",
                                         responsible_loc(functions[name], variant["choice"]))
                    if t == CHECK_TARGET:
                        if not _xla_instead(functions[name], entry, variant, compiles.out,
                                            mode, error):
                            errors.append(error)
                    else:  # a GPU's: the others are built (the tuner cannot pick it there)
                        warn(f"{error.diagnostic.message} (not built for {t}; the variants "
                             "that compile are)", error.diagnostic.loc)
                else:
                    variant["compile_s"][t] = round(result, 3)
    return errors


def _attach_xla_form(out: Path, fn: DecoratedFunction, variant: dict[str, Any]) -> bool:
    """Writes the variant's XLA form and records it (`xla`, `xla_slots`); False where jax did
    not export it for the CPU."""
    exported = export_variant(fn, variant["choice"])
    rel = xla.save_form(out, fn.name, exported.exported)
    if rel is None:
        return False
    n_w = len(exported.stored)
    slots, _ = _distinct([exported.stored[j] for j in exported.kept if j < n_w])
    variant["xla"] = rel
    variant["xla_slots"] = xla.weight_slots(exported.kept, n_w, slots)
    return True


def _xla_instead(fn: DecoratedFunction, entry: dict[str, Any], variant: dict[str, Any],
                 out: Path, mode: str, error: CompileError) -> bool:
    """A variant IREE cannot compile for the CPU (a LAPACK custom call) runs on XLA when it
    exports: a warning, the variant no longer `failed`; False where it stays an error."""
    if mode == "iree" or "branches" in variant:
        return False
    try:
        if not _attach_xla_form(out, fn, variant):
            return False
    except CompileError:
        return False
    variant["backend"] = {CHECK_TARGET: "xla"}
    failed = entry["failed"][CHECK_TARGET]
    failed.remove(variant["id"])
    if not failed:
        del entry["failed"][CHECK_TARGET]
    warn(f"{error.diagnostic.message} (IREE cannot compile it for the CPU; XLA runs it)",
         error.diagnostic.loc)
    return True


CHECK_TARGET = "cpu"   # the target whose vmfbs the build runs: this machine's


def _check_accuracy(program: MLProgram, manifest: Manifest, compiles: _Compiles,
                    override: float | None, mode: str = "auto") -> None:
    """Runs every variant the CPU build has on its function's example inputs, as the
    runtime runs it (its vmfb or its dispatch's), records how far its outputs are from the
    exact function's under the variant's `accuracy`, and warns about each one past its
    bound (`broken`; `override`: one bound for all). A module compiled with NO_HOISTING that
    runs a broken variant is compiled again without it, and kept so where fewer of its
    variants are broken: the manifest's `flags` are the kept ones, `flags_tried` the others
    and their worst relL2. First each variant with a CPU vmfb of its own gets its XLA form
    and the backend that runs it (`_choose_backend`): its vmfb is checked as above, then an
    XLA variant's form, whose figures the manifest records."""
    from approxcc.ml.runtime import Program  # the runtime imports this module

    prog = Program(manifest, None, "local-task", {}, True)
    for name, entry in manifest.functions.items():
        fn = program.functions[name]
        bounds = {v["id"]: _bound(fn, v["choice"], override) for v in entry["variants"]}
        inputs = accuracy.example_inputs(fn.inputs, entry["inputs"])
        exact = accuracy.exact_outputs(fn.afn.fn, fn.weights, inputs)
        dispatches = {d["id"]: d for d in entry["dispatches"] if CHECK_TARGET in d["vmfb"]}
        runs: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
        for variant in entry["variants"]:   # grouped by the module that runs them
            runner = dispatches.get(variant.get("dispatch", ""))
            if runner is None and (CHECK_TARGET in variant["vmfb"] or
                                   variant.get("backend", {}).get(CHECK_TARGET) == "xla"):
                runner = variant
            if runner is not None:
                runs.setdefault(runner["id"], (runner, []))[1].append(variant)
        alone = [r for r, _ in runs.values()   # not dispatches, nor XLA-only variants
                 if "branches" not in r and CHECK_TARGET in r["vmfb"]]
        chosen = {}
        for runner in alone:
            _choose_backend(prog, fn, runner, inputs, mode, xla.TIME_BUDGET_S / len(alone))
            prog.release()   # one variant's forms in memory at a time (a model's are GBs)
            if "backend" in runner:   # the vmfb is checked (and its flags kept) first
                chosen[runner["id"]] = runner["backend"]
                runner["backend"] = {CHECK_TARGET: "iree"}
        for runner, variants in runs.values():
            figures = _run_variants(prog, name, variants, inputs, exact)
            if CHECK_TARGET in runner["vmfb"] and \
                    NO_HOISTING in runner["flags"][CHECK_TARGET] and \
                    any(f.broken(bounds[i]) for i, f in figures.items()):
                figures = _retry_hoisting(prog, name, runner, variants, inputs, exact,
                                          figures, bounds, compiles)
            if runner["id"] in chosen:
                runner["backend"] = chosen[runner["id"]]
                if runner["backend"][CHECK_TARGET] == "xla":   # what runs it: its figures
                    figures = _run_variants(prog, name, variants, inputs, exact)
            for variant in variants:
                variant["accuracy"] = figures[variant["id"]].to_json(bounds[variant["id"]])
            prog.release()
        for variant in entry["variants"]:
            if variant.get("accuracy", {}).get("broken"):
                _warn_broken(fn, variant, accuracy.Figures.from_json(variant["accuracy"]),
                             bounds[variant["id"]])


def _choose_backend(prog: Any, fn: DecoratedFunction, variant: dict[str, Any],
                    inputs: list[Any], mode: str, budget_s: float) -> None:
    """Writes the variant's XLA form (`xla.save_form`), times it and its vmfb side by side
    on `inputs` through the runtime (`prog`), and records `backend.cpu` (`xla.faster`, or
    `mode` where forced; the exact variant's XLA form, which is what jax.jit runs: a few
    timed calls on a busy machine once made an IREE exact 26% slower than jax.jit) and
    `time_ms`. Mode "iree", or a form that does not run: IREE."""
    if mode == "iree" or not _attach_xla_form(prog.root, fn, variant):
        return
    runtime_fn = prog.functions[fn.name]
    prog.configure({"approxcc": "1", "knobs": {k: {"value": v} for k, v in
                                               variant["choice"].items() if v is not None}})
    try:
        failed, times = _backend_times(runtime_fn, inputs, budget_s)
    finally:
        runtime_fn.use_backend(None)
    if failed:   # the one that runs runs it (both failing: IREE, and the check says so)
        works = "xla" if "iree" in failed and "xla" not in failed else "iree"
        err = failed["xla" if works == "iree" and "xla" in failed else "iree"]
        text = str(err).splitlines()[0] if str(err) else ""
        warn(f"variant '{variant['name']}': its {'XLA' if works == 'iree' else 'IREE'} form "
             f"does not run on the CPU ({type(err).__name__}: {text}); "
             f"{'IREE' if works == 'iree' else 'XLA'} runs it",
             responsible_loc(fn, variant["choice"]))
        variant["backend"] = {CHECK_TARGET: works}
        return
    variant["time_ms"] = times
    if mode != "auto":
        chosen = mode
    elif variant["choice"] == exact_choice(fn):
        chosen = "xla"  # what jax.jit runs: the exact build is as fast as the plain path
    else:
        chosen = xla.faster(times)
    variant["backend"] = {CHECK_TARGET: chosen}


def _backend_times(runtime_fn: Any, inputs: list[Any],
                   budget_s: float) -> tuple[dict[str, Exception], dict[str, float]]:
    """The configured variant of `runtime_fn` run by each CPU backend: the error of each
    that cannot run it, else both timed side by side (median ms)."""
    def run(backend: str) -> Callable[[], Any]:
        def call() -> Any:
            runtime_fn.use_backend(backend)
            return runtime_fn(*inputs)
        return call

    failed: dict[str, Exception] = {}
    for backend in ("iree", "xla"):   # each once: which one runs at all
        try:
            run(backend)()
        except Exception as err:  # noqa: BLE001 - a backend that cannot run the variant
            failed[backend] = err
    if failed:
        return failed, {}
    return {}, xla.side_by_side({b: run(b) for b in ("iree", "xla")}, budget_s)


def _bound(fn: DecoratedFunction, choice: Mapping[str, int | None],
           override: float | None) -> float:
    """The relL2 bound of a variant: by the transforms of its knobs off exact."""
    exact = exact_choice(fn)
    return accuracy.rel_l2_bound([k.transform for k in fn.afn.knobs
                                  if choice[k.name] != exact[k.name]], override)


def _run_variants(prog: Any, name: str, variants: list[dict[str, Any]], inputs: list[Any],
                  exact: list[Any]) -> dict[str, accuracy.Figures]:
    """Each variant's figures, run by `prog` (a runtime Program over this build)."""
    fn = prog.functions[name]
    figures = {}
    for variant in variants:
        prog.configure({"approxcc": "1", "knobs": {k: {"value": v} for k, v in
                                                   variant["choice"].items() if v is not None}})
        fn.last_variant = None
        figures[variant["id"]] = accuracy.measure(lambda: fn(*inputs), exact)
        assert fn.last_variant in (None, variant["id"]), (fn.last_variant, variant["id"])
    return figures


def _retry_hoisting(prog: Any, name: str, runner: dict[str, Any],
                    variants: list[dict[str, Any]], inputs: list[Any], exact: list[Any],
                    figures: dict[str, accuracy.Figures], bounds: Mapping[str, float],
                    compiles: _Compiles) -> dict[str, accuracy.Figures]:
    """`runner` (a variant or dispatch compiled with NO_HOISTING, running `variants`, one of
    them broken) compiled again without the flag, and kept so where it is better (`better`);
    the figures of the build kept."""
    def worst(figs: Mapping[str, accuracy.Figures]) -> tuple[int, float]:
        return max(f.worst() for f in figs.values())

    def better(figs: Mapping[str, accuracy.Figures], than: Mapping[str, accuracy.Figures]
               ) -> bool:
        """Fewer broken variants, or as many but the worst of them with a figure where
        `than`'s had none, or under half as far (not noise); else the first flags, chosen
        for speed, stay."""
        broken, was = (sum(f.broken(bounds[i]) for i, f in x.items()) for x in (figs, than))
        if broken != was:
            return broken < was
        (none, far), (was_none, was_far) = worst(figs), worst(than)
        return none < was_none or none == was_none == 0 and far < was_far / 2

    def tried(flags: list[str], figs: Mapping[str, accuracy.Figures] | None,
              error: str | None = None) -> dict[str, Any]:
        bad = None if figs is None else worst(figs)
        return {"flags": flags, "relL2": None if bad is None or bad[0] else bad[1],
                **({"error": error} if error else {})}

    t = CHECK_TARGET
    first = {"flags": runner["flags"][t], "vmfb": runner["vmfb"][t]}
    plain = [f for f in first["flags"] if f != NO_HOISTING]
    compiles.submit(runner, name, t, plain)
    result = compiles.result(runner, t)
    if isinstance(result, str):   # IREE cannot compile it without the flag
        runner["flags"][t], runner["vmfb"][t] = first["flags"], first["vmfb"]
        runner.setdefault("flags_tried", {})[t] = [tried(plain, None, result)]
        return figures
    prog.release()
    again = _run_variants(prog, name, variants, inputs, exact)
    if better(again, figures):
        runner.setdefault("compile_s", {})[t] = round(result, 3)
        runner.setdefault("flags_tried", {})[t] = [tried(first["flags"], figures)]
        return again
    runner["flags"][t], runner["vmfb"][t] = first["flags"], first["vmfb"]
    runner.setdefault("flags_tried", {})[t] = [tried(plain, again)]
    return figures


def _warn_broken(fn: DecoratedFunction, variant: Mapping[str, Any],
                 figures: accuracy.Figures, bound: float) -> None:
    """The warning for a broken variant, at the decorator of its first knob off exact (the
    function, for the exact variant)."""
    labels = ",".join(f"{k}={v}" for k, v in variant["labels"].items())
    past = f"; past relL2 {bound:g}" if figures.rel_l2 is not None and \
        figures.rel_l2 > bound else ""
    warn(f"variant <{labels}> of '{fn.name}' differs from exact: {figures.describe()} "
         f"(on the example inputs{past}; the tuner leaves it out)",
         responsible_loc(fn, variant["choice"]))


def _matrix_rows(module: ModuleOp) -> int:
    """The most rows of a plain matmul in `module`: the extent of the left operand's free
    dimensions in a `stablehlo.dot_general` without batching dimensions."""
    rows = 0
    for op in module.walk():
        if not isinstance(op, UnregisteredOp) or op.op_name.data != "stablehlo.dot_general":
            continue
        dims = str(op.properties.get("dot_dimension_numbers", ""))
        if "batching_dimensions" in dims or not op.operands:
            continue
        lhs = op.operands[0].type
        contracting = _DIMS.search(dims)
        skip = {int(d) for d in contracting[1].split(",") if d.strip()} if contracting else set()
        shape = getattr(lhs, "shape", None)
        if shape is not None:
            free = [d.data for i, d in enumerate(shape.data) if i not in skip]
            rows = max(rows, math.prod(free))
    return rows


_DIMS = re.compile(r"lhs_contracting_dimensions = \[([\d, ]*)\]")


@functools.cache
def _compiler_version(compiler: str) -> str:
    """What a reused vmfb must have been compiled by: the executable and its release (a
    compiler off PATH without a package: its file's time)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{compiler} {version('iree-base-compiler')}"
    except PackageNotFoundError:
        return f"{compiler} {os.stat(compiler).st_mtime_ns}"


def _widens_weights(fn: DecoratedFunction, choice: dict[str, int | None]) -> bool:
    """The variant stores weights narrow and widens them inside its matmuls: weight-only
    int8/int4 codes (not w8a8/w8a16, whose matmuls are int8 x int8), or bf16/f16 tiles
    (`transforms`: precision without quantization, where the CPU does not multiply the
    narrow float as stored)."""
    labels = {k.transform: k.label(choice[k.name]) for k in fn.afn.knobs
              if k.transform in ("quantize", "precision") and choice[k.name] is not None}
    precision = labels.get("precision")
    quantize = labels.get("quantize", "none")
    return (quantize != "none" and quantize not in INTEGER_PRODUCTS) or (
        quantize == "none" and precision in ("bf16", "f16")
        and not multiplies_natively(precision))


def describe(fn: DecoratedFunction, choice: dict[str, int | None]) -> dict[str, Any]:
    """knob name -> the label its config value stands for (`exact` where None)."""
    return {k.name: "exact" if choice[k.name] is None else _label(k, choice[k.name])
            for k in fn.afn.knobs}


def _label(k: Knob, value: int) -> Any:
    label = knob_label(k, value)
    return list(label) if isinstance(label, tuple) else label


def _distinct(arrays: list[Any]) -> tuple[list[int], list[Any]]:
    """Per array the index of its content among the distinct ones, and those."""
    slots, index, distinct = [], {}, []
    for a in arrays:
        key = _content_hash([a])
        if key not in index:
            index[key] = len(distinct)
            distinct.append(a)
        slots.append(index[key])
    return slots, distinct


def _standalone(module: ModuleOp, variant: func.FuncOp, slots: list[int]) -> ModuleOp:
    """The variant as its own module: it becomes the public `@main`, with its callees, its
    first `len(slots)` arguments read from the parameters `p<slot>`."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    wanted, todo = [variant.sym_name.data], [variant]
    while todo:
        for op in todo.pop().walk():
            if isinstance(op, func.CallOp):
                callee = op.callee.root_reference.data
                if callee not in wanted:
                    wanted.append(callee)
                    todo.append(funcs[callee])
    clones = [funcs[name].clone() for name in wanted]
    main = clones[0]
    main.sym_name = StringAttr("main")
    main.sym_visibility = StringAttr("public")
    for attr in list(main.attributes):
        if attr.startswith("approx."):
            del main.attributes[attr]
    for clone in clones:
        for op in clone.walk():
            if isinstance(op, func.CallOp) and op.callee.root_reference.data == wanted[0]:
                op.callee = SymbolRefAttr("main")
    return ModuleOp([*_weights_as_parameters(main, slots), *clones])


def _weights_as_parameters(main: func.FuncOp, slots: list[int]) -> list[Any]:
    """Replaces the first `len(slots)` arguments of `main` by loads of immutable globals
    `@p<slot>` initialised from the parameters `p<slot>` of PARAMETER_SCOPE (arguments of one
    slot share it); returns the globals."""
    ctx = ml_context()
    global_op, load_op = ctx.get_optional_op("util.global"), ctx.get_optional_op("util.global.load")
    bitcast = ctx.get_optional_op("stablehlo.bitcast_convert")
    parameter = ctx.get_optional_attr("flow.parameter.named")
    assert global_op and load_op and bitcast and parameter  # unregistered ones are allowed
    block = main.body.block
    first = block.first_op
    globals_: dict[int, Any] = {}
    for k in slots:
        arg = block.args[0]
        # unsigned int4 codes: a signless i4 global, bitcast where loaded (`unsigned_int4`)
        unsigned = isinstance(arg.type, TensorType) and arg.type.element_type == UINT4
        stored = TensorType(IntegerType(4), arg.type.get_shape()) if unsigned else arg.type
        name = f"p{k}{unsigned_int4.GLOBAL_SUFFIX if unsigned else ''}"
        if k not in globals_:
            # MLIR's parameter attribute is typed (`#flow.parameter.named<...> :
            # tensor<...>`); an unregistered xDSL attribute has no type: its body carries it.
            body = f'"{PARAMETER_SCOPE}"::"p{k}"> : {str(stored)[:-1]}'
            globals_[k] = global_op.create(properties={
                "sym_name": StringAttr(name), "sym_visibility": StringAttr("private"),
                "type": stored, "initial_value": parameter("flow.parameter.named", False,
                                                           False, body)})
        load = load_op.create(result_types=[stored], properties={
            "global": SymbolRefAttr(name), "is_immutable": UnitAttr()})
        block.insert_op_before(load, first)
        value = load.results[0]
        if unsigned:
            cast = bitcast.create(operands=[value], result_types=[arg.type])
            block.insert_op_before(cast, first)
            value = cast.results[0]
        arg.replace_all_uses_with(value)
        block.erase_arg(arg)
    main.function_type = FunctionType.from_lists(block.arg_types,
                                                 main.function_type.outputs.data)
    if main.arg_attrs is not None:
        main.arg_attrs = ArrayAttr(main.arg_attrs.data[len(slots):])
    return list(globals_.values())


def _knob_entry(k: Knob, exact: int | None) -> dict[str, Any]:
    return {"name": k.name, "transform": k.transform,
            "values": [_label(k, v) for v in k.domain], "domain": k.domain,
            "exact": exact, "state": k.state, "thresholds": k.thresholds,
            "range": list(k.range), "loc": str(k.loc)}


def checked_config(knobs: Sequence[Mapping[str, Any]],
                   config: str | Path | Mapping[str, Any] | None,
                   strict: bool = True) -> dict[str, KnobSetting]:
    """A configuration (a JSON file, its dict, or None: every knob exact) checked against a
    build's knobs (their manifest entries): knob name -> setting, a knob's label standing
    for its value. `strict=False` ignores knobs the build does not have (a compound
    program's C knobs)."""
    if config is None:
        return {}
    labels = {k["name"]: _labels(k) for k in knobs}
    if isinstance(config, Mapping):
        parsed = parse_config(json.dumps(config, indent=1), "<config>", labels)
    else:
        parsed = load_config(str(config), labels)
    by_name = {k["name"]: k for k in knobs}
    settings = {}
    for name, setting in parsed.knobs.items():
        if name in by_name:
            settings[name] = _checked(by_name[name], setting)
        elif strict:
            raise CompileError(f"knob '{name}': unknown knob (this build has "
                               f"{', '.join(sorted(by_name))})", setting.loc)
    return settings


def _labels(knob: Mapping[str, Any]) -> dict[str, int]:
    """label -> config value, for a knob whose values are (distinct) text labels."""
    named = [label for label in knob["values"] if isinstance(label, str)]
    return {label: v for label, v in zip(knob["values"], knob["domain"], strict=True)
            if isinstance(label, str) and named.count(label) == 1}


def _checked(knob: Mapping[str, Any], setting: KnobSetting) -> KnobSetting:
    def fail(why: str) -> CompileError:
        return CompileError(f"knob '{knob['name']}': {why}", setting.loc)

    domain = knob["domain"]
    chosen = [setting.value] if setting.value is not None else list(setting.decisions or ())
    for v in chosen:
        if v not in domain:
            labels = _labels(knob)
            named = f" (labels {', '.join(map(json.dumps, labels))})" if labels else ""
            raise fail(f"value {v} is outside its domain {domain}{named}")
    if setting.thresholds is not None:
        if knob["state"] is None:
            raise fail("a static knob takes {\"value\": v}, not a decision tree")
        if len(setting.thresholds) != knob["thresholds"]:
            raise fail(f"expected {knob['thresholds']} threshold(s), "
                       f"got {len(setting.thresholds)}")
    return setting


def _sig(a: Any) -> dict[str, Any]:
    """Shape and dtype; a symbolic dimension is its name, with the sizes its constraints
    allow under `bounds` (the runtime checks them: IREE drops jax's shape assertions)."""
    sig = {"shape": [d if isinstance(d, int) else str(d) for d in a.shape],
           "dtype": str(a.dtype)}
    symbolic = {str(d): _bounds(d) for d in a.shape if not isinstance(d, int)}
    return {**sig, "bounds": symbolic} if symbolic else sig


def _bounds(d: Any, most: int = 2**31 - 1) -> list[int | None]:
    """[least, most] sizes of the symbolic dimension `d` (most None: unbounded), found by
    the comparisons jax can decide."""
    from jax.errors import InconclusiveDimensionOperation

    def holds(test: Any) -> bool:
        try:
            return bool(test())
        except InconclusiveDimensionOperation:
            return False

    def search(lo: int, hi: int, ok: Any) -> int:   # the first of lo..hi where ok holds
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
        return lo

    least = search(1, most, lambda m: not holds(lambda: d >= m + 1))
    bounded = holds(lambda: d <= most)
    return [least, search(least, most, lambda m: holds(lambda: d <= m)) if bounded else None]


def _content_hash(arrays: list[Any]) -> str:
    import numpy as np

    h = hashlib.sha1()
    for a in arrays:
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).view(np.uint8))   # the bytes, not a copy
    return h.hexdigest()


def _save_weights(out: Path, arrays: list[Any]) -> str:
    import numpy as np

    from approxcc.ml.packed import storage_bytes

    rel = f"weights/{_content_hash(arrays)[:12]}.npz"
    if not (out / rel).exists():
        # bfloat16 has no npz dtype: stored as its bits, int4 two codes a byte (as IREE
        # reads them); the manifest keeps the dtype
        np.savez(out / rel, *[storage_bytes(np.asarray(a)) for a in arrays])
    return rel


