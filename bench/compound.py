"""`make bench-compound`: Fig. 6 for the compound systems of examples/systems/.

For each system (default: every examples/systems/*/system.toml except tiny's):

1. the time profile of the exact system on the first `--profile-questions` tune questions
   (retrieval, selection, prefill, decode: seconds per question) and each knob's Amdahl
   bound: the knob is set alone to a non-exact value on one question, and the stages that
   then rerun (cache misses of `approxcc.system.pipeline.Stages`) are what it can speed up
   at all: its own stage (the first to rerun) and everything it reruns; bound = 1 / (1 -
   their share of the time);
2. `approxcc tune SYSTEM` (`approxcc.tune.tune`, then its report and `record_eval`), as a
   user runs it: static and dynamic searches in one run, budgets 3/6/9%, `--minutes` of
   search, starting from the system's shipped configurations; the tune file's last
   questions (system.toml's `check`) held out of the search decide what ships (a pick over
   its budget on them gives way to the tighter budget's), and the first `eval_limit`
   questions of the eval file are recorded beside, choosing nothing (docs/systems.md);
3. the Fig. 6 table (budget: the mode shipped, speedup and loss on tune, check and eval,
   the fallback), `<out>/<system>/tuned/pareto.png`, `--json`,
   and the configurations written as examples/systems/<system>/configs/budget-{3,6,9}.json.

`--llm` measures the LLM variants instead, side by side on the exact prompts of rag_bm25's
first `--profile-questions` (interleaved, `--repeats` rounds, medians): seconds per answer
(prefill and greedy decode to the end of the first line, at most 10 tokens), for each
model, exact (jax.jit) and as the pipeline's variants (W8A8 / restricted-vocabulary decode,
W8A8 prefill), with the seconds their build took when it was not there yet (`make
bench-ml` has the whole model under approxcc's build against jax.jit).

Time: 2-4 s of LLM per question on a 2-core machine, every stage of it paid again by the
confirmation (exact and candidate, fresh, per question); stage results are cached, so the
search's repeats and its exact runs are cheap; the confirmation's are not, on purpose.

    python bench/compound.py [SYSTEM ...] [--profile-questions 20] [--minutes 8]
                             [--out DIR] [--json FILE] [--no-configs]
    python bench/compound.py --llm [--profile-questions 6] [--repeats 3]

`--out` (default build/bench-compound) gets per system the tuner's results DB, its
configurations and plot (`tuned/`), and results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from approxcc.diagnostics import CompileError
from approxcc.system import CompoundSystem, load_system
from approxcc.system.evaluate import record_eval
from approxcc.system.questions import load_questions
from approxcc.tune import TuneOptions, tune
from approxcc.tune.db import ResultsDB
from approxcc.tune.report import report
from approxcc.tune.space import is_dynamic_config

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ROOT / "examples" / "systems"
MIN_TIMEOUT_S = 120.0     # a batch's first run of a model variant loads and compiles it

console = Console(width=200)


def profile(system: CompoundSystem, n: int) -> dict[str, Any]:
    """Seconds per question of each stage of the exact system on the first n tune questions,
    and each knob's Amdahl bound."""
    questions = load_questions(system.project.tune_questions, n)
    system.stages.reset_profile()
    for q in questions:
        system.answer(q, None)
    stages = {k: v / n for k, v in system.stages.reset_profile().items()}
    total = sum(stages.values())
    exact = system.knob_space().exact_config()
    knobs = []
    for knob in system.knob_space().knobs:
        value = next(v for v in reversed(knob.values) if v != knob.exact)
        before = set(system.stages.cache)
        system.answer(questions[0], {**exact, knob.name: {"value": value}})
        rerun = [system.stages.cache[k][1] for k in system.stages.cache if k not in before]
        own = list(rerun[0]) if rerun else []
        every = sorted({part for parts in rerun for part in parts})
        knobs.append({"knob": knob.name, "probe_value": value, "own_stage": own,
                      "own_bound": _bound(stages, own, total), "reruns": every,
                      "rerun_bound": _bound(stages, every, total)})
    system.stages.reset_profile()
    return {"questions": n, "seconds_per_question": total, "stages": stages, "knobs": knobs}


