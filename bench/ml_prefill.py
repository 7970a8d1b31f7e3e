"""Exact prefill through IREE beside ``jax.jit``, side by side in one run.

For each model and prompt length: tokens/s of the IREE cache fill (``IreeRunner.prefill``,
the exact float32 model) with ``iree_decode.PREFILL_FLAGS`` and with each ``--try`` set of
flags added to them (replacing those of the same name), of each of ``--variants``
(low-precision models) and of ``jax.jit`` (XLA-CPU), all taking turns call by call
(medians of wall time, and of the process's CPU time: on a shared machine the CPU seconds a
call costs are steadier than its wall time); GFLOP/s as a share of numpy's float32 matmul
timed before and after. The prefill figures of ``make bench-ml``
without its decode variants: for trying prefill flags.

Usage: ``python bench/ml_prefill.py [--models smollm2 gemma3] [--lengths 128 512]
[--repeats 5] [--try="FLAG FLAG" ...] [--variants w8a8]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from typing import Any

import numpy as np
from ml_decode import MAX_LEN, long_prompt, measure_matmul_peak, prefill_flops, variant_model

from workloads.models import load_model
from workloads.models.decode import JaxRunner
from workloads.models.iree_decode import PREFILL_FLAGS, IreeRunner


def with_flags(flags: tuple[str, ...], extra: list[str]) -> tuple[str, ...]:
    """``flags`` plus ``extra``; an extra flag replaces one of the same name."""
    names = {f.split("=")[0] for f in extra}
    return tuple(f for f in flags if f.split("=")[0] not in names) + tuple(extra)


def time_calls(runs: dict[str, Any], ids: list[int], repeats: int
               ) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each ``runs[name](ids)``, taking turns; one warm-up."""
    for run in runs.values():
        run(ids)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run(ids)
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {name: tuple(np.median(t, axis=0)) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2", "gemma3"])
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--try", dest="tries", action="append", default=[],
                        help="iree-compile flags added to the prefill step's (repeatable)")
    parser.add_argument("--variants", nargs="*", default=[],
                        help="low-precision variants (ml_decode's names: w8a8, bf16...) "
                             "timed alongside with PREFILL_FLAGS")
    args = parser.parse_args()
    flag_sets = {"iree": PREFILL_FLAGS} | {
        f"iree+{i}": with_flags(PREFILL_FLAGS, t.split()) for i, t in enumerate(args.tries)}
    for i, t in enumerate(args.tries):
        print(f"iree+{i}: {t}")
    peak = measure_matmul_peak()
    print(f"numpy f32 matmul {peak:.0f} GFLOP/s, load {os.getloadavg()[0]:.1f}")
    for name in args.models:
        model = load_model(name)
        for n in args.lengths:
            runners = {key: IreeRunner(model, max_len=MAX_LEN, prefill_len=n, prefill_flags=f)
                       for key, f in flag_sets.items()}
            runners |= {v: IreeRunner(variant_model(model, v), max_len=MAX_LEN, prefill_len=n,
                                      variant=v) for v in args.variants}
            runs: dict[str, Any] = {"jax": JaxRunner(model, MAX_LEN).prefill}
            runs |= {key: r.prefill for key, r in runners.items()}
            seconds = time_calls(runs, long_prompt(model, n), args.repeats)
            flops = prefill_flops(runners["iree"].model.params, n)
            jax_s, jax_cpu = seconds["jax"]
            for key, (s, cpu) in seconds.items():
                gflops = flops / s / 1e9
                print(f"{name} {n} {key}: {n / s:.0f} tok/s, {jax_s / s:.2f}x jax, "
                      f"{gflops:.0f} GFLOP/s ({gflops / peak:.0%} of numpy's); "
                      f"CPU {cpu:.2f} s ({jax_cpu / cpu:.2f}x jax)")
            print(f"  load {os.getloadavg()[0]:.1f}", flush=True)
            del runners, runs
            gc.collect()
    print(f"numpy f32 matmul at the end {measure_matmul_peak():.0f} GFLOP/s")


if __name__ == "__main__":
    main()
