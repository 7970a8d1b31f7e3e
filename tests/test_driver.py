"""End to end through the real toolchain: libclang → xDSL → mlir-opt → opt → llc → cc."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import Result, run_approxcc

ROOT = Path(__file__).resolve().parents[1]
SIGNAL = ROOT / "examples" / "perforation" / "signal.c"

# Counts the iterations its annotated loop runs; prints them with a result.
COUNTING = r"""
#include <stdio.h>
#include <stdlib.h>
#include "config.h"

double series(int n, int *iterations) {
  double s = 0.0;
  int it = 0;
  // @approx loop_perforate knob(terms) values(1, 2, 4)
  for (int k = 0; k < n; k++) {
    s += (k % 2 ? -1.0 : 1.0) / (2 * k + 1);
    it++;
  }
  *iterations = it;
  return 4.0 * s;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : TERMS;
  int iterations = 0;
  double pi = series(n, &iterations);
  printf("pi=%.9f iterations=%d\n", pi, iterations);
  return 0;
}
"""


def approxcc(*args: str, cwd: Path, check: bool = True) -> Result:
    done = run_approxcc(args, cwd=cwd)
    assert not check or done.returncode == 0, done.stderr
    return done


def run(binary: Path, *args: str) -> str:
    return subprocess.run([str(binary), *args], capture_output=True, text=True,
                          check=True).stdout


def config(tmp: Path, **values: int) -> str:
    path = tmp / "config.json"
    path.write_text(json.dumps({"approxcc": "1", "program": "t",
                                "knobs": {k: {"value": v} for k, v in values.items()}}))
    return str(path)


@pytest.fixture
def counting(tmp_path: Path) -> Path:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "config.h").write_text("#ifndef TERMS\n#define TERMS 1000\n#endif\n")
    src = tmp_path / "series.c"
    src.write_text(COUNTING)
    return src


def test_exact_build_prints_what_cc_O2_prints(tmp_path: Path) -> None:
    approxcc("build", str(SIGNAL), "-o", "exact", cwd=tmp_path)
    subprocess.run(["cc", "-O2", f"-I{ROOT / 'runtime'}", str(SIGNAL),
                    str(ROOT / "runtime" / "approxrt.c"), "-lm", "-o", "ref"],
                   cwd=tmp_path, check=True)
    args = ("16", "1000")
    assert run(tmp_path / "exact", *args) == run(tmp_path / "ref", *args)


def test_perforated_build_differs_and_runs_fewer_iterations(counting: Path) -> None:
    tmp = counting.parent
    approxcc("build", str(counting), "-Iinc", "-o", "exact", cwd=tmp)
    approxcc("build", str(counting), "-Iinc", "--config", config(tmp, terms=4), "-o", "perf",
             cwd=tmp)
    exact, perforated = run(tmp / "exact"), run(tmp / "perf")
    assert exact == "pi=3.140592654 iterations=1000\n"
    assert perforated != exact
    assert perforated.endswith("iterations=250\n")


def test_emit_stages(counting: Path) -> None:
    tmp = counting.parent
    approx_ir = approxcc("build", str(counting), "-Iinc", "-S", "--emit=approx", "-o", "-",
                         cwd=tmp).stdout
    assert 'approx.knob "terms"' in approx_ir
    core = approxcc("build", str(counting), "-Iinc", "-S", "--emit=mlir", "-o", "-",
                    "--config", config(tmp, terms=2), cwd=tmp).stdout
    assert "approx." not in core and '"scf.for"' in core
    ll = approxcc("build", str(counting), "-Iinc", "-S", "--emit=llvm", "-o", "-",
                  cwd=tmp).stdout
    assert "define double @series(i32" in ll


def test_separate_compilation_and_defines(counting: Path) -> None:
    tmp = counting.parent
    approxcc("build", str(counting), "-Iinc", "-DTERMS=10", "-c", "-o", "series.o", cwd=tmp)
    approxcc("build", "series.o", "-o", "linked", cwd=tmp)
    assert run(tmp / "linked") == "pi=3.041839619 iterations=10\n"


def job_names(stderr: str) -> list[str]:
    """The jobs -### printed (lines indented by a space), by tool; approxcc's own with the
    subcommand: "approxcc -cc1 frontend", "approxcc opt"."""
    names = []
    for argv in (shlex.split(line) for line in stderr.splitlines() if line.startswith(" ")):
        name = Path(argv[0]).name
        if name == "approxcc":
            name += " " + " ".join(argv[1:3] if argv[1] == "-cc1" else argv[1:2])
        names.append(name)
    return names


def test_print_jobs_runs_nothing_and_pasted_rebuilds_the_program(
        counting: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp = counting.parent
    # the intermediates the printed commands name go to $TMPDIR: here, the test's folder
    (tmp / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp / "tmp"))
    approxcc("build", str(counting), "-Iinc", "-O3", "--config", config(tmp, terms=4),
             "-o", "built", cwd=tmp)
    jobs = approxcc("build", str(counting), "-Iinc", "-O3", "--config", "config.json",
                    "-o", "pasted", "-###", cwd=tmp)
    # clang's layout: the version banner, then one line per job, indented by a space
    assert jobs.stderr.startswith("approxcc version ")
    assert job_names(jobs.stderr) == [
        "approxcc -cc1 frontend", "approxcc opt", "mlir-opt", "mlir-translate", "opt", "llc",
        "cc", "cc"]  # the remainder (frontend/tu_split.py), the link
    lines = [line for line in jobs.stderr.splitlines() if line.startswith(" ")]
    assert "-O3" in lines[4] and "approx-apply-config" in lines[1]
    assert not (tmp / "pasted").exists()
    # the lines, pasted into a shell, build the same program
    subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=tmp, check=True,
                   capture_output=True, text=True)
    pasted = run(tmp / "pasted")
    assert pasted == run(tmp / "built") and pasted.endswith(" iterations=250\n")


def test_config_errors_name_the_knob(counting: Path) -> None:
    tmp = counting.parent
    proc = approxcc("build", str(counting), "-Iinc", "--config", config(tmp, nope=2),
                    "-o", "x", cwd=tmp, check=False)
    assert proc.returncode == 1
    assert "error: unknown knob 'nope'" in proc.stderr
    assert proc.stderr.startswith(f"{tmp / 'config.json'}:1:")
    assert "Traceback" not in proc.stderr
    proc = approxcc("build", str(counting), "-Iinc", "--config", config(tmp, terms=3),
                    "-o", "x", cwd=tmp, check=False)
    assert proc.returncode == 1 and "terms" in proc.stderr and "3" in proc.stderr


def test_config_from_a_pipe_is_read_once(counting: Path) -> None:
    """`-fapprox-config=<(jq ... tuned.json)`: a pipe gives its text once, but several phases
    read the configuration (the MLIR passes, the program's knob check); the second saw an
    empty file, "malformed configuration"."""
    tmp = counting.parent
    read, write = os.pipe()
    os.write(write, Path(config(tmp, terms=4)).read_bytes())
    os.close(write)
    try:
        approxcc("build", str(counting), "-Iinc", f"-fapprox-config=/dev/fd/{read}",
                 "-o", "piped", cwd=tmp)
    finally:
        os.close(read)
    assert run(tmp / "piped").endswith(" iterations=250\n")


def test_clang_errors_are_diagnostics(tmp_path: Path) -> None:
    (tmp_path / "bad.c").write_text("int main(void) {\n  return undefined_name;\n}\n")
    proc = approxcc("build", "bad.c", "-fapprox-mlir=all", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith("bad.c:2:10: error: use of undeclared identifier")
    assert "Traceback" not in proc.stderr
