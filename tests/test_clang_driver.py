"""The clang-compatible driver: `make CC=approxcc` on examples/make_project, the flags a build
system passes (-c -o -S -E -emit-llvm -emit-mlir -MD -MMD -MF -MT -MQ -MP -save-temps -### -v
--version), and clang-style diagnostics (source line, caret, colour, exit status)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import Result, run_approxcc
from test_driver import job_names

ROOT = Path(__file__).resolve().parents[1]
APPROXCC = str(Path(sys.executable).parent / "approxcc")
PROJECT = ROOT / "examples" / "make_project"
OBJECTS = ("main.o", "filter.o", "score.o", "util.o")

KERNEL = r"""#include <stdio.h>
#include "approxrt.h"
#include "defs.h"

int series(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(terms) values(1, 2, 4)
  for (int i = 0; i < n; i++)
    s += i % SCALE;
  return s;
}
"""


def approxcc(*args: str, cwd: Path) -> Result:
    return run_approxcc(args, cwd=cwd)


def make(folder: Path, *args: str) -> subprocess.CompletedProcess:
    # A fresh make, not a sub-make of `make test` (which would print "Entering directory").
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(["make", *args], cwd=folder, capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def run(exe: Path) -> str:
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    (tmp_path / "defs.h").write_text("#define SCALE 7\n")
    (tmp_path / "k.c").write_text(KERNEL)
    return tmp_path


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)


# -- make CC=approxcc -----------------------------------------------------------------------

def test_make_builds_the_project_and_rebuilds_only_what_a_header_touches(tmp_path: Path):
    ref, built = tmp_path / "cc", tmp_path / "approxcc"
    shutil.copytree(PROJECT, ref)
    shutil.copytree(PROJECT, built)
    make(ref, "CC=cc")
    first = make(built, f"CC={APPROXCC}")
    assert first.stderr == ""
    assert run(built / "prog") == run(ref / "prog")
    assert "-fapprox" not in first.stdout
    assert make(built, f"CC={APPROXCC}").stdout.strip().endswith("is up to date.")

    before = {o: (built / o).stat().st_mtime_ns for o in OBJECTS}
    (built / "score.h").touch()
    again = make(built, f"CC={APPROXCC}")
    compiled = set(re.findall(r" -c (\w+)\.c ", again.stdout))
    assert compiled == {"score", "main"}
    changed = {o for o in OBJECTS if (built / o).stat().st_mtime_ns != before[o]}
    assert changed == {"score.o", "main.o"}
    assert again.stdout.splitlines()[-1].endswith("-o prog")
    assert run(built / "prog") == run(ref / "prog")

    # a configuration is a dependency of every object with knobs built with it (a file
    # without annotations is the system compiler's: the configuration cannot change it); the
    # approximate program prints something else
    make(built, "-B", f"CC={APPROXCC}", "KNOBS=fast.json")
    assert "fast.json" in (built / "score.d").read_text()
    assert "fast.json" not in (built / "util.d").read_text()
    assert run(built / "prog") != run(ref / "prog")


# -- the flags ------------------------------------------------------------------------------

def test_print_jobs(kernel: Path, monkeypatch: pytest.MonkeyPatch):
    # the intermediates the printed commands name go to $TMPDIR: here, the test's folder
    (kernel / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(kernel / "tmp"))
    done = approxcc("-c", "k.c", "-O3", "-MMD", "-o", "k.o", "-###", cwd=kernel)
    assert done.returncode == 0, done.stderr
    banner, *jobs = done.stderr.split("\n ")
    assert banner.startswith("approxcc version ") and "Target: " in banner
    assert job_names(done.stderr) == [
        "approxcc -cc1 frontend", "approxcc opt", "mlir-opt", "mlir-translate", "opt", "llc",
        "cc", "approxcc -cc1 depfile", "cc"]
    assert "-O3" in jobs[4] and "-MMD" in jobs[6]
    assert jobs[-1].split()[1:3] == ["-r", "-nostdlib"] and "k.knobs.s" in jobs[-1]
    assert sorted(p.name for p in kernel.iterdir()) == ["defs.h", "k.c", "tmp"]
    assert not any((kernel / "tmp").iterdir())
    # pasted into a shell, the jobs make the object and its make rule
    subprocess.run(["bash", "-e", "-c", "\n".join(jobs)], cwd=kernel, check=True,
                   capture_output=True)
    assert (kernel / "k.d").read_text() == "k.o: \\\n  k.c \\\n  defs.h\n"
    assert approxcc("k.o", "-o", "k", cwd=kernel).returncode == 1  # no main: a link error


def test_help_is_the_flag_table(kernel: Path):
    """`build --help` lists every flag of the driver's one table."""
    from approxcc.driver.options import FLAGS

    done = approxcc("build", "--help", cwd=kernel)
    assert done.returncode == 0 and done.stdout.startswith("OVERVIEW: approxcc")
    for flag in (f for f in FLAGS if not f.hidden):
        assert all(s in done.stdout for s in flag.spellings), flag.spellings
        assert flag.help in done.stdout
    assert approxcc("-c", "--help", cwd=kernel).stdout == done.stdout


