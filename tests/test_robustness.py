"""Never a traceback: a failure in any phase of any command is an internal compiler error in
clang's form, with a reproducer that reproduces it; Ctrl-C and a closed pipe are quiet.

Faults no input causes come from the driver's test hook (APPROXCC_INJECT_FAULT=PHASE,
driver/jobs.py), which the reproducer's script carries, or are patched in this process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import Result, run_approxcc
from test_clang_driver import KERNEL as DRIVER_KERNEL

from approxcc.lowering.registry import TUNABLE_PIPELINE

# the kernel of the driver's tests, and a main printing its result
KERNEL = DRIVER_KERNEL + 'int main(void) { printf("%d\\n", series(100)); return 0; }\n'
ICE = "approxcc: error: internal compiler error: "
SAVED = re.compile(r"approxcc: note: diagnostic msg: preprocessed source and run script saved "
                   r"to (\S+)\n")


@pytest.fixture(autouse=True)
def reproducers_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reproducers ($TMPDIR) go where the test's files go, and are removed with them."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("#define SCALE SCALE_BY\n")
    (tmp_path / "k.c").write_text(KERNEL)
    (tmp_path / "c.json").write_text('{"approxcc": "1", "knobs": {"terms": {"value": 2}}}')
    return tmp_path


def assert_ice(done: Result, message: str) -> Path:
    """An internal compiler error: status 1, clang's form, no traceback; its reproducer."""
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(ICE + message), done.stderr
    saved = SAVED.search(done.stderr)
    assert saved, done.stderr
    folder = Path(saved.group(1))
    assert folder.parent == Path(tempfile.gettempdir())
    assert (folder / "reproduce.sh").is_file()
    return folder


def reproduce(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(folder.parent)}  # its own reproducer goes there too
    return subprocess.run(["sh", str(folder / "reproduce.sh")], capture_output=True,
                          text=True, timeout=300, env=env)


BUILD = ["k.c", "-Iinc", "-DSCALE_BY=7", "-o", "prog"]
PASSES = ["approx-apply-config", *TUNABLE_PIPELINE.split(",")]
RERUN = ("frontend", "approx-apply-config", "approx-tunable", "llc", "link", "depfile")


@pytest.mark.parametrize("phase,args", [
    ("frontend", BUILD),
    *((name, [*BUILD, "-fapprox-config=c.json" if name == "approx-apply-config" else
              "-fapprox-tunable" if name == "approx-tunable" else "-O2"])
      for name in PASSES),
    ("mlir-opt", BUILD), ("mlir-translate", BUILD), ("opt", BUILD), ("llc", BUILD),
    ("cc", BUILD), ("link", BUILD),
    ("depfile", ["-c", *BUILD[:3], "-MMD"]),
    ("llvm-as", ["-c", "-emit-llvm", *BUILD[:3]]),
])
def test_a_fault_in_any_phase_is_an_ice_with_a_reproducer(kernel: Path, phase: str,
                                                          args: list[str]):
    fault = {"APPROXCC_INJECT_FAULT": phase}
    done = run_approxcc(args, cwd=kernel, env=fault)
    folder = assert_ice(done, f"RuntimeError: fault injected into phase '{phase}'")
    assert not (kernel / "prog").exists()
    # the source, preprocessed with the command's -I/-D, and the command on it
    preprocessed = (folder / "k.c").read_text()
    assert "s += i % 7;" in preprocessed and "#pragma approx loop_perforate" in preprocessed
    script = (folder / "reproduce.sh").read_text()
    assert f"APPROXCC_INJECT_FAULT={phase} " in script and " k.c" in script
    if phase in RERUN:  # a fresh process each: a sample of the phases
        again = reproduce(folder)
        assert again.returncode == 1 and "Traceback" not in again.stderr
        assert again.stderr.startswith(done.stderr.splitlines()[0]), again.stderr


def test_the_reproducer_builds_the_program_without_the_fault(kernel: Path):
    done = run_approxcc(["build", *BUILD], cwd=kernel, env={"APPROXCC_INJECT_FAULT": "llc"})
    folder = assert_ice(done, "RuntimeError: ")
    script = (folder / "reproduce.sh").read_text().replace("APPROXCC_INJECT_FAULT=llc", "")
    (folder / "reproduce.sh").write_text(script)
    assert reproduce(folder).returncode == 0
    assert subprocess.run([str(folder / "prog")], capture_output=True, text=True,
                          check=True).stdout == "295\n"


