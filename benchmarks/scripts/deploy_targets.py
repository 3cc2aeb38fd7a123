"""Every deploy target of one trained model, measured side by side in one run: one table.

    python benchmarks/scripts/deploy_targets.py --out benchmarks/results/deploy-targets.json   # ~15 min on 2 quiet cores
    python benchmarks/scripts/deploy_targets.py --quick --out /tmp/targets.json                 # a smoke run, ~5 min

Setup (untimed): ``hotstart train`` (``smallcnn_micro`` at 16x16 by default: the one model every
target takes, the Cortex-M4 included), then ``hotstart export`` to each format. Then, per target:

=================  ===========================================================================
column             how
=================  ===========================================================================
file size          the exported file (C: model.c + model.h source; its const data is in notes)
agreement          on the validation digits, against eager torch: labels equal, and for fp32
                   files the largest |logit - torch's logit|
cold start         a new process that loads the model and predicts one image file, start to exit
                   (``hotstart predict MODEL one.png [--runtime tflite-micro]`` where hotstart runs
                   the format; a small Python child for tract and OpenCV; the harness binary for C);
                   median of --runs, the targets alternating
latency b1         in this process, the model call alone on one encoded input (preprocessing is the
                   same numpy code for all), median over --iters calls in interleaved rounds; C: the
                   host harness's time per image over 1,000 images (its process start subtracted)
=================  ===========================================================================

hotstart's runtimes are opened through the one runtime interface (``hotstart.deploy.open_model``,
hotstart/runtimes/: the model contract encodes and decodes, the runtime runs the network); tract and
OpenCV, third-party runtimes of the ONNX file, are given the contract's encoding. Every runtime runs
on one thread (OMP_NUM_THREADS=1, onnxruntime and LiteRT with one thread,
IREE's local-sync driver): on a shared 2-core machine threads that wait on each other measure
the machine, not the runtime. A target whose tool is missing gets a row that says so.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's hotstart

# XLA (torch-xla): what `pip download --no-deps torch-xla` and an import beside torch 2.14.1 showed
XLA_NOTE = ("not installable beside torch 2.14: the newest torch-xla on PyPI (2.9.0) is built against torch 2.9 "
            "(its version.py's __torch_gitrev__), declares no torch requirement, and its _XLAC extension fails to "
            "import with torch 2.14.1 (undefined symbol _ZN5torch8autograd10deleteNodeEPNS0_4NodeE)")

# name -> (export format / file, runtime, where it runs, precision)
TARGETS = {
    "torch": ("saved learner (folder)", "PyTorch eager", "Python + torch", "fp32"),
    "onnx": ("digits.onnx", "onnxruntime", "any OS, no torch (predictor.py)", "fp32"),
    "onnx-int8": ("digits-int8.onnx", "onnxruntime", "any OS, no torch", "int8"),
    "tract": ("digits.onnx", "tract (Rust)", "embedded Linux, no Python needed", "fp32"),
    "tract-int8": ("digits-int8.onnx", "tract (Rust)", "embedded Linux", "int8"),
    "opencv": ("digits.onnx", "OpenCV DNN (classic)", "anywhere OpenCV is", "fp32"),
    "opencv-int8": ("digits-int8.onnx", "OpenCV DNN (classic)", "anywhere OpenCV is", "int8"),
    "pt2": ("digits.pt2", "AOTInductor (libtorch)", "Python or C++ with libtorch, this CPU's ISA", "fp32"),
    "pte": ("digits.pte", "ExecuTorch + XNNPACK", "phones, small Linux boards", "fp32"),
    "pte-int8": ("digits-int8.pte", "ExecuTorch + XNNPACK", "phones, small Linux boards", "int8"),
    "tflite": ("digits.tflite", "LiteRT (ai-edge-litert)", "Android, iOS, Linux boards", "fp32"),
    "tflite-int8": ("digits-int8.tflite", "LiteRT (ai-edge-litert)", "Android, iOS, Linux boards", "int8"),
    "tflm": ("digits-int8.tflite", "TF Lite Micro (x86 build)", "microcontrollers", "int8"),
    "iree": ("digits.vmfb", "IREE (local-sync)", "this CPU (llvm-cpu, host ISA)", "fp32"),
    "c": ("digits-c/model.c", "plain C99 (cc -O2)", "anything with a C compiler, no OS", "int8"),
    "c-cortex-m4": ("digits-c/model.c", "plain C99 on Cortex-M4", "QEMU mps2-an386", "int8"),
    "web": ("digits-web/", "onnxruntime-web (WASM)", "a browser", "fp32"),
    "xla": ("-", "torch-xla", "TPU / XLA devices", "-"),
}
# the `hotstart export` of each file (the CLI: what a user runs)
EXPORTS = {
    "digits.onnx": ["--format", "onnx"], "digits-int8.onnx": ["--format", "onnx", "--quantize", "int8"],
    "digits.pt2": ["--format", "pt2"], "digits.pte": ["--format", "pte"],
    "digits-int8.pte": ["--format", "pte", "--quantize", "int8"], "digits.tflite": ["--format", "tflite"],
    "digits-int8.tflite": ["--format", "tflite", "--quantize", "int8"], "digits.vmfb": ["--format", "iree"],
    "digits-c": ["--format", "c", "--harness"],
}


def hotstart_cli(py, *args, log=print) -> float:
    t = time.perf_counter()
    proc = subprocess.run([py, "-m", "hotstart", *args], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"hotstart {' '.join(args)} failed:\n{proc.stderr[-1500:]}")
    log(f"  hotstart {' '.join(a for a in args if not a.startswith('/'))}: {time.perf_counter() - t:.0f}s")
    return time.perf_counter() - t


def setup(py, root: Path, args, log) -> dict:
    """Train, export every file; {file name: export seconds or an error}."""
    hotstart_cli(py, "train", "--size", "16", "16", "--backbone", args.backbone, "--epochs", str(args.epochs),
                 "--lr", "1e-2", "--no-flip", "--out", str(root / "run"), "--no-progress", log=log)
    done = {}
    for name, flags in EXPORTS.items():
        if name.endswith(".pt2") and "pt2" in args.skip:
            done[name] = "skipped (--skip pt2)"
            continue
        try:
            done[name] = round(hotstart_cli(py, "export", str(root / "run"), *flags, "--out", str(root / name),
                                            log=log), 1)
        except RuntimeError as e:
            done[name] = f"export failed: {str(e).splitlines()[-1][:200]}"
    return done


# --- in-process runtimes: encoded N x C x H x W float32 -> float32 outputs ------------------------
# hotstart's own runtimes, opened through the one runtime interface (hotstart.deploy.open_model):
# target -> the keyword options of its runtime's `load` (one thread)
HOTSTART_RUNTIMES = {"torch": None, "onnx": {"threads": 1}, "onnx-int8": {"threads": 1}, "pt2": {}, "pte": {},
                     "pte-int8": {}, "tflite": {"threads": 1}, "tflite-int8": {"threads": 1}, "tflm": {},
                     "iree": {"driver": "local-sync"}}


def open_target(name: str, root: Path):
    """Target `name`'s model behind the runtime interface (a `ContractModel`), for hotstart's
    runtimes; None for the third-party ONNX runtimes (tract, OpenCV), which `open_runtime` wraps."""
    from hotstart.deploy import open_model

    if name not in HOTSTART_RUNTIMES:
        return None
    if name == "torch":
        return open_model(root / "run" / "model")
    runtime = "tflite-micro" if name == "tflm" else None  # None: the suffix's default
    return open_model(root / TARGETS[name][0], runtime, **HOTSTART_RUNTIMES[name])


def open_runtime(name: str, root: Path):
    """`run(x) -> logits` of target `name`: the runtime interface's `run` for hotstart's runtimes."""
    model = open_target(name, root)
    if model is not None:
        return model.run
    path = root / TARGETS[name][0]
    if name.startswith("tract"):
        import tract

        model = tract.onnx().load(str(path))
        from hotstart.contract import input_shape

        shape = ",".join(str(d) for d in (1, *input_shape(contract_model(root).meta)))
        model.set_input_fact(0, f"{shape},f32")
        runnable = model.into_model().into_runnable()
        return lambda x: np.concatenate([runnable.run([x[i:i + 1]])[0].to_numpy() for i in range(len(x))])
    if name.startswith("opencv"):
        import cv2

        net = cv2.dnn.readNetFromONNX(str(path), engine=cv2.dnn.ENGINE_CLASSIC)

        def run(x):
            net.setInput(x)
            return net.forward()
        return run
    raise KeyError(name)


def contract_model(root: Path):
    """The fp32 ONNX file behind the runtime interface: the contract's encoding and decoding, which
    the third-party runtimes (tract, OpenCV) are given and read with."""
    from hotstart.deploy import open_model

    return open_model(root / "digits.onnx")


def validation(root: Path):
    """The saved run's validation images, targets and encoded batch (the split `train` made)."""
    import torch

    from hotstart import load_learner
    from hotstart.datasets import load

    data, _ = load("digits")
    learner = load_learner(root / "run" / "model", data, valid_pct=0.2, seed=0, progress=False)
    valid = learner.valid_loader.dataset
    images = [valid.inputs[i] for i in range(len(valid))]
    x = torch.stack([learner.task.encode_input(img) for img in images]).numpy()
    return learner, images, [valid.targets[i] for i in range(len(valid))], x


