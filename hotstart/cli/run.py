"""``hotstart run [--no-server] SCRIPT [ARGS...]`` (or ``-m MODULE``): ``python SCRIPT ARGS`` in a warm process.

    hotstart serve                         # once: a background server with torch, timm, hotstart imported
    hotstart run train.py --epochs 3       # as `python train.py --epochs 3`, without the start-up
    hotstart run -m mypackage.train        # as `python -m mypackage.train`

With no usable server (none running, HOTSTART_SERVER=0, --no-server, another Python or torch, ...)
the script runs in this process, after one line that says why; so it does beside lower-priority work
in the same session, which a served run would share the CPU with as an equal (hotstart/serve/autogroup.py;
HOTSTART_SERVER=always serves anyway). See hotstart/serve/.
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("run", help="run a Python script in the warm server (hotstart serve), as python would",
                       description="Run SCRIPT with ARGS as `python SCRIPT ARGS` would, in a fresh fork of the "
                                   "running `hotstart serve`; without one, in this process.")
    p.add_argument("--no-server", action="store_true", help="run in this process even if a server is running")
    p.add_argument("-m", dest="module", action="store_true", help="TARGET is a module, as with python -m")
    p.add_argument("target", metavar="SCRIPT", help="the script (or, with -m, the module) to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def run(args) -> int:
    from ..serve.client import run_command

    return run_command("module" if args.module else "script", args.target, args.args, no_server=args.no_server)
