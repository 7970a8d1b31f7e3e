"""What a tuning run produced, from the results DB alone (so `approxcc report` can redo it):
per budget the pick's speedup and loss on the tuning and on the held-out inputs (median and
IQR of its confirmation repeats, a flag when the held-out loss exceeds the budget), the
search's efficiency (time to 95% of the final front's hypervolume), `pareto.png`, and one
configuration file per budget: the budget's pick, or a tighter budget's that holds it where
the pick does not hold its budget on the held-out inputs (`shipped`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from approxcc.tune.db import Evaluation, ResultsDB, Run
from approxcc.tune.pareto import front, time_to_fraction
from approxcc.tune.picks import HELD_OUT_BOUND_INPUTS, Pick, Spread, choose
from approxcc.tune.space import KnobSpace, config_hash, is_dynamic_config

HV_FRACTION = 0.95
PIPED_WIDTH = 10_000   # the console's width when stdout is a file or a pipe: no row is cut


@dataclass(frozen=True)
class Row:
    """One budget's pick as the report shows it."""

    pick: Pick
    speedup_tune: Spread
    loss_tune: Spread
    speedup_eval: Spread | None
    loss_eval: Spread | None

    @property
    def budget(self) -> float:
        return self.pick.budget

    @property
    def over_budget(self) -> bool:
        return self.loss_eval is not None and self.loss_eval.median > self.budget

    @property
    def held_out_bound(self) -> float | None:
        """The upper confidence bound of its loss from the held-out inputs' repeats
        (`picks.bound`), None where it was not confirmed there or on fewer than
        `HELD_OUT_BOUND_INPUTS` inputs."""
        held = self.pick.eval
        return held.bound if held is not None and held.inputs >= HELD_OUT_BOUND_INPUTS \
            else None

    def holds(self, budget: float) -> bool:
        """It holds `budget` on the held-out inputs with the margin the search kept on the
        tuning inputs (its median loss there and its bound there within it): a pick whose
        held-out loss is within the budget by a question or two, where its answers changed
        both ways, loses more than the budget on the next questions as often as not."""
        if self.loss_eval is not None and self.loss_eval.median > budget:
            return False
        bound = self.held_out_bound
        return bound is None or bound <= budget + 1e-12

    @property
    def ships(self) -> bool:
        """It holds its own budget."""
        return self.holds(self.budget)

    def why_not_shipped(self, held_out: str) -> str:
        name = f"the {self.budget * 100:g}% pick"
        if self.over_budget and self.loss_eval is not None:
            return f"{name} lost {self.loss_eval.median:.1%} on {held_out}"
        return f"{name}'s loss bound on {held_out} is {self.held_out_bound:.1%}"


@dataclass(frozen=True)
class Efficiency:
    to_fraction: float | None   # seconds of tuning until the front had 95% of its final HV
    total: float                # seconds of tuning (screening and search)
    hypervolume: float          # of the final front: (time / exact, loss) up to (1, max budget)


def budget_name(budget: float) -> str:
    """3% → "3pct" (the file stem of its configuration)."""
    return f"{budget * 100:g}pct"


def rows(db: ResultsDB, run: Run) -> list[Row]:
    tune = db.evaluations(run.id, "tune")
    singles = {e.hash: e for e in db.evaluations(run.id, "eval") if e.ok and e.time}
    out = []
    for p in choose(run.budgets, tune, db.confirmations(run.id, "tune"),
                    db.confirmations(run.id, "eval")):
        if p.tune is not None:
            speedup, loss = p.tune.speedup, p.tune.loss
        else:
            speedup = Spread.of([(run.baseline_tune or 0.0) / (p.single.time or 1.0)])
            loss = Spread.of([p.single.loss or 0.0])
        speedup_eval = loss_eval = None
        if p.eval is not None:
            speedup_eval, loss_eval = p.eval.speedup, p.eval.loss
        elif (twin := singles.get(p.hash)) is not None:
            speedup_eval = Spread.of([(run.baseline_eval or 0.0) / (twin.time or 1.0)])
            loss_eval = Spread.of([twin.loss or 0.0])
        out.append(Row(p, speedup, loss, speedup_eval, loss_eval))
    return out


def efficiency(db: ResultsDB, run: Run) -> Efficiency:
    base = run.baseline_tune or 0.0
    points = [(e.elapsed, (e.time or 0.0) / base, e.loss or 0.0)
              for e in db.evaluations(run.id, "tune")
              if e.ok and e.time and e.elapsed is not None and e.phase in ("screening", "search")]
    if not points or not base:
        return Efficiency(None, 0.0, 0.0)
    when, hv = time_to_fraction(points, (1.0, max(run.budgets)), HV_FRACTION)
    return Efficiency(when, max(p[0] for p in points), hv)


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


