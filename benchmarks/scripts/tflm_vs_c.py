"""hotstart's C export beside TF Lite Micro, for the same trained model (the README's "Microcontrollers").

    python benchmarks/scripts/tflm_vs_c.py --out benchmarks/results/tflm-vs-c.json   # ~2 min on 2 cores
    python benchmarks/scripts/tflm_vs_c.py --epochs 1 --out /tmp/t.json              # a smoke run

One digits model (``smallcnn_micro``, 16x16, `fit_one_cycle(epochs, 1e-2)` without flips, seed 0:
the README's microcontroller recipe) goes two ways to int8:

- hotstart's C: onnxruntime's static int8 (QDQ) -> C (hotstart/export/c), built for the host and,
  where Debian's gcc-arm-none-eabi and qemu-system-arm are found, for a Cortex-M4 run in QEMU's
  mps2-an386 (flash and RAM from arm-none-eabi-size, instructions per inference from -icount);
- TF Lite Micro: litert-torch's PT2E int8 .tflite, run by the tflite-micro package's interpreter
  (TFLM's reference kernels compiled for this x86 CPU, with its recording allocator's arena report).

Every figure here is a count, not a timing, so the machine's load does not change it. What it cannot
give: TFLM's instructions per inference and its code size on a Cortex-M (that needs TFLM built for
the target: its Makefile downloads CMSIS and flatbuffers, not done here).
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's hotstart


def train(epochs: int):
    from hotstart import ImageClassificationSingle, datasets, tasklearner

    data, blocks = datasets.load("digits")
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = tasklearner(task, data, backbone="smallcnn_micro", seed=0, valid_pct=0.2, progress=False)
    learner.fit_one_cycle(epochs, 1e-2)
    return learner


def c_side(learner, int8_onnx: Path, folder: Path, pixels, ort_codes_of) -> dict:
    """The C export of the int8 ONNX: arena, const data, host parity with onnxruntime, Cortex-M4 figures."""
    import shutil
    import subprocess

    import onnx

    from hotstart.export.c import firmware, host, onnx_to_c
    from hotstart.export.c.convert import convert

    report = onnx_to_c(int8_onnx, folder, harness=True)
    cmodel = convert(onnx.load(str(int8_onnx)))
    out = {"arena_bytes": cmodel.plan.size, "const_bytes": cmodel.weight_bytes,
           "report": {k: str(v) for k, v in report.extra.items() if k != "files"}}
    exe = host.compile_host(folder)
    labels, logits = host.run_host(exe, pixels, len(cmodel.meta["classes"]))
    ref = ort_codes_of(cmodel.program.output.scale, cmodel.program.output.zero_point)
    out.update(labels=labels, labels_equal_onnxruntime=int((labels == ref.argmax(1)).sum()),
               max_step_from_onnxruntime=int(np.abs(logits - ref).max()))
    missing = [t for t in ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        out["cortex_m4"] = f"not measured: {', '.join(missing)} not found"
        return out
    (folder / "hotstart_test_images.h").write_text(firmware.test_images_header(pixels[:20]))
    subprocess.run(firmware.cortex_m_command(folder), check=True, capture_output=True, text=True)
    run = firmware.run_qemu(folder / "model.elf")
    qemu_labels, _ = host.parse_lines(run, len(cmodel.meta["classes"]))
    out["cortex_m4"] = {**firmware.arm_size(folder / "model.elf"), **firmware.qemu_figures(run),
                        "labels_equal_host_on_20_images": int((qemu_labels == labels[:len(qemu_labels)]).sum())}
    return out


def tflm_side(learner, path: Path, x) -> dict:
    """The int8 .tflite in TF Lite Micro and LiteRT: arena, weight bytes, outputs."""
    from ai_edge_litert import schema_py_generated as schema

    from hotstart.runtimes import open_file, tflite_file

    data = path.read_bytes()
    root = schema.Model.GetRootAs(data, 0)
    meta_buffers = {root.Metadata(i).Buffer() for i in range(root.MetadataLength())}
    weight_bytes = sum(root.Buffers(i).DataLength() for i in range(root.BuffersLength()) if i not in meta_buffers)
    micro, litert = open_file(path, runtime="tflite-micro"), open_file(path)
    micro_out, litert_out = micro.run(x), litert.run(x)
    return {"file_bytes": len(data), "weight_bytes": weight_bytes, "arena": micro.arena_bytes(),
            "metadata_bytes": len(json.dumps(tflite_file.read_props(data))),
            "micro_labels": micro_out.argmax(1), "litert_labels": litert_out.argmax(1),
            "max_step_tflm_vs_litert": float(np.abs(micro_out - litert_out).max() / micro.meta["output_scale"])}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--out", default=None, help="write the JSON result here")
    args = ap.parse_args(argv)
    import torch

    from hotstart.export.c.check import validation_pixels
    from hotstart.export.c.host import onnxruntime_codes
    from hotstart.runtimes import open_file

    torch.set_num_threads(1)
    started = time.time()
    learner = train(args.epochs)
    task, valid = learner.task, learner.valid_loader.dataset
    targets = [valid.targets[i] for i in range(len(valid))]
    x = torch.stack([task.encode_input(valid.inputs[i]) for i in range(len(valid))])
    with torch.no_grad():
        fp32_labels = learner.task_model().eval()(x).argmax(1).numpy()
    x = x.numpy()
    with tempfile.TemporaryDirectory(prefix="tflm-vs-c-") as tmp:
        tmp = Path(tmp)
        int8_onnx = learner.export(tmp / "digits-int8.onnx", quantize="int8", measure=False).path
        ort = open_file(int8_onnx)
        ort_labels, meta = ort.run(x).argmax(1), ort.meta
        pixels, _ = validation_pixels(learner, meta)
        c = c_side(learner, int8_onnx, tmp / "c", pixels,
                   lambda scale, zero: onnxruntime_codes(int8_onnx.read_bytes(), pixels, meta, scale, zero))
        tflite = learner.export(tmp / "digits-int8.tflite", quantize="int8").path
        t = tflm_side(learner, tflite, x)

    def accuracy(labels):
        return round(float(np.mean([task.classes[int(i)] == y for i, y in zip(labels, targets)])), 4)

    n = len(targets)
    result = {
        "model": f"smallcnn_micro 16x16, fit_one_cycle({args.epochs}, 1e-2), seed 0; {n} validation digits",
        "accuracy": {"torch fp32": accuracy(fp32_labels), "onnxruntime int8": accuracy(ort_labels),
                     "C int8 (host)": accuracy(c["labels"]), "LiteRT int8": accuracy(t["litert_labels"]),
                     "TFLM int8": accuracy(t["micro_labels"])},
        "c": {k: v for k, v in c.items() if k != "labels"},
        "tflm": {"file_bytes": t["file_bytes"], "weight_bytes": t["weight_bytes"], "arena": t["arena"],
                 "hotstart_metadata_bytes": t["metadata_bytes"],
                 "labels_equal_onnxruntime_int8": int((t["micro_labels"] == ort_labels).sum()),
                 "labels_equal_litert": int((t["micro_labels"] == t["litert_labels"]).sum()),
                 "max_step_vs_litert": t["max_step_tflm_vs_litert"],
                 "instructions_per_inference": "not measured: the tflite-micro package runs TFLM's kernels "
                                               "on x86; a Cortex-M count needs TFLM cross-compiled"},
        "validation_images": n, "seconds": round(time.time() - started, 1),
    }
    print(json.dumps(result, indent=1, default=str))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1, default=str) + "\n")
    return result


if __name__ == "__main__":
    main()
