"""The ML runtime: loads an `approxcc build` output folder and runs, per call, the variant
the configuration selects, through IREE (`iree-base-runtime`).

    from approxcc.ml.runtime import load
    prog = load("out", config="tuned.json")   # or a dict, or None (the build's: exact)
    logits = prog.decode_step(tokens, pos)                   # inputs only: weights are resident

A knob with `{"value": v}` is static; a dynamic knob (`state=approx.state("s")`) with
`{"thresholds": [...], "decisions": [...]}` calls the state function registered under "s"
(`approx.register_state`, or `states=` here) with the call's inputs and takes
`decisions[i]`, i = the number of thresholds <= the state value (as in C). A knob absent
from the configuration is exact. Where the build has a dispatch for the static knobs'
choice (`ml/dispatch.py`), the call runs it, passing the states, thresholds and decisions:
the decision tree is evaluated inside the module; elsewhere it is evaluated here and the
selected variant's own vmfb runs.

The device: `device="auto"` takes CUDA, then HIP, when the build has vmfbs for it and the
driver finds a device, else the CPU (`local-task`). A variant's weights are IREE parameters
(`approxcc.ml.build`): when the variant is first used its vmfb is memory-mapped into a
context with a parameter module serving its `.npz` (mapped, one mapping a content in the
process: `ml/stored_weights.py`), whose initializer puts the weights, and what IREE derived
from them, on the device once.

`prog.fn.on_device(*inputs)` returns the outputs as `iree.runtime.DeviceArray`s instead of
numpy arrays, and any call takes device arrays as inputs without a copy: a KV cache passed
from one call to the next stays on the device (`np.asarray(x)` brings one to the host).

On a CPU driver (`local-task`, `local-sync`) a variant the build gave `backend.cpu: "xla"`
(`ml/xla.py`: its XLA form was faster than its vmfb) runs through XLA instead: its
`.jaxexport` deserialized, its weights put on jax's CPU device once, called through a cached
`jax.jit`; `on_device` then returns `jax.Array`s, which any call takes back without a copy.
A GPU driver always runs the vmfbs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import iree.runtime as ireert
import numpy as np

from approxcc.config import KnobSetting, decide
from approxcc.diagnostics import CompileError
from approxcc.ml import approx
from approxcc.ml.build import MANIFEST_VERSION, PARAMETER_SCOPE, Manifest, checked_config
from approxcc.ml.stored_weights import load_weights
from approxcc.ml.xla import XlaRunner

DRIVER_TARGET = {"local-task": "cpu", "local-sync": "cpu", "cuda": "cuda", "hip": "rocm"}


def load(manifest: str | Path, config: str | Path | Mapping[str, Any] | None = None,
         device: str = "auto", states: Mapping[str, Callable[..., float]] | None = None,
         strict: bool = True) -> Program:
    """The build at `manifest` (its folder, or the folder's manifest.json), configured."""
    return Program(Manifest.load(manifest), config, device, states, strict)


def pick_driver(targets: list[str], device: str = "auto") -> str:
    """The IREE driver to run on: `device` itself, or the first GPU driver with a device
    whose target was built, else `local-task`."""
    if device != "auto":
        return device
    for driver in ("cuda", "hip"):
        if DRIVER_TARGET[driver] in targets and _has_device(driver):
            return driver
    return "local-task"


def _has_device(driver: str) -> bool:
    try:
        return bool(ireert.get_driver(driver).query_available_devices())
    except (RuntimeError, ValueError):
        return False


@dataclass
class _Loaded:
    invoke: Any                 # iree.runtime.FunctionInvoker (its weights are parameters)
    input_args: list[int] | None   # or an XlaRunner (None: every input)
    backend: str = "iree"


class Program:
    """Every decorated function of a build, callable by name (`prog.fn(*inputs)`)."""

    def __init__(self, manifest: Manifest, config: str | Path | Mapping[str, Any] | None,
                 device: str, states: Mapping[str, Callable[..., float]] | None,
                 strict: bool) -> None:
        self.manifest = manifest
        self.root = manifest.path.parent
        if manifest.data.get("approxcc_ml") != MANIFEST_VERSION:
            raise CompileError(f"{manifest.path}: built by another approxcc (manifest version "
                               f"{manifest.data.get('approxcc_ml')}, expected "
                               f"{MANIFEST_VERSION}): rebuild it")
        self.driver = pick_driver(manifest.data["targets"], device)
        self.target = DRIVER_TARGET.get(self.driver, self.driver)
        if self.target not in manifest.data["targets"]:
            raise CompileError(f"{manifest.path}: no '{self.target}' vmfbs for driver "
                               f"'{self.driver}' (built: {manifest.data['targets']})")
        self.iree_config = ireert.Config(self.driver)
        self.states = dict(states or {})
        self.functions = {name: MLFunction(self, name, entry)
                          for name, entry in manifest.functions.items()}
        self._parameters: dict[str, Any] = {}
        self._modules: dict[tuple[str, str], Any] = {}
        self.configure(config, strict)

    def __getattr__(self, name: str) -> MLFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)

    def configure(self, config: str | Path | Mapping[str, Any] | None,
                  strict: bool = True) -> None:
        """Applies a configuration (path, dict, or None: the build's, exact for a build of
        every variant). `strict=False` ignores knobs this build does not have (those of the
        C half of a compound program)."""
        if config is None:
            config = self.manifest.data.get("config")
        settings = checked_config([k for f in self.functions.values() for k in f.knobs],
                                  config, strict)
        for fn in self.functions.values():
            fn.configure({k["name"]: settings[k["name"]] for k in fn.knobs
                          if k["name"] in settings})

    def release(self) -> None:
        """Drops every loaded vmfb and weights file (their memory, on the device too); a later
        call loads what it runs again."""
        self._modules.clear()
        self._parameters.clear()
        for fn in self.functions.values():
            fn._loaded.clear()
            fn._forget()

    def _module(self, variant: Mapping[str, Any]) -> Any:
        """The `main` of the variant's vmfb in a context serving its weights (one context per
        vmfb and weights file: variants with the same code may have other weights)."""
        vmfb = variant["vmfb"][self.target]
        key = (vmfb, variant["weights"])
        if key not in self._modules:
            vm = ireert.VmModule.mmap(self.iree_config.vm_instance, str(self.root / vmfb))
            ctx = ireert.SystemContext(vm_modules=[self._parameter_module(variant), vm],
                                       config=self.iree_config)
            self._modules[key] = ctx.modules[vm.name]["main"]
        return self._modules[key]

    def _parameter_module(self, variant: Mapping[str, Any]) -> Any:
        """An io_parameters module serving the variant's weights as `p0, p1, ...`."""
        path = variant["weights"]
        if path not in self._parameters:
            index = ireert.ParameterIndex()
            for i, array in enumerate(load_weights(self.root / path)):
                index.add_buffer(f"p{i}", np.ascontiguousarray(array))
            self._parameters[path] = ireert.create_io_parameters_module(
                self.iree_config.vm_instance, index.create_provider(scope=PARAMETER_SCOPE))
        return self._parameters[path]


