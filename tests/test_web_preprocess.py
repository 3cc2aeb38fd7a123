"""The web page's JavaScript preprocessing equals the model contract's, on random images.

`preprocess` in hotstart/export/web_page/app.js mirrors `encode_image` in hotstart/contract/image_input.py:
the same conversion to L / RGB, the same fixed-point antialiased resize (up and down, both axes),
the same channel conversion and normalization. Node runs the page's own file (no copy of it).
Skipped, saying so, where Node.js is not installed (failed under ``CI=true``: tests/needs.py).
"""
from __future__ import annotations

import base64
import json
import shutil
import subprocess
from importlib import resources

import numpy as np

from hotstart import contract
from needs import missing

NODE = shutil.which("node")
RUNNER = """
import { preprocess } from "./app.mjs";
import fs from "fs";
const cases = JSON.parse(fs.readFileSync(process.argv[2]));
const out = cases.map((c) => Array.from(preprocess(Uint8Array.from(Buffer.from(c.rgba, "base64")), c.w, c.h, c.task)));
fs.writeFileSync(process.argv[3], JSON.stringify(out));
"""


def _js_preprocess(tmp_path, cases):
    (tmp_path / "app.mjs").write_bytes((resources.files("hotstart.export") / "web_page" / "app.js").read_bytes())
    (tmp_path / "run.mjs").write_text(RUNNER)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    subprocess.run([NODE, "run.mjs", "cases.json", "out.json"], cwd=tmp_path, check=True, timeout=120)
    return json.loads((tmp_path / "out.json").read_text())


def test_js_preprocess_equals_the_predictor(tmp_path):
    if NODE is None:
        missing("needs Node.js (apt-get install nodejs) to run the page's JavaScript")
    from PIL import Image as PILImage

    rng = np.random.default_rng(0)
    cases, want = [], []
    for i in range(48):
        channels, mode = [1, 3][i % 2], ["L", "RGB", "auto"][i % 3]
        h, w = (int(v) for v in rng.integers(3, 90, 2))
        out_h, out_w = (int(v) for v in rng.integers(4, 48, 2))  # up and down, in each axis
        arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        if i % 5 == 0:
            arr[..., 1] = arr[..., 2] = arr[..., 0]  # a grey image
        meta = {"size": [out_h, out_w], "channels": channels, "image_mode": mode,
                "mean": [0.3 + 0.1 * c for c in range(channels)], "std": [0.2 + 0.05 * c for c in range(channels)]}
        want.append(contract.encode_image(PILImage.fromarray(arr, "RGB"), meta))
        rgba = np.concatenate([arr, np.full((h, w, 1), 255, np.uint8)], -1)
        cases.append({"rgba": base64.b64encode(rgba.tobytes()).decode(), "w": w, "h": h, "task": meta})
    got = _js_preprocess(tmp_path, cases)
    for i, (g, x) in enumerate(zip(got, want)):
        g = np.asarray(g, dtype=np.float32).reshape(x.shape)
        # the resized uint8 pixels are identical; what is left is float32 rounding of the last steps
        assert np.abs(g - x).max() < 1e-5, (i, cases[i]["task"], float(np.abs(g - x).max()))
