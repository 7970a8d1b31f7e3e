"""The flags that change generated code hold for the functions approxcc compiles through
MLIR as for the rest of the file, which the system compiler compiles: -fvisibility= (and the
visibility attributes), -fsanitize=address, -g; a flag the MLIR path cannot honour is warned
about (-Wapprox-ignored-flag), never dropped silently."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import MLIR_ALL, approxcc_ok, cc, run_approxcc, run_binary, write_sources

# api_* are annotated (MLIR), plain is not (the system compiler); counter is defined by MLIR
# only with MLIR_ALL
LIBRARY = """\
int counter = 3;
static int helper(int x) { return x * 2; }

int api_hidden(int *a, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(p) values(1:2)
  for (int i = 0; i < n; i++)
    s += helper(a[i]) + counter;
  return s;
}

__attribute__((visibility("default"))) int api_default(int *a, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(q) values(1:2)
  for (int i = 0; i < n; i++)
    s += a[i];
  return s;
}

__attribute__((visibility("protected"))) int api_protected(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(r) values(1:2)
  for (int i = 0; i < n; i++)
    s += i;
  return s + helper(n);
}

#pragma GCC visibility push(default)
int pushed(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(t) values(1:2)
  for (int i = 0; i < n; i++)
    s += i;
  return s;
}
#pragma GCC visibility pop

int plain(int x) { return helper(x) + 1; }
"""
SYMBOLS = ("counter", "api_hidden", "api_default", "api_protected", "pushed", "plain")

# scale() reads one element past its heap buffer; lines 4-10 are scale's
OVERFLOW = """\
#include <stdio.h>
#include <stdlib.h>

int scale(int *a, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(p) values(1:2)
  for (int i = 0; i <= n; i++)
    s += a[i];
  return s;
}

int main(void) {
  int n = 8;
  int *a = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++) a[i] = i;
  printf("%d\\n", scale(a, n));
  free(a);
  return 0;
}
"""
SCALE_LINES = range(4, 11)


def tool(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def visibilities(obj: Path) -> dict[str, str]:
    """The defined global symbols of an ELF file and their visibility (readelf -s)."""
    out = {}
    for line in tool("readelf", "-sW", obj, cwd=obj.parent).splitlines():
        cols = line.split()
        if len(cols) == 8 and cols[4] == "GLOBAL" and cols[6] != "UND":
            out[cols[7]] = cols[5]
    return out


@pytest.mark.parametrize("visibility,flags", [("hidden", []), ("protected", [MLIR_ALL]),
                                              ("default", [])])
def test_visibility_is_what_the_system_compiler_gives(tmp_path: Path, visibility: str,
                                                      flags: list[str]):
    write_sources(tmp_path, {"lib.c": LIBRARY})
    approxcc_ok(f"-fvisibility={visibility}", "-fPIC", *flags, "-c", "lib.c", "-o", "a.o",
                cwd=tmp_path)
    cc(f"-fvisibility={visibility}", "-fPIC", "-O2", "-c", "lib.c", "-o", "b.o", cwd=tmp_path)
    got, want = visibilities(tmp_path / "a.o"), visibilities(tmp_path / "b.o")
    assert {s: got.get(s) for s in SYMBOLS} == {s: want[s] for s in SYMBOLS}
    if visibility == "hidden":
        assert got["api_hidden"] == "HIDDEN" and got["api_default"] == "DEFAULT"


def test_a_hidden_shared_library_exports_what_cc_exports(tmp_path: Path):
    write_sources(tmp_path, {"lib.c": LIBRARY})
    approxcc_ok("-fvisibility=hidden", "-fPIC", "-shared", "lib.c", "-o", "liba.so",
                cwd=tmp_path)
    cc("-fvisibility=hidden", "-fPIC", "-shared", "-O2", "lib.c", "-o", "libb.so", cwd=tmp_path)

    def exported(lib: str) -> set[str]:
        return {line.split()[-1] for line in
                tool("nm", "-D", "--defined-only", lib, cwd=tmp_path).splitlines()}

    assert exported("liba.so") == exported("libb.so") == {"api_default", "api_protected",
                                                          "pushed"}


def test_internal_functions_shared_across_the_split_stay_hidden(tmp_path: Path):
    """A `static` annotated function called from the remainder crosses the split under a link
    name: one object's, never exported from a shared library."""
    write_sources(tmp_path, {"st.c": """\
static int tab[4] = {1, 2, 3, 4};
static int work(int n) {
  int s = 0;
  #pragma approx loop_perforate knob(p) values(1:2)
  for (int i = 0; i < n; i++)
    s += tab[i & 3];
  return s;
}
int entry(int n) { return work(n) + tab[0]; }
"""})
    approxcc_ok("-fPIC", "-shared", "st.c", "-o", "libst.so", cwd=tmp_path)
    exported = tool("nm", "-D", "--defined-only", "libst.so", cwd=tmp_path)
    assert "entry" in exported and "__approx_" not in exported, exported


