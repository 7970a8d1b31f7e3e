"""The results DB (SQLite): one row per evaluation, committed as it finishes.

A killed tuner loses nothing but the evaluations in flight (a commit is in the write-ahead
log, which outlives the process); `--resume` continues the latest
run of the same program, and an identical configuration (same hash, same input set) is never
run twice in a run: the UNIQUE constraint holds the tuner to it, `lookup()` reads it back.
Only the tuner process writes it (Dask workers send their results back to it).

Each evaluation keeps `elapsed` (seconds of tuning, summed over the sessions of a resumed run:
the search-efficiency curve needs it), the worker that measured it and its per-input losses.
`confirmations` holds the interleaved repeats (exact, candidate) behind the noise-aware picks,
one row per repeat.
"""

from __future__ import annotations

import json
import platform
import socket
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from approxcc import __version__
from approxcc.tune.measure import Measurement, Pair
from approxcc.tune.space import KnobConfig, canonical, config_hash

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, started TEXT, program TEXT, source TEXT, seed INTEGER, mode TEXT,
  budgets TEXT, options TEXT, versions TEXT, host TEXT, space TEXT,
  baseline_tune REAL, baseline_eval REAL, noise REAL, roi INTEGER);
CREATE TABLE IF NOT EXISTS golden (
  run_id INTEGER, inputs TEXT, position INTEGER, path TEXT, output TEXT,
  PRIMARY KEY (run_id, inputs, position));
CREATE TABLE IF NOT EXISTS evaluations (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, finished TEXT, config TEXT,
  config_hash TEXT, inputs TEXT, time_tune REAL, loss_tune REAL, time_eval REAL,
  loss_eval REAL, status TEXT, reason TEXT, budget REAL, phase TEXT, mode TEXT,
  seed INTEGER, versions TEXT, host TEXT, elapsed REAL, worker TEXT, input_losses TEXT,
  UNIQUE (run_id, config_hash, inputs));
CREATE TABLE IF NOT EXISTS confirmations (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, finished TEXT, config TEXT,
  config_hash TEXT, inputs TEXT, repeat INTEGER, exact_time REAL, time REAL, loss REAL,
  input_losses TEXT, status TEXT, reason TEXT, worker TEXT,
  UNIQUE (run_id, config_hash, inputs, repeat));
