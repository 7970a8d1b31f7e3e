"""QoS metrics (docs/tuning.md, `[qos]`): how far an approximate output is from the exact one.

Every metric is a *loss* = 1 - accuracy, in [0, 1]: 0 means "as good as the exact program", 1
means "useless". The tuner only ever sees losses, so every metric, built-in or user-defined, must
land in that interval.

Two layers:

* per-item losses, ``*_loss(exact: str, approx: str) -> float``: one input's exact output text
  against the same input's approximate output text (``l2_loss``, ``rbo_loss``, ``accuracy_loss``,
  ``exact_loss``);
* metrics, ``metric(name)(exact_outputs, outputs) -> float``: what the tuner calls. Both arguments
  are the outputs over the inputs, in the same order (a single ``str`` is accepted as a one-input
  list); the result is the mean of the per-item losses over the inputs. A user-defined
  ``"module:function"`` metric receives the two lists as they are and returns the loss itself.

A JAX program's outputs are arrays, not text: ``array_metric(name)`` scores them (``relL2``/``l2``,
``accuracy``, ``exact`` per input in ``ARRAY_LOSSES``, or a user's ``module:function`` given the
arrays); for text ``relL2`` is ``l2``, which is relative already.

Garbage tolerance: a tuner runs broken approximations on purpose, so an approximate output that
cannot be parsed (no or too few numbers for ``l2``, an empty ranking, an empty answer, or an item
that is not a string at all, such as ``None`` for a run that crashed) costs loss 1.0 and never
raises. Exceptions are kept for caller mistakes (lists of different lengths, no inputs) and for
user-defined metrics that misbehave, which raise ``CompileError`` so the tuner can report them as
a diagnostic.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import re
import string
import sys
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

from approxcc.diagnostics import CompileError

Outputs = str | Sequence[str]
"""One output text, or one output text per input (in input order)."""

Metric = Callable[[Outputs, Outputs], float]
"""``(exact_outputs, outputs) -> loss``: the mean loss over the inputs, in [0, 1]."""

ItemLoss = Callable[[str, str], float]
"""``(exact, approx) -> loss`` for one input's output text."""

# -- l2 ------------------------------------------------------------------------------------------

# `inf`/`nan` only as words of their own: otherwise "information" or "banana" would read as
# non-finite numbers and make every output of such a program a total loss.
_NUMBER = re.compile(
    r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?<![A-Za-z])[-+]?(?:inf(?:inity)?|nan)(?![A-Za-z])",
    re.I,
)


def numbers(text: str) -> list[float]:
    """Every number in a program's output, in order: the output as a vector."""
    return [float(m) for m in _NUMBER.findall(text)]


def l2_loss(exact: str, approx: str) -> float:
    """1 - max(0, 1 - ||y_exact - y|| / ||y_exact||) over the outputs as vectors of numbers.

    Outputs of different lengths, or with non-finite numbers, are as bad as it gets (1.0).
    Norms use `math.hypot`/`math.dist`, which scale internally, so huge garbage values such as
    1e200 give a finite or infinite norm instead of an OverflowError."""
    if not isinstance(approx, str):
        return 1.0
    y, z = numbers(exact), numbers(approx)
    if len(y) != len(z) or not all(map(math.isfinite, z)):
        return 1.0
    norm = math.hypot(*y)
    diff = math.dist(y, z)
    if norm == 0.0:
        return 0.0 if diff == 0.0 else 1.0
    loss = 1.0 - max(0.0, 1.0 - diff / norm)
    return loss if 0.0 <= loss <= 1.0 else 1.0  # NaN (non-finite exact output) -> worst


# -- rbo -----------------------------------------------------------------------------------------

RBO_P = 0.95
"""Persistence p of the spec's `rbo` metric: the top 1/(1-p) = 20 ranks carry most weight."""

RBO_DEPTH = 1000
"""Rankings are evaluated to depth min(RBO_DEPTH, max(|S|, |T|)) (docs/tuning.md)."""


