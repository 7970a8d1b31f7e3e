"""docs/ml-performance.md's results block is bench/ml_figures.py's output from the committed
docs/ml-performance.json (the figures cannot drift from their source), and the script reads
bench/ml_decode.py's own `--json` output as well."""

from __future__ import annotations

import json
import math

from conftest import ROOT, example_module

figures = example_module(ROOT / "bench" / "ml_figures.py", "bench_ml_figures")


def test_the_documents_results_block_is_the_scripts_output() -> None:
    data = json.loads(figures.JSON.read_text())
    doc = figures.DOC.read_text()
    assert doc.count(figures.BEGIN) == doc.count(figures.END) == 1
    assert figures.block_of(doc) == figures.figures(data), (
        "docs/ml-performance.md's figures block differs from docs/ml-performance.json: "
        "python bench/ml_figures.py --write")
    for key in ("date", "machine", "source"):
        assert data[key]
    assert all(run["name"] and run["command"] for run in data["runs"])


def test_a_bench_json_gives_shares_from_floor_ms_and_skips_what_it_lacks() -> None:
    entry = {"decode_ms": 10.0, "floor_ms": 7.5, "bandwidth_gb_s": 30.0, "nll": 3.1,
             "prefill_tok_s_by_len": {}}
    run = {"name": "run", "command": "make bench-ml", "bandwidth_gb_s": 40.0,
           "matmul_gflop_s": 200.0, "models": {"smollm2": {
               "exact": {**entry, "prefill_tok_s_by_len": {"128": 600.0}},
               "weights=w8a8": entry | {"decode_ms": 5.0},
               "weights=w8a8, 1 thread": entry | {"nll": math.nan},
               "prefill_weights=w8a8": {"decode_ms": math.nan,
                                        "prefill_tok_s_by_len": {"128": 900.0}},
               "jax.jit": {"decode_ms": 20.0, "nll": 3.1,
                           "prefill_tok_s_by_len": {"128": 500.0}},
               "llama.cpp (Q4_1)": {"decode_ms": 8.0, "floor_ms": 2.0, "nll": 3.0}}}}
    out = figures.figures({"date": "d", "machine": "m", "runs": [run]})
    assert "| `weights=w8a8` | 5.0 (150%) | 3.100 | 0.62 |" in out
    assert "| `weights=w8a8, 1 thread` | 10.0 (75%) | — | 1.25 |" in out
    assert "| llama.cpp (SmolLM2-135M Q4_1) | 8.0 (25%) | 3.000 |  |" in out
    assert "prefill_weights" not in out.split("Prefill")[0]
    assert "| SmolLM2-135M | 128 tokens | 600 | 900 | 500 | 1.20 |" in out
    assert "SmolLM2-135M 30.0 GB/s" in out and "f32 matmul 200 GFLOP/s" in out