def _x(s: Spread | None) -> str:
    if s is None:
        return "-"
    return f"{s.median:.2f}×" + (f" [{s.q1:.2f}–{s.q3:.2f}]" if s.q3 > s.q1 else "")


def _pct(s: Spread | None) -> str:
    if s is None:
        return "-"
    return f"{s.median:.2%}" + (f" [{s.q1:.2%}–{s.q3:.2%}]" if s.q3 > s.q1 else "")


def reference_text(run: Run) -> str | None:
    """What the speedups are over, when the exact run is the faster of several ways to run
    the exact program (a JAX program: its exact build and jax.jit); None: the exact program."""
    reference = run.options.get("reference")
    if not reference:
        return None
    ways = [f"{name} ({seconds * 1e3:.3g} ms)" for name, seconds in reference.items()]
    over = ways[0] if len(ways) == 1 else \
        f"the faster of {', '.join(ways[:-1])} and {ways[-1]}, input by input"
    return f"speedups over {over}; times summed over the tuning inputs"


def table(run: Run, chosen: list[Row]) -> Table:
    t = Table(title=f"approxcc tune: {run.program} (run {run.id}, seed {run.seed}, "
                    f"mode {run.mode}, noise ±{(run.noise or 0) / 2:.1%}); median [IQR]",
              caption=reference_text(run))
    h = held_out(run)
    for col in ("budget", "speedup tune", f"speedup {h}", "gap", "loss tune (bound)",
                f"loss {h}", "repeats"):
        t.add_column(col, justify="right")
    t.add_column("knobs", min_width=24, overflow="fold")
    by_budget = {r.budget: r for r in chosen}
    for b in run.budgets:
        r = by_budget.get(b)
        if r is None:
            t.add_row(f"{b:.1%}", "-", "-", "-", "-", "-", "-",
                      "no configuration holds this budget with its margin")
            continue
        gap = f"{r.speedup_eval.median / r.speedup_tune.median - 1:+.1%}" \
            if r.speedup_eval else "-"
        bound = f" ({r.pick.tune.bound:.2%})" if r.pick.tune else " (single run)"
        loss_eval = _pct(r.loss_eval) + (" [bold red]over budget[/]" if r.over_budget else "")
        repeats = f"{r.pick.tune.repeats if r.pick.tune else 1}" \
                  f" / {r.pick.eval.repeats if r.pick.eval else int(r.loss_eval is not None)}"
        t.add_row(f"{r.budget:.1%}", _x(r.speedup_tune), _x(r.speedup_eval), gap,
                  _pct(r.loss_tune) + bound, loss_eval, repeats, _knobs_text(r.pick.config))
    return t


def held_out(run: Run) -> str:
    """What the run's configurations call its held-out inputs ("eval": a program's eval
    inputs; "check": a compound system's questions held out of its tune file)."""
    return str(run.options.get("held_out", "eval"))


@dataclass(frozen=True)
class Shipped:
    """The configuration written for a budget: its own pick, or (`fallback` says why) a
    tighter budget's pick that holds this budget on the held-out inputs, or the exact
    program (`row` None) where none does."""

    budget: float
    row: Row | None
    fallback: str | None = None


def shipped(run: Run, chosen: list[Row]) -> list[Shipped]:
    """Per budget, tightest first, what ships: nothing ships over its budget on the held-out
    inputs, and every budget gets a configuration (the exact one at worst: a user asking
    for a 3% configuration gets one that holds it). Where a budget's own pick does not hold
    it, the fastest tighter pick that does ships: a 3% pick that missed 3% on the held-out
    inputs may well hold 6%."""
    out: list[Shipped] = []
    by_budget = {r.budget: r for r in chosen}
    for b in sorted(run.budgets):
        r = by_budget.get(b)
        if r is not None and r.ships:
            out.append(Shipped(b, r))
            continue
        why = (r.why_not_shipped(held_out(run)) if r is not None
               else f"no configuration holds {b * 100:g}% with its margin")
        instead = max((t for t in chosen if t.budget < b and t.holds(b)),
                      key=lambda t: t.speedup_tune.median, default=None)
        out.append(Shipped(b, instead, why if instead is not None else f"{why}: exact"))
    return out


