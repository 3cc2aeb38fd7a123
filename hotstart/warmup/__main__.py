"""``python -m hotstart.warmup [--list] [--only PATTERN ...] [--budget S] [--dry-run] [--clear]
[--status] [--module MOD ...] [--cache-dir DIR] [--strict]``.

Exit code 0 unless --strict is given and a workload failed: a warmup never breaks an install.
"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m hotstart.warmup",
                                description="Fill hotstart's compile cache so later runs start fast.")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--only", nargs="+", metavar="PATTERN",
                   help="run only workloads matching these names (fnmatch), separated by spaces or commas")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="time limit: a workload starts only if its expected time (a compiled one: its last run's, "
                        "else a cold compile's ~27 s) fits what is left, else it is skipped, saying so; a running one "
                        "stops at its next batch, so the run can overrun by one batch, or by a compile whose "
                        "estimate was low")
    p.add_argument("--dry-run", action="store_true",
                   help="show what would run (and, with --clear, what would be deleted); run and delete nothing")
    p.add_argument("--clear", action="store_true",
                   help="delete the compile cache and its manifest, never downloaded datasets, and only in a folder "
                        "that hotstart's manifest marks as its compile cache (then run, if --only/--module is given)")
    p.add_argument("--status", action="store_true",
                   help="show what is warm for this torch version and device, each configuration's compiled files "
                        "checked against the sizes and checksums recorded when they were written (damaged: cold)")
    p.add_argument("--module", action="append", default=[], metavar="MOD",
                   help="import MOD and add the workloads of its Registry objects (repeatable)")
    p.add_argument("--no-builtin", action="store_true", help="only the --module workloads")
    p.add_argument("--cache-dir", default=None, help="cache folder (default: $HOTSTART_CACHE_DIR or the user cache)")
    p.add_argument("--strict", action="store_true", help="exit 1 if any workload fails")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.budget is not None and not args.budget > 0:  # -1 skipped every workload and said it was done
        p.error(f"--budget must be a positive number of seconds, got {args.budget:g}")
    if args.only is not None:  # `--only a,b` as `--only a b`, as gpu_check and the benchmarks take their lists
        args.only = [name for value in args.only for name in value.split(",") if name]
        if not args.only:  # `--only ''` would otherwise select every workload
            print("error: --only needs workload names or patterns (python -m hotstart.warmup --list shows them)",
                  file=sys.stderr)
            return 2

    from ..compile_cache.cache import cache_dir

    root = cache_dir(args.cache_dir)
    selection = None
    if args.clear and (args.only or args.module):  # a bad name or module is refused before anything is deleted
        selection = _select(args)
        if selection is None:
            return 2
    if args.clear:
        from ..compile_cache.clear import NotACompileCache, clear, paths_to_clear

        try:
            removed = paths_to_clear(root) if args.dry_run else clear(root)
        except NotACompileCache as e:
            print(f"error: refusing to clear: {e}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"error: could not clear {root}: {e}", file=sys.stderr)
            return 2
        if args.dry_run:  # a dry run deletes nothing: it says what --clear would delete
            print(f"(dry run) --clear would delete {', '.join(p.name for p in removed)} in {root}" if removed
                  else f"(dry run) nothing to clear: no compile cache in {root}")
        else:
            print(f"cleared {', '.join(p.name for p in removed)} in {root}" if removed
                  else f"nothing to clear: no compile cache in {root}")
        if not (args.list or args.status or args.only or args.module):
            return 0
    if args.status:
        from .runner import status

        from ..compile_cache.manifest import load_manifest

        entries = status(root)
        print(f"cache: {root}")
        problem = load_manifest(root)[1]
        if problem:
            print(f"note: {problem}")
        if not any(e["state"] != "damaged" for e in entries):
            print("nothing is warm yet for this torch version; run: python -m hotstart.warmup")
        for e in entries:  # each entry's recorded files checked (compile_cache/artifacts.py)
            by = f"(by {e['workload']}, {e['seconds']:.1f} s, {e['when']})"
            if e["state"] == "damaged":
                print(f"  DAMAGED (cold)  {e['key']}   {by}\n      {e['problem']}; "
                      f"python -m hotstart.warmup deletes the damaged files and compiles it again")
            elif e["state"] == "unverified":
                print(f"  warm, unverified  {e['key']}   {by}\n      {e['problem']}; "
                      f"--clear and warm again to record them")
            else:
                print(f"  warm  {e['key']}   {by}")
        return 0

    from .runner import run

    if selection is None:
        selection = _select(args)
        if selection is None:
            return 2
    regs, chosen = selection
    if args.list or args.dry_run:
        from .inputs import workload_input

        for w in chosen:  # the input as the task describes it (a table's columns, a series' length)
            print(f"{w.name:<28} backbone={w.backbone or 'SmallCNN'} input={workload_input(w)} "
                  f"batch={w.batch_size} device={w.device} compile={w.compile}  {w.description}")
        if args.dry_run:
            print(f"(dry run: {len(chosen)} workload(s) would run, cache {root})")
        return 0
    report = run(only=args.only, budget=args.budget, cache_dir=root, registries=regs,
                 progress=not args.no_progress)
    print(report.table())
    for r in report.results:
        if r.status == "failed" and r.detail:
            print(f"\n--- {r.name} failed ---\n{r.detail}", file=sys.stderr)
    return 1 if (args.strict and not report.ok) else 0


def _select(args):
    """(registries, the workloads --only and --module choose), or None after printing why not
    (a module that does not import, a pattern that matches no workload)."""
    import importlib

    from .runner import select
    from .workloads import Registry, builtin_workloads, registries_in_module

    try:
        regs = [] if args.no_builtin else [Registry(builtin_workloads())]
        for name in args.module:
            regs.extend(registries_in_module(importlib.import_module(name)))
        return regs, select(regs, args.only)
    except (ImportError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return None


if __name__ == "__main__":
    sys.exit(main())