def ranking(text: str) -> list[str]:
    """The ranked ids in a program's output: one per line or whitespace separated, best first.

    Ids therefore cannot contain whitespace. A repeated id keeps only its first (best) rank: RBO is
    defined on rankings, where an item occurs once, and a later repeat adds no information."""
    return list(dict.fromkeys(text.split()))


def rbo(s_list: Sequence[str], t_list: Sequence[str], p: float = RBO_P,
        depth: int = RBO_DEPTH) -> float:
    """Extrapolated Rank-Biased Overlap RBO_ext (Webber, Moffat & Zobel 2010, ACM TOIS, Eq. 32).

    A similarity in [0, 1] between two rankings, possibly of different lengths: 1 for identical
    rankings, 0 for disjoint ones. Both are cut to `depth` first, and duplicates keep their first
    occurrence. Following the paper, the items beyond the end of the shorter list are assumed to
    agree at the rate seen at its end, so a ranking that is a prefix of the other scores 1.

    With L the longer list (length l), S the shorter (length s), X_d = |S_{:d} ∩ L_{:d}| the
    overlap at depth d (for d > s, S_{:d} is all of S), Eq. 32 reads

        RBO_ext = (1-p)/p * ( sum_{d=1}^{l} X_d/d p^d + sum_{d=s+1}^{l} X_s (d-s)/(s d) p^d )
                  + ( (X_l - X_s)/l + X_s/s ) p^l

    and reduces to Eq. 30 (the even-length form) when s = l. Linear time in l."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"rbo: p must be in (0, 1), got {p}")
    s_items = list(dict.fromkeys(s_list))[:depth]
    t_items = list(dict.fromkeys(t_list))[:depth]
    if s_items == t_items:
        return 1.0  # Eq. 32 gives 1 up to rounding; make "identical" exactly loss 0
    short, long_ = sorted((s_items, t_items), key=len)
    s, l = len(short), len(long_)  # noqa: E741 -- the paper's names
    if s == 0:
        return 0.0  # nothing to agree with: X_d = 0 for every d (and X_s/s is undefined)

    seen_short: set[str] = set()
    seen_long: set[str] = set()
    overlap = 0  # X_d, maintained incrementally as both prefixes grow by one item
    x_s = 0
    sum_agreement = 0.0  # sum_{d=1}^{l} X_d/d p^d  (first sum of Eq. 32)
    sum_extrapolated = 0.0  # sum_{d=s+1}^{l} X_s (d-s)/(s d) p^d  (second sum of Eq. 32)
    p_d = 1.0
    for d in range(1, l + 1):
        p_d *= p
        if d <= s:
            item = short[d - 1]
            overlap += item in seen_long
            seen_short.add(item)
        item = long_[d - 1]
        overlap += item in seen_short
        seen_long.add(item)
        if d == s:
            x_s = overlap
        sum_agreement += overlap / d * p_d
        if d > s:
            sum_extrapolated += x_s * (d - s) / (s * d) * p_d
    x_l = overlap
    value = (1 - p) / p * (sum_agreement + sum_extrapolated) + ((x_l - x_s) / l + x_s / s) * p_d
    return min(1.0, max(0.0, value))


def rbo_loss(exact: str, approx: str) -> float:
    """1 - RBO_ext(p = 0.95) between the rankings printed by the exact and approximate program.

    An approximate output with no ids at all is a total loss (1.0), unless the exact one is empty
    too (identical outputs always cost 0).

    A ranking cut short is not a prefix to extrapolate from: RBO_ext (Eq. 32) assumes the
    shorter list goes on agreeing, which would let a knob that prints fewer results look
    exact. The approximate ranking is what the program answered, so its missing ranks count
    as disagreement (padded with ids that match nothing)."""
    if not isinstance(approx, str):
        return 1.0
    want, got = ranking(exact), ranking(approx)
    got += [f"\n{i}" for i in range(len(want) - len(got))]  # whitespace: no real id
    return 1.0 - rbo(want, got)


# -- accuracy / exact ----------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def _is_punctuation(char: str) -> bool:
    # SQuAD removes `string.punctuation`; Unicode punctuation (curly quotes, dashes, "…") is
    # removed too, because model outputs are full of it and it never changes the answer.
    return char in string.punctuation or unicodedata.category(char).startswith("P")


def normalize_answer(text: str) -> str:
    """SQuAD-style answer normalisation: lowercase, punctuation removed, articles removed,
    whitespace collapsed -- so "The Eiffel Tower." and "eiffel tower" compare equal."""
    text = "".join(c for c in text.lower() if not _is_punctuation(c))
    return " ".join(_ARTICLES.sub(" ", text).split())


def accuracy_loss(exact: str, approx: str) -> float:
    """0 when the approximate output contains the gold answer (the exact output), else 1.

    One input's whole output text is one item. "Contains" is on word boundaries after
    `normalize_answer`: the gold's words appear as a contiguous run of the output's words, so the
    gold "4" is in "the answer is 4" but not in "42". An empty normalised gold is only contained in
    an empty normalised output (otherwise any garbage would count as correct)."""
    if not isinstance(approx, str):
        return 1.0
    gold, output = normalize_answer(exact), normalize_answer(approx)
    if not gold:
        return 0.0 if not output else 1.0
    return 0.0 if f" {gold} " in f" {output} " else 1.0


def exact_loss(exact: str, approx: str) -> float:
    """0 when the approximate output is identical (character for character) to the exact one."""
    return 0.0 if isinstance(approx, str) and approx == exact else 1.0


# -- metrics over inputs -------------------------------------------------------------------------

ITEM_LOSSES: dict[str, ItemLoss] = {
    "l2": l2_loss,
    "relL2": l2_loss,     # the name numeric (ML) users know: l2 is relative already
    "rbo": rbo_loss,
    "accuracy": accuracy_loss,
    "exact": exact_loss,
}
"""The built-in metrics by spec name, as per-item losses."""


def _as_list(outputs: Outputs) -> list[str]:
    return [outputs] if isinstance(outputs, str) else list(outputs)


def _paired(exact_outputs: Outputs, outputs: Outputs) -> list[tuple[str, str]]:
    """The (exact, approx) output of every input. A count mismatch or no inputs at all is a bug in
    the caller, not a bad approximation, so it raises instead of scoring."""
    exact_list, approx_list = _as_list(exact_outputs), _as_list(outputs)
    if len(exact_list) != len(approx_list):
        raise ValueError(f"QoS metric: {len(exact_list)} exact outputs but "
                         f"{len(approx_list)} approximate outputs")
    if not exact_list:
        raise ValueError("QoS metric: no outputs to compare")
    return list(zip(exact_list, approx_list, strict=True))


def mean_loss(item_loss: ItemLoss, exact_outputs: Outputs, outputs: Outputs) -> float:
    """The mean of `item_loss` over the inputs: each input counts equally, so `accuracy` and
    `exact` become the fraction of items wrong, and `l2`/`rbo` the average per-input loss."""
    losses = [_clamp(item_loss(e, a)) for e, a in _paired(exact_outputs, outputs)]
    return math.fsum(losses) / len(losses)


def _clamp(loss: float) -> float:
    return min(1.0, max(0.0, loss)) if not math.isnan(loss) else 1.0


def _builtin(name: str) -> Metric:
    item_loss = ITEM_LOSSES[name]

    def builtin_metric(exact_outputs: Outputs, outputs: Outputs) -> float:
        return mean_loss(item_loss, exact_outputs, outputs)

    builtin_metric.__name__ = f"{name}_metric"
    builtin_metric.__doc__ = f"Mean `{name}` loss over the inputs (see `{item_loss.__name__}`)."
    return builtin_metric


_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _user_metric(spec: str, search_path: Path | None) -> Metric:
    """Import `module:function` (module relative to `search_path`) and wrap it so every misuse
    -- it raises, or returns a non-number or a loss outside [0, 1] -- is a CompileError that names
    the spec, instead of a traceback or a silently wrong tuning run."""
    module_name, _, function_name = spec.partition(":")
    if not (_DOTTED_NAME.fullmatch(module_name) and _DOTTED_NAME.fullmatch(function_name)):
        raise CompileError(f"QoS metric '{spec}': expected 'module:function' with a dotted "
                           f"Python module name and a function name, e.g. 'my_qos:loss'")
    where = f" (searched {search_path} first)" if search_path is not None else ""
    added = search_path is not None and str(search_path) not in sys.path
    if added:
        sys.path.insert(0, str(search_path))
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # SyntaxError, ImportError, whatever the module raises on import
        raise CompileError(f"QoS metric '{spec}': cannot import module '{module_name}'{where}: "
                           f"{type(error).__name__}: {error}") from error
    finally:
        if added:
            with contextlib.suppress(ValueError):  # the module may have edited sys.path itself
                sys.path.remove(str(search_path))
    function: object = module
    for part in function_name.split("."):
        function = getattr(function, part, None)
    if not callable(function):
        raise CompileError(f"QoS metric '{spec}': module '{module_name}' has no function "
                           f"'{function_name}'")

    def user_metric(exact_outputs: Outputs, outputs: Outputs) -> float:
        exact_list, approx_list = _as_list(exact_outputs), _as_list(outputs)
        try:
            loss = function(exact_list, approx_list)
        except Exception as error:
            raise CompileError(f"QoS metric '{spec}' raised {type(error).__name__}: "
                               f"{error}") from error
        if isinstance(loss, bool) or not isinstance(loss, Real):
            raise CompileError(f"QoS metric '{spec}' returned {loss!r} "
                               f"({type(loss).__name__}); expected a loss, a number in [0, 1]")
        loss = float(loss)
        if not 0.0 <= loss <= 1.0:  # also rejects NaN
            raise CompileError(f"QoS metric '{spec}' returned {loss!r}; a loss must be in "
                               f"[0, 1] (loss = 1 - accuracy)")
        return loss

    user_metric.__name__ = f"user_metric[{spec}]"
    user_metric.__doc__ = f"User-defined QoS metric {spec}, checked to return a loss in [0, 1]."
    return user_metric


# -- numeric outputs: a JAX program's arrays ----------------------------------------------------

ArrayOutput = Any
"""What a JAX program's entry returned for one input: an array, or a tuple of arrays."""


