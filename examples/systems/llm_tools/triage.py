"""Triage accuracy of llm_tools, exact and under its triage knobs, on the same questions.

    python examples/systems/llm_tools/triage.py [--questions FILE] [--limit 40] [--json]

For each variant (triage_model, triage_layers, triage_prompt) the share of questions routed
to their gold tool (the question file's `tool`) and the mean seconds of a triage (the
question's prefill over the prompt head's cached keys); variants run interleaved question by
question, so load on a shared machine hits all alike.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from approxcc.system import load_system

HERE = Path(__file__).resolve().parent
# (triage_model, triage_layers, triage_prompt): the exact one first
VARIANTS = ((0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 2, 0), (0, 3, 0), (1, 0, 0), (1, 0, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=HERE / "tune.jsonl")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    items = [json.loads(line) for line in args.questions.read_text().splitlines()
             if line.strip()][:args.limit]
    pipeline = load_system(str(HERE)).pipeline
    right = dict.fromkeys(VARIANTS, 0)
    seconds = dict.fromkeys(VARIANTS, 0.0)
    began = time.perf_counter()
    for q in items:
        for v in VARIANTS:
            result = pipeline.triage(q["question"], v[0], v[1], bool(v[2]))
            right[v] += result.value == q["tool"]
            seconds[v] += result.parts["triage"]
    n = len(items)
    rows = [{"triage_model": pipeline.model_names[v[0]], "triage_layers": v[1],
             "triage_prompt": "short" if v[2] else "full", "accuracy": right[v] / n,
             "seconds": seconds[v] / n} for v in VARIANTS]
    if args.json:
        print(json.dumps({"questions": n, "variants": rows,
                          "wall_s": time.perf_counter() - began}, indent=2))
        return
    print(f"{n} questions of {args.questions.name}")
    for r in rows:
        print(f"{r['triage_model']:8} layers -{r['triage_layers']} {r['triage_prompt']:5} "
              f"accuracy {r['accuracy']:6.1%}  {r['seconds']:.3f} s")


if __name__ == "__main__":
    main()