def _bound(stages: dict[str, float], parts: list[str], total: float) -> float | None:
    """Amdahl: the most a change of `parts` alone can speed up the whole (None: unbounded)."""
    rest = total - sum(stages.get(p, 0.0) for p in parts)
    return total / rest if rest > 1e-9 else None


def tune_system(system: CompoundSystem, where: Path, out: Path, args: argparse.Namespace,
                prof: dict[str, Any], starts: list[Path]) -> list[Path]:
    """`approxcc tune SYSTEM` (both modes, the check questions held out, the fallback, the
    eval questions recorded), its searches starting from `starts`: the configurations it
    writes, one per budget."""
    written: list[Path] = []

    def reporter(db: ResultsDB, run_id: int) -> None:
        written.extend(report(db, db.run(run_id), out, console))
        record_eval(str(where), written, console)

    # A batch's first run of a variant compiles (XLA) outside its stage times: the tuner's
    # timeout starts from the profile's seconds per question.
    batch = prof["seconds_per_question"] * system.project.batch
    options = TuneOptions(budgets=args.budgets, out=out, time_limit=args.minutes * 60,
                          mode="both", seed=args.seed, timeout=max(MIN_TIMEOUT_S, 10 * batch),
                          metric=system.project.metric, confirm_repeats=args.confirm_repeats,
                          confirm_candidates=args.confirm_candidates, start_from=starts)
    tune(system, options, console=console, reporter=reporter)
    return written


def ship(system: CompoundSystem, configs: list[Path]) -> list[Path]:
    """The tuner's configurations as the system's shipped ones (configs/budget-N.json)."""
    folder = system.project.root / "configs"
    folder.mkdir(exist_ok=True)
    shipped = []
    for config in configs:
        doc = json.loads(config.read_text())
        doc["provenance"].pop("db", None)     # a scratch path of the benchmark run
        doc["provenance"]["bench"] = "bench/compound.py"
        path = folder / f"budget-{doc['qos']['budget'] * 100:g}.json"
        path.write_text(json.dumps(doc, indent=2) + "\n")
        shipped.append(path)
    return shipped


def profile_table(name: str, prof: dict[str, Any]) -> Table:
    total = prof["seconds_per_question"]
    t = Table(title=f"{name}: exact system, {prof['questions']} tune questions, "
                    f"{total:.2f} s per question")
    for col in ("stage", "s / question", "share"):
        t.add_column(col, justify="right")
    for stage, s in prof["stages"].items():
        t.add_row(stage, f"{s:.3f}", f"{s / total:.1%}")
    k = Table(title=f"{name}: Amdahl bound per knob (stages rerun when it alone changes)")
    for col in ("knob", "own stage", "bound", "everything it reruns", "bound"):
        k.add_column(col, justify="right")
    for row in prof["knobs"]:
        k.add_row(row["knob"], "+".join(row["own_stage"]) or "-", _x(row["own_bound"]),
                  "+".join(row["reruns"]) or "-", _x(row["rerun_bound"]))
    grid = Table.grid()
    grid.add_row(t)
    grid.add_row(k)
    return grid


def _x(value: float | None) -> str:
    return "∞" if value is None else f"{value:.2f}×"


def fig6(results: list[dict[str, Any]]) -> Table:
    t = Table(title="Fig. 6: speedup within the QoS budget (what ships: the faster of the "
                    "static and dynamic picks)")
    for col in ("system", "budget", "mode", "× tune", "× check", "× eval", "loss tune",
                "loss check", "loss eval", "fallback", "system (min)"):
        t.add_column(col, justify="right")
    for res in results:
        for c in res["configs"]:
            qos, speedup = c["qos"], c["speedup"]
            t.add_row(res["system"], f"{qos['budget']:.0%}",
                      "dynamic" if is_dynamic_config(c["knobs"]) else "static",
                      *(f"{speedup[s]:.2f}×" if speedup.get(s) else "-"
                        for s in ("tune", "check", "eval")),
                      *(_pct(qos.get(f"loss_{s}"), qos.get(f"over_budget_on_{s}"))
                        for s in ("tune", "check", "eval")),
                      c["provenance"].get("fallback", "-"), f"{res['total_minutes']:.1f}")
    return t