def _leaves(output: ArrayOutput) -> list[Any]:
    import numpy as np

    return [np.asarray(a) for a in output] if isinstance(output, tuple | list) \
        else [np.asarray(output)]


def rel_l2_arrays(exact: ArrayOutput, approx: ArrayOutput) -> float:
    """min(1, ||y - z||_2 / ||y||_2) over all the arrays of one input's output flattened
    together (as the ML build's check of its variants computes relL2), in float64. Another
    count of arrays, another shape, or a non-finite approximate number is a total loss (1.0);
    an exact output of zeros scores 0 only when matched exactly."""
    import numpy as np

    if approx is None:
        return 1.0
    y, z = _leaves(exact), _leaves(approx)
    if len(y) != len(z) or any(a.shape != b.shape for a, b in zip(y, z, strict=True)):
        return 1.0
    if not y:
        return 0.0
    yv = np.concatenate([a.astype(np.float64).ravel() for a in y])
    zv = np.concatenate([b.astype(np.float64).ravel() for b in z])
    if not np.all(np.isfinite(zv)):
        return 1.0
    norm, diff = float(np.linalg.norm(yv)), float(np.linalg.norm(yv - zv))
    if norm == 0.0 or not math.isfinite(norm):
        return 0.0 if diff == 0.0 else 1.0
    return min(1.0, diff / norm)