def _exact_doc(run: Run) -> dict[str, Any]:
    """The parts of a configuration file for the exact program: no loss, no speedup."""
    config = KnobSpace.from_json(run.space).exact_config()
    h = held_out(run)
    return {"knobs": config,
            "qos": {"loss_tune": 0.0, "loss_bound": 0.0, f"loss_{h}": 0.0,
                    f"loss_bound_{h}": 0.0, f"over_budget_on_{h}": False},
            "speedup": {"tune": 1.0, h: 1.0},
            "spread": {}, "hash": config_hash(config)}


def _pick_doc(run: Run, r: Row) -> dict[str, Any]:
    """The parts of a configuration file for a budget's pick `r`."""
    p, h = r.pick, held_out(run)
    return {"knobs": p.config,
            "qos": {"loss_tune": r.loss_tune.median,
                    "loss_bound": p.tune.bound if p.tune else None,
                    f"loss_bound_{h}": r.held_out_bound,
                    f"loss_{h}": r.loss_eval.median if r.loss_eval else None,
                    f"over_budget_on_{h}": r.over_budget},
            "speedup": {"tune": round(r.speedup_tune.median, 4),
                        h: round(r.speedup_eval.median, 4) if r.speedup_eval else None},
            "spread": {name: [v.q1, v.q3] if v else None
                       for name, v in (("speedup_tune", r.speedup_tune),
                                       (f"speedup_{h}", r.speedup_eval),
                                       ("loss_tune", r.loss_tune),
                                       (f"loss_{h}", r.loss_eval))},
            "hash": p.hash}


