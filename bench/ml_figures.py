"""The results section of docs/ml-performance.md, as Markdown, from committed JSON.

Reads docs/ml-performance.json: its `date`, `machine` and `runs`, each run a
bench/ml_decode.py `--json` output (`models` -> variant label -> `decode_ms`, `nll`,
`bandwidth_gb_s`, `prefill_tok_s_by_len`, ...) with its `name` and `command`, and
`floor_share` where `floor_ms` was not kept. Prints the decode table (ms/token and share of
the floor per run, NLL, time against llama.cpp's) and the prefill table (tokens/s per
prompt length), values of several runs joined by " / ".

The document holds this output between `<!-- figures:begin -->` and `<!-- figures:end -->`;
tests/test_ml_figures.py checks that they are equal. After a new run, add its JSON to
`runs` (or replace them) and rewrite the block: ``python bench/ml_figures.py --write``.

Usage: ``python bench/ml_figures.py [--json docs/ml-performance.json] [--write]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JSON = ROOT / "docs" / "ml-performance.json"
DOC = ROOT / "docs" / "ml-performance.md"
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
NAMES = {"gemma3": "Gemma 3 270M", "smollm2": "SmolLM2-135M"}
JAX, LLAMA = "jax.jit", "llama.cpp"
MISSING = "—"


def _num(entry: dict[str, Any] | None, key: str) -> float | None:
    value = (entry or {}).get(key)
    return None if value is None or math.isnan(float(value)) else float(value)


def _share(entry: dict[str, Any] | None) -> float | None:
    """The floor's share of the decode time: `floor_share`, else floor_ms / decode_ms."""
    share = _num(entry, "floor_share")
    floor, ms = _num(entry, "floor_ms"), _num(entry, "decode_ms")
    return share if share is not None else (floor / ms if floor and ms else None)


