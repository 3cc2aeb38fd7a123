"""scripts/gpu_check.py: the list of checks, and its CPU-runnable checks passing on this CPU.

The CUDA-only checks (compile cache, .pt2, host syncs, throughput) need a GPU; here only their
listing is tested. The listing runs as a user runs the script (a subprocess: its entry point and
argument parsing); the refusal and the CPU checks call its `main(argv)` in this process, which
spares an interpreter start and a second import of torch and hotstart (most of the test's time).
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "gpu_check.py"
NAMES = ["eager", "fp16-guard", "bf16", "compile-cache", "compile-auto", "onnx-export", "pt2-export", "resume",
         "host-syncs", "throughput"]


@pytest.fixture(scope="module")
def gpu_check():
    name = "gpu_check_under_test"
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)


def test_dry_run_lists_every_check_and_where_it_runs():
    out = subprocess.run([sys.executable, str(SCRIPT), "--dry-run"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = [line.split()[:2] for line in out.stdout.splitlines()]
    assert [r[0] for r in rows] == NAMES
    assert {r[0] for r in rows if r[1] == "cuda"} == {"compile-cache", "pt2-export", "host-syncs", "throughput"}


def test_unknown_check_name_is_refused_with_the_list(gpu_check):
    with pytest.raises(SystemExit) as refused:
        gpu_check.main(["--dry-run", "--only", "eager,no-such-check"])
    message = str(refused.value.code)
    assert "no-such-check" in message and "throughput" in message


def test_cpu_checks_pass_one_line_each(gpu_check, capsys):
    # eager and compile-auto only (the other CPU checks take minutes here; the learner's tests cover them)
    rc = gpu_check.main(["--device", "cpu", "--only", "eager,compile-auto,host-syncs"])
    out = capsys.readouterr()
    assert rc == 0, out.out + out.err[-2000:]
    lines = [line for line in out.out.splitlines() if line[:4] in ("PASS", "FAIL", "SKIP")]
    assert [line.split()[:2] for line in lines] == [["PASS", "eager"], ["PASS", "compile-auto"], ["SKIP", "host-syncs"]]
    assert "compiled: False" in lines[1]  # policy.py: compiling does not pay on a CPU
    assert out.out.splitlines()[-1].startswith("all passed")
