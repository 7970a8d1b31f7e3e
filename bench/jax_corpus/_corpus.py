"""The corpus of outside JAX programs (bench/jax_corpus.toml): where their code is copied to
and how a wrapper imports it. Shared by the wrappers (`use`) and bench/jax_bench.py
(`materialize`).

A program's files are copied, at its commit, out of a git directory of its repository
(`find_git_dir`) into SRC/<owner>+<name>@<commit[:12]>/, same paths; SRC is
build/bench-jax/src, or $JAX_CORPUS_SRC. Nothing of that code is committed here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "bench" / "jax_corpus.toml"
WRAPPERS = Path(__file__).resolve().parent


def programs() -> list[dict[str, Any]]:
    with TABLE.open("rb") as f:
        return tomllib.load(f)["program"]


def program(name: str) -> dict[str, Any]:
    for p in programs():
        if p["name"] == name:
            return p
    raise KeyError(f"no program '{name}' in {TABLE}")


def src_root() -> Path:
    return Path(os.environ.get("JAX_CORPUS_SRC", ROOT / "build" / "bench-jax" / "src"))


def source_dir(prog: dict[str, Any]) -> Path:
    return src_root() / f"{prog['repo'].replace('/', '+')}@{prog['commit'][:12]}"


def missing(prog: dict[str, Any]) -> list[str]:
    """The program's paths not yet copied."""
    where = source_dir(prog)
    return [p for p in prog["paths"] if not (where / p).is_file()]


def use(name: str) -> Path:
    """Puts program `name`'s copied sources first on sys.path (for the wrapper's imports)."""
    prog = program(name)
    where = source_dir(prog)
    if lost := missing(prog):
        raise ImportError(f"{name}: {', '.join(lost)} of {prog['repo']}@{prog['commit'][:12]} "
                          f"not in {where}: run `python bench/jax_bench.py --repos DIR "
                          f"--only {name}` once (bench/jax_corpus.toml says what DIR holds)")
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))
    return where


def find_git_dir(repos: Path, repo: str, commit: str) -> Path | None:
    """The git directory of `repo` under `repos` that has `commit`, or None."""
    owner, name = repo.split("/")
    folder = f"{owner}+{name}"
    for candidate in (repos / folder / "repo", repos / folder / ".git", repos / folder,
                      repos / name / ".git", repos / name):
        if candidate.is_dir() and _has_commit(candidate, commit):
            return candidate
    return None


def _has_commit(git_dir: Path, commit: str) -> bool:
    probe = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e",
                            f"{commit}^{{commit}}"], capture_output=True)
    return probe.returncode == 0


def materialize(prog: dict[str, Any], repos: Path | None) -> str | None:
    """Copies the program's paths at its commit into its source folder (those already there
    are kept: a commit's files do not change). None when done, else why not."""
    lost = missing(prog)
    if not lost:
        return None
    git_dir = find_git_dir(repos, prog["repo"], prog["commit"]) if repos else None
    if git_dir is None:
        return (f"no git directory of {prog['repo']} with commit {prog['commit'][:12]} under "
                f"{repos or '(no --repos)'}: clone https://github.com/{prog['repo']} there "
                f"as {prog['repo'].replace('/', '+')} (bench/jax_corpus.toml)")
    where = source_dir(prog)
    for path in lost:
        shown = subprocess.run(["git", f"--git-dir={git_dir}", "show",
                                f"{prog['commit']}:{path}"], capture_output=True)
        if shown.returncode != 0:
            return (f"{prog['repo']}@{prog['commit'][:12]} has no {path}: "
                    f"{shown.stderr.decode(errors='replace').strip()}")
        target = where / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shown.stdout)
    return None


def stub_module(name: str, **attrs: Any) -> None:
    """A placeholder module `name` when it cannot be imported: for an import a program makes
    for code the corpus does not run (nbody.py's jaxopt, for its inverse problem)."""
    import importlib.util
    import types

    if name in sys.modules or importlib.util.find_spec(name) is not None:
        return
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
