"""The transform registry: one declaration per transform, read by every layer.

The main test adds a transform the project does not have, in ONE new file outside the
package (a plugin module named in $APPROXCC_TRANSFORMS), and then compiles a C program that
uses its directive, runs it, and tunes it with `approxcc tune`: real builds, real runs, real
OpenTuner. Nothing else is touched.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, approxcc_ok, output_of, run_approxcc, write_config

from approxcc import registry
from approxcc.tune.space import Knob

# The whole transform: declaration + rewrite pattern. `loop_truncate` v runs the first
# ceil(n / v) iterations of a counted loop (the frontend normalizes it to 0..trip step 1).
PLUGIN = '''\
"""loop_truncate: run only the first ceil(n/v) iterations of a counted loop."""

from xdsl.dialects.arith import AddiOp, CeilDivUIOp, ConstantOp, IndexCastOp, SubiOp
from xdsl.dialects.builtin import IndexType
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from approxcc.dialect import TransformOp
from approxcc.registry import KnobDomain, TransformSpec, register
from approxcc.transforms.loop_perforate import target_loop, verify_has_loop


class TruncateLoop(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, transform: TransformOp, rewriter: PatternRewriter, /) -> None:
        loop = target_loop(transform)
        value = transform.transform_value
        if value is not None and value.value.data == 1:
            rewriter.erase(transform)
            return
        at = InsertPoint.before(loop)
        if value is not None:
            factor = rewriter.insert(ConstantOp.from_int_and_width(value.value.data,
                                                                   loop.ub.type), at).result
        else:
            factor = transform.dynamic_value
            if not isinstance(loop.ub.type, IndexType):
                factor = rewriter.insert(IndexCastOp(factor, loop.ub.type), at).result
        trip = rewriter.insert(SubiOp(loop.ub, loop.lb), at).result
        kept = rewriter.insert(CeilDivUIOp(trip, factor), at).result
        loop.operands[1] = rewriter.insert(AddiOp(loop.lb, kept), at).result
        rewriter.notify_op_modified(loop)
        rewriter.erase(transform)


register(TransformSpec(
    name="loop_truncate",
    value_meaning="run the first ceil(n/v) iterations; `1` = exact",
    exact=1,
    targets=frozenset({"loop"}),
    domain=KnobDomain(least=1, default=(1, 4)),
    verify=verify_has_loop,
    pattern=TruncateLoop(),
))
'''

PROGRAM = """\
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r");
  int n = 0;
  if (!f || fscanf(f, "%d", &n) != 1) return 2;
  fclose(f);
  double sum = 0.0;
  #pragma approx loop_truncate knob(head)
  for (int i = 0; i < n; i++)
    sum += 1.0 / ((double)i + 1.0);
  printf("%.6f\\n", sum);
  return 0;
}
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The one file of the new transform, on the path and named in $APPROXCC_TRANSFORMS;
    the environment a child `approxcc` needs to see it too."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "approx_truncate.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(folder))
    env = {registry.ENV_VAR: "approx_truncate",
           "PYTHONPATH": f"{folder}:{ROOT}"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    yield env
    sys.modules.pop("approx_truncate", None)
    registry.unregister("loop_truncate")


def test_a_transform_in_one_file_compiles_runs_and_tunes(tmp_path: Path,
                                                          plugin: dict[str, str]) -> None:
    print("files touched to add loop_truncate:", len(list((tmp_path / "plugins").iterdir())))
    app = tmp_path / "app"
    (app / "tune").mkdir(parents=True)
    (app / "eval").mkdir()
    (app / "p.c").write_text(PROGRAM)
    for kind, sizes in (("tune", (4000, 5000)), ("eval", (6000,))):
        for size in sizes:
            (app / kind / f"{size}.txt").write_text(f"{size}\n")

    # The directive is known to the grammar, the frontend, the dialect and the lowering.
    approxcc_ok("build", "-O2", "p.c", "-o", "exact", cwd=app)
    config = write_config(app / "half.json", {"head": {"value": 2}}, program="p")
    approxcc_ok("build", "-O2", "p.c", f"-fapprox-config={config}", "-o", "half", cwd=app)
    exact = float(output_of(app / "exact", str(app / "tune" / "4000.txt")))
    half = float(output_of(app / "half", str(app / "tune" / "4000.txt")))
    assert exact == pytest.approx(sum(1 / (i + 1) for i in range(4000)), abs=1e-5)
    assert half == pytest.approx(sum(1 / (i + 1) for i in range(2000)), abs=1e-5)

    # ... and to the tuner: its space is the declared default domain 1..4.
    (app / "approx.toml").write_text(
        '[program]\nname = "p"\nsources = ["p.c"]\n'
        '[run]\nargs = ["{input}"]\ntune = ["tune/*.txt"]\neval = ["eval/*.txt"]\n'
        '[qos]\nmetric = "l2"\n')
    done = run_approxcc(["tune", str(app), "--qos-budget", "50%", "--max-evals", "4",
                         "--mode", "static", "--seed", "0"], cwd=app)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    tuned = json.loads((app / "tuned" / "50pct.json").read_text())
    print("tuned loop_truncate knob:", tuned["knobs"], tuned["qos"], tuned["speedup"])
    assert tuned["knobs"]["head"]["value"] in (1, 2, 3, 4)
    assert tuned["qos"]["loss_tune"] <= 0.5


def test_an_unknown_plugin_module_is_a_diagnostic_not_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.ENV_VAR, "no_such_transform_module")
    (tmp_path / "p.c").write_text("int main(void) {\n  int s = 0;\n"
                                  "  #pragma approx loop_perforate\n"
                                  "  for (int i = 0; i < 9; i++) s += i;\n  return s;\n}\n")
    done = run_approxcc(["build", "p.c", "-o", "p"], cwd=tmp_path)
    monkeypatch.delenv(registry.ENV_VAR)
    registry.transforms()  # forget the bad setting
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot load transform module 'no_such_transform_module'" in done.stderr


def test_one_default_per_knob_kind() -> None:
    """The tuner's default thresholds are management emission's (the issue's 3 vs 2)."""
    knob = Knob("k", "loop_perforate", (1, 2), 1, dynamic=True, thresholds=1, range=(0, 5))
    assert knob.default_thresholds() == registry.default_thresholds(1, 0, 5) == [3]
    assert Knob("k", "memoize", (1,), 1).range == registry.DEFAULT_RANGE


def test_the_reference_docs_are_generated_from_the_registry() -> None:
    """docs/transforms.md is current: regenerate it with `python -m approxcc.transforms`."""
    assert (ROOT / "docs" / "transforms.md").read_text() == registry.reference_docs()


def test_every_c_transform_declares_a_domain_and_a_pattern() -> None:
    for spec in registry.transforms():
        if spec.has_directive:
            assert spec.domain is not None and spec.pattern is not None, spec.name
            assert spec.domain.allows(spec.exact, 1), spec.name
        assert registry.get(spec.name) is spec
    with pytest.raises(ValueError, match="declared twice"):
        registry.register(registry.TransformSpec(
            "memoize", "x", 1, module="elsewhere"))