def _llama(variants: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """llama.cpp's row of a model (`llama.cpp (Q4_K_M)`): its label and entry."""
    return next(((k, v) for k, v in variants.items() if k.startswith(LLAMA)), None)


def _label(variant: str) -> str:
    return "exact (f32)" if variant == "exact" else f"`{variant}`"


def _joined(cells: list[str]) -> str:
    return MISSING if all(c == MISSING for c in cells) else " / ".join(cells)


def _order(runs: list[dict[str, Any]], model: str | None, has: str) -> list[str]:
    """Variant labels with a `has` figure in some run (of `model`, or of any), in the JSON's
    order, `jax.jit` after approxcc's, llama.cpp's left out."""
    seen: dict[str, None] = {}
    for run in runs:
        for name, variants in run["models"].items():
            if model in (None, name):
                seen |= {k: None for k, v in variants.items()
                         if not k.startswith(LLAMA) and v.get(has) not in (None, {})
                         and not (isinstance(v[has], float) and math.isnan(v[has]))}
    return sorted(seen, key=lambda k: k == JAX)


def _models(runs: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(m for run in runs for m in run["models"]))


def _runs_line(run: dict[str, Any], models: list[str]) -> str:
    line = f"- {run['name']}: `{run['command']}`"
    if run.get("note"):
        line += f" ({run['note']})"
    floors = []
    for m in models:
        bw = {_num(v, "bandwidth_gb_s") for k, v in run["models"].get(m, {}).items()
              if not k.startswith(LLAMA)} - {None}
        if bw:
            floors.append(f"{NAMES.get(m, m)} {'-'.join(f'{b:.1f}' for b in sorted(bw))}")
    if floors:
        line += "; the floors at numpy's median pass among the steps: " + ", ".join(floors)
        line += " GB/s"
        llama = run.get("llama_cpp_bandwidth_gb_s")
        if llama:
            line += f" (llama.cpp's {'-'.join(f'{b:.1f}' for b in llama)})"
    if run.get("bandwidth_gb_s") and run.get("matmul_gflop_s"):
        line += (f"; numpy's best pass at the start {run['bandwidth_gb_s']:.1f} GB/s, f32 "
                 f"matmul {run['matmul_gflop_s']:.0f} GFLOP/s")
    return line + "."


def decode_table(runs: list[dict[str, Any]]) -> list[str]:
    models = _models(runs)
    head = ["variant"]
    for m in models:
        head += [f"{NAMES.get(m, m)} ms (of floor)", "NLL", f"× {LLAMA}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    quants = []
    for m in models:
        found = [_llama(run["models"].get(m, {})) for run in runs]
        label = next((k for k, _ in filter(None, found)), None)
        if label:
            quants.append(f"{NAMES.get(m, m)} {label[len(LLAMA):].strip(' ()')}")
    for variant in [*_order(runs, None, "decode_ms"), LLAMA]:
        label = (f"{LLAMA} ({', '.join(quants)})" if variant == LLAMA else _label(variant))
        cells = [label]
        for m in models:
            times, nlls, ratios = [], [], []
            for run in runs:
                variants = run["models"].get(m, {})
                llama = _llama(variants)
                entry = llama[1] if variant == LLAMA and llama else variants.get(variant)
                ms, share, nll = _num(entry, "decode_ms"), _share(entry), _num(entry, "nll")
                peer = _num(llama[1], "decode_ms") if llama else None
                times.append(MISSING if ms is None else f"{ms:.1f}" + (
                    f" ({share:.0%})" if share is not None else ""))
                if nll is not None:
                    nlls.append(f"{nll:.3f}")
                ratios.append(f"{ms / peer:.2f}" if ms and peer and variant != LLAMA
                              else MISSING)
            cells += [_joined(times), " / ".join(dict.fromkeys(nlls)) or MISSING,
                      "" if variant == LLAMA else _joined(ratios)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def prefill_table(runs: list[dict[str, Any]]) -> list[str]:
    models = _models(runs)
    variants = _order(runs, None, "prefill_tok_s_by_len")
    head = ["model", "prompt", *(_label(v) for v in variants)]
    ratio = "exact" in variants and JAX in variants
    if ratio:
        head.append(f"exact ÷ `{JAX}`")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lengths = sorted({int(n) for run in runs for vs in run["models"].values()
                      for v in vs.values() for n in v.get("prefill_tok_s_by_len", {})})
    for m in models:
        for n in lengths:
            def rate(run: dict[str, Any], v: str, m: str = m, n: int = n) -> float | None:
                return _num(run["models"].get(m, {}).get(v, {}).get("prefill_tok_s_by_len"),
                            str(n))

            cells = [NAMES.get(m, m), f"{n} tokens"]
            for v in variants:
                cells.append(_joined([MISSING if (r := rate(run, v)) is None else f"{r:.0f}"
                                      for run in runs]))
            if ratio:
                pairs = [(rate(run, "exact"), rate(run, JAX)) for run in runs]
                cells.append(_joined([f"{a / b:.2f}" if a and b else MISSING
                                      for a, b in pairs]))
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def figures(data: dict[str, Any]) -> str:
    """The Markdown of the results block."""
    runs = data["runs"]
    models = _models(runs)
    names = " / ".join(run["name"] for run in runs)
    lines = [f"Measured {data['date']} on a {data['machine']}; figures from "
             f"docs/ml-performance.json (`python bench/ml_figures.py`).", "",
             *(_runs_line(run, models) for run in runs), "",
             f"Decode, ms/token (share of the floor), {names}; NLL in nats/token over "
             f"512 tokens of Wikipedia summaries; × {LLAMA}: the variant's time over "
             f"llama.cpp's in the same run:", "",
             *decode_table(runs), "",
             f"Prefill, tokens/s (a prompt but its last token into the cache, then a decode "
             f"step), {names}:", "",
             *prefill_table(runs)]
    return "\n".join(lines) + "\n"


def replace_block(doc: str, block: str) -> str:
    """`doc` with the text between its markers replaced by `block`."""
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)
    if not pattern.search(doc):
        raise SystemExit(f"no {BEGIN} ... {END} block")
    return pattern.sub(lambda _: f"{BEGIN}\n{block}{END}", doc)


def block_of(doc: str) -> str:
    """The text between the markers of `doc`."""
    return doc.split(BEGIN + "\n", 1)[1].split(END, 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=JSON)
    parser.add_argument("--write", action="store_true",
                        help=f"replace the block of {DOC.relative_to(ROOT)} instead of printing")
    args = parser.parse_args()
    block = figures(json.loads(args.json.read_text()))
    if args.write:
        DOC.write_text(replace_block(DOC.read_text(), block))
    else:
        print(block, end="")


if __name__ == "__main__":
    main()