def _pct(loss: float | None, over: bool | None) -> str:
    if loss is None:
        return "-"
    return f"{loss:.1%}" + (" [bold red]over[/]" if over else "")


def llm_speed(args: argparse.Namespace) -> dict[str, Any]:
    """Seconds per answer (`Llm.generate`: prefill and greedy decode to the end of the first
    line, at most 10 tokens) of each LLM variant, interleaved."""
    system = load_system(str(SYSTEMS / "rag_bm25"))
    system.build(args.out / "llm-build")
    pipe = system.pipeline
    llm = pipe.llm
    lm = sys.modules[type(llm).__module__]      # common/llm.py, loaded by path
    lib = system.library.load(None)
    prompts = []
    for q in load_questions(system.project.tune_questions, args.profile_questions):
        ids, scores = pipe.retrieve(lib, q.question)
        prompts.append(pipe.prompt(q.question, ids, pipe.select(lib, ids, scores)))
    rows: dict[str, dict[str, Any]] = {}
    for model, name in enumerate(pipe.model_names):
        variants = {"jax f32 (exact)": lm.Variant(model),
                    "w8a8 decode": lm.Variant(model, quant=1),
                    "w8a8+corpus-vocab decode": lm.Variant(model, quant=1, vocab=1),
                    "corpus-vocab decode": lm.Variant(model, vocab=1),
                    "w8a8 prefill": lm.Variant(model, prefill=1),
                    "w8a8 prefill, w8a8+corpus-vocab decode":
                        lm.Variant(model, quant=1, vocab=1, prefill=1),
                    "bf16 decode": lm.Variant(model, quant=2),
                    "bf16 prefill": lm.Variant(model, prefill=2),
                    "bf16 prefill, bf16+corpus-vocab decode":
                        lm.Variant(model, quant=2, vocab=1, prefill=2)}
        for label, variant in variants.items():
            t0 = time.perf_counter()
            llm.prepare([variant])
            rows[f"{name} {label}"] = {"build_s": time.perf_counter() - t0}
        times: dict[str, list[float]] = {k: [] for k in variants}
        answers: dict[str, list[str]] = {k: [] for k in variants}
        for rep in range(args.repeats + 1):     # round 0 compiles (XLA) and is not counted
            for prompt in prompts:
                for label, variant in variants.items():
                    text, parts = llm.generate(prompt, variant)
                    if rep:
                        times[label].append(sum(parts.values()))
                    if rep == 1:
                        answers[label].append(text)
        base = statistics.median(times["jax f32 (exact)"])
        for label in variants:
            med = statistics.median(times[label])
            same = [a == b for a, b in zip(answers[label], answers["jax f32 (exact)"],
                                           strict=True)]
            rows[f"{name} {label}"].update(
                {"seconds_per_answer": med, "speedup_vs_jax": base / med,
                 "same_answer": sum(same) / len(same)})
    result = {"prompts": len(prompts), "repeats": args.repeats,
              "load_average": os.getloadavg(), "rows": rows}
    t = Table(title=f"LLM variants: {len(prompts)} rag_bm25 prompts x {args.repeats} rounds, "
                    f"answers of at most 10 tokens (load {os.getloadavg()[0]:.1f})")
    for col in ("variant", "s / answer", "× vs jax", "same answer", "build s"):
        t.add_column(col, justify="right")
    for label, row in rows.items():
        t.add_row(label, f"{row['seconds_per_answer']:.3f}", f"{row['speedup_vs_jax']:.2f}×",
                  f"{row['same_answer']:.0%}", f"{row['build_s']:.0f}")
    console.print(t)
    return result


