"""The approx annotation language: parsing, checking, locations, and finding targets."""

import pytest

from approxcc import registry
from approxcc.annotations import (
    ClauseExpr,
    parse_annotation,
    scan_annotations,
)
from approxcc.diagnostics import CompileError, SourceLocation


def at(line: int, col: int) -> SourceLocation:
    return SourceLocation("t.c", line, col)


def parse(text: str):
    """Parse `text` as if it began at line 1, column 1, so columns are 1-based indices."""
    return parse_annotation(text, at(1, 1))


def error_of(action) -> tuple[str, str]:
    with pytest.raises(CompileError) as info:
        action()
    diagnostic = info.value.diagnostic
    return diagnostic.message, f"{diagnostic.loc.line}:{diagnostic.loc.col}"


# -- the spec's example, both spellings ----------------------------------------------------

SPEC_EXAMPLE = r"""#include "approxrt.h"
int retrieval_confidence(const float *scores, int n);   /* user runtime library */

void score_docs(const float *q, const float *docs, float *out, int n, int d) {
  #pragma approx loop_perforate knob(score_loop) values(1:4) \
          state(retrieval_confidence(out, n)) thresholds(2) range(0:100)
  for (int i = 0; i < n; i++)
    out[i] = dot(q, docs + i * d, d);
}

// @approx func_substitute variants(dist_fast, dist_coarse)
float dist(const float *a, const float *b, int d) { return 0; }
"""


def test_spec_example_pragma_with_continuation():
    loop, dist = scan_annotations("t.c", SPEC_EXAMPLE)
    assert loop.directive == "loop_perforate"
    assert loop.loc == at(5, 18)
    assert loop.target_line == 7
    assert loop.knob == "score_loop"
    assert loop.values == (1, 2, 3, 4)
    assert loop.state == ClauseExpr("retrieval_confidence(out, n)", at(6, 17))
    assert loop.thresholds == 2 and loop.range == (0, 100)
    assert loop.check is None and loop.recover is None and loop.variants == ()
    assert dict(loop.clause_locs) == {"knob": at(5, 33), "values": at(5, 50), "state": at(6, 11),
                                      "thresholds": at(6, 47), "range": at(6, 61)}
    assert loop.dynamic and loop.threshold_count() == 2 and loop.threshold_range() == (0, 100)


def test_spec_example_structured_comment():
    dist = scan_annotations("t.c", SPEC_EXAMPLE)[1]
    assert dist.directive == "func_substitute"
    assert dist.loc == at(11, 12)
    assert dist.target_line == 12
    assert dist.variants == ("dist_fast", "dist_coarse")
    assert dist.clause_locs["variants"] == at(11, 28)
    assert dist.domain() == (0, 1, 2)
    assert not dist.dynamic and dist.threshold_count() == 0


def test_pragma_spellings_and_comment_trailers():
    source = ("\t#  pragma   approx memoize knob(m) /* why */ values(1, 3) // note\n"
              "x = f(1);\n"
              "   //@approx task_skipping knob(t) // a note inside the comment\n"
              "y();\n")
    memo, skip = scan_annotations("t.c", source)
    assert (memo.directive, memo.knob, memo.values, memo.target_line) == ("memoize", "m", (1, 3), 2)
    assert memo.loc == at(1, 21)
    assert memo.clause_locs["values"] == at(1, 47)
    assert (skip.directive, skip.knob, skip.target_line) == ("task_skipping", "t", 4)
    assert skip.loc == at(3, 14)


def test_check_and_recover_expressions():
    a = parse('task_skipping check(ok(")", \'(\')) recover(fallback(buf, n))')
    assert a.check == ClauseExpr('ok(")", \'(\')', at(1, 21))
    assert a.recover == ClauseExpr("fallback(buf, n)", at(1, 43))
    assert parse("task_skipping check( ok() ) recover( exact )").recover is None


def test_continued_expression_text_drops_the_splice():
    a = parse_annotation('memoize state(score(a,\\\n    "x\\\ny"))', at(3, 16))
    assert a.state == ClauseExpr('score(a,    "xy")', at(3, 30))


# -- targets -------------------------------------------------------------------------------

def test_stacked_annotations_share_the_next_target():
    source = """void f(void) {
  #pragma approx loop_perforate knob(a)
  // @approx loop_perforate knob(b)

  /* a block
     comment */
  #pragma omp parallel for
  #pragma approx \\
      memoize knob(c)
  // plain comment
  for (int i = 0; i < n; i++) g(i);
}
"""
    annotations = scan_annotations("t.c", source)
    assert [(a.knob, a.target_line) for a in annotations] == [("a", 11), ("b", 11), ("c", 11)]
    assert annotations[2].loc == at(9, 7)


