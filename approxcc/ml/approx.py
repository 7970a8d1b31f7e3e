"""The Python `approx` decorator API (docs/ml.md).

    from approxcc import approx

    @approx.knob("llm", transform="func_substitute", variants=[generate_small],
                 state=approx.state("retrieval_score"), thresholds=1, range=(0, 100))
    @approx.knob("llm_precision", transform="precision", values=["f32", "bf16", "f16"])
    def generate(params, tokens): ...

One knob per decorator; decorators stack. Decorating never changes what the function
computes: calling it runs the exact JAX function. The knobs are read by `approxcc build`
(`approxcc.ml.build`), which exports one variant per knob configuration.

Conventions (documented in approxcc/ml/README.md):
- argument 0 of a decorated function is its weights (a pytree of arrays); the other
  arguments are per-call input arrays;
- the config value of a knob whose `values` are all integers is the value itself; otherwise
  (strings, tuples) it is the index of the entry in `values`; `func_substitute`: 0 = exact,
  k = the k-th variant.

This module does not import JAX.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from approxcc import registry
from approxcc.diagnostics import CompileError, SourceLocation

F = TypeVar("F", bound=Callable[..., Any])

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class AnnotationError(CompileError):
    """A mistake in an `@approx.knob` decorator; `str()` is `file:line:col: error: ...`."""

    def __str__(self) -> str:
        return self.diagnostic.render(show_source=False)


@dataclass(frozen=True)
class StateRef:
    """`approx.state("name")`: the knob is dynamic over the value of a registered state
    function (see `register_state`)."""

    name: str


@dataclass(frozen=True)
class Model:
    """`approx.model(fn, params)`: a `func_substitute` variant with its own weights; the
    variant is called as `fn(params, *inputs)` instead of `fn(weights, *inputs)`."""

    fn: Callable[..., Any]
    params: Any

    @property
    def __name__(self) -> str:
        # not getattr's default: a bound method's repr prints its object (a model's
        # weights: a second a call, 20 s of a decoder's build)
        name = getattr(self.fn, "__name__", None)
        return name if name is not None else repr(self.fn)


@dataclass(frozen=True)
class Knob:
    name: str
    transform: str
    values: tuple[Any, ...]          # the labels (ints, strings, tuples) or variant indices
    variants: tuple[Callable[..., Any] | Model, ...]
    state: str | None
    thresholds: int                   # 0 for a static knob
    range: tuple[float, float]
    loc: SourceLocation

    @property
    def integral(self) -> bool:
        """Config values are the values themselves (else: indices into `values`)."""
        return all(isinstance(v, int) and not isinstance(v, bool) for v in self.values)

    @property
    def domain(self) -> list[int]:
        return list(self.values) if self.integral else list(range(len(self.values)))

    def label(self, value: int) -> Any:
        """The entry of `values` a config value stands for."""
        return value if self.integral else self.values[value]

    def error(self, message: str) -> AnnotationError:
        return AnnotationError(f"knob '{self.name}': {message}", self.loc)


@dataclass
class ApproxFunction:
    """What the decorators attach to the wrapper as `__approx__`."""

    fn: Callable[..., Any]            # the exact function
    loc: SourceLocation               # its definition
    knobs: list[Knob] = field(default_factory=list)   # in source order (top to bottom)

    @property
    def name(self) -> str:
        return self.fn.__name__


_STATES: dict[str, Callable[..., float]] = {}


def state(name: str) -> StateRef:
    """Names the state function a dynamic knob's decision tree reads."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise AnnotationError(f"approx.state needs an identifier, got {name!r}", _caller_loc())
    return StateRef(name)


def register_state(name: str, fn: Callable[..., float]) -> None:
    """Registers the state function `approx.state(name)` refers to. The runtime calls it
    with the call's input arrays (not the weights) and expects a number."""
    _STATES[name] = fn


def registered_state(name: str) -> Callable[..., float] | None:
    return _STATES.get(name)


def model(fn: Callable[..., Any], params: Any) -> Model:
    """A `func_substitute` variant that brings its own weights (a smaller model)."""
    return Model(fn, params)