def _sanitizer_runs(tmp_path: Path, name: str) -> bool:
    """Whether the system compiler links and runs a program with -fsanitize=NAME."""
    (tmp_path / "probe.c").write_text("int main(void) { return 0; }\n")
    built = subprocess.run(["cc", f"-fsanitize={name}", "probe.c", "-o", "probe"],
                           cwd=tmp_path, capture_output=True)
    return built.returncode == 0 and run_binary(tmp_path / "probe").returncode == 0


def test_address_sanitizer_reports_an_overflow_in_an_annotated_function(tmp_path: Path):
    if not _sanitizer_runs(tmp_path, "address"):
        pytest.skip("the system compiler has no AddressSanitizer runtime")
    write_sources(tmp_path, {"k.c": OVERFLOW})
    approxcc_ok("-fsanitize=address", "-g", "-O2", "k.c", "-o", "approx", cwd=tmp_path)
    cc("-fsanitize=address", "-g", "-O2", "k.c", "-o", "ref", cwd=tmp_path)
    env = {"ASAN_OPTIONS": "detect_leaks=0"}
    got, want = (run_binary(tmp_path / exe, env=env) for exe in ("approx", "ref"))
    assert want.returncode != 0 and "heap-buffer-overflow" in want.stderr, want.stderr
    assert got.returncode != 0 and "heap-buffer-overflow" in got.stderr, got.stderr
    # the first frame is the annotated function, at its line (-g: the MLIR object's lines)
    frame = next(line for line in got.stderr.splitlines() if line.strip().startswith("#0"))
    assert re.search(r" in scale .*k\.c:8\b", frame), got.stderr
    # without the flag, the same program reads past the buffer unnoticed
    approxcc_ok("-O2", "k.c", "-o", "plain", cwd=tmp_path)
    assert run_binary(tmp_path / "plain").returncode == 0


def test_thread_sanitizer_reports_a_race_in_an_annotated_function(tmp_path: Path):
    if not _sanitizer_runs(tmp_path, "thread"):
        pytest.skip("no ThreadSanitizer here")
    write_sources(tmp_path, {"race.c": """\
#include <pthread.h>
#include <stdio.h>
int shared;
void bump(int n) {
  #pragma approx loop_perforate knob(p) values(1:2)
  for (int i = 0; i < n; i++)
    shared++;
}
static void *run(void *arg) { (void)arg; bump(100000); return 0; }
int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, run, 0);
  pthread_create(&t2, 0, run, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  printf("%d\\n", shared > 0);
  return 0;
}
"""})
    approxcc_ok("-fsanitize=thread", "-g", "-O1", "-pthread", "race.c", "-o", "race",
                cwd=tmp_path)
    done = run_binary(tmp_path / "race")
    assert "ThreadSanitizer: data race" in done.stderr, done.stderr
    assert re.search(r"#0 bump .*race\.c:7", done.stderr), done.stderr


def line_rows(exe: Path, function: str) -> list[tuple[str, int]]:
    """(file, line) of the line-table rows at addresses of `function`."""
    start, size = next((int(c[0], 16), int(c[1], 16)) for line in
                       tool("nm", "-S", exe, cwd=exe.parent).splitlines()
                       if (c := line.split())[-1] == function)
    rows = []
    for line in tool("objdump", "--dwarf=decodedline", exe, cwd=exe.parent).splitlines():
        cols = line.split()
        if len(cols) >= 3 and cols[1].isdigit() and re.fullmatch(r"0x[0-9a-f]+", cols[2]) \
                and start <= int(cols[2], 16) < start + size:
            rows.append((cols[0], int(cols[1])))
    return rows


