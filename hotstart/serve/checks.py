"""May this client use this server? Same interpreter, same libraries, same start-up environment.

A forked child inherits everything the server fixed at its own start: the interpreter, the
imported hotstart and torch, ``sys.path`` (from PYTHONPATH), the hash seed, and the settings that
native libraries read once when they load (OMP_NUM_THREADS, MKL_*, LD_PRELOAD, TORCH_*, ...).
A run in a child is a faithful ``python script.py`` only if the client would have started with the
same; otherwise the client runs the script itself and says which of these differs.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import sys

from .protocol import PROTOCOL_VERSION

# Environment variables read when the interpreter or a native library starts, before the fork:
# a child cannot honour a client's different value. (CUDA_VISIBLE_DEVICES is not here: the server
# never initialises CUDA, so each child reads its own.)
# LANG / LC_*: the standard streams' encoding is chosen from the locale at start.
STARTUP_ENV_PREFIXES = ("PYTHON", "LD_", "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "GOTO_", "TORCH",
                        "PYTORCH_", "VIRTUAL_ENV", "LANG", "LC_")
# read when used, not at start: what torchrun sets for its workers (TORCHELASTIC_*, the NCCL and
# distributed settings, read when a process group is made), so they may be served; and ours
# PYTORCH_NVML_BASED_CUDA_CHECK: read when CUDA devices are counted; lightning_fabric sets it at import,
# so every process of a Fabric run (the ranks it starts, too) has it.
IGNORED_ENV_PREFIXES = ("TORCHELASTIC_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_", "PYTORCH_NVML_BASED_CUDA_CHECK",
                        "HOTSTART_")


def identity() -> dict:
    """What must be equal on both ends; cheap (no torch import), so the client can afford it."""
    import hotstart

    torch_spec = importlib.util.find_spec("torch")
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = None
    return {
        "protocol": PROTOCOL_VERSION,
        "python": sys.version,
        "executable": os.path.realpath(sys.executable),
        "prefix": sys.prefix,
        "hotstart": hotstart.__version__,
        "hotstart_path": os.path.dirname(os.path.realpath(hotstart.__file__)),
        "torch": torch_version,
        "torch_path": torch_spec.origin if torch_spec else None,
    }


IDENTITY_WORDS = {  # field -> how the one-line reason names it
    "protocol": "protocol version", "python": "Python version", "executable": "interpreter",
    "prefix": "environment (sys.prefix)", "hotstart": "hotstart version", "hotstart_path": "hotstart install",
    "torch": "torch version", "torch_path": "torch install",
}


def identity_mismatch(server: dict, client: dict) -> str | None:
    """The first difference as one phrase, or None when the client may use the server."""
    for key, words in IDENTITY_WORDS.items():
        if server.get(key) != client.get(key):
            return f"the server runs another {words} ({server.get(key)!r}, here {client.get(key)!r})"
    return None


def startup_env(env: dict) -> dict:
    """The part of an environment that only takes effect at process start."""
    return {k: v for k, v in env.items() if k.startswith(STARTUP_ENV_PREFIXES) and not k.startswith(IGNORED_ENV_PREFIXES)}


def env_mismatch(server_env: dict, client_env: dict, set_by_preload: dict | None = None) -> str | None:
    """The first start-up variable that differs, as one phrase, or None. A value that a preloaded
    library set for itself at import (`set_by_preload`) is as good as the server's own: a process
    that imported that library has it too."""
    mine, theirs = startup_env(server_env), startup_env(client_env)
    also = set_by_preload or {}
    for key in sorted(set(mine) | set(theirs)):
        if mine.get(key) != theirs.get(key) and (key not in also or also[key] != theirs.get(key)):
            return (f"{key} differs from the server's ({_shown(mine.get(key))}, here {_shown(theirs.get(key))}); "
                    f"it takes effect only when a process starts")
    return None


def _shown(value) -> str:
    if value is None:
        return "unset"
    return repr(value if len(value) <= 60 else value[:57] + "...")