def knob(name: str, *, transform: str, values: Sequence[Any] | None = None,
         variants: Sequence[Callable[..., Any] | Model] | None = None,
         state: StateRef | None = None, thresholds: int | None = None,
         range: tuple[float, float] | None = None) -> Callable[[F], F]:
    """One knob on the decorated function (see the module docstring)."""
    loc = _caller_loc()

    def fail(message: str) -> AnnotationError:
        return AnnotationError(message, loc)

    if not isinstance(name, str) or not _NAME.match(name):
        raise fail(f"knob name must be an identifier, got {name!r}")
    spec = registry.get(transform) if isinstance(transform, str) else None
    if spec is None or spec.ml is None:
        raise fail(f"knob '{name}': unknown transform {transform!r} "
                   f"(expected one of {', '.join(sorted(registry.names(ml=True)))})")
    if transform == "func_substitute":
        variant_list = _check_variants(name, variants, fail)
        vals = _check_substitute_values(name, values, len(variant_list), fail)
    else:
        if variants is not None:
            raise fail(f"knob '{name}': variants=... belongs to func_substitute, "
                       f"not {transform}")
        variant_list = ()
        vals = _check_values(name, spec, values, fail)
    if state is not None and not isinstance(state, StateRef):
        raise fail(f"knob '{name}': state= must be approx.state(\"name\"), got {state!r}")
    if state is None and (thresholds is not None or range is not None):
        raise fail(f"knob '{name}': thresholds= and range= need state=approx.state(...)")
    n_thr = 0
    if state is not None:
        n_thr = 1 if thresholds is None else thresholds
        if not isinstance(n_thr, int) or isinstance(n_thr, bool) or n_thr < 1:
            raise fail(f"knob '{name}': thresholds must be a positive integer, "
                       f"got {thresholds!r}")
    lo_hi = (0.0, 100.0) if range is None else range
    if (not isinstance(lo_hi, tuple | list) or len(lo_hi) != 2
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in lo_hi)
            or lo_hi[0] >= lo_hi[1]):
        raise fail(f"knob '{name}': range must be (lo, hi) with lo < hi, got {range!r}")
    spec = Knob(name, transform, vals, variant_list, state.name if state else None, n_thr,
                (lo_hi[0], lo_hi[1]), loc)

    def decorate(fn: F) -> F:
        info: ApproxFunction | None = getattr(fn, "__approx__", None)
        if info is None:
            if not inspect.isfunction(fn):
                raise fail(f"@approx.knob('{name}') must decorate a function, got {fn!r}")
            info = ApproxFunction(fn, _function_loc(fn))
        for other in info.knobs:
            if other.name == name:
                raise fail(f"duplicate knob name '{name}' on '{info.name}'")
            if other.transform == transform:
                raise fail(f"'{info.name}' already has a {transform} knob '{other.name}' "
                           f"(one knob per transform and function)")
        for variant in variant_list:
            _check_signature(name, info.fn, variant, fail)
        exact = info.fn

        @functools.wraps(exact)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return exact(*args, **kwargs)

        wrapper.__approx__ = ApproxFunction(exact, info.loc, [spec, *info.knobs])  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def _caller_loc() -> SourceLocation:
    """The location of the `approx.knob(...)` call in user code."""
    frame = sys._getframe(2)
    pos = inspect.getframeinfo(frame).positions
    col = pos.col_offset + 1 if pos is not None and pos.col_offset is not None else 1
    return SourceLocation(frame.f_code.co_filename, frame.f_lineno, col)


def _function_loc(fn: Callable[..., Any]) -> SourceLocation:
    code = fn.__code__  # type: ignore[attr-defined]
    return SourceLocation(code.co_filename, code.co_firstlineno, 1)


def _check_values(name: str, spec: registry.TransformSpec, values: Sequence[Any] | None,
                  fail: Callable[[str], AnnotationError]) -> tuple[Any, ...]:
    """The knob's labels, checked by its transform's declaration (approxcc.registry)."""
    assert spec.ml is not None
    vals = tuple(spec.ml.defaults if values is None else _as_list(name, values, fail))
    if not vals:
        raise fail(f"knob '{name}': values is empty")
    for v in vals:
        why = spec.ml.check(v)
        if why:
            raise fail(f"knob '{name}': {spec.name} value {v!r} {why}")
    if len(set(vals)) != len(vals):
        raise fail(f"knob '{name}': values {list(vals)} has duplicates")
    return vals


def _as_list(name: str, values: Any, fail: Callable[[str], AnnotationError]) -> list[Any]:
    if isinstance(values, str) or not isinstance(values, Sequence | range):
        raise fail(f"knob '{name}': values must be a list, got {values!r}")
    return [tuple(v) if isinstance(v, list) else v for v in values]


def _check_variants(name: str, variants: Any, fail: Callable[[str], AnnotationError]
                    ) -> tuple[Callable[..., Any] | Model, ...]:
    if variants is None:
        raise fail(f"knob '{name}': func_substitute needs variants=[...]")
    if isinstance(variants, str) or not isinstance(variants, Sequence) or not variants:
        raise fail(f"knob '{name}': variants must be a non-empty list of functions")
    for v in variants:
        if not (isinstance(v, Model) or callable(v)):
            raise fail(f"knob '{name}': variant {v!r} is not a function or approx.model(...)")
    return tuple(variants)


def _check_substitute_values(name: str, values: Sequence[Any] | None, n: int,
                             fail: Callable[[str], AnnotationError]) -> tuple[int, ...]:
    if values is None:
        return tuple(range(n + 1))
    vals = tuple(_as_list(name, values, fail))
    if not vals or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= n
                           for v in vals) or len(set(vals)) != len(vals):
        raise fail(f"knob '{name}': func_substitute values must be distinct integers in "
                   f"0..{n} (0 = exact, k = variants[k-1]), got {list(values)}")
    return vals


def _check_signature(name: str, exact: Callable[..., Any], variant: Callable[..., Any] | Model,
                     fail: Callable[[str], AnnotationError]) -> None:
    fn = variant.fn if isinstance(variant, Model) else variant
    want, got = _signature(exact), _signature(fn)
    if want is None or got is None:
        return
    if _VARARGS in {p.kind for p in got.parameters.values()}:
        return
    if len(want.parameters) != len(got.parameters):
        raise fail(f"knob '{name}': variant '{getattr(fn, '__name__', fn)}{got}' does not have "
                   f"the signature of '{exact.__name__}{want}'")


_VARARGS = inspect.Parameter.VAR_POSITIONAL


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None