def test_verbose_and_version(kernel: Path):
    version = approxcc("--version", cwd=kernel)
    assert version.returncode == 0 and version.stdout.startswith("approxcc version ")
    assert "Target: " in version.stdout and "InstalledDir: " in version.stdout
    done = approxcc("-v", "k.c", "-c", cwd=kernel)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("approxcc version ")
    assert " -cc1 frontend k.c " in done.stderr and "/llc " in done.stderr
    assert (kernel / "k.o").exists()  # clang's default name, in the current folder


def test_save_temps_keeps_every_intermediate(kernel: Path):
    done = approxcc("-save-temps", "-c", "k.c", cwd=kernel)
    assert done.returncode == 0, done.stderr
    kept = {p.name for p in kernel.iterdir()}
    assert {"k.approx.mlir", "k.core.mlir", "k.llvm.mlir", "k.ll", "k.opt.ll", "k.mlir.o",
            "k.rest.c", "k.rest.o", "k.knobs.s", "k.o"} <= kept
    assert "approx.knob" in (kernel / "k.approx.mlir").read_text()
    assert "approx." not in (kernel / "k.core.mlir").read_text()
    (kernel / "out").mkdir()
    done = approxcc("-save-temps=obj", "-c", "k.c", "-o", "out/k.o", cwd=kernel)
    assert done.returncode == 0, done.stderr
    assert {"k.approx.mlir", "k.ll", "k.o"} <= {p.name for p in (kernel / "out").iterdir()}


def test_dependency_files(kernel: Path):
    assert approxcc("-c", "k.c", "-MD", "-o", "obj.o", cwd=kernel).returncode == 0
    rule = (kernel / "obj.d").read_text()
    assert rule.startswith("obj.o: \\\n  k.c \\\n")
    assert "  defs.h" in rule and "approxrt.h" in rule and "stdio.h" in rule
    done = approxcc("-c", "k.c", "-MMD", "-MF", "deps/k.dep", cwd=kernel)
    assert (done.returncode, done.stderr) == (1, "approxcc: error: unable to open output file "
                                                 "'deps/k.dep': No such file or directory\n")
    (kernel / "deps").mkdir()
    done = approxcc("-c", "k.c", "-MMD", "-MP", "-MF", "deps/k.dep", "-MT", "a.o",
                    "-MQ", "$(x) y.o", cwd=kernel)
    assert done.returncode == 0, done.stderr
    rule = (kernel / "deps" / "k.dep").read_text()
    assert rule == "a.o $$(x)\\ y.o: \\\n  k.c \\\n  defs.h\n\ndefs.h:\n"


