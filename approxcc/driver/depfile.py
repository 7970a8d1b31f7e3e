"""Dependency files (-MD, -MMD, -MF, -MT, -MQ, -MP): the make rule of one object.

An object is built from what two compilers read: libclang (the frontend, whose
translation unit lists every file it included) and, for the remainder (frontend/tu_split.py),
the system compiler, which writes its own rule (`-MD -MF`). The rule lists the union, so a
change to a header either of them read rebuilds the object; the remainder's temporary source
is replaced by the real one. A configuration (`-fapprox-config`) is a dependency too: its
values are compiled into the object. With -MMD, system headers are left out, as clang does.
"""

from __future__ import annotations

from pathlib import Path

from clang.cindex import TranslationUnit

from approxcc.driver.options import DependencyOptions


def included_files(tu: TranslationUnit, system_headers: bool) -> list[str]:
    """The files the translation unit included, in inclusion order, each once."""
    seen: dict[str, None] = {}
    for inclusion in tu.get_includes():
        name = inclusion.include.name
        if name in seen or not system_headers and \
                tu.get_location(name, (1, 1)).is_in_system_header:
            continue
        seen[name] = None
    return [_plain(n) for n in seen]


def read_rule(path: Path) -> list[str]:
    """The prerequisites of a make rule written by a compiler (`target: prereq ...`)."""
    text = path.read_text().replace("\\\n", " ")
    rule = text.split("\n", 1)[0]
    _, _, prereqs = _split_target(rule)
    return [w.replace("\\ ", " ").replace("\\#", "#").replace("$$", "$")
            for w in _words(prereqs)]


def _split_target(rule: str) -> tuple[str, str, str]:
    """`target: prereqs`, the colon not being a drive letter or escaped."""
    for i, ch in enumerate(rule):
        if ch == ":" and (i + 1 == len(rule) or rule[i + 1] in " \t") and rule[i - 1] != "\\":
            return rule[:i], ":", rule[i + 1:]
    return rule, "", ""


def _words(text: str) -> list[str]:
    words, current, escaped = [], "", False
    for ch in text:
        if escaped:
            current += "\\" + ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in " \t":
            if current:
                words.append(current)
            current = ""
        else:
            current += ch
    return words + [current] * bool(current)


def _plain(name: str) -> str:
    return name[2:] if name.startswith("./") else name


def _escape(name: str) -> str:
    return name.replace("$", "$$").replace("#", "\\#").replace(" ", "\\ ")


def write(deps: DependencyOptions, path: str, target: str, source: str,
          prerequisites: list[str]) -> None:
    """The rule `target: source prerequisites...` (and with -MP an empty rule per header)."""
    ordered = list(dict.fromkeys([_plain(source), *map(_plain, prerequisites)]))
    targets = " ".join(deps.targets) if deps.targets else _escape(target)
    lines = [f"{targets}:"] + [f"  {_escape(p)}" for p in ordered]
    text = " \\\n".join(lines) + "\n"
    if deps.phony:
        text += "".join(f"\n{_escape(p)}:\n" for p in ordered[1:])
    Path(path).write_text(text)