def test_debug_info_maps_an_annotated_function_to_its_lines(tmp_path: Path):
    write_sources(tmp_path, {"k.c": OVERFLOW})
    approxcc_ok("-g", "-O2", "k.c", "-o", "approx", cwd=tmp_path)
    rows = [(f, n) for f, n in line_rows(tmp_path / "approx", "scale") if n]
    assert rows and {f for f, _ in rows} == {"k.c"}, rows
    assert {n for _, n in rows} <= set(SCALE_LINES), rows
    assert 8 in {n for _, n in rows}, rows  # the loop body
    start = next(line.split()[0] for line in tool("nm", "approx", cwd=tmp_path).splitlines()
                 if line.endswith(" scale"))
    name, where = tool("addr2line", "-f", "-e", "approx", f"0x{start}",
                       cwd=tmp_path).split()
    path, line = where.rsplit(":", 1)
    assert (name, Path(path), int(line) in SCALE_LINES) == ("scale", tmp_path / "k.c", True)
    approxcc_ok("-O2", "k.c", "-o", "nodebug", cwd=tmp_path)
    assert line_rows(tmp_path / "nodebug", "scale") == []
    # unoptimised, every statement has its line: the declaration, the loop, its body, return
    approxcc_ok("-g", "-O0", "k.c", "-o", "O0", cwd=tmp_path)
    assert {n for _, n in line_rows(tmp_path / "O0", "scale") if n} == {4, 5, 7, 8, 9}


def test_the_dwarf_version_asked_for_is_the_mlir_objects_too(tmp_path: Path):
    write_sources(tmp_path, {"k.c": OVERFLOW})
    approxcc_ok("-gdwarf-4", "-O2", "-c", "k.c", "-o", "k.o", cwd=tmp_path)
    info = tool("readelf", "--debug-dump=info", "k.o", cwd=tmp_path)
    versions = re.findall(r"^\s*Version:\s*(\d+)", info, re.MULTILINE)
    assert len(versions) == 2 and set(versions) == {"4"}, versions  # MLIR's unit and cc's


def test_frame_pointer_and_stack_protector_reach_mlir_functions(tmp_path: Path):
    write_sources(tmp_path, {"k.c": OVERFLOW})
    ir = approxcc_ok("-S", "-emit-llvm", "-fno-omit-frame-pointer",
                     "-fstack-protector-strong", "k.c", "-o", "-", cwd=tmp_path).stdout
    group = re.search(r"define .*@scale\(.*\) .*#(\d+)", ir)
    assert group, ir
    attributes = re.search(rf"^attributes #{group[1]} = {{(.*)}}", ir, re.MULTILINE)
    assert attributes and "sspstrong" in attributes[1] and \
        '"frame-pointer"="all"' in attributes[1], ir


def test_a_flag_the_mlir_path_cannot_honour_is_warned_about(tmp_path: Path):
    write_sources(tmp_path, {"k.c": OVERFLOW})
    done = approxcc_ok("-fsanitize=undefined", "-ffast-math", "-c", "k.c", cwd=tmp_path)
    warnings = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 2, done.stderr
    assert warnings[0].startswith("approxcc: warning: '-fsanitize=undefined' is not applied "
                                  "to the functions approxcc compiles through MLIR"), warnings
    assert warnings[1].startswith("approxcc: warning: '-ffast-math'"), warnings
    assert all(w.endswith("[-Wapprox-ignored-flag]") for w in warnings), warnings
    quiet = approxcc_ok("-fsanitize=undefined", "-Wno-approx-ignored-flag", "-c", "k.c",
                        cwd=tmp_path)
    assert "warning" not in quiet.stderr, quiet.stderr
    # what the MLIR path does honour is not warned about
    honoured = approxcc_ok("-fsanitize=address", "-fvisibility=hidden", "-g", "-c", "k.c",
                           cwd=tmp_path)
    assert "warning" not in honoured.stderr, honoured.stderr
    assert run_approxcc(["-fsanitize=undefined", "-Werror", "-c", "k.c"],
                        cwd=tmp_path).returncode == 1
