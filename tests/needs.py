"""`need(module, install)`: a test's optional tool, skipped locally when absent, a failure in CI.

CI (``CI=true``, as CI services set it) runs .ci/run, which installs every extra: a missing tool
there is a broken install, which must fail rather than turn into a quiet skip. Call it at a test
module's top (it skips or fails the whole module) or inside a test.
"""
import importlib
import os

import pytest


def need(module: str, install: str):
    """The imported `module`, or a skip (locally) / a failure (under CI=true) that says `install`."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        message = f"{module} is not importable ({e}): {install}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI: {message}", pytrace=False)
        pytest.skip(message, allow_module_level=True)
