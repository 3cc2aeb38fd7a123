"""The command line reference: each command's ``--help``, as the command prints it at build time.

The commands are the CLI's own table (`hotstart.cli.COMMANDS`) and the warmup's entry point, so a
command added there appears here with no edit. Each ``--help`` runs in its own process, as a user
would run it (``python -m hotstart train --help``), all at once: argparse's own text, never a copy.
"""
from __future__ import annotations

import os
import subprocess
import sys

HELP_WIDTH = "100"  # argparse wraps at $COLUMNS: a fixed width, so the page does not depend on a terminal


def commands() -> list[tuple[str, list[str]]]:
    """(title, argv after ``python -m``) for each command, the overview first."""
    from hotstart.cli import COMMANDS

    return ([("hotstart", ["hotstart", "--help"])]
            + [(f"hotstart {name}", ["hotstart", name, "--help"]) for name in COMMANDS]
            + [("hotstart.warmup", ["hotstart.warmup", "--help"])])


def start(import_root: str) -> list[tuple[str, list[str], subprocess.Popen]]:
    """Start every ``python -m ... --help`` at once, run with the hotstart this build documents
    (`import_root`); `render` collects them. Started early, they run while the build imports."""
    env = {**os.environ, "COLUMNS": HELP_WIDTH, "HOTSTART_SERVER": "0",  # never handed to a running server
           "PYTHONPATH": os.pathsep.join(filter(None, [import_root, os.environ.get("PYTHONPATH")]))}
    return [(title, argv, subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True, env=env))
            for title, argv in commands()]


def render(started: list[tuple[str, list[str], subprocess.Popen]]) -> str:
    lines = ["# Command line", "",
             "Every command's `--help`, as it printed when this site was built. Installed, `hotstart` "
             "is the same as `python -m hotstart`.", ""]
    for title, argv, proc in started:
        out, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"`python -m {' '.join(argv)}` exited with {proc.returncode}:\n{err[-2000:]}")
        lines += [f"## `{title}`", "", "```text", f"$ python -m {' '.join(argv)}", out.rstrip(), "```", ""]
    return "\n".join(lines)
