"""The warmup: fill the compile cache once, after install, so later runs start fast.

    python -m hotstart.warmup                  # run the built-in workloads
    python -m hotstart.warmup --status         # what is warm here
    python -m hotstart.warmup --module mypkg.warm   # a package's own workloads

In Python: ``hotstart.warmup.run(only=None, budget=None, cache_dir=None) -> WarmupReport``.
It is free of side effects: global RNGs, torch flags and ``os.environ`` come out as they went
in (see guard.py); it writes only to its cache folder and the system temp folder.

The cache itself (folder, manifest, ``compile="auto"`` policy) lives in hotstart.compile_cache;
its public names are re-exported here for convenience.
"""
from ..compile_cache import cache_dir, config_key, inductor_cache, is_warm, read_manifest, compile_decision
from .runner import WarmupReport, WorkloadResult, run, status
from .workloads import Registry, Workload, builtin_workloads

__all__ = ["run", "status", "Registry", "Workload", "builtin_workloads", "WarmupReport", "WorkloadResult",
           "cache_dir", "inductor_cache", "config_key", "is_warm", "read_manifest", "compile_decision"]