def test_no_target_before_closing_brace_or_end_of_file():
    source = "void f(void) {\n  #pragma approx memoize\n\n}\n// @approx task_skipping\n"
    assert [a.target_line for a in scan_annotations("t.c", source)] == [0, 0]


def test_annotations_in_literals_and_comments_are_ignored():
    source = r'''/* #pragma approx memoize
#pragma approx memoize
*/
const char *s = "\
#pragma approx memoize";
const char *r = R"x(
#pragma approx memoize
)x";
int big = 1'000'000;
// @approx task_skipping
big++;
'''
    (only,) = scan_annotations("t.c", source)
    assert (only.directive, only.loc, only.target_line) == ("task_skipping", at(10, 12), 11)


def test_words_that_only_look_like_annotations():
    source = "#pragma approximate foo\n// see @approx below\n#pragma omp for\nx();\n"
    assert scan_annotations("t.c", source) == []


def test_crlf_source():
    source = "#pragma approx memoize knob(m) \\\r\n  values(2)\r\nf();\r\n"
    (a,) = scan_annotations("t.c", source)
    assert (a.knob, a.values, a.target_line) == ("m", (2,), 3)
    assert a.clause_locs["values"] == at(2, 3)


# -- the domain and its defaults -----------------------------------------------------------

def test_the_directives_are_the_registered_c_transforms():
    assert set(registry.names(c=True)) >= {"loop_perforate", "func_substitute",
                                           "task_skipping", "memoize"}
    assert {n: registry.exact_value(n) for n in registry.names(c=True)}.items() >= {
        "loop_perforate": 1, "func_substitute": 0, "task_skipping": 0, "memoize": 1}.items()
    with pytest.raises(CompileError, match="unknown approx directive 'precision'"):
        parse("precision")  # an ML-only transform has no directive


@pytest.mark.parametrize("text, domain", [
    ("loop_perforate", tuple(range(1, 9))),
    ("memoize", tuple(range(1, 9))),
    ("task_skipping", (0, 1)),
    ("func_substitute variants(f1)", (0, 1)),
    ("func_substitute variants(f1, f2, f3)", (0, 1, 2, 3)),
    ("loop_perforate values(4, 2, 4, 8)", (4, 2, 8)),
    ("memoize values( 2 : 5 )", (2, 3, 4, 5)),
    ("task_skipping values(1:1)", (1,)),
    ("func_substitute variants(f1, f2) values(0, +2)", (0, 2)),
])
def test_domain(text, domain):
    assert parse(text).domain() == domain


def test_dynamic_defaults():
    static = parse("memoize")
    assert (static.dynamic, static.threshold_count(), static.threshold_range()) == (
        False, 0, (0, 100))
    dynamic = parse("memoize state(load()) range(-5:5)")
    assert (dynamic.dynamic, dynamic.threshold_count(), dynamic.threshold_range()) == (
        True, 1, (-5, 5))


def test_annotations_are_hashable_values():
    assert parse("memoize knob(m)") == parse("memoize knob(m)")
    assert len({parse("memoize knob(m)"), parse("memoize knob(m)")}) == 1


# -- errors: message and exact line:col ----------------------------------------------------

