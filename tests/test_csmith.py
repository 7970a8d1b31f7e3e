"""Csmith programs (bench/csmith.py) in CI: a fixed set of small programs built by approxcc
and by `cc -O2` print the same checksum, in the default mode and with every function through
MLIR and an exact annotation inserted; `make csmith` runs the campaign.

The seeds are ones approxcc gets right: a program that exposes a bug becomes its own reduced
regression test (tests/test_csmith_regressions.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import csmith  # noqa: E402

DEFAULT_SEEDS = (1, 2, 3, 4, 5, 6)
ANNOTATED_SEEDS = (3, 4, 5)   # loop_perforate, memoize, task_skipping

pytestmark = pytest.mark.skipif(bool(csmith.missing_tools()),
                                reason=f"needs {', '.join(csmith.missing_tools())} "
                                       "(make csmith-deps installs them)")


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> csmith.Settings:
    include = csmith.csmith_include()
    assert include is not None
    return csmith.Settings(csmith.approxcc_command(), include,
                           tmp_path_factory.mktemp("csmith"), list(csmith.SMALL),
                           timeout=10, build_timeout=300, sites=4)


def _no_bugs(results: list[csmith.Result], seeds: tuple[int, ...], modes: list[str]) -> None:
    assert len(results) == len(seeds) * len(modes)
    bad = [f"seed {r.seed} {r.mode}: {r.outcome} {r.site} {r.detail}" for r in results
           if r.outcome not in ("match", "skipped", "no-site")]
    assert not bad, "\n".join(bad)
    assert sum(r.outcome == "match" for r in results) >= len(results) // 2, \
        [(r.seed, r.mode, r.outcome, r.detail) for r in results]


def test_default_mode_matches_gcc(settings: csmith.Settings, tmp_path: Path):
    """In two runs, the second resuming from the first's JSON (`--resume`): what the first
    measured is kept, not built again (its timings would differ)."""
    first = csmith.campaign(DEFAULT_SEEDS[:3], ["default"], settings, jobs=2)
    csmith.write_json(tmp_path / "first.json", first, {"seconds": 1.0})
    done, meta = csmith.read_json(tmp_path / "first.json")
    assert (done, meta["seconds"]) == (first, 1.0)
    results = csmith.campaign(DEFAULT_SEEDS, ["default"], settings, jobs=2, done=done)
    assert results[:3] == first
    _no_bugs(results, DEFAULT_SEEDS, ["default"])


def test_forced_mlir_with_an_exact_annotation_matches_gcc(settings: csmith.Settings):
    if not csmith.supports_force_mlir(settings.approxcc, settings.work / "probe"):
        pytest.skip(f"approxcc does not take {csmith.FORCE_MLIR} yet")
    results = csmith.campaign(ANNOTATED_SEEDS, ["annotated"], settings, jobs=2)
    _no_bugs(results, ANNOTATED_SEEDS, ["annotated"])
    assert any(r.site for r in results), "no annotation was placed"


# Every function through MLIR printed another checksum: the value of an assignment to a
# bit-field was the value assigned, not the field's (reduced by C-Vise:
# tests/test_csmith_regressions.py, BITFIELD_ASSIGNMENT_REDUCED).
BITFIELD_ASSIGNMENT_SEED = 200862


def test_seed_with_a_bitfield_assignment_matches_gcc(settings: csmith.Settings):
    results = csmith.campaign((BITFIELD_ASSIGNMENT_SEED,), ["all"], settings, jobs=1)
    _no_bugs(results, (BITFIELD_ASSIGNMENT_SEED,), ["all"])


def test_sites_are_deterministic_and_annotations_exact():
    source = """static int32_t g_1 = 0;
static uint8_t  func_1(void)
{
    int i;
    for (i = 0; i < 4; i++)
    {
        if (g_1)
            g_1 = 2;
    }
    for (g_1 = 3; (g_1 != 9); g_1 = safe_add_func_int32_t_s_s(g_1, 1))
        g_1 += 0;
    return 1;
}
int main (int argc, char* argv[])
{
    func_1();
    return 0;
}
"""
    sites = csmith.annotation_sites(source, 7)
    assert sites == csmith.annotation_sites(source, 7)
    assert sorted((s.directive, s.line) for s in sites) == \
        [("loop_perforate", 4), ("memoize", 1), ("task_skipping", 6)]
    annotated = csmith.annotate(source, next(s for s in sites if s.line == 4), "k_7_0")
    assert "    #pragma approx loop_perforate knob(k_7_0) values(1:4)\n    for (i = 0;" \
        in annotated


def test_a_clean_refusal_is_not_a_bug():
    refusal = csmith.Run(1, "", "t.c:3:5: error: loop cannot be counted\n", 1.0)
    assert csmith.clean_refusal(refusal)
    assert csmith.classify_build(refusal)[0] == "build-failure"  # type: ignore[index]
    ice = csmith.Run(1, "", "approxcc: error: internal compiler error: boom\n", 1.0)
    assert not csmith.clean_refusal(ice)
    assert csmith.classify_build(ice) == ("ice", "boom")
    assert csmith.classify_build(csmith.Run(0, "", "", 1.0)) is None


@pytest.mark.skipif(shutil.which("cvise") is None, reason="needs cvise")
def test_the_interestingness_script_accepts_the_bug_and_rejects_ub(tmp_path: Path,
                                                                   settings: csmith.Settings):
    result = csmith.Result(1, "default", "mismatch")
    script = tmp_path / "t.sh"
    script.write_text(csmith.interestingness_script("case.c", result, settings))
    script.chmod(0o755)
    # approxcc and gcc agree: not interesting
    (tmp_path / "case.c").write_text('#include <stdio.h>\nint main(void) '
                                     '{ printf("%d\\n", 6 * 7); return 0; }\n')
    assert csmith.run([script], 120, cwd=tmp_path).status != 0
    # undefined behaviour (an uninitialised read): not interesting whatever approxcc does
    (tmp_path / "case.c").write_text('#include <stdio.h>\nint main(void) '
                                     '{ int x; printf("%d\\n", x); return 0; }\n')
    assert csmith.run([script], 120, cwd=tmp_path).status != 0
