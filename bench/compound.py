"""`make bench-compound`: Fig. 6 for the compound systems of examples/systems/.

For each system (default: every examples/systems/*/system.toml except tiny's):

1. the time profile of the exact system on the tuning questions (retrieval, selection,
   prefill, decode: seconds per question) and each knob's Amdahl bound: the knob is set alone
   to a non-exact value on one question, and the stages that then rerun (cache misses of
   `approxcc.system.pipeline.Stages`) are what it can speed up at all: its own stage (the
   first to rerun) and everything it reruns; bound = 1 / (1 - their share of the time);
2. two `approxcc.tune.tune` runs, mode static then dynamic (each starting from the system's
   shipped configurations its mode holds, the dynamic one also from the static run's picks:
   `--start-from`), budgets 3/6/9% (`--minutes` each), on the first `--tune-questions` of
   the system's tune file. The tuner's held-out inputs are the *check* questions: the next
   `--check-questions` of the tune file, which the search never sees. The tuner's
   confirmation times the exact system and its candidates afresh, in turn question by
   question (`CompoundSystem.run_round`), `--confirm-repeats` times on the tune questions,
   then the picks the same way on the check questions;
3. each pick once on the first `--eval-limit` questions of the eval file (`approxcc eval`'s
   `evaluate`: the exact system and the pick in turn, question by question). Eval questions
   only report: they choose nothing (tune and eval files are disjoint, checked by
   system.toml);
4. the Fig. 6 table (budget x static/dynamic: speedup and loss on tune, check and eval,
   within the budget on check and on eval?, minutes per mode and for the whole system),
   `<out>/<system>/<mode>/pareto.png` (the tuner's plot, tuning time in the title; its
   held-out front is the check questions'), `--json`, and per budget the pick to ship
   (dynamic unless the static one is faster on the tune questions; a pick over its budget
   on the check questions is not shipped) as examples/systems/<system>/configs/
   budget-{3,6,9}.json, with its eval figures.

`--llm` measures the LLM variants instead, side by side on the exact prompts of rag_bm25's
first `--tune-questions` (interleaved, `--repeats` rounds, medians): seconds per answer
(prefill and greedy decode to the end of the first line, at most 10 tokens), for each
model, exact (jax.jit) and as the pipeline's variants (W8A8 / restricted-vocabulary decode,
W8A8 prefill), with the seconds their build took when it was not there yet (`make
bench-ml` has the whole model under approxcc's build against jax.jit).

Time: 2-4 s of LLM per question on a 2-core machine, every stage of it paid again by the
confirmation (exact and candidate, fresh, per question). On the shared machine (load 7-10),
llm_tools with 30 tune / 30 eval questions, 5 minutes a mode: the exact profile 13 minutes
(its first runs of each model variant compile), a search evaluation 0.5-5 minutes (3
screened, 3 searched), a confirmation pair of the 30 tune questions 3.3 minutes; about 35
minutes a mode. Stage results are cached, so the search's repeats and its exact runs are
cheap; the confirmation's are not, on purpose.

    python bench/compound.py [SYSTEM ...] [--tune-questions 20] [--check-questions 60]
                             [--eval-limit 40] [--minutes 4] [--out DIR] [--json FILE]
                             [--no-configs]
    python bench/compound.py --llm [--tune-questions 6] [--repeats 3]

`--out` (default build/bench-compound) gets the tuners' results DBs, per-mode configurations
and plots, and results.json.
"""

from __future__ import annotations

import argparse
import dataclasses
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
from approxcc.system.evaluate import evaluate
from approxcc.system.questions import load_questions
from approxcc.tune import TuneOptions, tune
from approxcc.tune.db import ResultsDB
from approxcc.tune.report import plot, rows, write_configs
from approxcc.tune.space import is_dynamic_config

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ROOT / "examples" / "systems"
MODES = ("static", "dynamic")
MIN_TIMEOUT_S = 120.0     # a batch's first run of a model variant loads and compiles it

console = Console(width=200)


def subset(system: CompoundSystem, tune_n: int, check_n: int) -> tuple[int, int]:
    """The tuner's inputs: the first `tune_n` questions of the tune file to search on, the
    next `check_n` (at most the rest of the file) as its held-out inputs, in batches of the
    system's size (how `CompoundSystem` batches them)."""
    path = system.project.tune_questions
    total = len(system.questions[path])
    tune_n = min(tune_n, total - 1)
    end = min(total, tune_n + max(1, check_n))
    size = system.project.batch
    system.tune_inputs = [f"{path}:{s}:{min(s + size, tune_n)}" for s in range(0, tune_n, size)]
    system.eval_inputs = [f"{path}:{s}:{min(s + size, end)}" for s in range(tune_n, end, size)]
    return tune_n, end - tune_n


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