def test_preprocess_emit_llvm_and_emit_mlir(kernel: Path):
    done = approxcc("-E", "k.c", "-DSCALE_UNUSED", cwd=kernel)
    assert done.returncode == 0, done.stderr
    assert "s += i % 7;" in done.stdout and "#pragma approx loop_perforate" in done.stdout
    assert approxcc("-E", "k.c", "-o", "k.i", cwd=kernel).returncode == 0
    assert "s += i % 7;" in (kernel / "k.i").read_text()

    assert approxcc("-S", "-emit-llvm", "k.c", cwd=kernel).returncode == 0
    assert "define i32 @series(i32" in (kernel / "k.ll").read_text()
    assert approxcc("-c", "-emit-llvm", "k.c", "-o", "k.bc", cwd=kernel).returncode == 0
    assert (kernel / "k.bc").read_bytes()[:4] == b"BC\xc0\xde"

    done = approxcc("-S", "-emit-mlir", "k.c", "-o", "-", cwd=kernel)
    assert done.returncode == 0, done.stderr
    assert 'approx.knob "terms"' in done.stdout
    assert approxcc("-S", "-emit-mlir", "k.c", cwd=kernel).returncode == 0
    assert 'approx.knob "terms"' in (kernel / "k.mlir").read_text()
    done = approxcc("-emit-llvm", "k.c", cwd=kernel)
    assert done.returncode == 1
    assert done.stderr == "approxcc: error: -emit-llvm cannot be used when linking\n"


def test_harmless_flags_are_accepted(kernel: Path):
    write(kernel, "main.c", '#include <stdio.h>\nint series(int);\n'
                            'int main(void) { printf("%d\\n", series(20)); return 0; }\n')
    done = approxcc("k.c", "main.c", "-fPIC", "-march=native", "-pthread", "-Wall", "-Wextra",
                    "-g", "-std=c11", "-O1", "-Wl,--as-needed", "-lm", "-o", "prog", cwd=kernel)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # -Wall: approx pragmas are no unknown pragmas
    assert run(kernel / "prog") == "57\n"


# -- programs of several translation units ---------------------------------------------------

TU = r"""int NAME(int n) {
  int s = 0;
  // @approx loop_perforate knob(KNOB) values(1, 2)
  for (int i = 0; i < n; i++) s += i;
  return s;
}
"""
MAIN = ('#include <stdio.h>\nint fa(int);\nint fb(int);\n'
        'int main(void) { printf("%d %d\\n", fa(10), fb(10)); return 0; }\n')


def config(folder: Path, **values: int) -> str:
    (folder / "c.json").write_text(json.dumps(
        {"approxcc": "1", "knobs": {k: {"value": v} for k, v in values.items()}}, indent=1))
    return "c.json"


