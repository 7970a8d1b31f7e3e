"""Every GPU variant of the ML examples against the CPU's: the one short script to run where a
GPU is lent.

    python bench/gpu_check.py                       # CUDA: examples/ml's small models
    python bench/gpu_check.py MODEL.py ... --target cuda --device cuda --repeats 7
    python bench/gpu_check.py --target cpu --device local-sync   # a dry run on any machine

For each model, `approxcc MODEL -o OUT --target=cpu,T` (a variant IREE cannot compile for T
is its warning, and listed here); then per decorated function and per variant built for T:
the variant run on the device (`--device`, the runtime's driver) and on the CPU
(`local-task`) on the function's example inputs, relL2 and max |err| of the device's outputs
against the CPU's, and each side's median time (after an untimed first call, which loads
the variant). Prints a table, writes OUT/gpu_check.json, and exits 1 when a variant differs
from its CPU run by more than `--tolerance` (relL2) or fails to run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from approxcc.ml import accuracy
from approxcc.ml.program import load_program
from approxcc.ml.runtime import load

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("knob_gallery.py", "tiny_decoder.py", "kv_decoder.py")


def _median_ms(fn: Any, inputs: list[Any], repeats: int) -> float:
    fn(*inputs)  # loads the variant
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*inputs)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def check_model(model: Path, out: Path, target: str, device: str, repeats: int,
                tolerance: float, console: Console) -> list[dict[str, Any]]:
    """The rows of one model: a build for the CPU and `target`, each variant on both."""
    approxcc = Path(sys.executable).with_name("approxcc")
    built = subprocess.run([str(approxcc), str(model), "-o", str(out), f"--target=cpu,{target}"],
                           capture_output=True, text=True)
    if built.returncode != 0:
        return [{"model": model.name, "function": "", "variant": "", "status": "build failed",
                 "detail": built.stderr.strip().splitlines()[-1:]}]
    for line in built.stderr.splitlines():
        if "warning:" in line:
            console.print(f"[yellow]{line}[/]")
    program = load_program(model)
    manifest = json.loads((out / "manifest.json").read_text())
    on_device, on_cpu = load(out, device=device), load(out, device="local-task")
    rows = []
    for name, entry in manifest["functions"].items():
        inputs = accuracy.example_inputs(program.functions[name].inputs, entry["inputs"])
        failed = set(entry["failed"].get(target, []))
        for variant in entry["variants"]:
            labels = ",".join(f"{k}={v}" for k, v in variant["labels"].items())
            row: dict[str, Any] = {"model": model.name, "function": name, "variant": labels}
            if variant["id"] in failed:
                rows.append(row | {"status": f"not built for {target}"})
                continue
            config = {"approxcc": "1", "knobs": {k: {"value": v} for k, v in
                                                 variant["choice"].items() if v is not None}}
            try:
                for prog in (on_device, on_cpu):
                    prog.configure(config)
                fn_device, fn_cpu = on_device.functions[name], on_cpu.functions[name]
                figures = accuracy.compare(_as_list(fn_cpu(*inputs)),
                                           _as_list(fn_device(*inputs)))
                row |= {"rel_l2": figures.rel_l2, "max_abs_err": figures.max_abs_err,
                        "device_ms": _median_ms(fn_device, inputs, repeats),
                        "cpu_ms": _median_ms(fn_cpu, inputs, repeats)}
                off = figures.rel_l2 is None or figures.rel_l2 > tolerance
                row["status"] = "differs" if off else "ok"
            except Exception as err:  # noqa: BLE001 - a variant that does not run is a row
                row["status"] = f"failed: {type(err).__name__}: {err}"
            rows.append(row)
        on_device.release()
        on_cpu.release()
    return rows


def _as_list(outputs: Any) -> list[Any]:
    return list(outputs) if isinstance(outputs, tuple) else [outputs]


def _num(row: dict[str, Any], key: str, fmt: str) -> str:
    return format(row[key], fmt) if row.get(key) is not None else ""


def _table(rows: list[dict[str, Any]], target: str) -> Table:
    table = Table(title=f"ML variants on {target} against the CPU")
    for column in ("model", "function", "variant", "relL2", "max |err|", f"{target} ms",
                   "cpu ms", "status"):
        table.add_column(column, justify="right" if "ms" in column or "L2" in column
                         or "err" in column else "left")
    for r in rows:
        table.add_row(r["model"], r["function"], r["variant"], _num(r, "rel_l2", ".2e"),
                      _num(r, "max_abs_err", ".2e"), _num(r, "device_ms", ".3f"),
                      _num(r, "cpu_ms", ".3f"), r["status"])
    return table


@click.command()
@click.argument("models", nargs=-1, type=click.Path(exists=True, dir_okay=False,
                                                    path_type=Path))
@click.option("--target", default="cuda", show_default=True, help="cuda, rocm (cpu: dry run)")
@click.option("--device", default="cuda", show_default=True,
              help="The runtime's driver for the target: cuda, hip, local-sync.")
@click.option("--repeats", type=click.IntRange(1), default=5, show_default=True)
@click.option("--tolerance", type=float, default=1e-2, show_default=True,
              help="The largest relL2 of a variant's device outputs against its CPU's.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=ROOT / "build" / "gpu-check", show_default=True)
def main(models: tuple[Path, ...], target: str, device: str, repeats: int, tolerance: float,
         out: Path) -> None:
    console = Console()
    chosen = models or tuple(ROOT / "examples" / "ml" / m for m in MODELS)
    rows = []
    for model in chosen:
        console.print(f"[bold]{model.name}[/]: building for cpu and {target} ...")
        rows += check_model(model.resolve(), out / model.stem, target, device, repeats,
                            tolerance, console)
    console.print(_table(rows, target))
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_check.json").write_text(json.dumps(rows, indent=1))
    bad = [r for r in rows if r["status"] not in ("ok",) and
           not r["status"].startswith("not built")]
    console.print(f"{len(rows)} variants, {len(bad)} differing or failing; "
                  f"results: {out / 'gpu_check.json'}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
