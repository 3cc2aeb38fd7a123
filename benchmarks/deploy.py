"""The ``deploy`` comparison: a digits model at 32x32 served four ways (``--only deploy``).

    python -m benchmarks.run --only deploy            # ~5-10 min on 2 cores (one .pt2 compile)

Setup (untimed): ``python -m hotstart train`` (small CNN, 32x32) and ``python -m hotstart export``
to fp32 ONNX, int8 ONNX and .pt2. Then, alternating (A B C D A B C D ...):

- cold start: ``python -m hotstart predict MODEL one.png``, process start to first prediction
  printed (the process then exits; its wall time is the measure), for MODEL = the saved learner
  folder (torch), digits.onnx, digits-int8.onnx (the torch-free predictor) and digits.pt2;
- warm: scripts/deploy_latency.py, per-image latency at batch 1 and images/s at batch 32, end to
  end (raw image in, label out).

Every contender runs with OMP_NUM_THREADS=1 (and onnxruntime with one intra-op thread in the warm
runs): on a shared 2-core machine, threads waiting on each other dominate otherwise.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
from pathlib import Path

CONTENDERS = ("torch", "onnx", "onnx-int8", "pt2")


def prepare(py, root: Path, epochs: int, log) -> dict:
    """Train and export once; returns contender -> model path, and an image to predict."""
    run = root / "run"
    steps = [
        ["train", "--epochs", str(epochs), "--size", "32", "32", "--out", str(run), "--no-progress"],
        ["export", str(run), "--format", "onnx", "--out", str(root / "digits.onnx")],
        ["export", str(run), "--format", "onnx", "--quantize", "int8", "--out", str(root / "digits-int8.onnx"),
         "--measure"],  # the int8 report with its accuracy and latency, as before --measure existed
        ["export", str(run), "--format", "pt2", "--out", str(root / "digits.pt2")],
    ]
    reports = []
    for args in steps:
        log(f"  [deploy] setup: hotstart {' '.join(args[:1] + args[-2:])}")
        proc = subprocess.run([py, "-m", "hotstart", *args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"deploy setup failed: hotstart {' '.join(args)}\n{proc.stderr[-2000:]}")
        reports.append(proc.stdout.strip().splitlines()[-12:])
    img = root / "one.png"
    subprocess.run([py, "-c", "import numpy as np, sys; from PIL import Image; "
                    "a = np.load('hotstart/datasets/data/digits.npz')['images'][0]; Image.fromarray(a).save(sys.argv[1])",
                    str(img)], check=True, cwd=Path(__file__).resolve().parents[1])
    return {"models": {"torch": run, "onnx": root / "digits.onnx", "onnx-int8": root / "digits-int8.onnx",
                       "pt2": root / "digits.pt2"}, "image": img, "export_reports": reports}


def bench_deploy(py, cfg, log, compare, scripts: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="hotstart-deploy-bench-") as tmp:
        setup = prepare(py, Path(tmp), cfg.get("deploy_epochs", 2), log)
        models, img = setup["models"], setup["image"]
        cold = {c: [py, "-m", "hotstart", "predict", str(models[c]), str(img)] for c in CONTENDERS}
        for cmd in cold.values():  # one untimed run each: the OS file cache is warm for all alike
            subprocess.run(cmd, capture_output=True)
        # one thread each: on a shared 2-core machine, OpenMP threads that wait on each other make a
        # 4 ms call take 400 ms (measured with the .pt2); the comparison is of runtimes, not of that
        env = {**os.environ, "OMP_NUM_THREADS": "1", "HOTSTART_BENCH_THREADS": "1"}
        envs = {c: env for c in CONTENDERS}
        cold_res = compare("deploy-cold", cold, cfg["runs"], envs=envs, log=log)
        kinds = {"torch": "torch", "onnx": "onnx", "onnx-int8": "onnx", "pt2": "pt2"}
        warm = {c: [py, str(scripts / "deploy_latency.py"), kinds[c], str(models[c]), str(cfg.get("deploy_iters", 50))]
                for c in CONTENDERS}
        warm_res = compare("deploy-warm", warm, cfg["runs"], envs=envs, log=log)
        sizes = {c: (sum(f.stat().st_size for f in (Path(models[c]) / "model").iterdir()) if Path(models[c]).is_dir()
                     else Path(models[c]).stat().st_size) for c in CONTENDERS}
    contenders = {}
    base = cold_res["torch"]["median"].get("wall_s")
    for c in CONTENDERS:
        ok = [r["result"] for r in warm_res[c]["runs"] if r["rc"] == 0 and r["result"]]
        cold_ok = [r["wall_s"] for r in cold_res[c]["runs"] if r["rc"] == 0]
        med = {"cold_start_s": statistics.median(cold_ok) if cold_ok else None,
               "latency_ms": statistics.median(r["latency_ms"] for r in ok) if ok else None,
               "ips_b32": statistics.median(r["ips_b32"] for r in ok) if ok else None,
               "cold_maxrss_mib": cold_res[c]["median"].get("maxrss_mib"), "file_mb": sizes[c] / 1e6,
               "torch_loaded": any(r["torch_loaded"] for r in ok) if ok else None}
        pairs = [r["wall_s"] / b["wall_s"] for r, b in zip(cold_res[c]["runs"], cold_res["torch"]["runs"])
                 if r["rc"] == 0 == b["rc"]]
        contenders[c] = {"median": med, "n": len(cold_ok),
                         "ratio": {"cold_start_s": med["cold_start_s"] / base if base and med["cold_start_s"] else None},
                         "paired_ratio": {"cold_start_s": statistics.median(pairs) if pairs else None},
                         "cold_runs": cold_res[c]["runs"], "warm_runs": warm_res[c]["runs"]}
    return {"workload": {"data": "digits", "size": 32, "backbone": "SmallCNN", "epochs": cfg.get("deploy_epochs", 2)},
            "contenders": contenders, "export_reports": setup["export_reports"], "runs_each": cfg["runs"],
            "notes": ["cold start = `python -m hotstart predict MODEL one.png`, process start to exit after the "
                      "first prediction is printed; latency / img/s end to end (preprocessing included)"]}


def table_lines(comp) -> list[str]:
    lines = ["  " + f"{'contender':<12}{'cold start':>16}{'paired':>9}{'peak RSS':>10}{'b1 latency':>12}"
             f"{'b32 img/s':>11}{'file':>10}{'torch?':>8}{'n':>4}"]
    fmt = lambda v, spec, unit="": "-" if v is None else f"{v:{spec}}{unit}"  # noqa: E731
    for label, e in comp["contenders"].items():
        m = e["median"]
        cold = fmt(m["cold_start_s"], ".2f", "s")
        ratio = e["ratio"].get("cold_start_s")
        if ratio is not None and label != "torch":
            cold += f" {ratio:.2f}x"
        paired = fmt(e["paired_ratio"].get("cold_start_s"), ".2f", "x")
        lines.append("  " + f"{label:<12}{cold:>16}{paired:>9}{fmt(m['cold_maxrss_mib'], '.0f', 'M'):>10}"
                     f"{fmt(m['latency_ms'], '.2f', 'ms'):>12}{fmt(m['ips_b32'], '.0f'):>11}"
                     f"{fmt(m['file_mb'], '.2f', 'MB'):>10}{str(m['torch_loaded']):>8}{e['n']:>4}")
    for rep in comp.get("export_reports", [])[2:3]:  # the int8 export's report
        lines += [f"  int8 export: {line.strip()}" for line in rep if ":" in line]
    return lines