# --- the C export: host harness and Cortex-M4 -------------------------------------------------------
def c_rows(root: Path, learner, images, x, torch_labels, runs: int) -> dict:
    import shutil

    import onnx

    from hotstart.export.c import firmware, host
    from hotstart.export.c.check import validation_pixels
    from hotstart.export.c.convert import convert, hotstart_meta

    folder = root / "digits-c"
    cmodel = convert(onnx.load(str(root / "digits-int8.onnx")))
    pixels, _ = validation_pixels(learner, hotstart_meta(onnx.load(str(root / "digits-int8.onnx"))))
    exe = host.compile_host(folder)
    labels, _ = host.run_host(exe, pixels, len(cmodel.meta["classes"]))
    size = sum((folder / f).stat().st_size for f in ("model.c", "model.h"))
    agreement = f"labels {int((labels == torch_labels).sum())}/{len(labels)}"
    many = np.repeat(pixels[:1], 1000, axis=0)
    one_raw, many_raw = root / "one.raw", root / "many.raw"
    one_raw.write_bytes(pixels[:1].tobytes())
    many_raw.write_bytes(many.tobytes())
    per_image, cold = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([str(exe), str(one_raw)], capture_output=True, check=True)
        t1 = time.perf_counter()
        subprocess.run([str(exe), str(many_raw)], capture_output=True, check=True)
        t2 = time.perf_counter()
        cold.append(t1 - t0)
        per_image.append(((t2 - t1) - (t1 - t0)) / 999)
    rows = {"c": {"file_bytes": size, "agreement": agreement, "cold_start_s": statistics.median(cold),
                  "latency_ms": statistics.median(per_image) * 1e3,
                  "notes": f"arena {cmodel.plan.size} B, const data {cmodel.weight_bytes} B"}}
    missing = [t for t in ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        rows["c-cortex-m4"] = {"notes": f"not measured: {', '.join(missing)} not found"}
        return rows
    (folder / "hotstart_test_images.h").write_text(firmware.test_images_header(pixels[:20]))
    subprocess.run(firmware.cortex_m_command(folder), check=True, capture_output=True, text=True)
    out = firmware.run_qemu(folder / "model.elf")
    figures, elf = firmware.qemu_figures(out), firmware.arm_size(folder / "model.elf")
    qemu_labels, _ = host.parse_lines(out, len(cmodel.meta["classes"]))
    rows["c-cortex-m4"] = {"file_bytes": size, "agreement": f"labels {int((qemu_labels == torch_labels[:20]).sum())}/20",
                           "latency_ms": None, "cold_start_s": None,
                           "notes": f"{figures['instructions']:,.0f} instructions per inference (QEMU -icount); "
                                    f"flash {elf['flash']} B, RAM {elf['ram']} B (2,048 B stack, {figures['stack']} B "
                                    "used)"}
    return rows


# --- cold starts ------------------------------------------------------------------------------------
def cold_command(py, name: str, root: Path, image: Path):
    """`hotstart predict` (through the runtime interface) for hotstart's runtimes; a child process of
    this script for tract and OpenCV."""
    if name == "torch":
        return [py, "-m", "hotstart", "predict", str(root / "run"), str(image)]
    if name == "tflm":
        return [py, "-m", "hotstart", "predict", str(root / TARGETS[name][0]), str(image), "--runtime", "tflite-micro"]
    if name in HOTSTART_RUNTIMES:
        return [py, "-m", "hotstart", "predict", str(root / TARGETS[name][0]), str(image)]
    if name in ("tract", "tract-int8", "opencv", "opencv-int8"):
        return [py, __file__, "--child", name, str(root), str(image)]
    return None


def child(name: str, root: Path, image: Path) -> None:
    """Load third-party target `name`, predict `image` with the contract's encoding and decoding
    (the fp32 ONNX file's), print the label."""
    contract = contract_model(root)
    out = open_runtime(name, root)(contract.preprocess(str(image))[None])[0]
    print(contract.decode(out)[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--backbone", default="smallcnn_micro")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5, help="cold starts per target")
    ap.add_argument("--iters", type=int, default=200, help="timed model calls per target")
    ap.add_argument("--skip", default="", help="comma-separated targets to leave out (e.g. pt2: minutes to compile)")
    ap.add_argument("--quick", action="store_true", help="1 epoch, 1 run, 10 calls, no pt2: checks the script works")
    ap.add_argument("--child", nargs=3, metavar=("TARGET", "ROOT", "IMAGE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], Path(args.child[1]), Path(args.child[2]))
    if args.quick:
        args.epochs, args.runs, args.iters, args.skip = 1, 1, 10, args.skip or "pt2"
    args.skip = {s for s in args.skip.split(",") if s}
    py, log = sys.executable, (lambda msg: print(msg, file=sys.stderr, flush=True))
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="deploy-targets-") as tmp:
        root = Path(tmp)
        exports = setup(py, root, args, log)
        learner, images, targets, x = validation(root)
        image = root / "one.png"
        images[0].save(image)
        rows = {name: {} for name in TARGETS}
        runtimes = {}
        torch_logits = open_runtime("torch", root)(x)
        torch_labels = torch_logits.argmax(1)
        for name in TARGETS:
            if name in args.skip or name.split("-")[0] in args.skip:
                rows[name]["notes"] = "skipped (--skip)"
                continue
            if name in ("c", "c-cortex-m4", "web", "xla"):
                continue
            try:
                run = open_runtime(name, root)
                logits = run(x)
            except Exception as e:  # a runtime that is missing or cannot read the file: its row says so
                rows[name]["notes"] = f"not measured: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
                continue
            runtimes[name] = run
            labels = logits.argmax(1)
            agree = f"labels {int((labels == torch_labels).sum())}/{len(labels)}"
            if TARGETS[name][3] == "fp32" and name != "torch":
                agree += f", logits within {float(np.abs(logits - torch_logits).max()):.1e}"
            accuracy = float(np.mean([learner.task.classes[int(i)] == t for i, t in zip(labels, targets)]))
            rows[name].update(agreement=agree, accuracy=round(accuracy, 4))
            file = root / ("run/model" if name == "torch" else TARGETS[name][0])
            rows[name]["file_bytes"] = (sum(f.stat().st_size for f in file.iterdir()) if file.is_dir()
                                        else file.stat().st_size)
        try:
            rows.update(c_rows(root, learner, images, x, torch_labels, args.runs))
        except Exception as e:
            rows["c"]["notes"] = f"not measured: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        rows["web"]["notes"] = "not measured here: tests/test_web_page.py checks its labels in headless Chromium"
        rows["xla"]["notes"] = XLA_NOTE
        # latency at batch 1: interleaved rounds, so that a slow spell hits every target alike
        samples = {name: [] for name in runtimes}
        rounds = max(1, min(10, args.iters // 10))
        for name, run in runtimes.items():
            for _ in range(3):
                run(x[:1])
        for r in range(rounds):
            for name, run in runtimes.items():
                for i in range(args.iters // rounds):
                    one = x[(r * 7 + i) % len(x):][:1]
                    t = time.perf_counter()
                    run(one)
                    samples[name].append(time.perf_counter() - t)
        for name, s in samples.items():
            rows[name]["latency_ms"] = statistics.median(s) * 1e3
        # cold starts: alternating targets, `runs` rounds
        commands = {name: cold_command(py, name, root, image) for name in runtimes}
        commands = {k: v for k, v in commands.items() if v}
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
        cold = {name: [] for name in commands}
        for cmd in commands.values():  # one untimed run each: the file cache warm for all alike
            subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT)
        for _ in range(args.runs):
            for name, cmd in commands.items():
                t = time.perf_counter()
                done = subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT)
                if done.returncode == 0:
                    cold[name].append(time.perf_counter() - t)
                else:
                    rows[name]["notes"] = f"cold start failed: {done.stderr.decode(errors='replace')[-200:]}"
        for name, s in cold.items():
            rows[name]["cold_start_s"] = statistics.median(s) if s else None
    for name, (fmt, runtime, where, precision) in TARGETS.items():
        rows[name] = {"format": fmt, "runtime": runtime, "where": where, "precision": precision, **rows[name]}
    result = {"machine": {"platform": platform.platform(), "processor": platform.processor(),
                          "cpus": os.cpu_count(), "python": platform.python_version()},
              "date": time.strftime("%Y-%m-%d %H:%M"), "config": {k: (sorted(v) if isinstance(v, set) else v)
                                                                  for k, v in vars(args).items() if k != "child"},
              "exports_s": exports, "rows": rows, "seconds": round(time.time() - started)}
    print("\n".join(table(rows)))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return result


def table(rows: dict) -> list:
    """The markdown table of `rows`."""
    def fmt(v, spec):
        return "-" if v is None else format(v, spec)

    lines = ["| target | format | runtime | runs on | precision | file | agreement with torch | cold start | "
             "latency b1 | notes |", "|" + "---|" * 10]
    for name, r in rows.items():
        size = r.get("file_bytes")
        lines.append(f"| {name} | {r['format']} | {r['runtime']} | {r['where']} | {r['precision']} | "
                     f"{'-' if size is None else f'{size / 1e3:,.1f} KB'} | {r.get('agreement', '-')} | "
                     f"{fmt(r.get('cold_start_s'), '.2f')} s | {fmt(r.get('latency_ms'), '.3f')} ms | "
                     f"{r.get('notes', '')} |")
    return lines


if __name__ == "__main__":
    main()
