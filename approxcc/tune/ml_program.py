"""A JAX program described by approx.toml (docs/tuning.md, "Tuning a JAX program"), tuned
as a C program is: `JaxProgram`, an `Application`.

`build()` writes the inputs the generator gives (`module:function(split)`, called with
"tune" and with "eval") as .npz files, checks that no tuning input is also a held-out one,
builds every variant of the model once through the ML build (`approxcc model.py -o DIR`,
CPU), checks that the exact build takes each input, and times the exact build against
`jax.jit` of the undecorated entry on the tuning inputs (the report's `reference`).

A run calls the entry in this process (a Dask worker's, with `--parallel`/`--cluster`)
through the ML runtime (`approxcc.ml.runtime`, IREE's `local-task` CPU driver), configured
with the configuration file: one untimed call (it loads the variant), then calls until they
have taken `MIN_SECONDS` (at least `MIN_CALLS`); its time is their median. The exact run
(no configuration) times the exact build and `jax.jit` of the undecorated entry (its weights
on the device once, as the build's are) in turns and takes the faster: every speedup the
tuner reports is over the faster of the two. Its output is the exact build's.

The entry is a decorated function (called with an input tuple: the weights are the build's,
those of `APPROX_EXAMPLE_ARGS`), or another function of the module, called with the input
tuple while the module's decorated functions are replaced by the build's variants (the
weights they are passed are not read: the build's are).

Outputs travel as text (the results DB keeps the exact ones): JSON, each array's dtype,
shape and bytes in base64, decoded for the metric (`qos.array_metric`).
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import importlib
import importlib.util
import json
import os
import statistics
import sys
import tarfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from approxcc.diagnostics import CompileError, SourceLocation, warn
from approxcc.tune.application import Application, RunFailed, RunResult
from approxcc.tune.program import Program, location
from approxcc.tune.qos import ArrayOutput, array_metric
from approxcc.tune.space import KnobSpace

TARGET, DRIVER = "cpu", "local-task"
MIN_CALLS = 3           # timed calls of a run at least...
MIN_SECONDS = 0.02      # ...and until they took this long...
MAX_CALLS = 1000        # ...but no more calls than this
ROUND_PASSES = 3        # a confirmation round times each side this many times, in turns
SPLITS = ("tune", "eval")
_MARK = "__approxcc_tune__"   # on a model module this file imported


def decode(text: str) -> ArrayOutput:
    """An output as `encode` wrote it: an array, or a tuple of arrays."""
    import numpy as np

    data = json.loads(text)
    arrays = [np.frombuffer(base64.b64decode(a["data"]), dtype=a["dtype"]).reshape(a["shape"])
              for a in data["arrays"]]
    return arrays[0] if data["single"] else tuple(arrays)


def encode(output: Any) -> str:
    """An entry's output (an array, or a tuple, list or other pytree of arrays) as text."""
    import jax
    import numpy as np

    single = not isinstance(output, tuple | list | dict)
    arrays = []
    for leaf in jax.tree.leaves(output):
        a = np.asarray(leaf)
        if a.dtype.type.__module__.startswith("ml_dtypes"):   # bfloat16 & co.: no npy name
            a = a.astype(np.float32)
        arrays.append({"dtype": a.dtype.str, "shape": list(a.shape),
                       "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()})
    return json.dumps({"single": single and len(arrays) == 1, "arrays": arrays})


class JaxProgram(Application):
    """A JAX program of approx.toml: its model built once by the ML build, its entry run in
    this process under each configuration."""

    def __init__(self, program: Program):
        self.program = program
        self.name = program.name
        self.source = program.sources[0]
        self.tune_inputs = [str(p) for p in program.tune_inputs]
        self.eval_inputs = [str(p) for p in program.eval_inputs]
        try:
            self.metric = array_metric(program.metric, program.root)
        except CompileError as err:
            raise CompileError(err.diagnostic.message, location(program, "metric")) from None
        self.build_dir: Path | None = None
        self.times: dict[str, float] = {}     # the reference: exact build and jax.jit
        self.jit_error = ""                   # why jax.jit of the entry failed, if it did
        self._session: _Session | None = None
        self.session()     # the module imports, its entry and input generator exist

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_session": None}   # a worker imports the model again

    def describe(self) -> str:
        return str(self.program.path)

    def session(self) -> _Session:
        if self._session is None:
            self._session = _Session(self.program)
        if self._session.build_dir != self.build_dir:
            self._session.build_dir, self._session.runtime = self.build_dir, None
        return self._session

    # -- build ---------------------------------------------------------------------------

    def build(self, workdir: Path) -> None:
        from approxcc.ml.build import build_model

        workdir.mkdir(parents=True, exist_ok=True)
        if self.program.inputs:
            self.tune_inputs, self.eval_inputs = (self._generate(split, workdir / "inputs")
                                                  for split in SPLITS)
        self._check_disjoint()
        build_model(self.source, workdir / "model", (TARGET,))
        self.build_dir = workdir / "model"
        self._reference(self.session())

    def _generate(self, split: str, folder: Path) -> list[str]:
        """The generator's inputs of `split`, written as .npz files (its arrays in order)."""
        import numpy as np

        spec = self.program.inputs
        where = location(self.program, "inputs")
        session = self.session()
        generator = session.resolve(spec, where)
        with session.user_code(), self._user_error(f"inputs '{spec}' (\"{split}\")", where):
            given = generator(split)
        if isinstance(given, str | bytes) or not isinstance(given, Sequence) or not given:
            raise CompileError(f"inputs '{spec}' (\"{split}\") must return a non-empty list "
                               f"of input tuples, got {_kind(given)}", where)
        folder = folder / split
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.npz"):
            old.unlink()
        paths = []
        for i, item in enumerate(given):
            arrays = [item] if _is_array(item) else item
            if not isinstance(arrays, tuple | list) or not all(map(_is_array, arrays)):
                raise CompileError(f"inputs '{spec}' (\"{split}\"): item {i} is "
                                   f"{_kind(item)}, not a tuple of arrays", where)
            path = folder / f"{i:04d}.npz"
            np.savez(path, *[np.asarray(a) for a in arrays])
            paths.append(str(path))
        return paths

    def _check_disjoint(self) -> None:
        """No held-out input is a tuning input (the same arrays)."""
        seen = {_digest(self.session().arguments(p)): p for p in self.tune_inputs}
        for p in self.eval_inputs:
            if (twin := seen.get(_digest(self.session().arguments(p)))) is not None:
                key = "inputs" if self.program.inputs else "eval"
                raise CompileError("tuning and evaluation inputs must be disjoint: held-out "
                                   f"input '{_label(p)}' is tuning input '{_label(twin)}'",
                                   location(self.program, key))

    def _reference(self, session: _Session) -> None:
        """The exact build takes every input (else an error at the inputs' key), and its time
        against jax.jit's on the tuning inputs."""
        exact_total = jit_total = 0.0
        for split, paths in (("tune", self.tune_inputs), ("eval", self.eval_inputs)):
            key = "inputs" if self.program.inputs else split
            for path in paths:
                args = session.arguments(path)
                with session.user_code(), self._user_error(
                        f"the exact program on input '{_label(path)}'",
                        location(self.program, key)):
                    exact = session.built(None, args)
                    exact.prepare()
                    exact.call()
                if split == "eval":
                    continue
                sides = [session.built(None, args)]
                if not self.jit_error:
                    try:
                        with session.user_code():
                            session.jitted(args).call()
                        sides.append(session.jitted(args))
                    except Exception as err:  # noqa: BLE001 - the user's code: reported
                        self.jit_error = _reason(err)
                        warn(f"jax.jit of '{self.program.entry}' fails ({self.jit_error}): "
                             "speedups are over the exact build alone",
                             location(self.program, "entry"))
                times = _rounds(sides, ROUND_PASSES, 600.0)
                exact_total += statistics.median(times[0])
                jit_total += statistics.median(times[1]) if len(times) > 1 else 0.0
        self.times = {"exact build": exact_total}
        if not self.jit_error:
            self.times["jax.jit"] = jit_total

    @contextlib.contextmanager
    def _user_error(self, what: str, where: SourceLocation) -> Iterator[None]:
        """An exception raised in the model is an error at its line there, another one an
        error at `where` (approx.toml's key)."""
        from approxcc.ml.program import user_errors

        try:
            with user_errors(self.source):
                yield
        except CompileError:
            raise
        except Exception as err:  # noqa: BLE001 - the user's code
            raise CompileError(f"{what} raised {_reason(err)}", where) from None

    def reference(self) -> dict[str, float] | None:
        return dict(self.times) or None

    # -- the tuner's interface -------------------------------------------------------------

    def knob_space(self) -> KnobSpace:
        from approxcc.tune.space import ml_knob_space

        assert self.build_dir is not None, "JaxProgram.knob_space() before build()"
        manifest = self.build_dir / "manifest.json"
        space = ml_knob_space(manifest, TARGET)
        functions = json.loads(manifest.read_text())["functions"]
        entry = self.program.entry
        names = {k["name"] for name, fn in functions.items() if entry not in functions
                 or name == entry for k in fn["knobs"]}
        return KnobSpace(tuple(k for k in space.knobs if k.name in names),
                         tuple(c for c in space.unbuilt if all(n in names for n, _ in c)))

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        start = time.perf_counter()
        session = self.session()
        args = session.arguments(input)
        sides = [session.built(config_path, args)]
        if config_path is None and not self.jit_error:
            sides.append(session.jitted(args))
        times = _rounds(sides, 1, timeout)
        return RunResult(sides[0].text(), min(map(statistics.median, times)),
                         time.perf_counter() - start, True)

    def run_round(self, input: str, config_paths: list[Path], workdir: Path,
                  timeout: float) -> tuple[RunResult, list[RunResult | RunFailed]]:
        """The exact build, jax.jit and each configuration on one input, `ROUND_PASSES`
        times in turns (the calls of a side together: one configuration at a time)."""
        start = time.perf_counter()
        session = self.session()
        args = session.arguments(input)
        exact = [session.built(None, args)]
        if not self.jit_error:
            exact.append(session.jitted(args))
        sides = exact + [session.built(c, args) for c in config_paths]
        failures: dict[int, RunFailed] = {}
        times: list[list[float]] = [[] for _ in sides]
        for _ in range(ROUND_PASSES):
            for i, side in enumerate(sides):
                if i in failures:
                    continue
                try:
                    times[i] += _rounds([side], 1, timeout)[0]
                except RunFailed as err:
                    if i < len(exact):
                        raise
                    failures[i] = err
        wall = time.perf_counter() - start
        reference = RunResult(sides[0].text(), min(statistics.median(times[i])
                                                   for i in range(len(exact))), wall, True)
        return reference, [failures[i] if i in failures else
                           RunResult(sides[i].text(), statistics.median(times[i]), wall, True)
                           for i in range(len(exact), len(sides))]

    def loss(self, exact_outputs: list[str], outputs: list[str]) -> float:
        return self.metric([decode(e) for e in exact_outputs], [decode(o) for o in outputs])

    def files(self) -> list[Path]:
        """The build (manifest, vmfbs, weights) as one archive, and the inputs."""
        if self.build_dir is None:
            raise RuntimeError("JaxProgram.files() before build()")
        archive = self.build_dir.with_suffix(".tar")
        with tarfile.open(archive, "w") as tar:
            for sub in ("manifest.json", TARGET, "weights"):
                tar.add(self.build_dir / sub, arcname=sub)
        return [archive, *map(Path, self.tune_inputs + self.eval_inputs)]

    def relocate(self, moved: dict[str, Path]) -> JaxProgram:
        assert self.build_dir is not None
        there = copy.copy(self)
        there._session = None
        archive = moved[str(self.build_dir.with_suffix(".tar"))]
        folder = archive.with_suffix("")
        if not folder.is_dir():   # each process of a worker relocates: the first unpacks
            partial = folder.with_name(f"{folder.name}.{os.getpid()}.partial")
            with tarfile.open(archive) as tar:
                tar.extractall(partial, filter="data")
            with contextlib.suppress(OSError):
                partial.rename(folder)
        there.build_dir = folder
        there.tune_inputs = [str(moved[p]) for p in self.tune_inputs]
        there.eval_inputs = [str(moved[p]) for p in self.eval_inputs]
        return there


@dataclass
class _Side:
    """One way of running the entry on one input: `call()` runs it once (the first call of a
    configuration loads its variant: untimed), `timed()` as the timed calls run it."""

    call: Callable[[], Any]
    prepare: Callable[[], None] = lambda: None   # before a series of calls
    output: Any = None
    # the outputs left on the device, as jax.jit's are: reading a fresh jax.Array back costs
    # ~16 us an output, which jax.jit's side does not pay (mnist_mlp's exact build timed 15%
    # behind jax.jit for it; level once both sides leave them there)
    timed: Callable[[], Any] | None = None

    def text(self) -> str:
        return encode(self.output)


def _rounds(sides: list[_Side], passes: int, timeout: float) -> list[list[float]]:
    """Each side's call times: `passes` times in turns, each a series of calls that takes
    `MIN_SECONDS` (at least `MIN_CALLS`), after one untimed call that keeps the output. A
    call that raises, or takes longer than `timeout`, is a RunFailed."""
    import jax

    times: list[list[float]] = [[] for _ in sides]
    for _ in range(passes):
        for side, got in zip(sides, times, strict=True):
            try:
                side.prepare()
                if side.output is None:
                    side.output = jax.block_until_ready(side.call())
                spent = 0.0
                run = side.timed or side.call
                while len(got) < MIN_CALLS or spent < MIN_SECONDS and len(got) < MAX_CALLS:
                    start = time.perf_counter()
                    jax.block_until_ready(run())
                    took = time.perf_counter() - start
                    if took > timeout:
                        raise RunFailed(f"timeout: a call took {took:.2f} s, more than "
                                        f"{timeout:.2f} s")
                    got.append(took)
                    spent += took
            except RunFailed:
                raise
            except Exception as err:  # noqa: BLE001 - a broken variant, a user's bug
                raise RunFailed(_reason(err)) from None
    return times


class _Session:
    """What runs need in a process: the model module, the entry, the runtime over the build
    (loaded on first use), jax.jit of the undecorated entry, the inputs read."""

    def __init__(self, program: Program):
        from approxcc.ml.approx import ApproxFunction

        self.program = program
        self.source = program.sources[0]
        self.module = self._import()
        entry = getattr(self.module, program.entry, None)
        decorated = {name: obj for name, obj in vars(self.module).items()   # as the build
                     if isinstance(afn := getattr(obj, "__approx__", None), ApproxFunction)
                     and afn.fn.__module__ == self.module.__name__}
        if not callable(entry):
            have = f" (its decorated functions: {', '.join(decorated)})" if decorated else ""
            raise CompileError(f"'{program.entry}' is not a function of "
                               f"'{self.source.name}'{have}", location(program, "entry"))
        self.entry: Callable[..., Any] = entry
        self.afn: ApproxFunction | None = getattr(entry, "__approx__", None)
        self.decorated = decorated
        self.build_dir: Path | None = None   # the JaxProgram's, once built
        self.runtime: Any = None
        self._jit: Any = None
        self._weights: Any = None
        self._inputs: dict[str, tuple[Any, ...]] = {}
        if program.inputs:
            self.resolve(program.inputs, location(program, "inputs"))

    def _import(self) -> ModuleType:
        """The model's module, under its own name (as `module:function` specs name it)
        unless another module has that name."""
        from approxcc.ml.program import user_errors

        stem = self.source.stem
        other = sys.modules.get(stem)
        name = stem if other is None or getattr(other, _MARK, False) else f"approxcc_tune_{stem}"
        spec = importlib.util.spec_from_file_location(name, self.source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        setattr(module, _MARK, True)
        sys.modules[name] = module
        try:
            with self.user_code(), user_errors(self.source):
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module

    @contextlib.contextmanager
    def user_code(self) -> Iterator[None]:
        """The project's folder and the model's on sys.path (the model imports its
        neighbours, as it does under the ML build; the inputs module is the project's)."""
        folders = list(dict.fromkeys([str(self.program.root), str(self.source.parent)]))
        sys.path[:0] = folders
        try:
            yield
        finally:
            for folder in folders:
                with contextlib.suppress(ValueError):
                    sys.path.remove(folder)

    def resolve(self, spec: str, where: SourceLocation) -> Callable[..., Any]:
        """The function `module:function` names (the model's module by its file name)."""
        module_name, _, function_name = spec.partition(":")
        if module_name == self.source.stem:
            module: ModuleType = self.module
        else:
            try:
                with self.user_code():
                    module = importlib.import_module(module_name)
            except Exception as err:  # noqa: BLE001 - whatever the module raises
                raise CompileError(f"'{spec}': cannot import module '{module_name}' (searched "
                                   f"{self.program.root} first): {_reason(err)}",
                                   where) from None
        function = getattr(module, function_name, None)
        if not callable(function):
            raise CompileError(f"'{spec}': module '{module_name}' has no function "
                               f"'{function_name}'", where)
        return function

    def arguments(self, path: str) -> tuple[Any, ...]:
        """An input file's arrays, in order (read once)."""
        import numpy as np

        if path not in self._inputs:
            loaded = np.load(path, allow_pickle=False)
            if isinstance(loaded, np.ndarray):
                self._inputs[path] = (loaded,)
            else:
                with loaded:
                    self._inputs[path] = tuple(loaded[k] for k in loaded.files)
        return self._inputs[path]

    def _runtime(self) -> Any:
        if self.runtime is None:
            from approxcc.ml.runtime import load

            assert self.build_dir is not None, "a run before build()"
            self.runtime = load(self.build_dir, device=DRIVER)
        return self.runtime

    def built(self, config: Path | None, args: tuple[Any, ...]) -> _Side:
        """The build configured by `config` (None: exact) on `args`."""
        runtime = self._runtime()
        if self.afn is not None:
            function = runtime.functions[self.program.entry]
            return _Side(lambda: function(*args), lambda: runtime.configure(config),
                         timed=lambda: function.on_device(*args))

        def call() -> Any:
            with self._variants(runtime):
                return self.entry(*args)

        return _Side(call, lambda: runtime.configure(config))

    @contextlib.contextmanager
    def _variants(self, runtime: Any) -> Iterator[None]:
        """The module's decorated functions replaced by the build's (weights: the build's)."""
        saved = {name: vars(self.module)[name] for name in self.decorated}
        for name in self.decorated:
            function = runtime.functions[name]
            setattr(self.module, name, lambda _weights, *xs, _f=function: _f(*xs))
        try:
            yield
        finally:
            for name, obj in saved.items():
                setattr(self.module, name, obj)

    def jitted(self, args: tuple[Any, ...]) -> _Side:
        """`jax.jit` of the undecorated entry on `args` (a decorated entry: its weights,
        those of APPROX_EXAMPLE_ARGS, put on the device once)."""
        import jax

        if self._jit is None:
            if self.afn is not None:
                examples = getattr(self.module, "APPROX_EXAMPLE_ARGS", {})
                self._weights = jax.device_put(examples[self.program.entry][0])
                self._jit = jax.jit(self.afn.fn)
            else:
                self._jit = jax.jit(self.entry)
        jit = self._jit
        if self.afn is not None:
            weights = self._weights
            return _Side(lambda: jit(weights, *args))
        return _Side(lambda: jit(*args))


def _digest(arrays: tuple[Any, ...]) -> str:
    import numpy as np

    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _is_array(x: Any) -> bool:
    import numpy as np

    return hasattr(x, "shape") and hasattr(x, "dtype") and np.asarray(x).dtype != object


def _kind(x: Any) -> str:
    return f"a {type(x).__name__}"


def _label(path: str) -> str:
    p = Path(path)
    return f"{p.parent.name}/{p.name}"


def _reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
