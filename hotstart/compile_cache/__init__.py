"""hotstart's compile cache: the folder Inductor caches into, the manifest of what is warm there,
`compile_backbone`, and the ``compile="auto"`` policy.

It belongs to neither the learner nor the warmup: the learner compiles into it (and asks the
policy whether to), the warmup fills it and records what it warmed. So both import from here,
and this package imports neither of them (it sees a task and a model only by duck typing).

    cache.py     where the cache lives; `inductor_cache` points Inductor at it
    manifest.py  what the warmup has warmed (JSON, written atomically, merged under a lock)
    artifacts.py each configuration's compiled files, their sizes and SHA-256: is it still intact?
    repair.py    `repair`: delete a damaged configuration's damaged files and its entry (it is cold)
    policy.py    ``compile="auto"``: compile when warm and the fit is long enough to gain
    compile.py   `compile_backbone`: compile a TaskModel's backbone into the cache
    quiet.py     `quiet_torch_notices`: drop torch's "No CUDA runtime" notice while compiling
    clear.py     `clear`: delete the cache, only where the manifest marks it (``warmup --clear``)
"""
from .cache import ENV_VAR, cache_dir, inductor_cache, inductor_dir
from .compile import CompiledBackbone, compile_backbone, compile_context
from .manifest import FORMAT, config_key, is_warm, load_manifest, manifest_path, read_manifest, record
from .policy import compile_decision, compile_pays

__all__ = ["ENV_VAR", "cache_dir", "inductor_cache", "inductor_dir", "CompiledBackbone", "compile_backbone", "compile_context",
           "FORMAT", "config_key", "is_warm", "load_manifest", "manifest_path", "read_manifest", "record", "compile_decision",
           "compile_pays"]
