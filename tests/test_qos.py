"""QoS metrics: worked examples, RBO against the paper's formula, and user-metric errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from approxcc.diagnostics import CompileError
from approxcc.tune.qos import (
    accuracy_loss,
    exact_loss,
    l2_loss,
    metric,
    normalize_answer,
    numbers,
    ranking,
    rbo,
    rbo_loss,
)

# -- RBO: a literal transcription of the paper, to check the linear-time implementation --------


def rbo_ext_reference(S: list[str], T: list[str], p: float) -> float:
    """RBO_ext, Webber, Moffat & Zobel 2010, Eq. 32, written as plainly as possible (no dedup, no
    depth cut, quadratic): L the longer list, S the shorter, X_d = |S_{:d} ∩ L_{:d}|."""
    S, L = sorted((S, T), key=len)
    s, l = len(S), len(L)  # noqa: E741

    def X(d: int) -> int:
        return len(set(S[:d]) & set(L[:d]))

    first = sum(X(d) / d * p**d for d in range(1, l + 1))
    second = sum(X(s) * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    return (1 - p) / p * (first + second) + ((X(l) - X(s)) / l + X(s) / s) * p**l


SEVEN = list("abcdefg")
SEVEN_LAST_CHANGED = list("abcdefh")


@pytest.mark.parametrize("p, expected", [(0.9, 0.92407986), (0.95, 0.89498687)])
def test_rbo_last_item_differs(p: float, expected: float) -> None:
    # By hand (Eq. 30 = Eq. 32 with s = l = 7): X_d = d for d <= 6, X_7 = 6, so
    # RBO = (1-p)/p (sum_{d=1}^{6} p^d + 6/7 p^7) + 6/7 p^7 = 1 - p^6 + 6/7 p^6 = 1 - p^6 / 7:
    # p = 0.9: 1 - 0.531441/7 = 0.9240799;  p = 0.95: 1 - 0.7350919/7 = 0.8949869.
    assert rbo(SEVEN, SEVEN_LAST_CHANGED, p) == pytest.approx(1 - p**6 / 7, abs=1e-12)
    assert rbo(SEVEN, SEVEN_LAST_CHANGED, p) == pytest.approx(expected, abs=1e-8)
    assert rbo(SEVEN, SEVEN_LAST_CHANGED, p) == pytest.approx(
        rbo_ext_reference(SEVEN, SEVEN_LAST_CHANGED, p), abs=1e-12)


def test_rbo_identical_and_disjoint() -> None:
    assert rbo(SEVEN, SEVEN) == 1.0
    assert rbo_ext_reference(SEVEN, SEVEN, 0.95) == pytest.approx(1.0, abs=1e-12)
    assert rbo(list("abc"), list("xyz")) == 0.0
    assert rbo(list("abc"), list("vwxyz")) == 0.0
    assert rbo([], list("abc")) == 0.0


def test_rbo_swapped_top_two() -> None:
    # X_1 = 0, X_d = d after: RBO = (1-p)/p (sum_{d=2}^{k} p^d) + p^k = p, whatever k.
    assert rbo(list("bacdefg"), SEVEN, 0.9) == pytest.approx(0.9, abs=1e-12)
    assert rbo(list("ba"), list("ab"), 0.95) == pytest.approx(0.95, abs=1e-12)


def test_rbo_uneven_lengths() -> None:
    p = 0.95
    # S = [a b] (s = 2), L = [b c a] (l = 3): X_1 = 0, X_2 = 1, X_3 = 2, X_s = 1, X_l = 2.
    # Eq. 32: (1-p)/p (1/2 p^2 + 2/3 p^3 + 1*(3-2)/(2*3) p^3) + ((2-1)/3 + 1/2) p^3
    #       = (1-p)(p/2 + 5/6 p^2) + 5/6 p^3 = 0.05 * 1.2270833 + 0.7144792 = 0.7758333.
    by_hand = (1 - p) * (p / 2 + 5 / 6 * p**2) + 5 / 6 * p**3
    assert by_hand == pytest.approx(0.7758333333, abs=1e-9)
    assert rbo(["a", "b"], ["b", "c", "a"], p) == pytest.approx(by_hand, abs=1e-12)
    assert rbo(["b", "c", "a"], ["a", "b"], p) == pytest.approx(by_hand, abs=1e-12)  # symmetric
    assert rbo_ext_reference(["a", "b"], ["b", "c", "a"], p) == pytest.approx(by_hand, abs=1e-12)
    # The paper's extrapolation assumes the shorter list goes on agreeing at rate X_s/s, so a
    # prefix scores 1 (second sum of Eq. 32 tops the agreements back up), while truncating the
    # longer list to the shorter one would not distinguish [a b c] vs [a b c x y] from [a b c].
    assert rbo(list("abc"), list("abcde"), p) == pytest.approx(1.0, abs=1e-12)
    # A half-agreeing short list: the extrapolated agreement stays at X_s/s = 1/2 beyond s.
    assert rbo(list("ax"), list("abcd"), p) == pytest.approx(
        rbo_ext_reference(list("ax"), list("abcd"), p), abs=1e-12)


def test_rbo_matches_reference_on_mixed_rankings() -> None:
    cases = [
        (list("abcdefghij"), list("cbadxfgzq")),
        (list("a"), list("zyxwa")),
        (list("qwertyuiop"), list("poiuytrewq")),
        ([str(i) for i in range(40)], [str(i) for i in range(39, -1, -3)]),
    ]
    for S, T in cases:
        for p in (0.5, 0.9, 0.95):
            assert rbo(S, T, p) == pytest.approx(rbo_ext_reference(S, T, p), abs=1e-12)


def test_rbo_duplicates_and_depth() -> None:
    # A repeated id keeps its first rank: [a a b] is the ranking [a b].
    assert rbo(["a", "a", "b"], ["a", "b"]) == 1.0
    assert ranking("a\nb a\n\n c  \n") == ["a", "b", "c"]
    # Depth min(1000, max(|S|, |T|)): disagreement only after rank 1000 is not seen.
    long = [str(i) for i in range(1200)]
    assert rbo(long, long[:1000] + ["x"] * 200) == 1.0
    assert rbo_loss("\n".join(long), " ".join(long[:1000] + ["x"])) == 0.0


def test_rbo_loss_on_text() -> None:
    exact = "\n".join(SEVEN) + "\n"
    assert rbo_loss(exact, " ".join(SEVEN)) == 0.0  # one per line or whitespace separated
    assert rbo_loss(exact, "a b c d e f h") == pytest.approx(0.95**6 / 7, abs=1e-12)
    assert rbo_loss(exact, "") == 1.0
    assert rbo_loss(exact, "\x00garbage\x7f") == 1.0
    assert rbo_loss("", "") == 0.0
    assert metric("rbo")([exact, "a b"], [exact, "b a"]) == pytest.approx(0.05 / 2, abs=1e-12)


# -- l2 ------------------------------------------------------------------------------------------


def test_l2() -> None:
    assert l2_loss("3 4", "3 4") == 0.0
    # ||(3,4) - (3,3)|| / ||(3,4)|| = 1/5
    assert l2_loss("x = 3, y = 4\n", "x = 3, y = 3\n") == pytest.approx(0.2)
    assert l2_loss("3 4", "30 40") == 1.0  # accuracy clamps at 0
    assert l2_loss("3 4", "3") == 1.0  # missing numbers
    assert l2_loss("3 4", "") == 1.0
    assert l2_loss("3 4", "3 nan") == 1.0
    assert l2_loss("0 0", "0 0") == 0.0 and l2_loss("0", "1") == 1.0
    assert l2_loss("1e200 1", "-1e200 1") == 1.0  # no OverflowError
    # Words merely containing "inf"/"nan" are not numbers.
    assert numbers("information: 2, banana 3, -inf, Infinity") == [2.0, 3.0, -math.inf, math.inf]
    assert l2_loss("information: 2", "information: 2") == 0.0
    # Mean over inputs: (0 + 0.2 + 1) / 3.
    l2 = metric("l2")
    assert l2(["3 4", "3 4", "1"], ["3 4", "3 3", "oops"]) == pytest.approx(1.2 / 3)
    assert l2("3 4", "3 3") == pytest.approx(0.2)  # a single string is one input


# -- accuracy / exact ----------------------------------------------------------------------------


def test_normalize_answer() -> None:
    assert normalize_answer("  The Eiffel-Tower, in PARIS!  ") == "eiffeltower in paris"
    assert normalize_answer("“An” answer…") == "answer"
    assert normalize_answer("a\tb\n\nc") == "b c"


def test_accuracy() -> None:
    assert accuracy_loss("Paris", "The answer is paris.") == 0.0
    assert accuracy_loss("The Eiffel Tower", "It is the eiffel tower, of course") == 0.0
    assert accuracy_loss("4", "The answer is 42") == 1.0  # word boundaries
    assert accuracy_loss("new york", "York, New") == 1.0  # contiguous, in order
    assert accuracy_loss("Paris", "") == 1.0
    assert accuracy_loss("", "anything") == 1.0 and accuracy_loss("the", "") == 0.0
    # Fraction of items wrong: 1 of 4.
    acc = metric("accuracy")
    assert acc(["Paris", "4", "blue", "Rome"], ["paris!", "4.", "BLUE", "Milan"]) == 0.25


def test_exact() -> None:
    assert exact_loss("42\n", "42\n") == 0.0
    assert exact_loss("42\n", "42") == 1.0
    assert metric("exact")(["a", "b", "c", "d"], ["a", "b", "x", "d"]) == 0.25


def test_garbage_never_raises() -> None:
    for name in ("l2", "rbo", "accuracy", "exact"):
        loss = metric(name)(["1 2 3", "a b c"], ["", None])  # type: ignore[list-item]
        assert loss == 1.0, name


def test_caller_mistakes_raise() -> None:
    with pytest.raises(ValueError, match="2 exact outputs but 1"):
        metric("exact")(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="no outputs"):
        metric("exact")([], [])


# -- metric(): names and user-defined metrics ----------------------------------------------------


def test_unknown_metric_lists_known_ones() -> None:
    with pytest.raises(CompileError) as info:
        metric("bleu")
    message = info.value.diagnostic.message
    assert "unknown QoS metric 'bleu'" in message
    for known in ("'l2'", "'rbo'", "'accuracy'", "'exact'", "module:function"):
        assert known in message


USER_METRICS = '''
def fraction_changed(exact, outputs):
    return sum(e != o for e, o in zip(exact, outputs)) / len(exact)

def too_big(exact, outputs):
    return 1.5

def not_a_number(exact, outputs):
    return "0.1"

def a_bool(exact, outputs):
    return False

def nan(exact, outputs):
    return float("nan")

def crashes(exact, outputs):
    raise KeyError("boom")

NOT_CALLABLE = 3
'''


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    (tmp_path / "qos_user_metrics.py").write_text(USER_METRICS)
    (tmp_path / "qos_broken_module.py").write_text("def oops(:\n")
    return tmp_path


def compile_error(action) -> str:
    with pytest.raises(CompileError) as info:
        action()
    return info.value.diagnostic.message


def test_user_metric(user_dir: Path) -> None:
    loss = metric("qos_user_metrics:fraction_changed", search_path=user_dir)
    assert loss(["a", "b", "c", "d"], ["a", "x", "c", "d"]) == 0.25
    assert loss("a", "a") == 0.0  # a single string reaches the user function as a 1-item list
    assert str(user_dir) not in __import__("sys").path  # search path was only added to import


@pytest.mark.parametrize("function, expected", [
    ("too_big", "returned 1.5; a loss must be in [0, 1]"),
    ("not_a_number", "returned '0.1' (str); expected a loss"),
    ("a_bool", "returned False (bool)"),
    ("nan", "returned nan"),
    ("crashes", "raised KeyError: 'boom'"),
])
def test_user_metric_bad_results(user_dir: Path, function: str, expected: str) -> None:
    loss = metric(f"qos_user_metrics:{function}", search_path=user_dir)
    assert expected in compile_error(lambda: loss(["a"], ["b"]))


@pytest.mark.parametrize("spec, expected", [
    ("qos_user_metrics:", "expected 'module:function'"),
    (":f", "expected 'module:function'"),
    ("qos user:f", "expected 'module:function'"),
    ("a:b:c", "expected 'module:function'"),
    ("qos_no_such_module_xyz:f", "cannot import module 'qos_no_such_module_xyz'"),
    ("qos_broken_module:oops", "cannot import module 'qos_broken_module'"),
    ("qos_user_metrics:missing", "has no function 'missing'"),
    ("qos_user_metrics:NOT_CALLABLE", "has no function 'NOT_CALLABLE'"),
])
def test_user_metric_bad_specs(user_dir: Path, spec: str, expected: str) -> None:
    assert expected in compile_error(lambda: metric(spec, search_path=user_dir))


def test_rbo_loss_counts_a_truncated_ranking_as_disagreement() -> None:
    from approxcc.tune.qos import rbo_loss

    assert rbo_loss("a b c d e", "a b c d e") == 0.0
    assert rbo_loss("a b c d e", "a b c") > 0.0
    assert rbo_loss("a b c d e", "a b c") == pytest.approx(
        1.0 - rbo(["a", "b", "c", "d", "e"], ["a", "b", "c", "x", "y"]))
