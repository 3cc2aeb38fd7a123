"""Libraries that configure the process leave it as the application had it (hotstart/contained_import.py).

ExecuTorch's import calls ``logging.basicConfig`` and adds warnings filters; its lowering and
litert-torch's converter call ``basicConfig`` again (through ``logging.debug``); litert-torch's
import draws from torch's, numpy's and Python's global RNGs. `import_contained` and
`contained_globals` put all of that back. Here on a stand-in module that does each of those, and,
end to end, on the real exports in a fresh interpreter (a prestart job, tests/prestart.py:
pytest's own process imported those libraries already, and its logging plugin gives the root
logger handlers, so ``basicConfig`` does nothing in it).
"""
import importlib.util
import json
import logging
import os
import random
import sys
import uuid
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import prestart
from needs import missing

from hotstart.contained_import import contained_globals, import_contained

MESSY = '''
import logging, os, random, sys, warnings
import numpy as np
import torch
RAN = True
logging.getLogger().addHandler(logging.StreamHandler(sys.stderr))
logging.getLogger().setLevel(logging.DEBUG)
logging.disable(logging.INFO)
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
warnings.simplefilter("once", DeprecationWarning)
warnings.showwarning = lambda *a, **k: None
torch.randn(3), np.random.rand(2), random.random()
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"  # as litert_torch's import sets it
os.environ.pop("HOME", None)
'''


def _state() -> dict:
    root = logging.getLogger()
    return {"torch": torch.get_rng_state().clone(), "numpy": np.random.get_state(), "random": random.getstate(),
            "handlers": list(root.handlers), "level": root.level, "disable": logging.root.manager.disable,
            "filters": list(warnings.filters), "showwarning": warnings.showwarning, "environ": dict(os.environ)}


def _assert_same(before: dict, after: dict) -> None:
    assert torch.equal(before["torch"], after["torch"])
    a, b = before["numpy"], after["numpy"]
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]
    for key in ("random", "handlers", "level", "disable", "filters", "showwarning", "environ"):
        assert before[key] == after[key], key


@pytest.fixture
def messy_module(tmp_path, monkeypatch):
    """The name of a fresh module that configures logging and warnings and draws from every global RNG."""
    name = f"messy_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(MESSY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_import_contained_puts_back_logging_warnings_and_rngs(messy_module):
    torch.manual_seed(1)
    before = _state()
    module = import_contained(messy_module)
    assert sys.modules[messy_module] is module and module.RAN  # imported: its code ran
    _assert_same(before, _state())
    assert import_contained(messy_module) is module  # imported already: returned as it is


def test_contained_globals_puts_back_when_the_block_raises():
    before = _state()
    with pytest.raises(KeyError), contained_globals():
        logging.getLogger().addHandler(logging.NullHandler())
        logging.getLogger().setLevel(logging.ERROR)
        warnings.simplefilter("error")
        os.environ["HOTSTART_TEST_SET_INSIDE"] = "1"
        torch.rand(4), np.random.rand(), random.random()
        raise KeyError("inside")
    _assert_same(before, _state())


def test_import_contained_raises_the_import_error_and_keeps_nothing():
    before = _state()
    with pytest.raises(ImportError):
        import_contained(f"no_such_module_{uuid.uuid4().hex}")
    _assert_same(before, _state())


SCRIPT = Path(__file__).parent / "scripts" / "export_side_effects.py"
EXPORTS = ["digits.onnx", "digits.pte", "digits.tflite", "digits-int8.pte", "digits-int8.tflite"]


def _export_tools_missing() -> list[str]:
    return [m for m in ("executorch", "litert_torch", "ai_edge_litert") if importlib.util.find_spec(m) is None]


@prestart.job("exports:side-effects")
def _exports(folder):
    """tests/scripts/export_side_effects.py: five exports in a fresh interpreter (~30 s on 2 cores)."""
    return prestart.Job([sys.executable, SCRIPT, folder], env={"PYTHONPATH": str(Path(__file__).parents[1])},
                        timeout=600)


@pytest.mark.prestart(*([] if _export_tools_missing() else ["exports:side-effects"]))
def test_pte_and_tflite_exports_leave_rngs_logging_and_warnings_as_they_were():
    """.onnx, and fp32 and int8 .pte and .tflite: the global RNGs (torch, numpy, random), the root logger's
    handlers and level, ``logging.disable``, ``warnings.filters`` and ``os.environ`` come out of each export as
    they went in, in a process where ExecuTorch and litert-torch are imported by the export."""
    lacking = _export_tools_missing()
    if lacking:
        missing(f"{', '.join(lacking)} not installed: pip install 'hotstart[edge,tflite]'")
    proc = prestart.result("exports:side-effects")
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert [r["export"] for r in results] == EXPORTS, proc.stdout[-2000:]
    for r in results:
        assert r["changed"] == [], r
        assert (proc.folder / r["export"]).is_file()