def test_one_config_for_knobs_in_several_translation_units(tmp_path: Path):
    write(tmp_path, "a.c", TU.replace("NAME", "fa").replace("KNOB", "ka"))
    write(tmp_path, "b.c", TU.replace("NAME", "fb").replace("KNOB", "kb"))
    write(tmp_path, "main.c", MAIN)
    cfg = config(tmp_path, ka=2, kb=1)
    # each -c applies the knobs of its unit; the link checks the program
    for src in ("a", "b", "main"):
        done = approxcc("-c", f"{src}.c", f"-fapprox-config={cfg}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    done = approxcc("a.o", "b.o", "main.o", f"-fapprox-config={cfg}", "-o", "prog", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert run(tmp_path / "prog") == "20 45\n"
    # a knob no unit defines: an error at link time, at its key in the configuration
    cfg = config(tmp_path, ka=2, nope=1)
    done = approxcc("a.o", "b.o", "main.o", f"-fapprox-config={cfg}", "-o", "prog2",
                    cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("c.json:7:3: error: unknown knob 'nope' in configuration\n"
                           '    7 |   "nope": {\n'
                           "      |   ^\n")
    assert not (tmp_path / "prog2").exists()
    # a program without knobs (configure's test programs, a project's other executables)
    write(tmp_path, "plain.c", "int main(void) { return 0; }\n")
    done = approxcc("plain.c", f"-fapprox-config={cfg}", "-o", "plain", cwd=tmp_path)
    assert done.returncode == 0 and "warning: configuration unused: the program has no " \
        "knobs" in done.stderr, done.stderr


def test_duplicate_knob_across_files(tmp_path: Path):
    write(tmp_path, "a.c", TU.replace("NAME", "fa").replace("KNOB", "k"))
    write(tmp_path, "b.c", "\n\n" + TU.replace("NAME", "fb").replace("KNOB", "k"))
    write(tmp_path, "main.c", MAIN)
    expected = ("b.c:5:14: error: duplicate knob name 'k'\n"
                "    5 |   // @approx loop_perforate knob(k) values(1, 2)\n"
                "      |              ^\n"
                "a.c:3:14: note: first defined here\n"
                "    3 |   // @approx loop_perforate knob(k) values(1, 2)\n"
                "      |              ^\n")
    done = approxcc("a.c", "b.c", "main.c", "-o", "prog", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, expected)
    assert not (tmp_path / "prog").exists()
    for src in ("a", "b"):  # each unit alone is fine; their link is not
        assert approxcc("-c", f"{src}.c", cwd=tmp_path).returncode == 0
    done = approxcc("a.o", "b.o", "main.c", "-o", "prog", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, expected)


# -- diagnostics ----------------------------------------------------------------------------

LOOP = "int f(int n) {{\n  int s = 0, i = 0;\n  {annotation}\n  {loop}\n  return s;\n}}\n"
FOR = "for (i = 0; i < n; i++) s += i;"


@pytest.mark.parametrize("annotation,loop,expected", [
    ("#pragma approx loop_perforat", FOR,
     "t.c:3:18: error: unknown approx directive 'loop_perforat'; did you mean "
     "'loop_perforate'?\n"
     "    3 |   #pragma approx loop_perforat\n"
     "      |                  ^\n"),
    ("#pragma approx loop_perforate knobb(x)", FOR,
     "t.c:3:33: error: unknown clause 'knobb' in 'loop_perforate' annotation; did you mean "
     "'knob'?\n"
     "    3 |   #pragma approx loop_perforate knobb(x)\n"
     "      |                                 ^\n"),
    ("#pragma approx loop_perforate", "while (i < n) s += i++;",
     "t.c:3:18: error: 'loop_perforate' must precede a counted 'for' loop\n"
     "    3 |   #pragma approx loop_perforate\n"
     "      |                  ^\n"
     "t.c:4:3: note: annotated code is here\n"
     "    4 |   while (i < n) s += i++;\n"
     "      |   ^\n"),
    ("#pragma approx loop_perforate", "for (i = 0; i < n; i++) s += i +;",
     "t.c:4:35: error: expected expression\n"
     "    4 |   for (i = 0; i < n; i++) s += i +;\n"
     "      |                                   ^\n"),
], ids=["bad-pragma", "unknown-clause", "wrong-target", "clang-syntax-error"])
def test_source_diagnostics(tmp_path: Path, annotation: str, loop: str, expected: str):
    write(tmp_path, "t.c", LOOP.format(annotation=annotation, loop=loop))
    done = approxcc("-c", "t.c", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, expected + "1 error generated.\n")
    assert not (tmp_path / "t.o").exists()


EXACT = LOOP.format(annotation="#pragma approx loop_perforate knob(k) values(1)", loop=FOR)
WARNING = ("t.c:3:18: {}: all values of knob 'k' are exact [{}-Wapprox-exact-knob]\n"
           "    3 |   #pragma approx loop_perforate knob(k) values(1)\n"
           "      |                  ^\n")


def test_warnings_honour_w_and_werror(tmp_path: Path):
    write(tmp_path, "t.c", EXACT)
    done = approxcc("-c", "t.c", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, WARNING.format("warning", "") +
                                              "1 warning generated.\n")
    assert (tmp_path / "t.o").exists()
    (tmp_path / "t.o").unlink()
    for quiet in ("-w", "-Wno-approx-exact-knob"):
        done = approxcc("-c", "t.c", quiet, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (0, "")
    for strict in ("-Werror", "-Werror=approx-exact-knob"):
        (tmp_path / "t.o").unlink(missing_ok=True)
        done = approxcc("-c", "t.c", strict, cwd=tmp_path)
        assert (done.returncode, done.stderr) == (1, WARNING.format("error", "-Werror,") +
                                                  "1 error generated.\n")
        assert not (tmp_path / "t.o").exists()
    done = approxcc("-c", "t.c", "-Werror", "-Wno-error=approx-exact-knob", cwd=tmp_path)
    assert done.returncode == 0


def test_one_count_per_translation_unit(tmp_path: Path):
    """clang's "N warnings and M errors generated." after each unit; none for a link error."""
    write(tmp_path, "t.c", EXACT)
    write(tmp_path, "u.c", EXACT.replace("f(", "g(").replace("knob(k)", "knob(k2)"))
    config(tmp_path, k=2)
    done = approxcc("-c", "t.c", "u.c", "-fapprox-config=c.json", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(WARNING.format("warning", ""))
    assert "error: knob 'k': value 2 is outside its domain [1]" in done.stderr
    assert done.stderr.endswith("1 warning and 1 error generated.\n")
    assert "u.c" not in done.stderr  # no output, nor another unit, after an error
    done = approxcc("-c", "u.c", cwd=tmp_path)
    assert done.stderr.endswith("1 warning generated.\n") and done.returncode == 0


def test_clang_warnings_go_through_the_same_place(tmp_path: Path):
    write(tmp_path, "t.c", "int f(void) {\n  int unused;\n  return 0;\n}\n")
    done = approxcc("-c", "t.c", "-Wall", "-fapprox-mlir=all", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr.startswith("t.c:2:7: warning: unused variable 'unused' "
                                  "[-Wunused-variable]\n    2 |   int unused;\n")
    done = approxcc("-c", "t.c", "-Wall", "-Werror", "-fapprox-mlir=all", cwd=tmp_path)
    assert done.returncode == 1 and "error: unused variable 'unused' [-Werror," in done.stderr


def test_no_error_downgrades_clangs_default_errors(tmp_path: Path):
    """C99 code calling undeclared functions builds with -Wno-error=..., as with cc."""
    write(tmp_path, "t.c", "int main(void) {\n  return helper();\n}\n"
                           "int helper(void) { return 0; }\n")
    done = approxcc("-c", "t.c", "-fapprox-mlir=all", cwd=tmp_path)
    assert done.returncode == 1 and "error: call to undeclared function 'helper'" in done.stderr
    done = approxcc("-c", "t.c", "-Wno-error=implicit-function-declaration",
                    "-fapprox-mlir=all", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning: call to undeclared function 'helper'" in done.stderr


def test_colour_only_when_forced_or_on_a_terminal(tmp_path: Path):
    write(tmp_path, "t.c", EXACT)
    plain = approxcc("-c", "t.c", "-fapprox-mlir=all", cwd=tmp_path).stderr
    assert "\x1b[" not in plain
    assert "\x1b[" not in approxcc("-c", "t.c", "-fdiagnostics-color=always",
                                   "-fdiagnostics-color=never", "-fapprox-mlir=all",
                                   cwd=tmp_path).stderr
    coloured = approxcc("-c", "t.c", "-fdiagnostics-color=always", "-fapprox-mlir=all",
                        cwd=tmp_path).stderr
    assert coloured.startswith("\x1b[1mt.c:3:18: \x1b[0m\x1b[0;1;35mwarning: \x1b[0m\x1b[1m")
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    error = approxcc("-bogus", "-fdiagnostics-color=always", "-fapprox-mlir=all",
                     cwd=tmp_path).stderr
    assert "\x1b[0;1;31merror: " in error


@pytest.mark.parametrize("args,expected", [
    (["-bogus", "t.c"], "approxcc: error: unknown argument: '-bogus'\n"),
    (["-emit-llmv", "-S", "t.c"],
     "approxcc: error: unknown argument: '-emit-llmv'; did you mean '-emit-llvm'?\n"),
    (["missing.c"], "approxcc: error: no such file or directory: 'missing.c'\n"),
    (["-c", "t.c", "u.c", "-o", "x.o"],
     "approxcc: error: cannot specify -o when generating multiple output files\n"),
    (["t.c", "-fapprox-config=c.json", "-fapprox-tunable"],
     "approxcc: error: -fapprox-config builds one configuration, -fapprox-tunable all of "
     "them: choose one\n"),
    ([], "approxcc: error: no input files\n"),
], ids=["unknown", "did-you-mean", "missing-file", "multiple-outputs", "config-and-tunable",
        "no-input"])
def test_command_line_diagnostics(tmp_path: Path, args: list[str], expected: str):
    write(tmp_path, "t.c", "int f(void) { return 0; }\n")
    write(tmp_path, "u.c", "int g(void) { return 0; }\n")
    # approxcc's own table reads the command line (-fapprox-mlir=all): without an approxcc
    # flag or annotation the system compiler reads it (test_system_compiler_takes_...)
    done = approxcc(*(args or ["-w"]), "-fapprox-mlir=all", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, expected)


def test_bad_configuration(kernel: Path):
    write(kernel, "c.json", '{"approxcc": "1",\n "knobs": {"terms": {"value": 2,}}}\n')
    done = approxcc("k.c", "-fapprox-config=c.json", "-o", "k", cwd=kernel)
    assert done.returncode == 1
    assert done.stderr.startswith("c.json:2:33: error: malformed configuration: ")
    assert done.stderr.endswith('    2 |  "knobs": {"terms": {"value": 2,}}}\n'
                                "      |                                 ^\n"
                                "1 error generated.\n")
    config(kernel, terms=3)
    done = approxcc("k.c", "--config", "c.json", "-o", "k", cwd=kernel)
    assert done.returncode == 1
    assert done.stderr.startswith("c.json:4:3: error: knob 'terms': value 3 is outside its "
                                  "domain [1, 2, 4]\n")
    assert not (kernel / "k").exists()


def test_configuration_that_is_not_utf8(kernel: Path):
    (kernel / "c.json").write_bytes(b'{"approxcc": "1",\n "knobs": {"caf\xe9": {"value": 2}}}\n')
    done = approxcc("k.c", "-fapprox-config=c.json", "-o", "k", cwd=kernel)
    assert done.returncode == 1
    assert done.stderr.startswith("c.json:2:16: error: invalid UTF-8 in configuration (byte "
                                  "0xe9)\n"), done.stderr
    assert "Traceback" not in done.stderr and not (kernel / "k").exists()


def test_python_models_go_to_the_ml_build_which_c_builds_never_import(kernel: Path):
    write(kernel, "model.py", "")
    done = approxcc("build", "model.py", "-o", "out", "--target=cpu,cuda", "-###", cwd=kernel)
    assert done.returncode == 0, done.stderr
    jobs = [line for line in done.stderr.splitlines() if line.startswith(" ")]
    assert len(jobs) == 1 and jobs[0].endswith(" -cc1 ml-build model.py -o out "
                                               "--target=cpu,cuda")
    done = approxcc("model.py", "k.c", cwd=kernel)
    assert done.stderr == "approxcc: error: a .py model is built alone: one model per command\n"
    probe = ("import sys; from approxcc.driver.build import main; status = main(['-c', 'k.c']); "
             "print(status, [m for m in sys.modules if m.startswith(('jax', 'approxcc.ml'))])")
    done = subprocess.run([sys.executable, "-c", probe], cwd=kernel, capture_output=True,
                          text=True, timeout=300)
    assert done.stdout == "0 []\n", done.stderr
