"""`approxcc -cc1 PHASE ...`: the driver's in-process phases as commands of their own, so that
every job `-###` prints can be pasted into a shell (clang's `-cc1` is its frontend's).

The driver calls these functions in its own process (driver/jobs.py) and prints the command
lines that call them (approxcc.cli parses those); the approx passes are `approxcc opt`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from approxcc.driver import depfile, program_knobs
from approxcc.driver.opt import print_module
from approxcc.driver.options import DependencyOptions
from approxcc.driver.program_knobs import KnobRecord


def frontend(src: str, clang_args: list[str], out: Path | None, remainder: Path,
             knobs_asm: Path | None, includes: Path | None, system_headers: bool,
             all_functions: bool = False,
             debug_info: bool = False) -> tuple[ModuleOp, list[KnobRecord]]:
    """One translation unit → its approx MLIR (`out`; None: not printed, the driver hands
    the module on in memory), the remainder the system compiler
    compiles, and on request the knob record of its object (`knobs_asm`) and the files it
    included (`includes`, one per line, for the dependency file). Only annotated functions
    go through MLIR unless `all_functions`; `debug_info` (-g): the MLIR with the source
    locations."""
    from approxcc.frontend.c_parse import SOURCE_ERRORS, compile_unit

    compiled = compile_unit(src, clang_args, all_functions)
    knobs = program_knobs.module_knobs(compiled.module, compiled.annotations)
    if out is not None:
        out.write_text(print_module(compiled.module, debuginfo=debug_info))
    remainder.write_text(compiled.remainder, errors=SOURCE_ERRORS)
    for name, text in compiled.copies.items():  # included files, edited: included beside it
        (remainder.parent / name).write_text(text, errors=SOURCE_ERRORS)
    if knobs_asm is not None:
        knobs_asm.write_text(program_knobs.assembly(knobs))
    if includes is not None:
        includes.write_text("".join(f"{name}\n" for name in
                                    depfile.included_files(compiled.tu, system_headers)))
    return compiled.module, knobs


def dependency_file(src: str, deps: DependencyOptions, path: str, target: str,
                    includes: Path, remainder_rule: Path, remainder: Path,
                    config: str | None) -> None:
    """The make rule of one object: what the frontend included, what the system compiler
    read for the remainder (its temporary source left out), and the configuration."""
    from_cc = [p for p in depfile.read_rule(remainder_rule)
               if Path(p).resolve() != remainder.resolve() and not is_copy(Path(p), remainder)]
    depfile.write(deps, path, target, src,
                  includes.read_text().splitlines() + from_cc + ([config] if config else []))


def is_copy(path: Path, remainder: Path) -> bool:
    """Whether `path` is an included file's edited copy beside the remainder (its name a
    link name's, frontend/tu_split.py)."""
    return path.parent.resolve() == remainder.parent.resolve() and \
        path.name.startswith("__approx_")


def model_build(model: str, out: str, targets: str, keep_going: bool = False,
                config: str | None = None) -> None:
    """A .py model: every variant compiled with IREE, or a configuration's variants only
    (approxcc.ml, loaded only here: C builds never import JAX)."""
    from approxcc.ml.build import build_model

    build_model(model, out, targets.split(","), keep_going=keep_going, config=config)


def model_emit(model: str, out: str) -> None:
    """`-S -emit-mlir model.py`: the model's approx IR (StableHLO inside approx knobs)."""
    from approxcc.ml.ir import emit_approx_mlir

    text = emit_approx_mlir(model)
    if out == "-":
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)
