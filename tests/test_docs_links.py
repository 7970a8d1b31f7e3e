"""Every relative link and repository path the documentation cites exists.

Checked: in each git-tracked Markdown file of docs/ and each README, every relative link
`[text](path#anchor)` (the file or folder, and the anchor's heading when the target is a
Markdown file) and every repository path, in prose, inline code or a code block; in the
docstrings and comments of the Python files of approxcc/, bench/, examples/, tests/ and
workloads/, every repository path. A repository path is a token whose first component is a
top-level folder of the checkout (`bench/ml_decode.py`, `runtime/approxrt.c`) and whose last
has a file suffix; globs (`*`) and placeholders (`<name>`, `{x}`, `$VAR`) are not paths, and
neither is a path under a folder git does not track (build/, .venv/). A path is there when
it exists and git does not ignore it. All failures are reported at once, as `file:line:
what`.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import subprocess
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Python sources whose docstrings and comments are checked.
PYTHON_FOLDERS = ("approxcc/", "bench/", "examples/", "tests/", "workloads/")

# Paths cited on purpose although they do not exist in a checkout (a folder: everything under
# it), each with the reason. Keep it short.
ALLOWED: dict[str, str] = {
    "examples/tune/tuned/": "what `approxcc tune examples/tune` writes (configs, results.db); "
                            "the commands in the docs make it, git does not track it",
    "examples/ml_tune/tuned/": "what `approxcc tune examples/ml_tune` writes, the same way",
}

def _git_files(*args: str) -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z", *args], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return [p for p in done.stdout.split("\0") if p]


@cache
def _tracked() -> tuple[str, ...]:
    return tuple(_git_files())


@cache
def _present() -> frozenset[str]:
    """Repository-relative files and folders that git tracks or would track (not ignored)."""
    files = set(_tracked()) | set(_git_files("--others", "--exclude-standard"))
    folders = {str(Path(f).parent) for f in files}
    for folder in list(folders):
        folders.update(str(p) for p in Path(folder).parents)
    return frozenset(files | folders)


def _exists(rel: str) -> bool:
    """`rel` (repository-relative, normalised) exists and is not ignored by git."""
    if any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in ALLOWED):
        return True
    path = ROOT / rel
    if not path.exists():
        return False
    if rel in _present():
        return True
    # Through a tracked link (approxcc/runtime -> ../runtime): judge where it leads.
    try:
        real = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return False
    return real in _present()


@cache
def _top_folders() -> tuple[str, ...]:
    return tuple(sorted({f.split("/", 1)[0] for f in _tracked() if "/" in f}))


@cache
def _path_re() -> re.Pattern[str]:
    """A repository path: a top-level folder, then components, the last with a suffix."""
    tops = "|".join(re.escape(t) for t in _top_folders())
    return re.compile(
        rf"(?<![\w./~$<>{{}}*-])(?:\./)?((?:{tops})/(?:[\w.+-]+/)*[\w+-][\w.+-]*\.[A-Za-z]\w*)"
        rf"(?![\w/*<>{{}}$-])")


def _cited_paths(text: str) -> list[str]:
    return [m.group(1) for m in _path_re().finditer(text)]


# --- Markdown ------------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!\\)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)


def _markdown_files() -> list[str]:
    return [f for f in _tracked() if f.endswith(".md")
            and (f.startswith("docs/") or f == "README.md" or f.endswith("/README.md"))]


def _lines(rel: str) -> list[tuple[int, str, bool]]:
    """(line number, text, inside a fenced code block) for each line of a Markdown file."""
    out, fenced = [], False
    for number, line in enumerate((ROOT / rel).read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            out.append((number, line, True))
            continue
        out.append((number, line, fenced))
    return out


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lowercased, punctuation dropped,
    spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # links: their text
    text = re.sub(r"<[^>]+>", "", text)                          # inline HTML
    text = re.sub(r"(`+)(.+?)\1", r"\2", text)                   # code spans: their text
    text = re.sub(r"(\*\*|__|\*|(?<!\w)_(?=\S)|(?<=\S)_(?!\w))", "", text)  # emphasis marks
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def _anchors(rel: str) -> frozenset[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for _, line, fenced in _lines(rel):
        anchors.update(HTML_ANCHOR.findall(line))
        if fenced:
            continue
        match = HEADING.match(line)
        if not match:
            continue
        slug = _slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return frozenset(anchors)


def _check_link(rel: str, target: str) -> str | None:
    """What is wrong with the link `target` in the Markdown file `rel`, or None."""
    if re.match(r"^[a-zA-Z][\w+.-]*:", target) or target.startswith("//"):
        return None                                   # http:, https:, mailto: ...
    path, _, anchor = target.partition("#")
    path = path.split("?", 1)[0]
    if path.startswith("/"):
        resolved = posixpath.normpath(path.lstrip("/"))
    elif path:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
    else:
        resolved = rel
    if resolved.startswith("../") or resolved == "..":
        return f"link {target} leaves the repository"
    if not _exists(resolved):
        return f"link {target}: no {resolved}"
    if anchor and resolved.endswith(".md") and (ROOT / resolved).is_file():
        if anchor.lower() not in _anchors(resolved):
            return f"link {target}: no heading #{anchor} in {resolved}"
    return None


def _markdown_problems(rel: str) -> list[str]:
    problems = []
    for number, line, fenced in _lines(rel):
        where = f"{rel}:{number}"
        if not fenced:
            for target in LINK.findall(line) + REFERENCE.findall(line):
                problem = _check_link(rel, target)
                if problem:
                    problems.append(f"{where}: {problem}")
        problems += [f"{where}: missing path {p}" for p in _cited_paths(line)
                     if not _exists(posixpath.normpath(p))]
    return problems


# --- Python --------------------------------------------------------------------------------


def _python_texts(rel: str) -> list[tuple[int, str]]:
    """(first line, text) of each docstring and comment of a Python file."""
    source = (ROOT / rel).read_text(encoding="utf-8")
    texts = []
    for node in ast.walk(ast.parse(source, rel)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                start = body[0].lineno
                for offset, line in enumerate(body[0].value.value.splitlines()):
                    texts.append((start + offset, line))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            texts.append((token.start[0], token.string))
    return texts


def _python_problems(rel: str) -> list[str]:
    return [f"{rel}:{number}: missing path {p}"
            for number, text in _python_texts(rel) for p in _cited_paths(text)
            if not _exists(posixpath.normpath(p))]


# --- the test ------------------------------------------------------------------------------


def test_docs_links_and_paths_exist() -> None:
    markdown = _markdown_files()
    python = [f for f in _tracked() if f.endswith(".py") and f.startswith(PYTHON_FOLDERS)
              and (ROOT / f).is_file()]
    assert "README.md" in markdown and "docs/README.md" in markdown
    problems = [p for rel in markdown for p in _markdown_problems(rel)]
    problems += [p for rel in python for p in _python_problems(rel)]
    assert not problems, (f"{len(problems)} broken links or paths:\n" + "\n".join(problems))


def test_checker_sees_what_it_should() -> None:
    """The checker itself: paths, non-paths and slugs."""
    assert _cited_paths("see `bench/ml_decode.py` and runtime/approxrt.c:12") == [
        "bench/ml_decode.py", "runtime/approxrt.c"]
    assert _cited_paths("tests/test_ml.py::test_x, ./docs/tuning.md.") == [
        "tests/test_ml.py", "docs/tuning.md"]
    for not_a_path in ("build/out/x.o", "examples/*/README.md", "examples/<name>/main.c",
                       "/tmp/docs/x.md", "approxcc.driver.jobs", "docs/", "bench/ml_",
                       "~/bench/x.py", "$DIR/bench/x.py", "examples/{a,b}/x.c"):
        assert _cited_paths(not_a_path) == [], not_a_path
    assert _slug("A 5-minute tour") == "a-5-minute-tour"
    assert _slug("`approxcc tune`: the search (C/C++)") == "approxcc-tune-the-search-cc"
    assert _slug("[Links](x.md) and *emphasis*") == "links-and-emphasis"
    assert _exists("approxcc/runtime/approxrt.c")
    assert not _exists("bench/no_such_file.py")
    assert _check_link("docs/README.md", "tuning.md") is None
    assert _check_link("docs/README.md", "https://example.com/x.md") is None
    assert _check_link("docs/README.md", "../README.md#a-5-minute-tour") is None
    assert _check_link("docs/README.md", "../README.md#no-such-heading") is not None
    assert _check_link("docs/README.md", "no_such.md") is not None
