"""A user's JAX program: its decorated functions and their example arguments.

`load_program(path)` imports the module at `path` and returns each function carrying
`@approx.knob` decorators (defined in it) with the example arguments of its module-level
`APPROX_EXAMPLE_ARGS = {"fn": (weights, *inputs)}`; every mistake there is an
AnnotationError at the function's definition.

`user_errors(path)` makes an exception raised in the model's own code (an import that fails,
a name it lacks, a shape mismatch in a decorated function) a diagnostic at the model's line
that raised it, not an internal compiler error.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from approxcc.diagnostics import CompileError, SourceLocation, note
from approxcc.ml.approx import AnnotationError, ApproxFunction


@dataclass(frozen=True, eq=False)   # identity: a cache key of its exports
class DecoratedFunction:
    name: str
    afn: ApproxFunction
    weights: Any            # argument 0: a pytree of arrays
    inputs: list[Any]       # the per-call example arrays (float32/int32 after narrowing)
    exact_out: Any          # jax.eval_shape of the exact function

    @property
    def is_tuple(self) -> bool:
        return isinstance(self.exact_out, tuple | list)


@dataclass(frozen=True)
class MLProgram:
    path: Path
    functions: dict[str, DecoratedFunction]


def load_program(path: str | Path) -> MLProgram:
    """The decorated functions of the module at `path` (a CompileError when it has none)."""
    module = _import(Path(path))
    found = _decorated(module)
    if not found:
        raise CompileError(f"{path}: no function decorated with @approx.knob")
    examples = getattr(module, "APPROX_EXAMPLE_ARGS", {})
    return MLProgram(Path(path), {name: _function(name, afn, examples)
                                  for name, afn in found.items()})


def _function(name: str, afn: ApproxFunction, examples: dict[str, Any]) -> DecoratedFunction:
    import jax

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
    return DecoratedFunction(name, afn, weights, inputs, exact_out)


def _input_array(name: str, index: int, x: Any, loc: SourceLocation) -> Any:
    import jax
    import numpy as np

    if isinstance(x, jax.ShapeDtypeStruct):   # a shape with symbolic dimensions, as exported
        return x
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype == object:
        raise AnnotationError(f"argument {index} of APPROX_EXAMPLE_ARGS[\"{name}\"] must be an "
                              "array (only argument 0, the weights, may be a pytree)", loc)
    narrow = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}
    return a.astype(narrow[a.dtype]) if a.dtype in narrow else a


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
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        sys.path.remove(str(path.resolve().parent))
    return module


_PACKAGE = Path(__file__).resolve().parents[1]


@contextmanager
def user_errors(path: str | Path) -> Iterator[None]:
    """An exception raised in the model at `path` becomes a CompileError at the model's line
    that raised it: the innermost frame of the traceback in the model's file, with no frame
    of approxcc after it (else it is approxcc's own bug, and raised as it is). Its message is
    the exception's first line; the rest is a note."""
    try:
        yield
    except CompileError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's errors; the others are re-raised
        loc = _raised_in(exc, Path(path))
        if loc is None:
            raise
        text = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        first, _, rest = text.strip().partition("\n")
        raise CompileError(f"{type(exc).__name__}: {first}".rstrip(": "), loc,
                           [note(rest.strip())] if rest.strip() else []) from None


def _raised_in(exc: BaseException, path: Path) -> SourceLocation | None:
    """Where in the model at `path` `exc` was raised (see `user_errors`), or None; the file
    named as the command line names it."""
    model = path.resolve()
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == model:
        return SourceLocation(str(path), exc.lineno or 1, exc.offset or 1)
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [i for i, f in enumerate(frames) if Path(f.filename).resolve() == model]
    if not ours or any(Path(f.filename).resolve().is_relative_to(_PACKAGE)
                       for f in frames[ours[-1] + 1:]):
        return None
    frame = frames[ours[-1]]
    return SourceLocation(str(path), frame.lineno or 1, (frame.colno or 0) + 1)


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