def accuracy_arrays(exact: ArrayOutput, approx: ArrayOutput) -> float:
    """The share of predictions that differ from the exact program's, on the first array of
    the output: floats are class scores, a prediction is the argmax over the last axis (one
    per row); integers or booleans are the predictions themselves, element by element."""
    import numpy as np

    if approx is None:
        return 1.0
    y, z = _leaves(exact)[0], _leaves(approx)
    if not z or z[0].shape != y.shape:
        return 1.0
    z0 = z[0]
    if np.issubdtype(y.dtype, np.inexact):
        if y.ndim == 0 or y.size == 0:
            return 0.0 if np.array_equal(y, z0) else 1.0
        if not np.all(np.isfinite(z0)):
            return 1.0
        return float(np.mean(np.argmax(y, axis=-1) != np.argmax(z0, axis=-1)))
    return float(np.mean(y != z0)) if y.size else 0.0


def exact_arrays(exact: ArrayOutput, approx: ArrayOutput) -> float:
    """0 when every array is identical (shape, dtype and values; NaN equal to NaN), else 1."""
    import numpy as np

    if approx is None:
        return 1.0
    y, z = _leaves(exact), _leaves(approx)
    return 0.0 if len(y) == len(z) and all(
        a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=
                                                                     a.dtype.kind in "fc")
        for a, b in zip(y, z, strict=True)) else 1.0