@dataclass(frozen=True)
class _Call:
    """What one call of a function runs."""

    runs: Mapping[str, Any]       # the variant, or the dispatch, in the manifest
    tree_args: list[np.ndarray]   # a dispatch's states, thresholds and decisions
    variant: str                  # the variant the configuration selected
    entry: str                    # the vmfb entry that runs it (a dispatch's id)


def _host(out: Any) -> np.ndarray:
    """An IREE output as a read-only numpy array: copied, for a view of its buffer is
    overwritten once IREE reuses it, and a slice of it does not keep it alive."""
    host = np.asarray(out).copy() if isinstance(out, ireert.DeviceArray) else np.asarray(out)
    host.setflags(write=False)
    return host


class MLFunction:
    """One decorated function: picks the variant per call and runs it."""

    def __init__(self, program: Program, name: str, entry: Mapping[str, Any]) -> None:
        self.program = program
        self.name = name
        self.entry = entry
        self.knobs: list[dict[str, Any]] = entry["knobs"]
        self.settings: dict[str, KnobSetting] = {}
        self._thresholds: dict[str, np.ndarray] = {}   # per decision tree, as float32
        self._bounds: dict[str, list[float]] = {}      # the same, for bisect
        self.last_variant: str | None = None   # the variant the configuration selected
        self.last_entry: str | None = None     # the vmfb entry that ran it (a dispatch's id)
        self._by_choice = {tuple(v["choice"][k["name"]] for k in self.knobs): v
                           for v in entry["variants"]}
        self._static = [k["name"] for k in self.knobs if k["state"] is None]
        self._dispatches = {tuple(d["static"][k] for k in self._static): d
                            for d in entry["dispatches"] if program.target in d["vmfb"]}
        self._loaded: dict[tuple[str, str], _Loaded] = {}
        self._tuple = entry["output_kind"] == "tuple"
        # per input, the (shape, dtype) of the usual numpy array (no shape where symbolic)
        self._usual = [(tuple(s["shape"]) if all(isinstance(d, int) for d in s["shape"])
                        else None, np.dtype(s["dtype"])) for s in entry["inputs"]]
        # what every call runs while no knob is a decision tree: the choice, and so the
        # variant and its loaded form, is the same whatever the inputs (found on the first
        # call, then reused)
        self._fixed: _Call | None = None
        # where that is an XLA variant and every input has a static shape: its jitted
        # executable, called with the inputs as they come (`_fast_outputs`)
        self._fast: Callable[..., list[Any]] | None = None
        self._static_shapes = all(shape is not None for shape, _ in self._usual)
        self._forced: str | None = None   # the backend of every variant (`use_backend`)

    def configure(self, settings: dict[str, KnobSetting]) -> None:
        """Takes the function's knob settings; thresholds become float32 here, once (the
        dispatch compares in float32, and so does the host's choice)."""
        self.settings = settings
        self._thresholds = {name: np.asarray(s.thresholds, np.float32)
                            for name, s in settings.items() if s.thresholds is not None}
        self._bounds = {name: t.tolist() for name, t in self._thresholds.items()}
        self._forget()

    def use_backend(self, backend: str | None) -> None:
        """Runs every variant on `backend` ("xla" or "iree"; None: the build's choice per
        variant): the build times a variant's two forms side by side this way."""
        self._forced = backend
        self._forget()

    def _forget(self) -> None:
        """Drops what the calls found fixed (a new configuration, backend or release)."""
        self._fixed = None
        self._fast = None

    def choice(self, *inputs: Any) -> dict[str, int | None]:
        """The knob values this call runs with (evaluating state functions)."""
        return self._choice(self._states(inputs))

    def variant(self, *inputs: Any) -> dict[str, Any]:
        return self._variant(self.choice(*inputs))

    def dispatch(self, *inputs: Any) -> dict[str, Any] | None:
        """The dispatch this call runs (None: the variant table, no dispatch built for this
        target and static choice)."""
        return self._dispatch(self.choice(*inputs))

    def _variant(self, choice: Mapping[str, int | None]) -> dict[str, Any]:
        key = tuple(choice[k["name"]] for k in self.knobs)
        if key not in self._by_choice:   # a build of one configuration (--config)
            labels = ",".join(f"{k['name']}={_label(k, v)}" for k, v in zip(self.knobs, key,
                                                                            strict=True))
            built = self.program.manifest.data["config"]["file"]
            raise LookupError(f"{self.name}(): variant <{labels}> was not built: the build "
                              f"has the variants of configuration '{built}' only (build "
                              "without --config for every variant)")
        return self._by_choice[key]

    def _dispatch(self, choice: Mapping[str, int | None]) -> dict[str, Any] | None:
        return self._dispatches.get(tuple(choice[k] for k in self._static))

    def __call__(self, *inputs: Any) -> Any:
        """The outputs, as read-only numpy arrays (immutable, as `jax.jit`'s are)."""
        outs = self._fast_outputs(inputs)
        if outs is not None:
            host = tuple(map(np.asarray, outs))
            return host if self._tuple else host[0]
        outs, backend = self._run(inputs)
        # XLA's viewed (np.asarray of a jax.Array: read-only, its buffer kept alive by the
        # view; a copy cost about 25 us an output); IREE's copied (`_host`)
        host = tuple(map(np.asarray if backend == "xla" else _host, outs))
        return host if self._tuple else host[0]

    def on_device(self, *inputs: Any) -> Any:
        """The outputs, as device arrays (`iree.runtime.DeviceArray`; `jax.Array` for a
        variant run by XLA): passed back as inputs they are not copied (a KV cache stays on
        the device between calls)."""
        outs = self._fast_outputs(inputs)
        if outs is None:
            outs, _ = self._run(inputs)
        return outs if self._tuple else outs[0]

    def _fast_outputs(self, inputs: tuple[Any, ...]) -> list[Any] | None:
        """The outputs by the fixed XLA executable, given the inputs as they come (None: no
        such executable, or it refused them). A microsecond of Python between two calls of
        a sub-millisecond function costs tens in the next one (XLA's worker threads go idle:
        measured), so this path checks nothing itself: jax converts numpy inputs as `_input`
        does (dtype, order) and the exported function refuses any other static shape or
        dtype; whatever it refuses goes through `_run`, whose checks say why."""
        fast = self._fast
        if fast is None:
            return None
        try:
            return fast(*inputs)
        except Exception:  # noqa: BLE001 - refused: `_run` checks the inputs and says why
            return None

    def _run(self, inputs: tuple[Any, ...]) -> tuple[tuple[Any, ...], str]:
        """The outputs of the call on `inputs`, and the backend that ran it. A few
        microseconds of Python here cost tens in a program that calls back to back
        (measured: the worker threads go idle between calls), so the usual inputs
        (C-ordered numpy arrays of the build's dtypes and static shapes) are taken in a few
        attribute reads, and the rest checked one by one."""
        arrays = [x for x, (shape, dtype) in zip(inputs, self._usual, strict=False)
                  if type(x) is np.ndarray and x.shape == shape and x.dtype == dtype and
                  x.flags.c_contiguous]
        usual = len(arrays) == len(inputs) == len(self._usual)
        if not usual:
            arrays = self._inputs(inputs)
        call = self._fixed or self._call(arrays)
        loaded = self._load(call.runs)   # (loaded each time: the build switches backends)
        if not usual:   # a device array of the other backend: through the host
            theirs = _jax_array() if loaded.backend == "iree" else ireert.DeviceArray
            arrays = [np.asarray(x) if isinstance(x, theirs) else x for x in arrays]
        if loaded.input_args is not None:
            arrays = [arrays[i] for i in loaded.input_args]
        result = loaded.invoke(*arrays, *call.tree_args)
        self.last_variant, self.last_entry = call.variant, call.entry
        if call is self._fixed and loaded.backend == "xla" and self._static_shapes:
            self._fast = loaded.invoke.bound
        return (tuple(result) if isinstance(result, tuple | list) else (result,),
                loaded.backend)

    def _inputs(self, inputs: tuple[Any, ...]) -> list[Any]:
        """`inputs` checked against the build's, one by one (`_input`)."""
        sigs = self.entry["inputs"]
        if len(inputs) != len(sigs):
            raise TypeError(f"{self.name}() takes {len(sigs)} input(s) (weights are "
                            f"resident), got {len(inputs)}")
        return [_input(self.name, i, x, sig) for i, (x, sig) in
                enumerate(zip(inputs, sigs, strict=True))]

    def _call(self, arrays: list[Any]) -> _Call:
        """What this call runs: the variant the knobs choose on `arrays`, or the dispatch
        with its decision trees' arguments; kept as `_fixed` where no knob has a tree."""
        states = self._states(arrays)
        choice = self._choice(states)
        variant = self._variant(choice)
        dispatch = self._dispatch(choice)
        call = _Call(dispatch, self._tree_args(dispatch, states, choice), variant["id"],
                     dispatch["id"]) if dispatch is not None else \
            _Call(variant, [], variant["id"], variant["id"])
        if all(state is None for state in states.values()):
            self._fixed = call
        return call

    def _tree_args(self, dispatch: Mapping[str, Any], states: Mapping[str, float | None],
                   choice: Mapping[str, int | None]) -> list[np.ndarray]:
        """Per dynamic knob of `dispatch`: its state, thresholds and decisions (positions in
        the dispatch's values); a knob without a decision tree is one leaf, its value."""
        args = []
        for name, values in zip(dispatch["knobs"], dispatch["values"], strict=True):
            setting = self.settings.get(name)
            n = next(k["thresholds"] for k in self.knobs if k["name"] == name)
            if states[name] is None or setting is None or setting.thresholds is None:
                state, decisions = 0.0, [choice[name]] * (n + 1)
                thresholds = np.zeros(n, np.float32)
            else:
                state, thresholds = states[name], self._thresholds[name]
                decisions = list(setting.decisions or ())
            args += [np.asarray(state, np.float32), thresholds,
                     np.asarray([values.index(d) for d in decisions], np.int32)]
        return args

    def _states(self, inputs: tuple[Any, ...]) -> dict[str, float | None]:
        """Each knob's state (its state function on the inputs) where its configuration is
        a decision tree, else None."""
        return {k["name"]: self._state(k, inputs) for k in self.knobs}

    def _choice(self, states: Mapping[str, float | None]) -> dict[str, int | None]:
        return {k["name"]: self._value(k, states[k["name"]]) for k in self.knobs}

    def backend(self, variant: Mapping[str, Any]) -> str:
        """What runs `variant` on this program's device: "xla" (its XLA form, on a CPU
        driver where the build chose it) or "iree"."""
        if self.program.target != "cpu" or "xla" not in variant:
            return "iree"
        return self._forced or variant.get("backend", {}).get("cpu", "iree")

    def _load(self, variant: Mapping[str, Any], backend: str | None = None) -> _Loaded:
        backend = backend or self.backend(variant)
        vid = variant["id"]
        if backend == "xla":
            if (vid, "xla") not in self._loaded:
                self._loaded[(vid, "xla")] = _Loaded(XlaRunner(self.program.root, variant),
                                                     None, "xla")
            return self._loaded[(vid, "xla")]
        target = self.program.target
        if target not in variant["vmfb"]:
            # built with --keep-going and IREE failed on it: the manifest's "failed" lists it
            raise LookupError(f"variant '{variant['name']}' was not built for target "
                              f"{target} (the configuration picks a variant that failed "
                              "to compile)")
        if (vid, "iree") not in self._loaded:
            self._loaded[(vid, "iree")] = _Loaded(self.program._module(variant),
                                                  variant["input_args"])
        return self._loaded[(vid, "iree")]

    def _state(self, knob: Mapping[str, Any], inputs: tuple[Any, ...]) -> float | None:
        setting = self.settings.get(knob["name"])
        if setting is None or setting.thresholds is None:
            return None
        state = self.program.states.get(knob["state"]) or approx.registered_state(knob["state"])
        if state is None:
            raise LookupError(f"knob '{knob['name']}': no state function '{knob['state']}' "
                              "(approx.register_state or load(..., states=...))")
        # float32, as the dispatch compares it
        return float(np.float32(state(*inputs)))

    def _value(self, knob: Mapping[str, Any], state: float | None) -> int | None:
        setting = self.settings.get(knob["name"])
        if setting is None:
            return knob["exact"]
        if setting.value is not None:
            return setting.value
        assert setting.thresholds is not None and setting.decisions is not None
        assert state is not None
        return decide(self._bounds[knob["name"]], setting.decisions, state)