def tune_mode(system: CompoundSystem, mode: str, out: Path, args: argparse.Namespace,
              prof: dict[str, Any], starts: list[Path]) -> list[dict[str, Any]]:
    """One tuning run, its searches starting from the configurations `starts`, and its
    picks: speedup and loss on tune and check are the tuner's confirmation rounds (the exact
    system and the candidates in turn, question by question, every stage timed afresh:
    `CompoundSystem.run_round`)."""
    picks: list[dict[str, Any]] = []
    began = time.monotonic()

    def reporter(db: ResultsDB, run_id: int) -> None:
        minutes = (time.monotonic() - began) / 60
        run = db.run(run_id)
        chosen = rows(db, run)
        paths = write_configs(run, chosen, out, db.path)
        for r, path in zip(chosen, paths, strict=True):
            assert r.speedup_eval is not None and r.loss_eval is not None   # confirmed
            picks.append({
                "mode": mode, "budget": r.budget, "config_file": str(path),
                "knobs": r.pick.config,
                "speedup_tune": r.speedup_tune.median, "loss_tune": r.loss_tune.median,
                "speedup_check": r.speedup_eval.median, "loss_check": r.loss_eval.median,
                "check_within_budget": r.loss_eval.median <= r.budget + 1e-9,
                "tuning_minutes": minutes})
        titled = dataclasses.replace(run, program=f"{system.name} {mode}, "
                                                  f"tuned in {minutes:.1f} min")
        plot(db, titled, out / "pareto.png", chosen)

    # A batch's first run of a variant compiles (XLA) outside its stage times: the tuner's
    # timeout starts from the profile's seconds per question.
    batch = prof["seconds_per_question"] * system.project.batch
    options = TuneOptions(budgets=args.budgets, out=out, time_limit=args.minutes * 60,
                          mode=mode, seed=args.seed, timeout=max(MIN_TIMEOUT_S, 10 * batch),
                          confirm_repeats=args.confirm_repeats,
                          confirm_candidates=args.confirm_candidates, start_from=starts)
    tune(system, options, console=console, reporter=reporter)
    return picks


def held_out(system: CompoundSystem, picks: list[dict[str, Any]], eval_n: int) -> None:
    """Each pick's speedup and loss on the first `eval_n` eval questions (one pass, the exact
    system and the pick in turn; a configuration picked twice is measured once)."""
    path = system.project.eval_questions
    done: dict[str, dict[str, Any]] = {}
    for p in picks:
        key = json.dumps(p["knobs"], sort_keys=True)
        if key not in done:
            console.print(f"eval: {p['mode']} {p['budget']:.0%} pick on {eval_n} questions")
            done[key] = evaluate(system, Path(p["config_file"]), path, eval_n)
        p.update(speedup_eval=done[key]["speedup"], loss_eval=done[key]["loss"],
                 eval_within_budget=done[key]["loss"] <= p["budget"] + 1e-9)


def ship(system: CompoundSystem, picks: list[dict[str, Any]], budgets: list[float],
         questions: dict[str, int]) -> None:
    """Per budget the dynamic pick, or the static one when it is faster on the tune set. A
    pick whose loss on the check questions broke its budget is not shipped to users: that
    budget gets the tighter budget's shipped configuration (`provenance.fallback`; the
    report and results.json keep the broken pick, flagged). Eval figures are written beside
    them, never consulted."""
    folder = system.project.root / "configs"
    folder.mkdir(exist_ok=True)
    best = None
    for b in sorted(budgets):
        mine = sorted((p for p in picks if p["budget"] == b),
                      key=lambda p: (p["speedup_tune"], p["mode"] == "dynamic"))
        if not mine:
            continue
        held = [p for p in mine if p["check_within_budget"]]
        fallback = None
        if held:
            best = held[-1]
        elif best is not None:
            fallback = f"the {b * 100:g}% pick lost {mine[-1]['loss_check']:.1%} on check"
        else:
            continue
        doc = relabel(json.loads(Path(best["config_file"]).read_text()), best)
        doc["program"] = system.name
        doc["provenance"].pop("db", None)     # a scratch path of the benchmark run
        doc["provenance"]["bench"] = "bench/compound.py"
        doc["provenance"]["picked_from"] = best["mode"]
        doc["provenance"]["questions"] = questions
        if fallback:
            doc["provenance"]["fallback"] = fallback
        (folder / f"budget-{b * 100:g}.json").write_text(json.dumps(doc, indent=2) + "\n")


