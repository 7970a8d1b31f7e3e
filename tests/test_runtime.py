"""runtime/approxrt.c: APPROX_CONFIG applied to the knob tables registered in `approx_knobs`.

The C programs under tests/runtime/ register their tables the way tunable builds do
(docs/approx-ir.md section 3) and print them; each test runs one with a configuration.
"""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, cc, run_binary, write_config

RUNTIME = ROOT / "runtime"
PROGRAMS = Path(__file__).resolve().parent / "runtime"

# Exact table of one_tu.c: loop | tree thresholds, decisions | ftree thresholds, decisions.
EXACT = [1, 33, 66, 1, 1, 1, 0, 0, 0, 0, 0]


def compile_program(out: Path, *sources: str) -> Path:
    """The runtime's sources and `sources` built with every warning an error."""
    cc("-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", f"-I{RUNTIME}",
       *sorted(RUNTIME.glob("*.c")), *(PROGRAMS / s for s in sources), "-o", out)
    return out


@pytest.fixture(scope="module")
def bins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("rt")
    return {
        "one": compile_program(d / "one", "one_tu.c"),
        "two": compile_program(d / "two", "two_tu_main.c", "two_tu_other.c"),
        "none": compile_program(d / "none", "no_knobs.c"),
        "badm": compile_program(d / "badm", "bad_manifest.c"),
    }


def run(binary: Path, config: str | None) -> subprocess.CompletedProcess:
    return run_binary(binary, env={"APPROX_CONFIG": config}, timeout=10)


def write(tmp_path: Path, knobs: object, name: str = "config.json", **extra: object) -> str:
    return write_config(tmp_path / name, knobs, **extra)


