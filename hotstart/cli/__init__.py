"""Command line: ``hotstart COMMAND ...`` (or ``python -m hotstart COMMAND ...``).

Each command lives in its own module of this package and contributes two functions:
``add_parser(subparsers)`` (its arguments) and ``run(args) -> int`` (exit status). This file
only builds the parser from them and turns hotstart's own errors (`hotstart.errors.HotstartError`)
and missing / unreadable paths into one clear line; any other exception keeps its traceback.

    python -m hotstart train                          # the built-in digits, small CNN, 32x32
    python -m hotstart train photos/ --backbone resnet18 --size 128 128 --epochs 5 --out runs/photos
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

from ..errors import HotstartError

# What a user's input can cause: hotstart's own errors, and paths that are not there, not
# readable or not writable (their messages name the path). Printed as one line; anything else
# (a TypeError, a KeyError, ...) is a bug of ours and keeps its traceback.
USER_ERRORS = (HotstartError, FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError,
               PermissionError)

# command name -> module in this package (imported only to build the parser: keep them light)
COMMANDS = {"train": "train", "export": "export", "predict": "predict", "serve": "serve", "run": "run"}
# the commands during which SIGTERM unwinds like Ctrl-C (cli/stop_signals.py, `terminate_raises`) so that
# what they half wrote is cleaned up; not `serve` (its daemon has its own shutdown) nor `run` (a user's
# script keeps Python's default: SIGTERM ends it)
TERMINATE_UNWINDS = ("train", "export", "predict")


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog or _prog_name(),
                                description="hotstart: train models, say what the data is.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        importlib.import_module(f"{__name__}.{module}").add_parser(sub)
    return p


def _prog_name() -> str:
    """``hotstart`` for the console script, ``python -m hotstart`` otherwise."""
    return "hotstart" if os.path.basename(sys.argv[0] or "") == "hotstart" else "python -m hotstart"


def main(argv=None) -> int:
    if argv is None:  # the command line itself (not a call from Python): a running `hotstart serve` may take it
        from ..serve.client import hand_off

        argv, served = hand_off(sys.argv[1:])
        if served is not None:
            return served
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"{__name__}.{COMMANDS[args.command]}")
    from .stop_signals import exit_status, terminate_raises

    unwinds = terminate_raises() if args.command in TERMINATE_UNWINDS else contextlib.nullcontext()
    try:
        with unwinds:
            return module.run(args)
    except KeyboardInterrupt as e:
        print("interrupted", file=sys.stderr)
        return exit_status(e)
    except USER_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
