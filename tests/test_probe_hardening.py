"""scripts/probe_hardening.py: every probe of issue 32's kinds passes (one per kind; the modules'
own tests hold the cases in full). In this process, as tests/test_gpu_check.py runs its script:
an interpreter start and a second import of torch would cost more than the probes."""
import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "probe_hardening.py"


@pytest.fixture(scope="module")
def probes():
    name = "probe_hardening_under_test"
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)


def test_every_probe_passes(probes, capsys):
    assert probes.main([]) == 0, capsys.readouterr().out
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(probes.PROBES) >= 12 and all(line.startswith("ok   ") for line in lines)


def test_a_failing_probe_fails_the_run(probes, capsys, monkeypatch):
    monkeypatch.setitem(probes.PROBES, "a probe that fails", lambda tmp: probes.raised(ValueError, int, "3"))
    assert probes.main(["--only", "a probe that fails"]) == 1
    assert capsys.readouterr().out.startswith("FAIL a probe that fails: AssertionError: int did not raise ValueError")
