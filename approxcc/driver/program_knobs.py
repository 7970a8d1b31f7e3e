"""The knobs of a whole program, across its translation units.

The frontend checks one translation unit; the program is known only when the driver links.
Every object file approxcc writes (`-c`) therefore records its knobs, name and source
location, in a non-allocated ELF section `.approxcc.knobs` (one JSON object per line; an
assembly file joins the relocatable link of the object, and the linker concatenates the
sections of all objects, so archives and executables carry them too). At link time the
driver gathers the knobs of the translation units it compiled and of the objects it links,
and checks the program:

* a knob name defined twice is an error at the second definition, with a note at the first.
  Names written with `knob(NAME)` are checked; two default names (`FUNCTION_LINE`) that meet
  across translation units (a `static` function of one name at one line in two files) name
  one knob, as the tuner and the runtime's config table see one name: name them to tell
  them apart. One annotation in a header (a `static inline` function's) is one knob in
  every translation unit that includes it;
* a configuration (`-fapprox-config`) naming a knob that no translation unit defines is an
  error naming the knob, at its key in the configuration file.

Compiling one translation unit (`-c`, `-S`) with a configuration applies the knobs it defines
and leaves the others to the other units: unknown names are only known to be unknown when
the program is linked (with the configuration on the link command line too).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from approxcc.annotations import Annotation
from approxcc.config import load_config
from approxcc.diagnostics import CompileError, SourceLocation, note, warn
from approxcc.dialect.approx import knobs, parse_loc
from approxcc.driver import elf

SECTION = ".approxcc.knobs"


@dataclass(frozen=True)
class KnobRecord:
    name: str
    loc: SourceLocation | None
    named: bool  # written with knob(NAME), not a default name


def module_knobs(module: ModuleOp, annotations: list[Annotation]) -> list[KnobRecord]:
    """The knobs of one translation unit; its annotations tell which were named."""
    named = {a.loc for a in annotations if a.knob}
    return [KnobRecord(k.knob_name.data, k.source_loc, k.source_loc in named)
            for k in knobs(module)]


def assembly(records: list[KnobRecord]) -> str:
    """An assembly file defining the section (the bytes spelled out: any text is safe)."""
    data = "".join(json.dumps({"knob": r.name, "loc": str(r.loc) if r.loc else None,
                               "named": r.named}) + "\n" for r in records).encode()
    lines = ['\t.section .note.GNU-stack,"",%progbits',  # no executable stack
             f'\t.section {SECTION},"",%progbits']
    lines += ["\t.byte " + ",".join(map(str, data[i:i + 32])) for i in range(0, len(data), 32)]
    return "\n".join(lines) + "\n"


def object_knobs(path: str) -> list[KnobRecord]:
    """The knobs recorded in an object file, archive or shared library (none: not ours)."""
    records = []
    for blob in elf.section(Path(path), SECTION):
        for line in blob.decode(errors="replace").splitlines():
            entry = json.loads(line)
            records.append(KnobRecord(entry["knob"],
                                      parse_loc(entry["loc"]) if entry["loc"] else None,
                                      entry["named"]))
    return records


def _same_place(a: SourceLocation | None, b: SourceLocation | None) -> bool:
    """Whether two knobs are one annotation (a header's, in several translation units)."""
    return a is not None and b is not None and (a.line, a.col) == (b.line, b.col) and \
        os.path.normpath(a.file) == os.path.normpath(b.file)


def check_program(records: list[KnobRecord], config: str | None) -> None:
    """Knob names unique across the program; every configured knob defined somewhere. A
    program with no knobs at all only warns: a project's `CC="approxcc -fapprox-config=F"`
    also links configure's test programs and the project's other executables."""
    first: dict[str, KnobRecord] = {}
    for r in records:
        if r.name in first and (r.named or first[r.name].named) and \
                not _same_place(r.loc, first[r.name].loc):
            raise CompileError(f"duplicate knob name '{r.name}'", r.loc,
                               [note("first defined here", first[r.name].loc)])
        first.setdefault(r.name, r)
    if config is None:
        return
    for name, setting in load_config(config).knobs.items():
        if not first:
            warn(f"configuration unused: the program has no knobs (it names '{name}')",
                 setting.loc, flag="-Wunused-command-line-argument")
            return
        if name not in first:
            raise CompileError(f"unknown knob '{name}' in configuration", setting.loc)
