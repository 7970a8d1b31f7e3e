"""The `approxcc` console script. A compiler command line the system compiler takes whole
(driver/passthrough.py) becomes the system compiler's process (exec) before the command-line
interface and its dependencies are imported: a build of code without annotations pays only
the interpreter's start-up. Every other command line is approxcc.cli's."""

from __future__ import annotations

import os
import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv and not argv[0].startswith("-cc1") and argv[0] not in SUBCOMMANDS:
        from approxcc.driver import passthrough

        if not passthrough.needs_approxcc(argv):
            command = passthrough.command(argv)
            try:
                os.execvp(command[0], command)
            except OSError:
                pass  # approxcc.cli reports it as every other failure to run a tool
    from approxcc.cli import main as cli_main

    cli_main()


# approxcc.cli's subcommands and help options: not compiler command lines
SUBCOMMANDS = frozenset({"build", "opt", "tune", "report", "eval", "cc1", "-h", "--help"})
