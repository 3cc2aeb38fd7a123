"""Quantization-aware training and the int8 .pte / QDQ ONNX / QAT .tflite exports: the checks of
tests/qat_checks.py, run by pytest in a prestart job (tests/prestart.py).

Why a job: those checks spend ~110 s in torch.export, ExecuTorch's lowering and litert-torch's
conversion (2026-12-03 CI runs: 38 s of fixture, 35 s and 31 s of calls), while the suite's own
process trains on one thread and the machine's second core idles once the other jobs are done
(the session's prestart summary showed it idle for the last ~190 s of a 683 s run). Each check here
passes, fails or skips as its counterpart in qat_checks.py did, with that run's report.

Why last (``run_last``): in a job the checks cost ~130 s (their imports and first torch.export start
cold). Queued in collection order, that delayed the notebooks' jobs, which the suite then waited for
(197 s in all, a 735 s run); queued last, the suite's process then waited ~100 s for it at the end.
So its tests run last and its job is queued first (conftest.py): it runs on the second core from
the start, and the suite's process runs the other jobs itself when it reaches them before the
background thread does (tests/prestart.py).
"""
import ast
import re
import sys
from pathlib import Path

import pytest

import prestart

CHECKS = Path(__file__).with_name("qat_checks.py")
NAMES = [node.name for node in ast.parse(CHECKS.read_text()).body
         if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]


@prestart.job("qat:checks")
def _qat_checks(folder):
    return prestart.Job([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", str(CHECKS)],
                        timeout=900)


def outcomes(report: str) -> dict:
    """{test name: PASSED / FAILED / ERROR / SKIPPED} from pytest's ``-rA`` summary of qat_checks.py."""
    found = {}
    for outcome, rest in re.findall(r"^(PASSED|FAILED|ERROR|SKIPPED) (.*)$", report, flags=re.M):
        for name in NAMES:
            if re.search(rf"qat_checks\.py(::|:\d+: .*){name}\b", rest) or f"::{name}" in rest:
                found[name] = outcome
    return found


@pytest.mark.run_last
@pytest.mark.prestart("qat:checks")
@pytest.mark.parametrize("name", NAMES)
def test_qat_check(name):
    run = prestart.result("qat:checks")
    report = run.stdout + run.stderr
    got = outcomes(report).get(name)
    if got is None:
        skipped = re.search(r"^SKIPPED \[\d+\] (.*)$", report, flags=re.M)
        if skipped and run.returncode == 0:  # the whole file skipped (a package it needs is missing)
            pytest.skip(skipped.group(1))
        pytest.fail(f"qat_checks.py did not report {name} (exit {run.returncode}):\n{report[-6000:]}")
    if got == "SKIPPED":
        pytest.skip(f"qat_checks.py::{name} skipped:\n{report[-2000:]}")
    assert got == "PASSED", f"qat_checks.py::{name} {got}:\n{report[-8000:]}"


def test_outcomes_reads_pytests_summary_lines():
    report = ("PASSED ../tests/qat_checks.py::test_post_training_int8_pte_is_calibrated_and_close_to_fp32\n"
              "FAILED /x/tests/qat_checks.py::test_qat_model_exports_to_tflite - AssertionError: ...\n")
    assert outcomes(report) == {"test_post_training_int8_pte_is_calibrated_and_close_to_fp32": "PASSED",
                                "test_qat_model_exports_to_tflite": "FAILED"}
    assert len(NAMES) == 3
