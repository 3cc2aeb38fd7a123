"""A test that needs a tool the machine may lack: skipped where the tool is missing, but failed under
``CI=true``. `.ci/run` installs every tool a test needs (and fails when it cannot), so on CI a
missing tool is a broken install, and a green run must not hide a test that never ran.

    missing("no C compiler (cc): install gcc")       # a tool found missing some other way
    litert = need("ai_edge_litert", "install hotstart[tflite]")   # an importable module, or missing(...)

Both work at a test module's top (they skip or fail the whole module) or inside a test.
"""
from __future__ import annotations

import importlib
import os

import pytest


def on_ci() -> bool:
    """Whether this run is CI's (``CI=true``, as GitHub Actions, GitLab CI and .ci/run set it)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what: str) -> None:
    """Skip the calling test (or module) because `what` is missing (a sentence naming the tool and how
    to get it); under CI=true, fail it instead. Never returns."""
    if on_ci():
        pytest.fail(f"{what}. Under CI=true a test that needs a tool may not be skipped: .ci/run installs it",
                    pytrace=False)
    pytest.skip(what, allow_module_level=True)


def need(module: str, install: str):
    """The imported `module`; else `missing` with what failed and `install` (how to get it)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing(f"{module} is not importable ({e}): {install}")
