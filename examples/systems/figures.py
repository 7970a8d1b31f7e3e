"""The shipped configurations' figures, as the Markdown of examples/systems/README.md.

Reads every `examples/systems/<system>/configs/budget-<n>.json` (written by
`approxcc tune`) and prints two tables: what each configuration measured (speedup and
QoS loss on the tune, check and eval questions, the tuner's loss bound, how many questions)
and, for the RAG systems, the value each knob takes. The README holds this output between
its `figures:begin` and `figures:end` marker comments; tests/test_systems_figures.py checks
that it is this script's output, so the page cannot drift from the configurations.

    python examples/systems/figures.py            # print the tables
    python examples/systems/figures.py --write    # rewrite the README's block
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from approxcc.tune.space import is_dynamic_config

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
BEGIN = "<!-- figures:begin (python examples/systems/figures.py --write) -->"
END = "<!-- figures:end -->"
SPLITS = ("tune", "check", "eval")
ORDER = ("rag_bm25", "rag_kb", "llm_tools")     # the table's order; any other system after
RAG_SYSTEMS = ("rag_bm25", "rag_kb")

# A RAG knob's values in words (common/rag.py, common/select.c, the kernels' pragmas); a
# value not listed prints as it is.
LABELS: dict[str, dict[int, str]] = {
    "doc_stride": {1: "every doc"},
    "term_skip": {0: "off", 1: "skip"},
    "early_stop": {0: "off", 1: "stop"},
    "probe": {1: "all"},
    "dims": {1: "all"},
    "precision": {0: "float", 1: "int8"},
    "extra_passage": {0: "kept", 1: "dropped"},
    "passage_tail": {0: "whole", 1: "24 words"},
    "llm_model": {0: "Gemma", 1: "SmolLM2"},
    "llm_quant": {0: "f32", 1: "W8A8", 2: "bf16", 3: "W8A16"},
    "llm_prefill": {0: "f32", 1: "W8A8", 2: "bf16"},
    "llm_vocab": {0: "all", 1: "corpus"},
    "llm_answer": {0: "10 tokens", 4: "6 tokens", 6: "4 tokens"},
    "llm_example": {0: "kept", 1: "left out"},
}
STRIDES = ("doc_stride", "probe", "dims")      # value v: every v-th (1/v of the work)


def configs(root: Path = HERE) -> dict[str, list[tuple[int, Path, dict[str, Any]]]]:
    """system -> its shipped configurations (budget %, path, JSON), by budget."""
    out: dict[str, list[tuple[int, Path, dict[str, Any]]]] = {}
    for path in sorted(root.glob("*/configs/budget-*.json")):
        m = re.fullmatch(r"budget-(\d+)\.json", path.name)
        if m:
            out.setdefault(path.parent.parent.name, []).append(
                (int(m.group(1)), path, json.loads(path.read_text())))
    rank = {s: i for i, s in enumerate(ORDER)}
    return {s: sorted(out[s], key=lambda e: e[0])
            for s in sorted(out, key=lambda s: (rank.get(s, len(ORDER)), s))}


def _speedup(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}x"


def _loss(x: float | None, over: bool | None = None) -> str:
    if x is None:
        return "–"
    text = "0" if abs(x) < 5e-5 else f"{100 * x:.1f}%"
    return f"**{text}** (over)" if over else text


def _splits(values: list[str]) -> str:
    return " / ".join(values)


def figures_table(systems: dict[str, list[tuple[int, Path, dict[str, Any]]]],
                  root: Path = HERE) -> list[str]:
    lines = ["| system | budget | config | knobs | speedup (tune / check / eval) | "
             "loss (tune / check / eval) | loss bound | questions (tune / check / eval) |",
             "|---|---|---|---|---|---|---|---|"]
    for system, entries in systems.items():
        seen: dict[str, int] = {}
        for budget, path, c in entries:
            qos, speedup = c.get("qos", {}), c.get("speedup", {})
            prov = c.get("provenance", {})
            questions = prov.get("questions", {})
            digest = prov.get("config_hash")
            same = f" (= {seen[digest]}%)" if digest in seen else ""
            if digest is not None:
                seen.setdefault(digest, budget)
            link = f"[{path.name}]({path.relative_to(root).as_posix()})"
            lines.append(" | ".join([
                f"| {system}", f"{budget}%{same}", link,
                "dynamic" if is_dynamic_config(c.get("knobs", {})) else "static",
                _splits([_speedup(speedup.get(s)) for s in SPLITS]),
                _splits([_loss(qos.get(f"loss_{s}"), qos.get(f"over_budget_on_{s}"))
                         for s in SPLITS]),
                _loss(qos.get("loss_bound")),
                _splits([str(questions.get(s, "–")) for s in SPLITS]) + " |"]))
    return lines


def knob_value(name: str, entry: dict[str, Any]) -> str:
    """A knob's configuration entry in words: a value, or a decision tree over its state."""
    def word(v: int) -> str:
        if v in LABELS.get(name, {}):
            return LABELS[name][v]
        return f"1/{v}" if name in STRIDES else str(v)

    if "value" in entry:
        return word(int(entry["value"]))
    thresholds, decisions = entry["thresholds"], entry["decisions"]
    parts = [f"< {t}: {word(d)}" for t, d in zip(thresholds, decisions, strict=False)]
    return ", ".join([*parts, f"else {word(decisions[-1])}"])


def knobs_table(systems: dict[str, list[tuple[int, Path, dict[str, Any]]]]) -> list[str]:
    columns = [(s, b, c) for s in RAG_SYSTEMS for b, _, c in systems.get(s, [])]
    if not columns:
        return []
    names = [n for n in LABELS if any(n in c["knobs"] for _, _, c in columns)]
    lines = ["| knob | " + " | ".join(f"{s} {b}%" for s, b, _ in columns) + " |",
             "|---|" + "---|" * len(columns)]
    for n in names:
        cells = [knob_value(n, c["knobs"][n]) if n in c["knobs"] else "" for _, _, c in columns]
        lines.append(f"| `{n}` | " + " | ".join(cells) + " |")
    return lines


def render(root: Path = HERE) -> str:
    """The README's block between the markers (without them)."""
    systems = configs(root)
    return "\n".join([*figures_table(systems, root), "", *knobs_table(systems)]) + "\n"


def readme_block(text: str) -> str:
    """What the README holds between its markers."""
    start, end = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
    return text[start:end]


def write(readme: Path = README, root: Path = HERE) -> bool:
    """Rewrite the README's block; True when it changed."""
    text = readme.read_text()
    start, end = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
    new = text[:start] + render(root) + text[end:]
    if new != text:
        readme.write_text(new)
    return new != text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite the block of examples/systems/README.md")
    args = parser.parse_args()
    if args.write:
        print(f"{README}: {'updated' if write() else 'unchanged'}")
    else:
        print(render(), end="")


if __name__ == "__main__":
    main()