def relabel(doc: dict[str, Any], pick: dict[str, Any]) -> dict[str, Any]:
    """A tuner's configuration whose held-out figures are the check questions', named so,
    with the pick's eval figures added."""
    qos, speedup, spread = doc["qos"], doc["speedup"], doc["spread"]
    qos["loss_check"] = qos.pop("loss_eval")
    qos["over_budget_on_check"] = qos.pop("over_budget_on_eval")
    qos["loss_eval"] = pick["loss_eval"]
    qos["over_budget_on_eval"] = not pick["eval_within_budget"]
    speedup["check"] = speedup.pop("eval")
    speedup["eval"] = round(pick["speedup_eval"], 4)
    spread["speedup_check"] = spread.pop("speedup_eval")
    spread["loss_check"] = spread.pop("loss_eval")
    return doc


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
    t = Table(title="Fig. 6: speedup within the QoS budget, static vs dynamic")
    for col in ("system", "budget", "mode", "× tune", "× check", "× eval", "loss tune",
                "loss check", "loss eval", "check ≤ budget", "eval ≤ budget", "tuned (min)",
                "system (min)"):
        t.add_column(col, justify="right")
    for res in results:
        for p in sorted(res["picks"], key=lambda p: (p["budget"], p["mode"])):
            t.add_row(res["system"], f"{p['budget']:.0%}", p["mode"],
                      _x(p["speedup_tune"]), _x(p["speedup_check"]), _x(p["speedup_eval"]),
                      f"{p['loss_tune']:.1%}", f"{p['loss_check']:.1%}",
                      f"{p['loss_eval']:.1%}", _yes(p["check_within_budget"]),
                      _yes(p["eval_within_budget"]), f"{p['tuning_minutes']:.1f}",
                      f"{res['total_minutes']:.1f}")
    return t


def _yes(ok: bool) -> str:
    return "yes" if ok else "[bold red]NO[/]"


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
    for q in load_questions(system.project.tune_questions, args.tune_questions):
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


def shipped_configs(where: Path, keep: Path) -> list[tuple[Path, bool]]:
    """The system's shipped configurations (configs/budget-*.json), copied to `keep` (this
    run ships new ones over them), each with whether it is dynamic."""
    keep.mkdir(parents=True, exist_ok=True)
    out = []
    for path in sorted((where / "configs").glob("budget-*.json")):
        text = path.read_text()
        (keep / path.name).write_text(text)
        out.append((keep / path.name, is_dynamic_config(json.loads(text)["knobs"])))
    return out


def bench_system(where: Path, args: argparse.Namespace) -> dict[str, Any]:
    system = load_system(str(where))
    tune_n, check_n = subset(system, args.tune_questions, args.check_questions)
    eval_n = min(args.eval_limit, len(system.questions[system.project.eval_questions]))
    out = args.out / system.name
    console.rule(f"{system.name}: {tune_n} tune / {check_n} check / {eval_n} eval questions, "
                 f"{args.minutes:g} min per mode")
    began = time.perf_counter()
    system.build(out / "profile-build")
    console.print(f"library and model variants built in {time.perf_counter() - began:.0f} s "
                  f"(IREE compiling {system.compile_s:.0f} s of it; cached for later runs)")
    prof = profile(system, tune_n)
    console.print(profile_table(system.name, prof))
    shipped = shipped_configs(where, out / "shipped")
    picks: list[dict[str, Any]] = []
    for mode in args.modes:
        # every mode starts from the configurations shipped so far that its space holds, a
        # later mode also from the earlier one's picks (the dynamic space holds the static
        # one's points); the tuner confirms its starts beside its own candidates, so a run
        # keeps what earlier runs found and can only add faster picks in the same time
        starts = [p for p, dynamic in shipped if mode == "dynamic" or not dynamic]
        starts += [Path(p["config_file"]) for p in picks]
        picks += tune_mode(system, mode, out / mode, args, prof, starts)
    held_out(system, picks, eval_n)
    if args.configs:
        ship(system, picks, args.budgets, {"tune": tune_n, "check": check_n, "eval": eval_n})
    return {"system": system.name, "tune_questions": tune_n, "check_questions": check_n,
            "eval_questions": eval_n,
            "minutes_per_mode": args.minutes, "profile": prof, "picks": picks,
            "total_minutes": (time.perf_counter() - began) / 60}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Defaults take about 20-25 minutes per system on a 2-core machine (~3 s of LLM "
               "per question); e.g. --tune-questions 10 --eval-limit 10 --minutes 1.5 for a "
               "quick look.")
    parser.add_argument("systems", nargs="*", type=Path,
                        help="system folders (default: every examples/systems/*/system.toml "
                             "except tiny)")
    parser.add_argument("--tune-questions", type=int, default=20,
                        help="first N questions of the tune file (default 20)")
    parser.add_argument("--check-questions", type=int, default=60,
                        help="the next N questions of the tune file (at most the rest of "
                             "it): the tuner's held-out inputs, which decide what ships "
                             "(default 60)")
    parser.add_argument("--eval-limit", type=int, default=40,
                        help="first N questions of the eval file, reported only (default 40)")
    parser.add_argument("--minutes", type=float, default=4.0,
                        help="tuning time limit per mode (default 4)")
    parser.add_argument("--budgets", default="3,6,9", help="QoS budgets in %% (default 3,6,9)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default=",".join(MODES),
                        help="tuning runs, in order (default static,dynamic)")
    parser.add_argument("--confirm-repeats", type=int, default=2,
                        help="interleaved repeats per candidate (default 2; the picks get "
                             "as many on the check questions, at most 3)")
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
    args.modes = [m for m in args.modes.split(",") if m in MODES]
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
    plots = [str(args.out / r["system"] / m / "pareto.png") for r in results
             for m in args.modes]
    console.print(f"plots: {', '.join(plots)}")


if __name__ == "__main__":
    main()
