"""`CompoundSystem`: a system.toml project as the tuner's `Application`.

`build()` compiles the C sources once into a tunable shared library; every run happens in
this process, which keeps the library copies, the models and the stage cache between runs
(the in-process engine: `--parallel 1`). A tuning input is a batch of questions
(`FILE.jsonl:START:END`); its output is one JSON line `{"question", "answer"}` per question,
and its time the seconds of the stages its answers took (cached stages charged what they
took when they ran: cheap, and good enough to steer a search). The confirmation's rounds
(`run_round`) and `approxcc eval` time every stage afresh instead, the exact system and the
configurations in turn question by question. The loss is the drop in the mean score
(system.toml's `[qos] metric`, scoring.py; NQ's contains-accuracy by default) from the
exact system's.

For Dask (`--parallel N`, `--cluster`) a system pickles as its project file and built
library: a worker loads the project (pipeline, questions) itself, gets the library as one of
`files()`, and keeps its own models and stage cache.
"""

from __future__ import annotations

import inspect
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from approxcc.diagnostics import CompileError
from approxcc.system.knobs import check as check_knob
from approxcc.system.library import TunableLibrary, build_library, c_knob_space, clang_args
from approxcc.system.pipeline import Stages, load_pipeline
from approxcc.system.project import SystemProject, load_project
from approxcc.system.questions import Question, load_questions
from approxcc.system.scoring import answer_score, contains
from approxcc.tune.application import Application, RunFailed, RunResult
from approxcc.tune.space import KnobConfig, KnobSpace


def correct(question: Question, answer: str) -> bool:
    """The answer contains a gold answer after NQ normalisation."""
    return contains(question, answer) == 1.0


def _batches(path: Path, start: int, end: int, size: int) -> list[str]:
    return [f"{path}:{s}:{min(s + size, end)}" for s in range(start, end, size)]


