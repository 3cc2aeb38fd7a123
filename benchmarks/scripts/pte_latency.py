"""Batch-1 latency of the digits model: ExecuTorch .pte (XNNPACK) against onnxruntime, one thread each.

    PYTHONPATH=. python benchmarks/scripts/pte_latency.py DIR    # DIR holds digits{,-int8}.{pte,onnx}

Each runtime gets one thread (onnxruntime: intra_op_num_threads=1; ExecuTorch: its threadpool
reset to 1). The two are timed alternately, call by call, so a load spike on a shared machine
hits both alike; the median over `--repeats` calls is reported, with the files' sizes.
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--repeats", type=int, default=300)
    args = ap.parse_args(argv)
    import onnxruntime as ort
    import torch
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool

    from hotstart.runtimes import PteRuntime

    _unsafe_reset_threadpool(1)
    folder = Path(args.folder)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    rows = {}
    for name in ("digits", "digits-int8"):
        pte = PteRuntime.load(folder / f"{name}.pte")
        sess = ort.InferenceSession(str(folder / f"{name}.onnx"), opts, providers=["CPUExecutionProvider"])
        x = np.random.default_rng(0).standard_normal((1, pte.meta["channels"], *pte.meta["size"])).astype(np.float32)
        xt = torch.from_numpy(x)
        times = {"pte": [], "onnxruntime": []}
        for i in range(args.repeats + 10):
            t = time.perf_counter()
            pte.method.execute([xt])
            a = time.perf_counter()
            sess.run(None, {"input": x})
            b = time.perf_counter()
            if i >= 10:  # warm-up
                times["pte"].append(a - t)
                times["onnxruntime"].append(b - a)
        rows[name] = {k: round(float(np.median(v)) * 1e3, 4) for k, v in times.items()}
        rows[name]["pte_bytes"] = (folder / f"{name}.pte").stat().st_size
        rows[name]["onnx_bytes"] = (folder / f"{name}.onnx").stat().st_size
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
