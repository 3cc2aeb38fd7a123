"""`import_contained(name)` and `contained_globals()`: run a library that configures the process,
and put the process back as the application had it.

Why: libraries that hotstart uses lazily (inside an export, never at ``import hotstart``) change
process-wide state that belongs to the application, as a side effect of being imported or called:

- ExecuTorch's XNNPACK partitioner calls ``logging.basicConfig(level=logging.WARNING)`` when
  imported, and ExecuTorch's lowering and litert-torch's converter log through the root logger
  (``logging.debug(...)``), which calls ``basicConfig()`` too: the root logger gains a
  ``StreamHandler``, so the application's later records are printed where it did not ask for
  them (or, when that happens while hotstart holds stderr, into a buffer that is gone);
- ``executorch.exir``, ``litert_torch`` and torchao add entries to ``warnings.filters`` (an
  "ignore" for numpy's init message, "once" for ruamel.yaml's, "always" for scipy's), which
  override the application's own warning policy (``-W error`` in a test suite, for example);
- importing ``litert_torch`` sets ``TF_CPP_MIN_LOG_LEVEL`` and ``TPU_SKIP_MDS_QUERY`` in
  ``os.environ``, which the application's own TensorFlow or JAX (and every child process it
  starts) would then inherit;
- importing ``litert_torch`` draws from torch's, numpy's and Python's global RNGs, and ExecuTorch's
  lowering, litert-torch's converter and torchao's passes draw from torch's: the caller's random
  streams would depend on whether and what it exported (learner/rng.py promises they don't).

So such imports go through `import_contained`, and such calls run inside `contained_globals`:
on exit the root logger's handlers, level and ``logging.disable`` threshold, the warnings filters
(and ``warnings.showwarning``), ``os.environ``, and the global RNGs (torch's CPU generator, numpy's and Python's
``random``, those already imported) are as they were on entry. The libraries keep working: their
log records still reach the application's handlers or Python's last-resort handler (WARNING and
above, on stderr), their warnings follow the application's filters, and their draws come from
the caller's stream as before (torchao's are example inputs for tracing patterns); only what the
caller's generators hold afterwards is put back.

    partitioner = import_contained("executorch.backends.xnnpack.partition.xnnpack_partitioner")
    with contained_globals():
        program = to_edge_transform_and_lower(...)

A module imported already costs nothing and changes nothing: its side effects happened (and were
undone) the first time. Like ``warnings.catch_warnings``, which it uses, this is not thread-safe:
another thread that changes the same state inside the block has its change undone.
"""
from __future__ import annotations

import contextlib
import importlib
import logging
import os
import random
import sys
import warnings

from .gc_pause import gc_paused

__all__ = ["import_contained", "contained_globals", "restore_environ"]


def restore_environ(snapshot: dict) -> None:
    """Make ``os.environ`` equal `snapshot` (a ``dict(os.environ)`` taken earlier): variables added
    since are removed, changed or removed ones put back; the others are not touched (setting one
    calls putenv). Also warmup/guard.py's way back."""
    for key in [k for k in os.environ if k not in snapshot]:
        del os.environ[key]
    for key, value in snapshot.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


@contextlib.contextmanager
def contained_globals():
    """Within the block, code may change the root logger (handlers, level), ``logging.disable``, the
    warnings filters, ``os.environ`` and the global RNGs; on exit (also when it raises) they are as
    on entry."""
    root = logging.getLogger()
    environ = dict(os.environ)
    handlers, level, disabled = list(root.handlers), root.level, logging.root.manager.disable
    python_rng = random.getstate()
    numpy = sys.modules.get("numpy")  # not imported: no state of the caller's to keep
    numpy_rng = None if numpy is None else numpy.random.get_state()
    torch = sys.modules.get("torch")
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(warnings.catch_warnings())  # restores warnings.filters and showwarning
            if torch is not None:
                stack.enter_context(torch.random.fork_rng(devices=[]))  # the CPU generator, restored on exit
            yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)  # not closed: the library may hold it still
        for handler in [h for h in handlers if h not in root.handlers]:
            root.addHandler(handler)
        root.setLevel(level)
        logging.disable(disabled)
        restore_environ(environ)
        random.setstate(python_rng)
        if numpy_rng is not None:
            numpy.random.set_state(numpy_rng)


def import_contained(name: str):
    """``importlib.import_module(name)`` with the process left as it was (see the module docstring:
    logging, warnings, global RNGs), and the cyclic collector paused as for hotstart's other heavy
    imports (hotstart/gc_pause.py). Raises what the import raises (ImportError for a missing extra)."""
    if name in sys.modules:
        return importlib.import_module(name)
    with contained_globals(), gc_paused():
        return importlib.import_module(name)
