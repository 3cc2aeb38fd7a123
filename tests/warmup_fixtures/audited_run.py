"""Run a real warmup in this process under sys.addaudithook, then print a JSON verdict.

Run as a subprocess by tests/test_warmup.py (audit hooks cannot be removed once installed, so
they must not be installed in the test runner's own process).
    python audited_run.py CACHE_DIR ONLY_PATTERN MODULE
"""
import json
import os
import random
import socket  # noqa: F401  (imported before the hook: importing is not creating a socket)
import sys
import tempfile

cache, only, module = sys.argv[1], sys.argv[2], sys.argv[3]
allowed_write = [os.path.realpath(cache), os.path.realpath(tempfile.gettempdir())]
DEVICES = ("/dev/null", "/dev/shm")  # subprocess plumbing and shared memory, not files
events = {"writes_outside": [], "sockets": [], "data_reads": []}
DATA_SUFFIXES = (".npz", ".png", ".jpg", ".jpeg", ".csv", ".tgz", ".tar", ".zip")
CODE_ROOTS = tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})  # interpreter, stdlib, packages
armed = False


def hook(event, args):
    if not armed:
        return
    if event == "open":
        path, mode = args[0], args[1]
        if not isinstance(path, (str, bytes)) or isinstance(path, int):
            return
        path = os.fsdecode(path)
        real = os.path.realpath(path)
        writing = isinstance(mode, str) and any(c in mode for c in "wax+")
        if isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            writing = True
        if writing and not real.startswith(DEVICES) and not any(real == a or real.startswith(a + os.sep) for a in allowed_write):
            events["writes_outside"].append(real)
        if (not writing and real.lower().endswith(DATA_SUFFIXES) and not real.startswith(allowed_write[0])
                and not real.startswith(CODE_ROOTS)) or (not writing and "hotstart/datasets/data" in real):
            events["data_reads"].append(real)
    elif event in ("socket.__new__", "socket.connect", "socket.bind"):
        events["sockets"].append(event)


sys.addaudithook(hook)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import hotstart.warmup as warmup  # noqa: E402
from hotstart.warmup.guard import rng_states, torch_flags  # noqa: E402

# consume some randomness first so the states are not the defaults
torch.rand(3); np.random.rand(3); random.random()
before_rng, before_flags, before_env = rng_states(), torch_flags(), dict(os.environ)
armed = True
report = warmup.run(only=[only], cache_dir=cache, modules=[module], include_builtin=False, progress=False)
armed = False
after_rng, after_flags, after_env = rng_states(), torch_flags(), dict(os.environ)

print(json.dumps({
    "results": [{"name": r.name, "status": r.status, "error": r.error, "key": r.key} for r in report.results],
    "side_effects_put_back": report.side_effects,
    "peak_rss_mb": report.peak_rss_mb,
    "torch_rng_same": bool(torch.equal(before_rng["torch"], after_rng["torch"])),
    "numpy_rng_same": bool(np.array_equal(before_rng["numpy"][1], after_rng["numpy"][1])
                           and before_rng["numpy"][2:] == after_rng["numpy"][2:]),
    "random_rng_same": before_rng["random"] == after_rng["random"],
    "flags_same": before_flags == after_flags,
    "env_diff": sorted(k for k in set(before_env) | set(after_env) if before_env.get(k) != after_env.get(k)),
    **events,
}))
