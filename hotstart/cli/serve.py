"""``hotstart serve [--stop | --status] [--idle SECONDS] [--foreground]``: the warm process.

    hotstart serve             # start in the background; returns once it listens
    hotstart serve --status    # pid, memory (RSS / PSS), runs in progress
    hotstart serve --stop      # stops once the runs in progress end

See hotstart/serve/ for what the server preloads, when a client will not use it, and why.
"""
from __future__ import annotations

import argparse


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("serve", help="keep torch, timm and hotstart loaded: `hotstart run` / `train` start warm",
                       description="A server that imports the training path once and forks one process per "
                                   "`hotstart run SCRIPT` or `hotstart train ...`.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--stop", action="store_true", help="stop the running server (after its runs end)")
    what.add_argument("--status", action="store_true", help="show the running server's state")
    what.add_argument("--foreground", action="store_true", help="serve in this process (log on stderr)")
    p.add_argument("--idle", type=float, default=1800.0, metavar="SECONDS",
                   help="exit after this long without a run (default 1800: 30 minutes)")
    p.add_argument("--preload", default=None, metavar="MODULES",
                   help="comma-separated modules to import (default: torch, torchvision, timm, hotstart, ...)")
    return p


def run(args) -> int:
    from ..serve import daemon
    from ..serve.preload import DEFAULT_PRELOAD

    if args.stop:
        return daemon.stop()
    if args.status:
        return daemon.status()
    names = DEFAULT_PRELOAD if args.preload is None else [n for n in args.preload.split(",") if n.strip()]
    start = daemon.start_foreground if args.foreground else daemon.start_background
    return start(args.idle, names)
