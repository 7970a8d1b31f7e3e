"""Code without annotations is the system compiler's: same flags, same result
(driver/passthrough.py); in an annotated file only the annotated functions go through MLIR,
and both halves see one compiler identity."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import approxcc_ok, cc, output_of, run_approxcc, run_binary

PLAIN = "#include <stdio.h>\nint main(void) { puts(\"plain\"); return 0; }\n"


def system(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["cc", *args], cwd=cwd, capture_output=True, text=True)


def test_an_unannotated_file_compiles_to_the_system_compilers_object(tmp_path: Path):
    (tmp_path / "p.c").write_text(PLAIN)
    approxcc_ok("-O2", "-g", "-c", "p.c", "-o", "a.o", cwd=tmp_path)
    cc("-O2", "-g", "-c", "p.c", "-o", "b.o", cwd=tmp_path)
    assert (tmp_path / "a.o").read_bytes() == (tmp_path / "b.o").read_bytes()


def test_queries_and_modes_the_system_compiler_answers(tmp_path: Path):
    (tmp_path / "p.c").write_text(PLAIN)
    for args in (["-dumpversion"], ["-dumpmachine"], ["-print-prog-name=ld"],
                 ["-print-file-name=libc.so"], ["-M", "p.c"], ["-MM", "p.c"],
                 ["-dM", "-E", "p.c"]):
        done = run_approxcc(args, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, system(*args, cwd=tmp_path).stdout), args
    assert run_approxcc(["-fsyntax-only", "p.c"], cwd=tmp_path).returncode == 0
    assert run_approxcc(["-H", "-c", "p.c"], cwd=tmp_path).stderr.startswith(". /usr/include")
    (tmp_path / "args.rsp").write_text("p.c -o from_rsp\n")
    approxcc_ok("@args.rsp", cwd=tmp_path)
    assert output_of(tmp_path / "from_rsp") == "plain\n"
    done = run_approxcc(["-x", "c", "-", "-o", "from_stdin"], cwd=tmp_path,
                        input=PLAIN)
    assert done.returncode == 0, done.stderr
    assert output_of(tmp_path / "from_stdin") == "plain\n"


def test_version_names_approxcc_and_the_system_compiler(tmp_path: Path):
    done = run_approxcc(["--version"], cwd=tmp_path)
    first = system("--version", cwd=tmp_path).stdout.splitlines()[0]
    assert done.stdout.startswith("approxcc version ") and first in done.stdout


def test_verbose_without_inputs_shows_the_system_compilers_identity(tmp_path: Path):
    """configure scripts grep `$CC -v` for gcc or clang, also with approxcc flags in CC."""
    (tmp_path / "c.json").write_text('{"knobs": {}}')
    done = run_approxcc(["-fapprox-config=c.json", "-v"], cwd=tmp_path)
    identity = system("-v", cwd=tmp_path).stderr.splitlines()[-1]
    assert done.returncode == 0 and done.stderr.startswith("approxcc version ")
    assert identity in done.stderr


def test_the_console_script_hands_plain_command_lines_to_the_system_compiler(tmp_path: Path):
    """The installed `approxcc` execs cc for a plain command line (driver/passthrough.py,
    approxcc/launch.py) and runs approxcc's own subcommands."""
    from approxcc.cli import cli
    from approxcc.launch import SUBCOMMANDS

    assert set(cli.commands) <= SUBCOMMANDS
    script = Path(sys.executable).parent / "approxcc"
    (tmp_path / "p.c").write_text(PLAIN)
    subprocess.run([script, "-O2", "-c", "p.c", "-o", "a.o"], cwd=tmp_path, check=True)
    cc("-O2", "-c", "p.c", "-o", "b.o", cwd=tmp_path)
    assert (tmp_path / "a.o").read_bytes() == (tmp_path / "b.o").read_bytes()
    failed = subprocess.run([script, "-c", "missing.c"], cwd=tmp_path, capture_output=True,
                            text=True)
    assert failed.returncode == system("-c", "missing.c", cwd=tmp_path).returncode != 0
    assert "missing.c" in failed.stderr
    helped = subprocess.run([script, "opt", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--pass-pipeline" in helped.stdout


def test_unknown_flags_are_the_system_compilers_to_judge(tmp_path: Path):
    (tmp_path / "p.c").write_text(PLAIN)
    done = run_approxcc(["-c", "p.c", "-fno-such-flag"], cwd=tmp_path)
    assert done.returncode == 1
    assert "unrecognized command-line option" in done.stderr and "-fno-such-flag" in done.stderr


ANNOTATED = r"""#include <stdio.h>
struct s {
  int a;
#ifdef __clang__
  double only_for_clang;
#endif
};
static int sq(int x) { return x * x; }
int layout(void) { return (int)sizeof(struct s); }
int sum(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(k) values(1:4)
  for (int i = 0; i < n; i++) s += sq(i) + (int)sizeof(struct s);
  return s;
}
int main(void) {
  printf("%d %d\n", sum(10), layout());
  return 0;
}
"""


def test_only_annotated_functions_go_through_mlir(tmp_path: Path):
    (tmp_path / "a.c").write_text(ANNOTATED)
    approxcc_ok("a.c", "-save-temps", "-o", "a", cwd=tmp_path)
    core = (tmp_path / "a.core.mlir").read_text()
    assert 'sym_name = "sum"' in core and 'sym_name = "sq"' in core  # sq: a private copy
    assert 'sym_name = "main"' not in core and 'sym_name = "layout"' not in core
    cc("-O2", "a.c", "-o", "ref", cwd=tmp_path)
    assert output_of(tmp_path / "a") == output_of(tmp_path / "ref") == "325 4\n"


def test_the_file_macros_describe_the_users_source(tmp_path: Path):
    """In the part of an annotated file the system compiler compiles (main, here),
    __BASE_FILE__, __FILE__ and __FILE_NAME__ name the user's source and __TIMESTAMP__ is
    its modification time, as with cc (not the remainder's temporary file), without a
    warning under -Werror."""
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "a.c"
    source.write_text(ANNOTATED.replace(
        'printf("%d %d\\n", sum(10), layout());',
        'printf("%d %d %s %s %s %s\\n", sum(10), layout(), __BASE_FILE__, __FILE__, '
        '__FILE_NAME__, __TIMESTAMP__);'))
    os.utime(source, (1577934245, 1577934245))  # 2020-01-02
    cc("-O2", "src/a.c", "-o", "ref", cwd=tmp_path)
    done = approxcc_ok("-Wall", "-Werror", "src/a.c", "-o", "a", cwd=tmp_path)
    assert done.stderr == ""
    assert output_of(tmp_path / "a") == output_of(tmp_path / "ref")
    assert output_of(tmp_path / "a").startswith("325 4 src/a.c src/a.c a.c ")
    assert " 2020\n" in output_of(tmp_path / "a")


def test_gcc_warning_flags_are_taken_in_an_annotated_file(tmp_path: Path):
    """gcc's -W flags that clang does not know are the system compiler's: no warning about
    them from the frontend's parse."""
    (tmp_path / "a.c").write_text(ANNOTATED)
    done = run_approxcc(["-c", "a.c", "-Wall", "-Wlogical-op", "-Wno-stringop-truncation"],
                        cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")


def test_knob_objects_in_a_library_pull_in_the_runtime(tmp_path: Path):
    """A program linked from plain objects and a library of objects with knobs: the link
    (the system compiler's) takes the runtime archive because the library uses it."""
    (tmp_path / "k.c").write_text(ANNOTATED.replace("int main(void)", "int unused_main(void)"))
    (tmp_path / "m.c").write_text('#include <stdio.h>\nint sum(int);\n'
                                  'int main(void) { printf("%d\\n", sum(4)); return 0; }\n')
    approxcc_ok("-c", "k.c", "-o", "k.o", cwd=tmp_path)
    subprocess.run(["ar", "rcs", "libk.a", "k.o"], cwd=tmp_path, check=True)
    approxcc_ok("m.c", "-L.", "-lk", "-o", "m", cwd=tmp_path)
    assert run_binary(tmp_path / "m").stdout == "30\n"


def test_response_files_with_approxcc_flags(tmp_path: Path):
    """`@FILE` is read by approxcc's own driver too (a command line with approxcc flags)."""
    (tmp_path / "a.c").write_text(ANNOTATED)
    (tmp_path / "c.json").write_text('{"knobs": {"k": {"value": 2}}}')
    (tmp_path / "args.rsp").write_text("a.c -o a -fapprox-config=c.json\n")
    approxcc_ok("@args.rsp", cwd=tmp_path)
    assert output_of(tmp_path / "a") == "140 4\n"  # every second i: 0, 2, 4, 6, 8
