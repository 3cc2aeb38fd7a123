"""scripts/gpu_check.py: the list of checks, and its CPU-runnable checks passing on this CPU.

The CUDA-only checks (compile cache, .pt2, host syncs, throughput) need a GPU; here only their
listing is tested. The CPU run is a subprocess, as a user runs the script.
"""
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "gpu_check.py"
NAMES = ["eager", "fp16-guard", "bf16", "compile-cache", "compile-auto", "onnx-export", "pt2-export", "resume",
         "host-syncs", "throughput"]


def _run(*args, timeout=600):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


def test_dry_run_lists_every_check_and_where_it_runs():
    out = _run("--dry-run")
    assert out.returncode == 0, out.stderr
    rows = [line.split()[:2] for line in out.stdout.splitlines()]
    assert [r[0] for r in rows] == NAMES
    assert {r[0] for r in rows if r[1] == "cuda"} == {"compile-cache", "pt2-export", "host-syncs", "throughput"}


def test_unknown_check_name_is_refused_with_the_list():
    out = _run("--dry-run", "--only", "eager,no-such-check")
    assert out.returncode != 0 and "no-such-check" in out.stderr and "throughput" in out.stderr


def test_cpu_checks_pass_one_line_each():
    # eager and compile-auto only (the other CPU checks take minutes here; the learner's tests cover them)
    out = _run("--device", "cpu", "--only", "eager,compile-auto,host-syncs")
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    lines = [line for line in out.stdout.splitlines() if line[:4] in ("PASS", "FAIL", "SKIP")]
    assert [line.split()[:2] for line in lines] == [["PASS", "eager"], ["PASS", "compile-auto"], ["SKIP", "host-syncs"]]
    assert "compiled: False" in lines[1]  # policy.py: compiling does not pay on a CPU
    assert out.stdout.splitlines()[-1].startswith("all passed")