ARRAY_LOSSES: dict[str, Callable[[ArrayOutput, ArrayOutput], float]] = {
    "relL2": rel_l2_arrays,
    "l2": rel_l2_arrays,
    "accuracy": accuracy_arrays,
    "exact": exact_arrays,
}
"""The built-in metrics of numeric outputs (a JAX program's) by name, per input."""


def array_metric(name: str, search_path: Path | None = None
                 ) -> Callable[[Sequence[ArrayOutput], Sequence[ArrayOutput]], float]:
    """The QoS metric called `name` over numeric outputs, one per input (an array, or a
    tuple of arrays): a built-in of `ARRAY_LOSSES` (the mean loss over the inputs) or a
    user's 'module:function(exact_outputs, outputs) -> loss', given the lists as they are."""
    if name in ARRAY_LOSSES:
        item_loss = ARRAY_LOSSES[name]

        def builtin_metric(exact_outputs: Sequence[ArrayOutput],
                           outputs: Sequence[ArrayOutput]) -> float:
            if len(exact_outputs) != len(outputs):
                raise ValueError(f"QoS metric: {len(exact_outputs)} exact outputs but "
                                 f"{len(outputs)} approximate outputs")
            if not exact_outputs:
                raise ValueError("QoS metric: no outputs to compare")
            losses = [_clamp(item_loss(e, a)) for e, a in zip(exact_outputs, outputs,
                                                               strict=True)]
            return math.fsum(losses) / len(losses)

        builtin_metric.__name__ = f"{name}_array_metric"
        return builtin_metric
    if ":" in name:
        return _user_metric(name, search_path)
    known = ", ".join(f"'{known}'" for known in ARRAY_LOSSES)
    raise CompileError(f"unknown QoS metric '{name}' for a JAX program's outputs; known "
                       f"metrics: {known}, or 'module:function' for a user-defined one")


def known_metrics() -> Iterable[str]:
    """The names `metric` accepts besides 'module:function'."""
    return ITEM_LOSSES.keys()


def metric(name: str, search_path: Path | None = None) -> Metric:
    """The QoS metric called `name` (docs/tuning.md): `(exact_outputs, outputs) -> loss`.

    `name` is a built-in ('l2', 'rbo', 'accuracy', 'exact': the mean per-input loss) or
    'module:function', a user function importable from `search_path` (put first on sys.path while
    importing; typically the directory of the config that names the metric). Unknown names, bad
    specs and import failures raise CompileError now, at configuration time, not mid-tuning."""
    if name in ITEM_LOSSES:
        return _builtin(name)
    if ":" in name:
        return _user_metric(name, search_path)
    known = ", ".join(f"'{known}'" for known in known_metrics())
    raise CompileError(f"unknown QoS metric '{name}'; known metrics: {known}, "
                       f"or 'module:function' for a user-defined one")