def _label(knob: Mapping[str, Any], value: int | None) -> Any:
    """What a config value of `knob` (a manifest entry) stands for."""
    return "exact" if value is None else knob["values"][knob["domain"].index(value)]


def _input(fn: str, i: int, x: Any, sig: Mapping[str, Any]) -> Any:
    """`x` as the build's input `i`: a numpy array, or a device array (IREE's, or a
    jax.Array an XLA variant returned) as it is."""
    if isinstance(x, ireert.DeviceArray | _jax_array()):
        if not _fits(x.shape, sig) or str(x.dtype) != sig["dtype"]:
            raise ValueError(f"{fn}(): input {i} is a {x.dtype}{list(x.shape)} device array, "
                             f"the build has {sig['dtype']}{_shape(sig)}")
        return x
    a = np.asarray(x, dtype=sig["dtype"], order="C")
    if not _fits(a.shape, sig):
        raise ValueError(f"{fn}(): input {i} has shape {list(a.shape)}, the build has "
                         f"{_shape(sig)}")
    return a


def _jax_array() -> type:
    """`jax.Array`, where jax was imported (an XLA variant ran), else a type nothing is."""
    jax = sys.modules.get("jax")
    return jax.Array if jax is not None else type(None)


def _shape(sig: Mapping[str, Any]) -> str:
    """The build's shape of an input, its symbolic dimensions' bounds after it."""
    bounds = [f"{lo} <= {name}" + (f" <= {hi}" if hi is not None else "")
              for name, (lo, hi) in sig.get("bounds", {}).items()]
    return str(sig["shape"]) + (f" ({', '.join(bounds)})" if bounds else "")


def _fits(shape: Sequence[int], sig: Mapping[str, Any]) -> bool:
    """`shape` is one the build takes: its dimensions, where one is symbolic a size within
    its bounds."""
    bounds = sig.get("bounds", {})

    def fits(d: int, b: int | str) -> bool:
        if isinstance(b, int):
            return d == b
        least, most = bounds.get(b, (1, None))
        return least <= d and (most is None or d <= most)

    built = sig["shape"]
    return len(shape) == len(built) and all(map(fits, shape, built))