def boom(*args: object, **kwargs: object) -> None:
    raise KeyError("boom")


@pytest.mark.parametrize("target", ["approxcc.frontend.c_parse.parse",
                                    "approxcc.frontend.c_parse.ModuleEmitter.emit"],
                         ids=["parse", "emission"])
def test_a_bug_in_the_frontend_is_an_ice(kernel: Path, monkeypatch: pytest.MonkeyPatch,
                                         target: str):
    monkeypatch.setattr(target, boom)
    done = run_approxcc(BUILD, cwd=kernel)
    folder = assert_ice(done, "KeyError: 'boom'\n")
    assert "approxcc: note: raised at approxcc/frontend/c_parse.py:" in done.stderr
    assert "s += i % 7;" in (folder / "k.c").read_text()
    assert reproduce(folder).returncode == 0  # no bug in the script's own process


def test_a_tool_failing_on_generated_code_is_an_ice(kernel: Path,
                                                    monkeypatch: pytest.MonkeyPatch):
    from approxcc.lowering import core_to_llvm

    real = core_to_llvm.translate_args
    monkeypatch.setattr(core_to_llvm, "translate_args",
                        lambda *a: [*real(*a), "--no-such-flag"])
    done = run_approxcc(BUILD, cwd=kernel)
    assert_ice(done, "ToolFailure: mlir-translate failed with exit code 1: ")


def test_a_compiler_that_cannot_import_is_an_ice(kernel: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "approxcc.driver.build", None)
    assert_ice(run_approxcc(BUILD, cwd=kernel), "ModuleNotFoundError: ")


def test_opt_tune_and_report_have_ices_too(kernel: Path, monkeypatch: pytest.MonkeyPatch):
    mlir = kernel / "in.mlir"
    mlir.write_text("builtin.module {}\n")
    monkeypatch.setattr("approxcc.driver.opt.parse_pipeline", boom)
    folder = assert_ice(run_approxcc(["opt", "in.mlir"], cwd=kernel), "KeyError: 'boom'")
    assert (folder / "in.mlir").read_text() == mlir.read_text()
    monkeypatch.setattr("approxcc.tune.load_application", boom)
    assert_ice(run_approxcc(["tune", ".", "--qos-budget", "5%"], cwd=kernel), "KeyError")
    (kernel / "r.db").write_text("")
    monkeypatch.setattr("approxcc.tune.db.ResultsDB", boom)
    assert_ice(run_approxcc(["report", "r.db"], cwd=kernel), "KeyError")


@pytest.mark.parametrize("exc,status", [(KeyboardInterrupt, 130), (BrokenPipeError, 141)])
def test_interrupt_and_closed_pipe_are_quiet(kernel: Path, monkeypatch: pytest.MonkeyPatch,
                                             exc: type[BaseException], status: int):
    def stop(*args: object) -> None:
        raise exc()

    monkeypatch.setattr("approxcc.frontend.c_parse.compile_unit", stop)
    for args in (BUILD, ["build", *BUILD]):
        done = run_approxcc(args, cwd=kernel)
        assert (done.returncode, done.stderr) == (status, "")


def test_console_script_into_a_closed_pipe(kernel: Path):
    approxcc = Path(sys.executable).parent / "approxcc"
    script = f"{approxcc} -S --emit=approx {' '.join(BUILD[:3])} -o - | head -c 1 >/dev/null;" \
             " echo ${PIPESTATUS[0]}"
    done = subprocess.run(["bash", "-c", script], cwd=kernel, capture_output=True, text=True,
                          timeout=120)
    assert done.stderr == "" and done.stdout.strip() in ("0", "141")


def test_in_process_runs_share_no_state(kernel: Path):
    """Colour, warning options and counts belong to one call."""
    (kernel / "w.c").write_text("int f(void) {\n  int unused;\n  return 0;\n}\n")
    coloured = run_approxcc(["-c", "w.c", "-fapprox-mlir=all", "-Wall", "-Werror",
                             "-fdiagnostics-color=always"], cwd=kernel)
    assert coloured.returncode == 1 and "\x1b[" in coloured.stderr
    plain = run_approxcc(["-c", "w.c", "-fapprox-mlir=all", "-Wall"], cwd=kernel)
    assert plain.returncode == 0 and "\x1b[" not in plain.stderr
    assert plain.stderr.endswith("1 warning generated.\n")
