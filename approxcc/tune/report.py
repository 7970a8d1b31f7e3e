"""What a tuning run produced, from the results DB alone (so `approxcc report` can redo it):
the table per budget, `pareto.png`, and one configuration file per budget."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from approxcc.tune.db import Evaluation, ResultsDB, Run
from approxcc.tune.pareto import front
from approxcc.tune.space import is_dynamic_config


@dataclass(frozen=True)
class Pick:
    """The fastest configuration within one budget on the tuning inputs, and its eval twin."""

    budget: float
    tune: Evaluation
    eval: Evaluation | None
    speedup_tune: float
    speedup_eval: float | None


def budget_name(budget: float) -> str:
    """3% → "3pct" (the file stem of its configuration)."""
    return f"{budget * 100:g}pct"


def picks(db: ResultsDB, run: Run) -> list[Pick]:
    tune = [e for e in db.evaluations(run.id, "tune") if e.ok and e.time]
    evals = {e.hash: e for e in db.evaluations(run.id, "eval") if e.ok and e.time}
    out = []
    for b in run.budgets:
        within = [e for e in tune if e.loss is not None and e.loss <= b]
        if not within:
            continue
        best = min(within, key=lambda e: (e.time, e.id))
        twin = evals.get(best.hash)
        out.append(Pick(b, best, twin, (run.baseline_tune or 0.0) / best.time,
                        (run.baseline_eval or 0.0) / twin.time if twin and twin.time else None))
    return out


def _knobs_text(config: dict[str, Any]) -> str:
    parts = []
    for name, entry in config.items():
        if "value" in entry:
            parts.append(f"{name}={entry['value']}")
        else:
            tree = json.dumps(entry["decisions"], separators=(",", ":"))
            at = json.dumps(entry["thresholds"], separators=(",", ":"))
            parts.append(f"{name}={tree}@{at}")
    return " ".join(parts)


def table(run: Run, chosen: list[Pick]) -> Table:
    t = Table(title=f"approxcc tune: {run.program} (run {run.id}, seed {run.seed}, "
                    f"mode {run.mode}, noise ±{(run.noise or 0) / 2:.1%})")
    for col in ("budget", "speedup tune / eval", "QoS loss tune / eval", "gap"):
        t.add_column(col, justify="right")
    t.add_column("knobs", min_width=24, overflow="fold")
    for p in chosen:
        loss_eval = p.eval.loss if p.eval else None
        speedup_eval = f"{p.speedup_eval:.2f}×" if p.speedup_eval else "-"
        t.add_row(f"{p.budget:.1%}", f"{p.speedup_tune:.2f}× / {speedup_eval}",
                  f"{p.tune.loss:.3%} / " + (f"{loss_eval:.3%}" if loss_eval is not None
                                             else "-"),
                  f"{loss_eval - (p.tune.loss or 0):+.3%}" if loss_eval is not None else "-",
                  _knobs_text(p.tune.config))
    return t


def write_configs(run: Run, chosen: list[Pick], out: Path, db_path: Path) -> list[Path]:
    """One configuration per budget, in the format `approxcc build --config` reads."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in chosen:
        doc = {"approxcc": "1", "program": run.program, "knobs": p.tune.config,
               "qos": {"metric": run.options.get("metric", ""), "budget": p.budget,
                       "loss_tune": p.tune.loss,
                       "loss_eval": p.eval.loss if p.eval else None},
               "speedup": {"tune": round(p.speedup_tune, 4),
                           "eval": round(p.speedup_eval, 4) if p.speedup_eval else None},
               "provenance": {"seed": run.seed, "mode": run.mode, "run": run.id,
                              "config_hash": p.tune.hash, "db": str(db_path),
                              "source": run.source, "versions": run.versions,
                              "host": run.host}}
        path = out / f"{budget_name(p.budget)}.json"
        path.write_text(json.dumps(doc, indent=2) + "\n")
        written.append(path)
    return written


def plot(db: ResultsDB, run: Run, path: Path) -> Path:
    """Speedup against QoS loss: static and dynamic points and fronts, tune and eval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    tune = [e for e in db.evaluations(run.id, "tune") if e.ok and e.time]
    evals = [e for e in db.evaluations(run.id, "eval") if e.ok and e.time]
    styles = {"static": ("tab:blue", "o"), "dynamic": ("tab:orange", "^")}
    for kind, (color, marker) in styles.items():
        pts = [e for e in tune if is_dynamic_config(e.config) == (kind == "dynamic")]
        if not pts:
            continue
        xs = [e.loss for e in pts]
        ys = [(run.baseline_tune or 0) / (e.time or 1) for e in pts]
        ax.scatter(xs, ys, s=12, alpha=0.35, color=color, marker=marker,
                   label=f"{kind} (tune)")
        # by loss: at each loss the step shows the best speedup reachable within it
        f = sorted(front(pts, key=lambda e: (e.time, e.loss)), key=lambda e: e.loss)
        ax.step([e.loss for e in f], [(run.baseline_tune or 0) / (e.time or 1) for e in f],
                where="post", color=color, label=f"{kind} front (tune)")
    if evals:
        f = sorted(front(evals, key=lambda e: (e.time, e.loss)), key=lambda e: e.loss)
        ax.scatter([e.loss for e in evals],
                   [(run.baseline_eval or 0) / (e.time or 1) for e in evals], s=30,
                   facecolors="none", edgecolors="black", label="front on eval inputs")
        ax.step([e.loss for e in f], [(run.baseline_eval or 0) / (e.time or 1) for e in f],
                where="post", color="black", linestyle="--", label="eval front")
    for b in run.budgets:
        ax.axvline(b, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("QoS loss")
    ax.set_ylabel("speedup over exact")
    ax.set_title(f"{run.program}: Pareto fronts (run {run.id})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def report(db: ResultsDB, run: Run, out: Path, console: Console) -> list[Pick]:
    """Table on the console, configurations and pareto.png in `out`."""
    chosen = picks(db, run)
    console.print(table(run, chosen))
    configs = write_configs(run, chosen, out, db.path)
    png = plot(db, run, out / "pareto.png")
    evaluations = db.evaluations(run.id)
    failed = sum(not e.ok for e in evaluations)
    console.print(f"{len(evaluations)} evaluations ({failed} failed) in {db.path}; "
                  f"wrote {', '.join(str(c) for c in configs)} and {png}")
    return chosen