def shipped_configs(where: Path, keep: Path) -> list[Path]:
    """The system's shipped configurations (configs/budget-*.json), copied to `keep` (this
    run ships new ones over them)."""
    keep.mkdir(parents=True, exist_ok=True)
    out = []
    for path in sorted((where / "configs").glob("budget-*.json")):
        (keep / path.name).write_text(path.read_text())
        out.append(keep / path.name)
    return out


def bench_system(where: Path, args: argparse.Namespace) -> dict[str, Any]:
    system = load_system(str(where))
    out = args.out / system.name
    split = system.split
    console.rule(f"{system.name}: {split['tune']} tune / {split['check']} check questions "
                 f"(system.toml), at most {system.project.eval_limit} eval questions, "
                 f"{args.minutes:g} min of search")
    began = time.perf_counter()
    system.build(out / "profile-build")
    console.print(f"library and model variants built in {time.perf_counter() - began:.0f} s "
                  f"(IREE compiling {system.compile_s:.0f} s of it; cached for later runs)")
    prof = profile(system, min(args.profile_questions, split["tune"]))
    console.print(profile_table(system.name, prof))
    # the searches start from the configurations shipped so far: the tuner confirms them
    # beside its own candidates, so a run keeps what earlier runs found
    starts = shipped_configs(where, out / "shipped")
    configs = tune_system(system, where, out / "tuned", args, prof, starts)
    if args.configs:
        configs = ship(system, configs)
    return {"system": system.name, "questions": split, "minutes": args.minutes,
            "profile": prof, "configs": [json.loads(c.read_text()) for c in configs],
            "total_minutes": (time.perf_counter() - began) / 60}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="The questions each set holds are system.toml's ([questions] check, "
               "eval_limit).")
    parser.add_argument("systems", nargs="*", type=Path,
                        help="system folders (default: every examples/systems/*/system.toml "
                             "except tiny)")
    parser.add_argument("--profile-questions", type=int, default=20,
                        help="first N questions of the tune file the exact system is profiled "
                             "on (--llm: the prompts) (default 20)")
    parser.add_argument("--minutes", type=float, default=8.0,
                        help="search time limit, both modes (default 8)")
    parser.add_argument("--budgets", default="3,6,9", help="QoS budgets in %% (default 3,6,9)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--confirm-repeats", type=int, default=2,
                        help="interleaved repeats per candidate (default 2)")
    parser.add_argument("--confirm-candidates", type=int, default=1,
                        help="candidates per budget besides the fastest within it "
                             "(default 1)")
    parser.add_argument("--llm", action="store_true",
                        help="measure the LLM variants side by side instead (see above)")
    parser.add_argument("--repeats", type=int, default=3, help="--llm: rounds (default 3)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench-compound",
                        help="results DBs and plots (default build/bench-compound)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the results here (default OUT/results.json)")
    parser.add_argument("--no-configs", dest="configs", action="store_false",
                        help="do not write examples/systems/<name>/configs/budget-*.json")
    args = parser.parse_args()
    args.budgets = [float(b) / 100 for b in args.budgets.split(",")]
    args.out = args.out.resolve()
    args.json = args.json or args.out / "results.json"
    args.json.parent.mkdir(parents=True, exist_ok=True)
    if args.llm:
        args.json.write_text(json.dumps(llm_speed(args), indent=2) + "\n")
        return
    folders = args.systems or sorted(p.parent for p in SYSTEMS.glob("*/system.toml")
                                     if p.parent.name != "tiny")
    results = []
    for folder in folders:
        try:
            results.append(bench_system(folder, args))
        except CompileError as err:     # a system that does not load: say so, bench the rest
            console.print(err.diagnostic.render(), markup=False, highlight=False)
            continue
        # after every system: an interrupted run keeps what it measured
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")
    for res in results:
        console.print(profile_table(res["system"], res["profile"]))
    console.print(fig6(results))
    plots = [str(args.out / r["system"] / "tuned" / "pareto.png") for r in results]
    console.print(f"plots: {', '.join(plots)}")


if __name__ == "__main__":
    main()
