"""bench/jax_bench.py's results without builds: a manifest and timings made up here become
the per-variant figures (speedups over jax.jit, exact and the faster of the two; flags), the
table and the JSON; bench/jax_corpus.toml is well formed."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("jax_bench", ROOT / "bench" / "jax_bench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["jax_bench"] = module   # dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules["jax_bench"]


def knob(name, values, exact=0):
    return {"name": name, "values": values, "domain": list(range(len(values))), "exact": exact}


def variant(vid, labels, relL2, bound=1.0, broken=False, built=True, backend=None):
    v = {"id": vid, "labels": labels, "vmfb": {"cpu": f"cpu/{vid}.vmfb"} if built else {},
         "accuracy": {"relL2": relL2, "max_abs_err": relL2 * 10, "bound": bound,
                      "broken": broken} if built else None}
    if backend:
        v["backend"] = {"cpu": backend}
    return v


MANIFEST = {"functions": {"f": {
    "knobs": [knob("quant", ["none", "int8"]), knob("skip", [0, [1]])],
    "failed": {"cpu": ["f.v3"]},
    "variants": [
        variant("f.v1", {"quant": "int8", "skip": 0}, 0.01, backend="xla"),
        variant("f.v0", {"quant": "none", "skip": 0}, 1e-7),
        variant("f.v2", {"quant": "none", "skip": [1]}, 2.5, bound=2.0, broken=True),
        variant("f.v3", {"quant": "int8", "skip": [1]}, 0.0, built=False),
    ]}}}
STDERR = ("m.py:3:2: warning: variant <quant=int8,skip=(1)> of 'f' for target cpu: failed to "
          "legalize operation 'stablehlo.custom_call' (not built; --keep-going)\n")
TIMINGS = {"runs": {"jax.jit": {"ms": 2.0, "spread": 0.1},
                    "jax.jit again": {"ms": 2.1, "spread": 0.1}, "f.v0": {"ms": 4.0, "spread": 0.2},
                    "f.v1": {"ms": 1.0, "spread": 0.1}, "f.v2": {"ms": 3.0, "spread": 0.1}},
           "relL2": {"f.v0": 1e-7, "f.v1": 0.01, "f.v2": 2.5}, "errors": {}}


@pytest.fixture
def result(bench):
    prog = bench.ProgramResult("demo", "someone/repo", "a" * 40, ["x.py"], ["matmul"])
    return bench.summarize(prog, MANIFEST, "f", TIMINGS, STDERR)


def test_variants_named_by_knobs_off_exact_exact_first(result):
    assert [v.name for v in result.variants] == ["exact", "quant=int8", "skip=(1)",
                                                 "quant=int8,skip=(1)"]
    assert [v.backend for v in result.variants] == ["iree", "xla", "iree", "iree"]


def test_speedups_over_jit_exact_and_the_faster(result):
    exact, int8, skip, _ = result.variants
    assert result.jit_ms == 2.0 and exact.ms == 4.0
    assert int8.x_jit == pytest.approx(2.0) and int8.x_exact == pytest.approx(4.0)
    assert int8.x_best == pytest.approx(2.0)            # over jax.jit, the faster
    assert exact.x_best == pytest.approx(0.5)           # exact: twice jax.jit's time
    assert skip.x_best == pytest.approx(2 / 3)


def test_a_ratio_is_the_median_of_the_ratios_within_a_round(bench):
    """Load from elsewhere that slows a whole round moves both runners of it alike: the
    ratio within a round keeps 1 where the ratio of the medians would not."""
    jit = {"ms": 2.0, "spread": 1.0, "rounds": [1.0, 2.0, 2.0, 4.0, 4.0]}
    same = {"ms": 4.0, "spread": 1.0, "rounds": [1.0, 2.0, 4.0, 4.0, 4.0]}
    assert bench.paired(jit, same) == pytest.approx(1.0)
    assert bench.paired({"ms": 2.0}, {"ms": 4.0}) == pytest.approx(0.5)   # no rounds
    assert bench.paired(None, same) is None
    timings = {"runs": {"jax.jit": jit, "jax.jit again": same, "f.v0": same,
                        "f.v1": {"ms": 1.0, "spread": 0.0, "rounds": [0.5, 1.0, 1.0, 2.0, 2.0]}}}
    prog = bench.summarize(bench.ProgramResult("demo", "r/r", "a" * 40, ["x.py"], ["m"]),
                           MANIFEST, "f", timings, STDERR)
    exact, int8 = prog.variants[:2]
    assert prog.jit_again_x == pytest.approx(1.0) and exact.x_jit == pytest.approx(1.0)
    assert int8.x_jit == pytest.approx(2.0) and int8.x_exact == pytest.approx(2.0)


def test_slower_than_jax_jit_beyond_the_noise_only_where_its_whole_interval_is(bench,
                                                                              monkeypatch):
    """Two runs of one executable land either side of 1 by chance: a median ratio of 0.95
    whose rounds straddle 1 is noise, one whose rounds all but a few are below 1 is not."""
    # the 4th and 12th of 15 ratios bound the median at 95%
    assert bench.median_interval([float(i) for i in range(15, 0, -1)]) == (4.0, 12.0)
    assert bench.median_interval([1.0] * 5) is None   # too few rounds for 95%
    jit = {"ms": 1.0, "spread": 0.1, "rounds": [1.0] * 15}
    straddles = [0.8, 0.85, 0.9, 0.92, 0.93, 0.94, 0.95, 0.95, 0.97, 1.0, 1.02, 1.05, 1.1,
                 1.15, 1.2]
    below = [0.85, 0.88, 0.9, 0.91, 0.92, 0.93, 0.94, 0.95, 0.95, 0.96, 0.96, 0.97, 1.01,
             1.02, 1.03]
    timings = {"runs": {"jax.jit": jit, "jax.jit again": jit,
                        "f.v0": {"ms": 1.05, "spread": 0.4, "rounds": [1 / x for x in straddles]},
                        "f.v1": {"ms": 1.05, "spread": 0.2, "rounds": [1 / x for x in below]}}}
    prog = bench.summarize(bench.ProgramResult("demo", "r/r", "a" * 40, ["x.py"], ["m"]),
                           MANIFEST, "f", timings, STDERR)
    slow = {s.variant: s for s in bench.slower_than_jit([prog])}
    assert slow["exact"].x_jit == pytest.approx(0.95) and not slow["exact"].beyond_noise
    assert slow["exact"].interval == pytest.approx((0.92, 1.05))
    assert slow["quant=int8"].beyond_noise and slow["quant=int8"].interval[1] < 1
    out = io.StringIO()
    monkeypatch.setattr(bench, "console", Console(file=out, width=200))
    bench.report([prog])
    assert "beyond the noise (the 95% interval of their per-round ratios below 1): none" \
        in out.getvalue()


def test_flags_past_bound_and_not_built(result, bench):
    exact, int8, skip, unbuilt = result.variants
    assert exact.flags == [] and int8.flags == []
    assert skip.flags == ["past the build's bound (relL2 2)"]
    assert unbuilt.ms is None
    assert unbuilt.flags == ["not built: failed to legalize operation 'stablehlo.custom_call'"]
    slow = bench.slower_than_jit([result])
    assert [(s.program, s.variant) for s in slow] == [("demo", "exact"), ("demo", "skip=(1)")]


def test_table_and_json(result, bench):
    out = io.StringIO()
    Console(file=out, width=200).print(bench.program_table(result))
    text = out.getvalue()
    assert "jax.jit" in text and "quant=int8" in text and "past the build's bound" in text
    row = next(line for line in text.splitlines() if re.search(r"\bquant=int8\b.*xla", line))
    assert "2.00" in row and "4.00" in row           # x jax.jit, x exact
    again = next(line for line in text.splitlines() if "jax.jit again" in line)
    assert "0.95" in again and "the noise" in again  # 2.0 / 2.1: the same code, twice
    data = json.loads(json.dumps(bench.to_json([result], {"date": "today"})))
    assert data["date"] == "today"
    [prog] = data["programs"]
    assert prog["name"] == "demo" and prog["jit_ms"] == 2.0
    assert prog["variants"][2]["flags"] == ["past the build's bound (relL2 2)"]
    assert {"program": "demo", "variant": "exact", "x_jit": 0.5, "interval": None,
            "beyond_noise": False} in data["slower_than_jax_jit"]


def test_failed_program_is_a_row_not_a_traceback(bench):
    prog = bench.ProgramResult("broken", "someone/repo", "b" * 40, ["x.py"], ["scan"],
                               status="build failed", error="x.py:1:1: error: no")
    out = io.StringIO()
    Console(file=out, width=200).print(bench.program_table(prog))
    assert "build failed" in out.getvalue() and "error: no" in out.getvalue()
    assert bench.to_json([prog], {})["programs"][0]["status"] == "build failed"


def test_corpus_table_is_well_formed(bench):
    programs = bench._corpus.programs()
    assert len(programs) >= 6
    assert len({p["name"] for p in programs}) == len(programs)
    for p in programs:
        assert re.fullmatch(r"[0-9a-f]{40}", p["commit"]), p["name"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", p["repo"]), p["name"]
        assert p["paths"] and p["covers"] and p["entry"]
        wrapper = ROOT / "bench" / "jax_corpus" / p["wrapper"]
        assert f"def {p['entry']}(" in wrapper.read_text(), p["name"]


def test_a_variant_xla_runs_for_iree_is_timed_not_reported_unbuilt(bench):
    """A variant IREE cannot compile (control_lqr's LAPACK call) has no vmfb and runs on its
    XLA form: it is built, and timed like the rest."""
    lapack = variant("f.v0", {}, 0.0, built=False, backend="xla")
    assert bench.runs_on_cpu(lapack)
    assert not bench.runs_on_cpu(variant("f.v1", {}, 0.0, built=False))
    assert bench.runs_on_cpu(variant("f.v2", {}, 0.0))