def table(proc: subprocess.CompletedProcess) -> list[int]:
    assert proc.returncode == 0, proc.stderr
    return [int(x) for x in proc.stdout.splitlines()[1].split()]


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def undouble(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", b))[0]


def test_no_config_keeps_exact_tables(bins: dict[str, Path]) -> None:
    proc = run(bins["one"], None)
    assert proc.stdout.splitlines()[0] == "loaded=0 ctor=1"
    assert table(proc) == EXACT
    assert table(run(bins["one"], "")) == EXACT  # empty = unset


def test_static_and_dynamic_values(bins: dict[str, Path], tmp_path: Path) -> None:
    cfg = write(tmp_path, {"loop": {"value": 3}, "tree": {"value": 4}, "ftree": {"value": -3}},
                qos={"metric": "rbo", "loss_tune": 0.02}, speedup={"tune": 2.7},
                provenance={"seed": 0, "versions": {}})
    proc = run(bins["one"], cfg)
    # ordinary constructors already see the configuration
    assert proc.stdout.splitlines()[0] == "loaded=1 ctor=3"
    assert table(proc) == [3, 33, 66, 4, 4, 4, 0, 0, -3, -3, -3]


def test_decision_trees(bins: dict[str, Path], tmp_path: Path) -> None:
    cfg = write(tmp_path, {"tree": {"thresholds": [-5, 80], "decisions": [1, 2, 4]},
                           "ftree": {"decisions": [0, 1, 0], "thresholds": [0.1, 37]}})
    t = table(run(bins["one"], cfg))
    assert t[:6] == [1, -5, 80, 1, 2, 4]
    assert [undouble(b) for b in t[6:8]] == [0.1, 37.0]
    assert t[8:] == [0, 1, 0]


@pytest.mark.parametrize("pair", [
    (-1.7976931348623157e308, 5e-324),  # extremes: most negative, smallest subnormal
    (0.1, 0.30000000000000004),
    (-2.5e-10, 3.141592653589793),
    (-0.0, 1e300),
])
def test_float_thresholds_round_trip_exactly(bins: dict[str, Path], tmp_path: Path,
                                             pair: tuple[float, float]) -> None:
    cfg = write(tmp_path, {"ftree": {"thresholds": list(pair), "decisions": [0, 0, 1]}})
    assert table(run(bins["one"], cfg))[6:8] == [bits(x) for x in pair]


def test_integral_floats_are_integer_thresholds(bins: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"knobs": {"tree": {"thresholds": [3.7e1, 80.0], "decisions": [1,1,1]},'
                    ' "ftree": {"thresholds": [-1, 9007199254740993], "decisions": [0,0,0]}}}')
    t = table(run(bins["one"], str(path)))
    assert t[1:3] == [37, 80]
    assert t[6:8] == [bits(-1.0), bits(9007199254740992.0)]  # nearest double


def test_json_syntax_coverage(bins: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(' {"program": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/ \\b\\f\\n'
                    '\\r\\t", "x": [true, false, null, -0.5e+3, 1E-2, {}, []],\r\n'
                    '\t"knobs": {"lo\\u006fp": {"value": 2}}, "approxcc": null}\n')
    assert table(run(bins["one"], str(path)))[0] == 2


def test_two_translation_units_are_both_configured(bins: dict[str, Path],
                                                   tmp_path: Path) -> None:
    cfg = write(tmp_path, {"a_loop": {"value": 3},
                           "b_tree": {"thresholds": [42], "decisions": [1, 0]},
                           "shared": {"value": 1}})
    proc = run(bins["two"], cfg)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["loaded=1", "main: 3 1", "other: 7 42 1 0 1"]
    assert run(bins["two"], None).stdout.splitlines()[1:] == ["main: 1 0", "other: 7 10 0 0 7"]


def test_program_without_knobs(bins: dict[str, Path], tmp_path: Path) -> None:
    proc = run(bins["none"], None)
    assert (proc.returncode, proc.stdout) == (0, "loaded=0 roi=1\n")
    proc = run(bins["none"], write(tmp_path, {}))
    assert (proc.returncode, proc.stdout) == (0, "loaded=1 roi=1\n")
    proc = run(bins["none"], write(tmp_path, {"loop": {"value": 1}}))
    assert proc.returncode == 2
    assert "knob 'loop': unknown knob" in proc.stderr


def expect_error(binary: Path, cfg: str, message: str) -> None:
    proc = run(binary, cfg)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""  # main never ran
    assert proc.stderr == f"approxrt: error: {cfg}: {message}\n"


DOMAIN = "[1, 2, 3, 4]"
KNOB_SHAPE = ('expected {"value": int} or {"thresholds": [...], "decisions": [...]}')


@pytest.mark.parametrize(("knobs", "message"), [
    ({"nope": {"value": 1}}, "knob 'nope': unknown knob (not in this program)"),
    ({"loop": {"value": 5}}, f"knob 'loop': value 5 is outside its domain {DOMAIN}"),
    ({"loop": {"value": 99999999999999999999}},
     f"knob 'loop': value 99999999999999999999 is outside its domain {DOMAIN}"),
    ({"loop": {"value": 2.0}}, "knob 'loop': value must be an integer"),
    ({"loop": {"value": True}}, "knob 'loop': value must be an integer"),
    ({"loop": {"value": "2"}}, "knob 'loop': value must be an integer"),
    ({"tree": {"value": 3}}, "knob 'tree': value 3 is outside its domain [1, 2, 4]"),
    ({"tree": {"thresholds": [1, 2], "decisions": [1, 3, 4]}},
     "knob 'tree': decision 3 is outside its domain [1, 2, 4]"),
    ({"tree": {"thresholds": [1, 2, 3], "decisions": [1, 2, 4, 4]}},
     "knob 'tree': knob has 2 thresholds, the configuration gives 3"),
    ({"tree": {"thresholds": [1, 2], "decisions": [1, 2]}},
     "knob 'tree': 2 thresholds need 3 decisions, got 2"),
    ({"tree": {"thresholds": [80, 37], "decisions": [1, 2, 4]}},
     "knob 'tree': thresholds [80, 37] are not strictly increasing"),
    ({"tree": {"thresholds": [5, 5], "decisions": [1, 2, 4]}},
     "knob 'tree': thresholds [5, 5] are not strictly increasing"),
    ({"ftree": {"thresholds": [0.5, 0.25], "decisions": [0, 0, 0]}},
     "knob 'ftree': thresholds [0.5, 0.25] are not strictly increasing"),
    ({"tree": {"thresholds": [1.5, 2], "decisions": [1, 2, 4]}},
     "knob 'tree': threshold 1.5 is not a 64-bit integer (the knob's state is an integer)"),
    ({"tree": {"thresholds": [1, "2"], "decisions": [1, 2, 4]}},
     "knob 'tree': \"thresholds\" must be an array of numbers"),
    ({"tree": {"thresholds": 1, "decisions": [1, 2, 4]}},
     "knob 'tree': \"thresholds\" must be an array of numbers"),
    ({"tree": {"thresholds": [1, 2], "decisions": [1, 2, None]}},
     "knob 'tree': \"decisions\" must be an array of integers"),
    ({"tree": {"thresholds": [1, 2]}}, f"knob 'tree': {KNOB_SHAPE}"),
    ({"tree": {"value": 1, "decisions": [1, 1, 1]}}, f"knob 'tree': {KNOB_SHAPE}"),
    ({"tree": []}, f"knob 'tree': {KNOB_SHAPE}"),
    ({"tree": {}}, f"knob 'tree': {KNOB_SHAPE}"),
    ({"loop": {"thresholds": [1], "decisions": [1, 2]}},
     "knob 'loop': a static knob takes {\"value\": v}, not thresholds and decisions"),
    ({"loop": {"value": 1, "comment": "x"}},
     f"knob 'loop': unknown key 'comment' ({KNOB_SHAPE})"),
])
def test_knob_errors(bins: dict[str, Path], tmp_path: Path, knobs: dict, message: str) -> None:
    expect_error(bins["one"], write(tmp_path, knobs), message)


def test_error_names_the_knob_after_valid_ones(bins: dict[str, Path], tmp_path: Path) -> None:
    cfg = write(tmp_path, {"loop": {"value": 2}, "ftree": {"value": 7}})
    expect_error(bins["one"], cfg, "knob 'ftree': value 7 is outside its domain [0, 1, -3]")


@pytest.mark.parametrize(("text", "message"), [
    ('{"knobs": {"loop": {"value": 1}}', "malformed JSON at line 1, column 33: "
                                         "expected ',' or '}'"),
    ('{"knobs": {"loop": {"value": 01}}}', "malformed JSON at line 1, column 31: "
                                           "expected ',' or '}'"),
    ('{"knobs":\n {"loop": {"value": -}}}', "malformed JSON at line 2, column 21: bad number"),
    ('{"knobs": {"lo\nop": {"value": 1}}}', "malformed JSON at line 1, column 15: "
                                            "control character in string"),
    ('{"knobs": {"loop": {"value": 1}}} x', "malformed JSON at line 1, column 35: "
                                            "trailing characters after the document"),
    ('{"knobs": {"a\\q": {}}}', "malformed JSON at line 1, column 15: bad escape in string"),
    ('{"knobs": {"a\\u12": {}}}', "malformed JSON at line 1, column 16: bad \\u escape"),
    ('{"knobs": [tru]}', "malformed JSON at line 1, column 12: unexpected character"),
    ('{"knobs": {1: 2}}', "malformed JSON at line 1, column 12: expected a string key"),
    ('{"knobs" {}}', "malformed JSON at line 1, column 10: expected ':'"),
    ('"unterminated', "malformed JSON at line 1, column 14: unterminated string"),
    ("", "malformed JSON at line 1, column 1: unexpected end of file"),
    ("[" * 100000, "malformed JSON at line 1, column 129: nested too deeply"),
    ('{"knobs": {"loop": {"value": 1}}}\0', "malformed JSON at line 1, column 34: "
                                            "trailing characters after the document"),
    ("[1, 2]", "configuration must be a JSON object"),
    ('{"program": "t"}', 'configuration needs a "knobs" object'),
    ('{"knobs": [1]}', 'configuration needs a "knobs" object'),
    ('{"knobs": {"loop": {"value": 1}, "loop": {"value": 2}}}', "knob 'loop': configured twice"),
    ('{"knobs": {"loop": {"value": 1, "value": 2}}}', "knob 'loop': duplicate key 'value'"),
])
def test_file_errors(bins: dict[str, Path], tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    expect_error(bins["one"], str(path), message)


def test_unreadable_file(bins: dict[str, Path], tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")
    expect_error(bins["one"], missing, "cannot read configuration: No such file or directory")
    expect_error(bins["one"], str(tmp_path), "cannot read configuration: Is a directory")


def test_garbage_never_crashes_or_hangs(bins: dict[str, Path], tmp_path: Path) -> None:
    good = json.dumps({"knobs": {"tree": {"thresholds": [1.5e3, 2e3], "decisions": [1, 2, 4]},
                                 "loop": {"value": 2}, "x\u00e9": [None, True, "\\\""]}})
    path = tmp_path / "c.json"
    for cut in range(len(good)):  # every prefix, and every prefix with one byte flipped
        for text in (good[:cut], good[:cut] + "\x01" + good[cut + 1:]):
            path.write_text(text)
            proc = run(bins["one"], str(path))
            assert proc.returncode == 2, text
            assert proc.stderr.startswith(f"approxrt: error: {path}: ")
            assert proc.stderr.count("\n") == 1


def test_malformed_manifest(bins: dict[str, Path], tmp_path: Path) -> None:
    assert run(bins["badm"], None).stdout == "loaded=0 table=1\n"
    expect_error(bins["badm"], write(tmp_path, {}),
                 "malformed knob manifest line 'loop 0 sometimes 1,2': expected "
                 "'NAME SLOT static VALUES' or 'NAME SLOT dynamic N STATE_KIND VALUES'")
