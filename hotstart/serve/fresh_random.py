"""Give a fork of the server the random generators that a new process would have.

A forked child inherits the server's generator states. Without this, every served run of a script
that draws without a seed would get the same numbers, while separate ``python script.py`` runs
differ. A new process seeds each generator from the operating system's entropy when its library
loads. `reseed` does the same for each library that the server has already imported. A library
the server has not imported loads fresh in the child anyway.

The generators were found by scanning ``sys.modules`` after the default preload for module-level
generator objects (torch 2.14, numpy 2.4, sympy 1.14); tests/test_serve.py repeats that scan in
served runs, so a generator added by a new library version is caught:

- torch's CPU default generator. ``torch.default_generator``, ``torch.random.default_generator``
  and ``torch.utils.data.dataset.default_generator`` are one object. ``default_generator.seed()``
  gives it a non-deterministic seed, as torch does at start. CUDA's generators need nothing: the
  server never initialises CUDA (`forksafety` refuses to fork then), so the child creates them
  as a new process does.
- numpy's legacy global RandomState (``numpy.random.rand`` ...). ``numpy.random.seed()`` with no
  argument reseeds it from OS entropy, as at import.
- sympy's two generators (``sympy.core.random``, imported by torch). ``sympy.core.random.seed()``
  reseeds both.
- Python's ``random``: CPython reseeds it by itself after a fork (``os.register_at_fork``).

What a fork cannot redo is the string hash seed. It is fixed when the interpreter starts, so the
iteration order of a set of strings is the same in every served run (as with a fixed
``PYTHONHASHSEED``).

This seeds global generators on purpose: it runs once, in the child, before the client's script.
The child is a new process from then on, and nothing here is restored.
"""
from __future__ import annotations

import sys


def reseed() -> list[str]:
    """Reseed, from OS entropy, every generator of a library the server has imported; their names."""
    done = []
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.default_generator.seed()
        done.append("torch.default_generator")
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
        done.append("numpy.random")
    sympy_random = sys.modules.get("sympy.core.random")
    if sympy_random is not None:
        sympy_random.seed()
        done.append("sympy.core.random")
    return done