def write_configs(run: Run, chosen: list[Row], out: Path, db_path: Path) -> list[Path]:
    """One configuration per budget (`shipped`), in the format `approxcc build --config`
    reads."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for s in shipped(run, chosen):
        part = _pick_doc(run, s.row) if s.row is not None else _exact_doc(run)
        doc = {"approxcc": "1", "program": run.program, "knobs": part["knobs"],
               "qos": {"metric": run.options.get("metric", ""), "budget": s.budget,
                       **part["qos"]},
               "speedup": part["speedup"], "spread": part["spread"],
               "provenance": {"seed": run.seed, "mode": run.mode, "run": run.id,
                              "config_hash": part["hash"], "db": str(db_path),
                              "source": run.source, "versions": run.versions,
                              "host": run.host}}
        if s.fallback:
            doc["provenance"]["fallback"] = s.fallback
        if run.options.get("reference"):    # seconds on the tuning inputs, of each
            doc["reference"] = run.options["reference"]
        path = out / f"{budget_name(s.budget)}.json"
        _keep_added_figures(doc, path)
        path.write_text(json.dumps(doc, indent=2) + "\n")
        written.append(path)
    return written


def _keep_added_figures(doc: dict[str, Any], path: Path) -> None:
    """Figures added to `path` after tuning (a compound system's eval questions,
    `system.evaluate.record_eval`) stay when the report rewrites the same configuration
    (`approxcc report`)."""
    try:
        old = json.loads(path.read_text())
        same = old["provenance"]["config_hash"] == doc["provenance"]["config_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if same:
        for part in ("qos", "speedup"):
            doc[part] = {**old.get(part, {}), **doc[part]}
        if "questions" in old["provenance"]:
            doc["provenance"]["questions"] = old["provenance"]["questions"]


def plot(db: ResultsDB, run: Run, path: Path, chosen: list[Row] | None = None,
         marks: dict[str, list[tuple[float, float]]] | None = None) -> Path:
    """Speedup against QoS loss: static and dynamic points and fronts on the tuning inputs,
    the front measured on the eval inputs, the picks with their IQR on both, and `marks`
    (label → (loss, speedup) points) a caller adds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    base_t, base_e = run.baseline_tune or 0.0, run.baseline_eval or 0.0
    right = max(run.budgets) * 2
    top = 1.0
    tune = [e for e in db.evaluations(run.id, "tune") if e.ok and e.time]
    styles = {"static": ("tab:blue", "o"), "dynamic": ("tab:orange", "^")}
    for kind, (color, marker) in styles.items():
        pts = [e for e in tune if is_dynamic_config(e.config) == (kind == "dynamic")]
        if not pts:
            continue
        ax.scatter([e.loss for e in pts], [base_t / (e.time or 1) for e in pts], s=12,
                   alpha=0.3, color=color, marker=marker, label=f"{kind} (tune)")
        # By increasing loss, drawn "post": at loss L the front is the fastest point with
        # loss <= L.
        f = _by_loss(pts)
        ys = [base_t / (e.time or 1) for e in f]
        ax.step([e.loss or 0.0 for e in f] + [right], ys + ys[-1:], where="post",
                color=color, label=f"{kind} front (tune)")
        top = max([top, *(y for e, y in zip(f, ys, strict=True) if (e.loss or 0) <= right)])
    evals = [e for e in db.evaluations(run.id, "eval") if e.ok and e.time]
    if evals and base_e:
        f = _by_loss(evals)
        ax.step([e.loss or 0.0 for e in f], [base_e / (e.time or 1) for e in f], where="post",
                color="black", linestyle="--", linewidth=0.9,
                label=f"front ({held_out(run)}, one run)")
    for r in chosen if chosen is not None else rows(db, run):
        for sp, lo, face, label in ((r.speedup_tune, r.loss_tune, "tab:green", "picks (tune)"),
                                    (r.speedup_eval, r.loss_eval, "none",
                                     f"picks ({held_out(run)})")):
            if sp is None or lo is None:
                continue
            ax.errorbar([lo.median], [sp.median], xerr=[[lo.median - lo.q1], [lo.q3 - lo.median]],
                        yerr=[[sp.median - sp.q1], [sp.q3 - sp.median]], fmt="*", ms=11,
                        mfc=face, mec="tab:red" if face == "none" and r.over_budget
                        else "tab:green", ecolor="grey", capsize=3, label=label)
            top = max(top, sp.q3)
    for label, points in (marks or {}).items():
        if points:
            ax.scatter(*zip(*points, strict=True), s=60, facecolors="none", linewidths=1.5,
                       edgecolors="purple", label=label)
    for b in run.budgets:
        ax.axvline(b, color="grey", linestyle=":", linewidth=0.8)
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))
    ax.legend(unique.values(), unique.keys(), fontsize=7)
    ax.set_xlim(left=-0.005 * right, right=right)
    ax.set_ylim(bottom=0.0, top=top * 1.2)
    ax.set_xlabel("QoS loss (picks: median and IQR of the repeats)")
    reference = run.options.get("reference") or {}
    ax.set_ylabel("speedup over exact" if len(reference) < 2 else
                  f"speedup over the faster of {' and '.join(reference)}")
    ax.set_title(f"{run.program}: Pareto fronts and picks (run {run.id})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _by_loss(points: list[Evaluation]) -> list[Evaluation]:
    return sorted(front(points, key=lambda e: (e.time or 0.0, e.loss or 0.0)),
                  key=lambda e: e.loss or 0.0)


def stdout_console() -> Console:
    """The console the report prints on: stdout as a terminal, else (a file, a pipe) wide
    enough for whole rows, which rich would otherwise cut or fold at 80 columns."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPED_WIDTH)


def report(db: ResultsDB, run: Run, out: Path, console: Console) -> list[Path]:
    """Table on the console, configurations and pareto.png in `out`; returns the
    configurations written."""
    chosen = rows(db, run)
    console.print(table(run, chosen))
    ships = {s.budget: s for s in shipped(run, chosen)}
    for r in chosen:
        if not r.ships:
            instead = ships[r.budget].row
            why = (f"loses {r.loss_eval.median:.2%} on the {held_out(run)} inputs: more than "
                   "its budget" if r.over_budget and r.loss_eval is not None else
                   f"has a loss bound of {r.held_out_bound:.2%} on the {held_out(run)} "
                   "inputs (mean and margin): more than its budget")
            console.print(f"[bold red]warning:[/] the {r.budget:.1%} pick {why}; " +
                          (f"the {instead.budget:.1%} pick is written for it" if instead
                           else "the exact program is written for it"))
    eff = efficiency(db, run)
    if eff.to_fraction is not None:
        console.print(f"search efficiency: {HV_FRACTION:.0%} of the final front's hypervolume "
                      f"({eff.hypervolume:.4f}) after {eff.to_fraction:.1f} s of "
                      f"{eff.total:.1f} s of tuning")
    configs = write_configs(run, chosen, out, db.path)
    png = plot(db, run, out / "pareto.png", chosen)
    evaluations = db.evaluations(run.id)
    failed = sum(not e.ok for e in evaluations)
    console.print(f"{len(evaluations)} evaluations ({failed} failed) and "
                  f"{len(db.confirmations(run.id))} confirmation repeats in {db.path}; "
                  f"wrote {', '.join(str(c) for c in configs)} and {png}")
    return configs
