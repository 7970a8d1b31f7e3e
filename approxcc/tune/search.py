"""One OpenTuner search: a knob space, a mode and one QoS budget.

OpenTuner runs as a library (`opentuner.api.TuningRunManager`): the tuner asks for
configurations, measures them however it likes (in parallel, from a cache) and reports
results back. The objective is `ThresholdAccuracyMinimizeTime(1 - budget)`: the fastest
configuration whose accuracy (1 - loss) meets the budget. OpenTuner has no seed: `random`
and `numpy.random` are seeded before each search, so identical measurements give an
identical search. Its own SQLite DB is in memory unless a file is given: the search state is
rebuilt on every run (what was measured lives in the results DB), and a file costs an fsync
per OpenTuner commit, several per evaluation, in the tuner's one thread.

The technique is an AUC bandit (`AUCBanditMetaTechnique`) over OpenTuner's own
evolutionary and simplex techniques: its default ensemble (AUCBanditMetaTechniqueA) without
differential evolution, which picks parents from `set(population)`, ordered by memory
address, so that no seed would make it repeat a search.
"""

from __future__ import annotations

import logging
import random
import warnings
from pathlib import Path
from typing import Any

from approxcc.tune.space import Encoding, KnobConfig, KnobSpace

FAILED_TIME = 1e9   # what OpenTuner is told about a failed configuration


def _quiet_opentuner() -> None:
    import opentuner.tuningrunmain

    opentuner.tuningrunmain.init_logging = lambda: None   # no ./opentuner.log, no root logger
    logging.getLogger("opentuner").setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", module=r"opentuner(\..*)?")
    warnings.filterwarnings("ignore", module=r"sqlalchemy(\..*)?")


TECHNIQUE = "approxcc-bandit"


def _register_technique() -> None:
    from opentuner.search import technique
    from opentuner.search.bandittechniques import AUCBanditMetaTechnique
    from opentuner.search.evolutionarytechniques import (
        NormalGreedyMutation,
        UniformGreedyMutation,
    )
    from opentuner.search.simplextechniques import RandomNelderMead

    if any(t.name == TECHNIQUE for t in technique.all_techniques()[0]):
        return
    technique.register(AUCBanditMetaTechnique([
        UniformGreedyMutation(),
        NormalGreedyMutation(mutation_rate=0.3),
        RandomNelderMead(),
    ], name=TECHNIQUE))


class Search:
    """Ask/tell around one `TuningRunManager`."""

    def __init__(self, space: KnobSpace, mode: str, budget: float, *, seed: int,
                 parallelism: int, seeds: list[KnobConfig], label: str,
                 database: Path | None = None):
        import numpy
        from opentuner import api, default_argparser
        from opentuner.measurement import MeasurementInterface
        from opentuner.measurement.inputmanager import FixedInputManager
        from opentuner.search.manipulator import ConfigurationManipulator
        from opentuner.search.objective import ThresholdAccuracyMinimizeTime

        _quiet_opentuner()
        _register_technique()
        self.encoding = Encoding(space, mode)
        params = self.encoding.parameters()
        self.empty = not params
        if self.empty:
            return
        manipulator = ConfigurationManipulator()
        for p in params:
            manipulator.add_parameter(p)
        self.names = {p.name for p in params}
        seed_data = self._encoded(seeds)
        random.seed(seed)
        numpy.random.seed(seed % 2**32)
        args = default_argparser().parse_args([])
        args.database = f"sqlite:///{database}" if database else "sqlite://"
        args.parallelism = max(1, parallelism)
        args.label = label
        args.no_dups = True
        args.technique = [TECHNIQUE]

        class Interface(MeasurementInterface):
            def seed_configurations(self) -> list[dict[str, Any]]:
                return seed_data

            def run(self, desired_result: Any, input: Any, limit: Any) -> Any:
                raise RuntimeError("measured by approxcc, never by OpenTuner")

        interface = Interface(args=args, manipulator=manipulator, project_name="approxcc",
                              program_name=label, program_version="1",
                              objective=ThresholdAccuracyMinimizeTime(1.0 - budget),
                              input_manager=FixedInputManager())
        self.manager = api.TuningRunManager(interface, args)

    def _encoded(self, configs: list[KnobConfig]) -> list[dict[str, Any]]:
        """OpenTuner's seed data of `configs` (those the space holds), last one first:
        OpenTuner pops seeds from the end."""
        out = []
        for cfg in configs:
            data = self.encoding.encode(cfg)
            if data is not None:
                out.append({k: v for k, v in data.items() if k in self.names})
        return out[::-1]

    def propose(self, configs: list[KnobConfig]) -> None:
        """Ask for `configs` next, in this order, before the seeds not yet asked for and
        OpenTuner's own draws."""
        if not self.empty:
            # OpenTuner takes seeds only up front; its driver pops `seed_cfgs` before asking
            # its techniques, so configurations added there are the next ones it asks for
            self.manager.search_driver.seed_cfgs.extend(self._encoded(configs))

    def ask(self) -> tuple[Any, KnobConfig] | None:
        """The next configuration to measure, or None when OpenTuner needs results first."""
        if self.empty:
            return None
        dr = self.manager.get_next_desired_result()
        if dr is None:
            return None
        return dr, self.encoding.decode(dr.configuration.data)

    def tell(self, handle: Any, time: float | None, loss: float | None) -> None:
        from opentuner.resultsdb.models import Result

        if time is None or loss is None:
            result = Result(state="ERROR", time=FAILED_TIME, accuracy=0.0)
        else:
            result = Result(time=time, accuracy=1.0 - loss)
        self.manager.report_result(handle, result)

    def close(self) -> None:
        if not self.empty and self.manager.get_best_result() is not None:
            self.manager.finish()