ERRORS = [
    ("", "expected an approx directive (one of func_substitute, loop_perforate, "
         "memoize, task_skipping)", "1:1"),
    ("   (", "expected an approx directive (one of func_substitute, loop_perforate, "
            "memoize, task_skipping)", "1:4"),
    (" loop_perferate", "unknown approx directive 'loop_perferate'; did you mean "
                        "'loop_perforate'?", "1:2"),
    ("vectorize", "unknown approx directive 'vectorize'", "1:1"),
    ("memoize knobs(a)", "unknown clause 'knobs' in 'memoize' annotation; did you mean "
                         "'knob'?", "1:9"),
    ("memoize frobnicate(a)", "unknown clause 'frobnicate' in 'memoize' annotation", "1:9"),
    ("memoize knob a", "expected '(' after 'knob', found 'a'", "1:14"),
    ("memoize knob", "expected '(' after 'knob'", "1:13"),
    ("memoize knob(a) values(1) knob(b)", "duplicate 'knob' clause", "1:27"),
    ("memoize knob(a) ;", "extra tokens at end of approx annotation", "1:17"),
    ("memoize knob(a))", "unmatched ')'", "1:16"),
    ("memoize state(f(x)", "unmatched '(' in 'state' clause", "1:14"),
    ("memoize state(f(\"x)\")", "unmatched '(' in 'state' clause", "1:14"),
    ("memoize state(f(\"x))", "missing terminating \" character", "1:17"),
    ("memoize variants(f)", "'variants' clause is only valid on 'func_substitute', not "
                            "'memoize'", "1:9"),
    ("func_substitute knob(k)", "'func_substitute' requires a 'variants' clause", "1:1"),
    ("memoize thresholds(2)", "'thresholds' clause requires a 'state' clause", "1:9"),
    ("memoize range(0:10)", "'range' clause requires a 'state' clause", "1:9"),
    ("memoize recover(exact)", "'recover' clause requires a 'check' clause", "1:9"),
    ("memoize values()", "empty 'values' clause", "1:16"),
    ("memoize values(  )", "empty 'values' clause", "1:18"),
    ("memoize state( )", "empty 'state' clause", "1:16"),
    ("memoize check()", "empty 'check' clause", "1:15"),
    ("memoize check(c()) recover()", "empty 'recover' clause", "1:28"),
    ("memoize knob()", "empty 'knob' clause", "1:14"),
    ("memoize values(8:1)", "reversed range 8:1 in 'values' clause", "1:16"),
    ("memoize values(1, x)", "expected integer in 'values' clause, found 'x'", "1:19"),
    ("memoize values(1,,2)", "expected integer in 'values' clause", "1:18"),
    ("memoize values(1.5)", "expected integer in 'values' clause, found '1.5'", "1:16"),
    ("memoize values(1, 2:3)", "expected integer in 'values' clause, found '2:3'", "1:19"),
    ("memoize values(1:5000)", "range 1:5000 in 'values' clause is too large (at most 4096 "
                               "values)", "1:16"),
    ("memoize values(1:n)", "expected integer in 'values' clause, found 'n'", "1:18"),
    ("loop_perforate values(0:4)", "value 0 is not valid for 'loop_perforate' (must be >= 1)",
     "1:23"),
    ("memoize values(2, -1)", "value -1 is not valid for 'memoize' (must be >= 1)", "1:19"),
    ("task_skipping values(0:2)", "value 2 is not valid for 'task_skipping' (must be 0 or 1)",
     "1:24"),
    ("func_substitute variants(a, b) values(0, 3)",
     "value 3 is not valid for 'func_substitute' (must be between 0 and 2, the number of "
     "variants)", "1:42"),
    ("memoize knob(my-knob)", "invalid knob name 'my-knob' (expected a C identifier)", "1:14"),
    ("memoize knob(2fast)", "invalid knob name '2fast' (expected a C identifier)", "1:14"),
    ("func_substitute variants(a, 1b)", "invalid variant name '1b' (expected a C identifier)",
     "1:29"),
    ("func_substitute variants(a, )", "expected identifier in 'variants' clause", "1:29"),
    ("memoize state(s()) thresholds(0)", "'thresholds' must be between 1 and 4096, got 0", "1:31"),
    ("memoize state(s()) thresholds(99999999999)",
     "'thresholds' must be between 1 and 4096, got 99999999999", "1:31"),
    ("loop_perforate values(99999999999999999999999)",
     "'values' value 99999999999999999999999 does not fit in a 64-bit integer", "1:23"),
    ("memoize state(s()) thresholds(two)",
     "expected integer in 'thresholds' clause, found 'two'", "1:31"),
    ("memoize state(s()) range(9:3)", "reversed range 9:3 in 'range' clause (lower bound "
                                      "must be less than upper bound)", "1:26"),
    ("memoize state(s()) range(5:5)", "empty range 5:5 in 'range' clause (lower bound "
                                      "must be less than upper bound)", "1:26"),
    ("memoize state(s()) range(50)", "expected 'lo:hi' in 'range' clause", "1:26"),
]


@pytest.mark.parametrize("text, message, where", ERRORS)
def test_error(text, message, where):
    assert error_of(lambda: parse(text)) == (message, where)


def test_duplicate_clause_notes_the_first_one():
    with pytest.raises(CompileError) as info:
        parse("memoize knob(a) knob(b)")
    (first,) = info.value.diagnostic.notes
    assert (first.message, first.loc) == ("previous 'knob' clause is here", at(1, 9))


def test_error_on_a_continued_line():
    source = "int x;\n  #pragma approx memoize knob(m) \\\n\tvalues(1, \\\n  0)\nf();\n"
    assert error_of(lambda: scan_annotations("t.c", source)) == (
        "value 0 is not valid for 'memoize' (must be >= 1)", "4:3")


def test_error_in_structured_comment():
    source = "  // @approx memoize knob(a) bogus(1)\nf();\n"
    assert error_of(lambda: scan_annotations("t.c", source)) == (
        "unknown clause 'bogus' in 'memoize' annotation", "1:30")


def test_continued_directives_and_leading_block_comments():
    source = "#pragma approx task_skipping\n#define X \\\n  y\n/* c */ g();\n"
    assert [a.target_line for a in scan_annotations("t.c", source)] == [4]