def check_count(project: SystemProject, total: int) -> int:
    """How many of the tune file's `total` questions (its last ones) are held out of the
    search: `[questions] check`, else a third of the file; at least one is searched."""
    if total < 2:
        raise CompileError(f"the tune file has {total} question{'s' * (total != 1)}: the "
                           "tuner needs one to search on and one to check its picks on",
                           project.tune_loc)
    if project.check is None:
        return max(1, total // 3)
    if project.check >= total:
        raise CompileError(f"'check' must leave questions of the tune file to search on "
                           f"(it has {total})", project.check_loc)
    return project.check


class CompoundSystem(Application):
    held_out = "check"      # the tuner's held-out inputs: questions of the tune file

    def __init__(self, project: SystemProject):
        self.project = project
        self.name = project.name
        try:
            self.pipeline = load_pipeline(project.pipeline, project.root)
            for k in self.pipeline.knobs:  # declared as an annotation is (knobs.py)
                check_knob(k)
        except ValueError as err:
            raise CompileError(str(err), project.pipeline_loc) from None
        self.questions = {p: load_questions(p) for p in (project.tune_questions,
                                                         project.eval_questions)}
        self.gold = {q.question: q for qs in self.questions.values() for q in qs}
        self.score = answer_score(project.metric, project.root, project.metric_loc)
        # the tuner searches on the tune file's first questions; its last ones, held out of
        # the search, check the picks and decide what ships; the eval file only reports
        total = len(self.questions[project.tune_questions])
        searched = total - check_count(project, total)
        self.tune_inputs = _batches(project.tune_questions, 0, searched, project.batch)
        self.eval_inputs = _batches(project.tune_questions, searched, total, project.batch)
        self.split = {"tune": searched, "check": total - searched}   # questions of each
        self.args = clang_args(project.flags, project.root)
        self.c_space: KnobSpace | None = None       # the library's knobs (read from the C)
        self.space: KnobSpace | None = None
        self.library: TunableLibrary | None = None
        self.stages = Stages()
        self.compile_s = 0.0        # what the pipeline's prepare() spent compiling

    def __getstate__(self) -> dict[str, Any]:
        built = self.library.path if self.library is not None else None
        # the C knobs travel too: reading them again is a frontend run of every source
        return {"project": str(self.project.path), "library": built and str(built),
                "c_space": self.c_space}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(load_project(state["project"]))     # type: ignore[misc]
        self.c_space = state["c_space"]
        if state["library"] is not None:
            self._attach(Path(state["library"]))
            self.compile_s = self.pipeline.prepare()

    def describe(self) -> str:
        return str(self.project.path)

    def library_space(self) -> KnobSpace:
        """The knobs of the C library."""
        if self.c_space is None:
            self.c_space = c_knob_space(self.project.sources, self.args)
        return self.c_space

    def knob_space(self) -> KnobSpace:
        if self.space is None:
            # The pipeline's knobs first: the tuner screens knobs in this order, and the
            # model's (where the seconds are) must not wait behind every C knob
            self.space = KnobSpace(tuple(self.pipeline.knobs) + self.library_space().knobs)
        return self.space

    def build(self, workdir: Path, configs: Sequence[KnobConfig] | None = None) -> None:
        """The library, loaded here, and the pipeline's model variants (those `configs` use,
        when given and the pipeline's `prepare` takes them): the tuner times runs from now
        on, so none of them may wait for a compile. The library is compiled once per loaded
        system (its pipeline and questions are read once too); a later build copies it."""
        output = workdir / f"lib{self.name}.so"
        if self.library is None:
            build_library(self.project.sources, self.args, output)
        elif output.resolve() != self.library.path.resolve():
            output.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.library.path, output)
        if self.library is not None:
            self.library.close()
        self._attach(output)
        self.compile_s = self._prepare(configs)

    def _prepare(self, configs: Sequence[KnobConfig] | None) -> float:
        if configs is not None and \
                "configs" in inspect.signature(self.pipeline.prepare).parameters:
            return self.pipeline.prepare(configs)
        return self.pipeline.prepare()

    def _attach(self, path: Path) -> None:
        self.library = TunableLibrary(path, self.library_space(), self.pipeline.attach)

    def files(self) -> list[Path]:
        return [self.library.path] if self.library is not None else []

    def relocate(self, moved: dict[str, Path]) -> CompoundSystem:
        if self.library is not None:
            self.library.close()
            self._attach(moved[str(self.library.path)])
        return self

    def config_knobs(self, config: KnobConfig | None) -> KnobConfig:
        """Every knob's entry: the configuration's, exact for those it leaves out."""
        return {**self.knob_space().exact_config(), **(config or {})}

    def answer(self, question: Question, config: KnobConfig | None) -> str:
        """One answer of the system under `config` (None: exact)."""
        if self.library is None:
            raise RuntimeError("CompoundSystem.answer() before build()")
        lib = self.library.load(config)
        return self.pipeline.answer(question.question, lib, self.config_knobs(config),
                                    self.stages)

    def timed_round(self, question: Question, configs: list[KnobConfig | None]
                    ) -> list[tuple[str, dict[str, float]]]:
        """The exact system's answer, then each of `configs`', each with the seconds of its
        stages, every stage computed now (`Stages.fresh`): side by side, so that all are
        charged the machine's load of this moment."""
        out = []
        with self.stages.fresh():
            for cfg in (None, *configs):
                self.stages.reset_profile()
                text = self.answer(question, cfg)
                out.append((text, self.stages.reset_profile()))
        return out

    def _batch(self, input: str) -> list[Question]:
        file, start, end = input.rsplit(":", 2)
        return self.questions[Path(file)][int(start):int(end)]

    @staticmethod
    def _line(question: Question, answer: str) -> str:
        return json.dumps({"question": question.question, "answer": answer}) + "\n"

    def run(self, input: str, config_path: Path | None, workdir: Path,
            timeout: float) -> RunResult:
        config = None
        if config_path is not None:
            config = json.loads(config_path.read_text())["knobs"]
        self.stages.reset_profile()
        began = time.perf_counter()
        lines = []
        for q in self._batch(input):
            lines.append(self._line(q, self.answer(q, config)))
            if time.perf_counter() - began > timeout:
                raise RunFailed(f"timeout: no result after {timeout:.2f} s")
        wall = time.perf_counter() - began
        seconds = sum(self.stages.reset_profile().values())
        # A warm stage cache makes the wall time small; the tuner's timeout (a multiple of
        # the exact run's wall time) must still allow a run that computes every stage.
        return RunResult("".join(lines), seconds, max(wall, seconds), True)

    def run_round(self, input: str, config_paths: list[Path], workdir: Path,
                  timeout: float) -> tuple[RunResult, list[RunResult | RunFailed]]:
        """The exact system and the configurations in turn, question by question, every
        stage timed afresh (`timed_round`): the confirmation's times, taken side by side. A
        configuration past `timeout` seconds has a `RunFailed` in its place."""
        configs = [json.loads(p.read_text())["knobs"] for p in config_paths]
        texts, seconds = [""] * (len(configs) + 1), [0.0] * (len(configs) + 1)
        live = list(range(len(configs)))
        for q in self._batch(input):
            answers = self.timed_round(q, [configs[i] for i in live])
            for side, (text, profile) in zip([-1, *live], answers, strict=True):
                texts[side + 1] += self._line(q, text)
                seconds[side + 1] += sum(profile.values())
            if seconds[0] > timeout:
                raise RunFailed(f"the exact system: no result after {timeout:.2f} s")
            live = [i for i in live if seconds[i + 1] <= timeout]
        results: list[RunResult | RunFailed] = [
            RunResult(texts[i + 1], seconds[i + 1], seconds[i + 1], True) if i in live else
            RunFailed(f"timeout: no result after {timeout:.2f} s") for i in range(len(configs))]
        return RunResult(texts[0], seconds[0], seconds[0], True), results

    def _accuracy(self, outputs: list[str]) -> float:
        answers = [json.loads(line) for out in outputs for line in out.splitlines()]
        if not answers:
            return 0.0
        return sum(self.score(self.gold[a["question"]], a["answer"])
                   for a in answers) / len(answers)

    def loss(self, exact_outputs: list[str], outputs: list[str]) -> float:
        """Exact accuracy minus this accuracy (0 when the approximation does as well)."""
        return max(0.0, self._accuracy(exact_outputs) - self._accuracy(outputs))

    def input_loss(self, exact_output: str, output: str) -> float:
        """Exact accuracy minus this accuracy on one input's questions, below 0 where the
        approximation answers more of them right."""
        return self._accuracy([exact_output]) - self._accuracy([output])


def load_system(where: str) -> CompoundSystem:
    """The system of `where` (a system.toml or its folder)."""
    return CompoundSystem(load_project(where))


def build_system(where: str, out: Path) -> Path:
    """`approxcc build SYSTEM -o DIR`: the system's tunable shared library, in `out`."""
    system = load_system(where)
    output = out / f"lib{system.name}.so"
    build_library(system.project.sources, system.args, output)
    return output