"""
# Columns added since the first release: older DBs get them on open (NULL in old rows).
_ADDED = {"evaluations": ("elapsed REAL", "worker TEXT", "input_losses TEXT")}


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {"approxcc": __version__, "opentuner": version("opentuner"),
            "python": platform.python_version()}


@dataclass(frozen=True)
class Evaluation:
    id: int
    config: KnobConfig
    hash: str
    inputs: str          # "tune" | "eval"
    time: float | None
    loss: float | None
    status: str
    reason: str
    budget: float | None
    phase: str           # baseline | screening | search | validation
    mode: str
    elapsed: float | None = None
    worker: str = ""
    input_losses: tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Confirmation:
    config: KnobConfig
    hash: str
    inputs: str
    repeat: int
    exact_time: float | None
    time: float | None
    loss: float | None
    input_losses: tuple[float, ...]
    status: str
    reason: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class Run:
    id: int
    program: str
    source: str
    seed: int
    mode: str
    budgets: list[float]
    options: dict[str, Any]
    space: list[dict[str, Any]]
    baseline_tune: float | None
    baseline_eval: float | None
    noise: float | None
    roi: bool
    versions: dict[str, str]
    host: str


class ResultsDB:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        # Write-ahead log without an fsync per commit: a committed row survives the tuner being
        # killed (only a power cut can lose the last ones), and a commit costs the tuner's one
        # thread microseconds instead of a disk flush per evaluation.
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.executescript(SCHEMA)
        for table, columns in _ADDED.items():
            have = {row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")}
            for column in columns:
                if column.split()[0] not in have:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
        self.host = socket.gethostname()
        self.versions = json.dumps(versions())

    def close(self) -> None:
        self.conn.close()

    # -- runs ------------------------------------------------------------------------------

    def new_run(self, program: str, source: str, seed: int, mode: str, budgets: list[float],
                options: dict[str, Any], space: list[dict[str, Any]]) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (started, program, source, seed, mode, budgets, options, versions,"
            " host, space) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (datetime.now().isoformat(timespec="seconds"), program, source, seed, mode,
             json.dumps(budgets), json.dumps(options), self.versions, self.host,
             json.dumps(space)))
        return int(cur.lastrowid or 0)

    def latest_run(self, program: str | None = None) -> Run | None:
        sql = "SELECT * FROM runs" + (" WHERE program = ?" if program else "") + \
            " ORDER BY id DESC LIMIT 1"
        row = self.conn.execute(sql, (program,) if program else ()).fetchone()
        return _run(row) if row else None

    def run(self, run_id: int) -> Run:
        return _run(self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone())

    def set_baseline(self, run_id: int, inputs: str, time: float, noise: float | None = None,
                     roi: bool | None = None) -> None:
        column = "baseline_tune" if inputs == "tune" else "baseline_eval"
        self.conn.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (time, run_id))
        if noise is not None:
            self.conn.execute("UPDATE runs SET noise = ?, roi = ? WHERE id = ?",
                              (noise, int(bool(roi)), run_id))

    def set_golden(self, run_id: int, inputs: str, paths: list[str], outputs: list[str]) -> None:
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany(
                "INSERT OR REPLACE INTO golden VALUES (?,?,?,?,?)",
                [(run_id, inputs, i, p, o) for i, (p, o) in enumerate(zip(paths, outputs,
                                                                          strict=True))])

    def golden(self, run_id: int, inputs: str, paths: list[str]) -> list[str] | None:
        rows = self.conn.execute("SELECT path, output FROM golden WHERE run_id = ? AND inputs = ?"
                                 " ORDER BY position", (run_id, inputs)).fetchall()
        if [r[0] for r in rows] != paths:
            return None
        return [r[1] for r in rows]

    # -- evaluations -----------------------------------------------------------------------

    def record(self, run_id: int, config: KnobConfig, inputs: str, m: Measurement, *,
               budget: float | None, phase: str, mode: str, seed: int,
               elapsed: float | None = None, worker: str = "") -> Evaluation:
        config = canonical(config)
        h = config_hash(config)
        times = (m.time, None) if inputs == "tune" else (None, m.time)
        losses = (m.loss, None) if inputs == "tune" else (None, m.loss)
        cur = self.conn.execute(
            "INSERT INTO evaluations (run_id, finished, config, config_hash, inputs, time_tune,"
            " loss_tune, time_eval, loss_eval, status, reason, budget, phase, mode, seed,"
            " versions, host, elapsed, worker, input_losses)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, _now(), json.dumps(config), h, inputs, times[0], losses[0], times[1],
             losses[1], m.status, m.reason, budget, phase, mode, seed, self.versions,
             self.host, elapsed, worker, json.dumps(list(m.input_losses))))
        return Evaluation(int(cur.lastrowid or 0), config, h, inputs, m.time, m.loss, m.status,
                          m.reason, budget, phase, mode, elapsed, worker, m.input_losses)

    def elapsed(self, run_id: int) -> float:
        """Seconds of tuning the run has recorded so far (where a resumed session goes on)."""
        row = self.conn.execute("SELECT MAX(elapsed) FROM evaluations WHERE run_id = ?",
                                (run_id,)).fetchone()
        return float(row[0] or 0.0)

    def record_pair(self, run_id: int, config: KnobConfig, inputs: str, repeat: int, p: Pair,
                    worker: str = "") -> None:
        config = canonical(config)
        self.conn.execute(
            "INSERT INTO confirmations (run_id, finished, config, config_hash, inputs, repeat,"
            " exact_time, time, loss, input_losses, status, reason, worker)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (run_id, _now(), json.dumps(config), config_hash(config), inputs, repeat,
             p.exact_time, p.time, p.loss, json.dumps(list(p.input_losses)), p.status,
             p.reason, worker))

    def confirmations(self, run_id: int, inputs: str | None = None) -> list[Confirmation]:
        sql = ("SELECT config, config_hash, inputs, repeat, exact_time, time, loss,"
               " input_losses, status, reason FROM confirmations WHERE run_id = ?" +
               (" AND inputs = ?" if inputs else "") + " ORDER BY id")
        return [Confirmation(json.loads(c), h, i, r, et, t, loss, tuple(json.loads(il or "[]")),
                             st, reason or "")
                for c, h, i, r, et, t, loss, il, st, reason in
                self.conn.execute(sql, (run_id, inputs) if inputs else (run_id,))]

    def lookup(self, run_id: int, config: KnobConfig, inputs: str) -> Evaluation | None:
        row = self.conn.execute(_SELECT + " WHERE run_id = ? AND config_hash = ? AND inputs = ?",
                                (run_id, config_hash(config), inputs)).fetchone()
        return _evaluation(row) if row else None

    def evaluations(self, run_id: int, inputs: str | None = None) -> list[Evaluation]:
        sql = _SELECT + " WHERE run_id = ?" + (" AND inputs = ?" if inputs else "") + \
            " ORDER BY id"
        return [_evaluation(r) for r in self.conn.execute(sql, (run_id, inputs) if inputs
                                                          else (run_id,))]


_SELECT = ("SELECT id, config, config_hash, inputs, COALESCE(time_tune, time_eval),"
           " COALESCE(loss_tune, loss_eval), status, reason, budget, phase, mode, elapsed,"
           " worker, input_losses FROM evaluations")


def _now() -> str:
    return datetime.now().isoformat(timespec="milliseconds")


def _run(row: tuple) -> Run:
    (rid, _, prog, source, seed, mode, budgets, options, vers, host, space, bt, be, noise,
     roi) = row
    return Run(rid, prog, source, seed, mode, json.loads(budgets), json.loads(options),
               json.loads(space), bt, be, noise, bool(roi), json.loads(vers), host)


def _evaluation(row: tuple) -> Evaluation:
    (eid, config, h, inputs, time, loss, status, reason, budget, phase, mode, elapsed, worker,
     input_losses) = row
    return Evaluation(eid, json.loads(config), h, inputs, time, loss, status, reason or "",
                      budget, phase, mode, elapsed, worker or "",
                      tuple(json.loads(input_losses or "[]")))
