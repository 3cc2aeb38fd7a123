"""Export (ONNX fp32 / int8, .pt2), the torch-free predictor, and the export / predict commands.

One digits model (small CNN, 16x16, one epoch, seed 0, train's default split) serves every test:
it is trained once per module, saved in the layout `python -m hotstart train` writes
(RUN/model/), and exported to ONNX once.
"""
import json
import platform
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest
import torch

# Makes `import torch` (and friends) raise in a subprocess: the proof that a path needs no torch.
BLOCKER = textwrap.dedent("""
    import sys
    class _Blocker:
        BLOCKED = ("torch", "torchvision", "timm", "lightning", "pytorch_lightning", "lightning_fabric",
                   "torchmetrics")
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.BLOCKED:
                raise ImportError(f"blocked in this test: {name}")
            return None
    sys.meta_path.insert(0, _Blocker())
""")


@pytest.fixture(scope="module")
def deployed(tmp_path_factory, digits):
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits
    root = tmp_path_factory.mktemp("deploy")
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    # fp32: the tests compare the learner's own outputs with the fp32 exports' to 1e-4 (by default
    # a CPU with bf16 units would train and predict in bf16: learner/precision.py)
    learner = tasklearner(task, data, seed=0, valid_pct=0.2, progress=False, precision="32-true")
    # 2 epochs: after 1, seeds 0-4 end at 0.81-0.95 validation accuracy (0.80 in a test run),
    # a coin toss against the 0.8 below; after 2 at 0.958-0.972 (measured)
    learner.fit_one_cycle(2, 3e-3)
    learner.save(root / "run" / "model")
    report = learner.export(root / "digits.onnx")
    valid = learner.valid_loader.dataset
    images = [valid.inputs[i] for i in range(len(valid))]
    targets = [valid.targets[i] for i in range(len(valid))]
    files = []
    for i, img in enumerate(images[:2]):
        files.append(root / f"img{i}.png")
        img.resize((40, 40)).save(files[-1])  # larger than the task size: exercises the resize
    return SimpleNamespace(root=root, learner=learner, onnx=root / "digits.onnx", report=report, images=images,
                           targets=targets, files=files, run=root / "run")


def test_onnx_file_is_self_contained_with_task_metadata_and_dynamic_batch(deployed):
    import onnx
    import onnxruntime as ort

    assert deployed.report.max_abs_diff <= 1e-4
    model = onnx.load(str(deployed.onnx), load_external_data=False)
    assert not any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)
    assert [p.name for p in deployed.onnx.parent.iterdir() if p.name.startswith("digits.onnx")] == ["digits.onnx"]
    meta = {p.key: p.value for p in model.metadata_props}
    task = deployed.learner.task
    assert meta["format"] == "hotstart.onnx/1" and meta["kind"] == "ImageClassificationSingle"
    assert json.loads(meta["classes"]) == list(range(10))
    assert json.loads(meta["size"]) == [16, 16] and json.loads(meta["channels"]) == 1
    assert json.loads(meta["mean"]) == list(task.stats[0]) and json.loads(meta["std"]) == list(task.stats[1])
    assert meta["activation"] == "softmax" and meta["image_mode"] == "L"
    assert json.loads(meta["task"]) == task.to_dict()
    import hotstart

    assert meta["hotstart_version"] == hotstart.__version__
    batch_dim = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert batch_dim.dim_param and not batch_dim.HasField("dim_value")  # symbolic: any batch size
    sess = ort.InferenceSession(str(deployed.onnx), providers=["CPUExecutionProvider"])
    model_t = deployed.learner.model.eval()
    for n in (1, 5):
        x = torch.stack([task.encode_input(img) for img in deployed.images[:n]])
        got = sess.run(None, {"input": x.numpy()})[0]
        with torch.no_grad():
            want = model_t(x).numpy()
        assert got.shape == (n, 10) and np.abs(got - want).max() < 1e-4


def test_predictor_matches_learner_predict_on_every_validation_digit(deployed):
    from hotstart.predictor import Predictor

    p = Predictor.load(deployed.onnx)
    worst, same, labels = 0.0, 0, []
    for img in deployed.images:
        label, probs = deployed.learner.predict(img)
        plabel, pprobs = p.predict(img)
        same += label == plabel
        labels.append(plabel)
        worst = max(worst, float(np.abs(probs.numpy() - pprobs).max()))
    assert same == len(deployed.images) == 359
    assert worst < 1e-4, worst
    assert [b[0] for b in p.predict_many(deployed.images, batch_size=32)] == labels
    acc = p.evaluate(deployed.images, deployed.targets)
    assert acc["n"] == 359
    assert acc["accuracy"] == pytest.approx(deployed.learner.validate()["accuracy"], abs=1e-6)
    assert acc["accuracy"] > 0.8


def test_predictor_reads_paths_and_converts_modes_as_the_image_block(deployed, tmp_path):
    from PIL import Image

    from hotstart.predictor import Predictor

    p = Predictor.load(deployed.onnx)
    base = deployed.images[3].resize((23, 31))
    rgba = base.convert("RGBA")
    rgba.putalpha(Image.fromarray(np.linspace(0, 255, 23 * 31).reshape(31, 23).astype(np.uint8)))
    wide = Image.fromarray(np.asarray(base, dtype=np.uint16) * 257)  # 16-bit grayscale
    assert wide.mode.startswith("I;16")
    variants = {"rgb": base.convert("RGB"), "rgba": rgba, "palette": base.convert("RGB").convert("P"),
                "16bit": wide, "array": np.asarray(base.convert("RGB")), "float": np.asarray(base) / 255.0}
    rotated = base.convert("RGB")
    exif = rotated.getexif()
    exif[0x0112] = 6  # orientation: rotate 90 degrees on display
    rotated.save(tmp_path / "rot.jpg", exif=exif, quality=95)
    variants["exif-jpeg-path"] = tmp_path / "rot.jpg"
    for name, value in variants.items():
        want = deployed.learner.predict(Image.open(value) if isinstance(value, Path) else value)[1].numpy()
        got = p.predict(value)[1]
        assert np.abs(got - want).max() < 1e-4, name


def test_resize_is_bit_identical_to_torchvision(deployed):
    import torchvision.transforms.v2.functional as F

    from hotstart.contract import resize_uint8

    rng = np.random.default_rng(0)
    mismatches = 0
    for _ in range(150):
        h, w = (int(v) for v in rng.integers(1, 200, 2))
        oh, ow = (int(v) for v in rng.integers(1, 64, 2))
        arr = rng.integers(0, 256, (h, w, int(rng.choice([1, 3]))), dtype=np.uint8)
        want = F.resize(torch.from_numpy(arr).permute(2, 0, 1).contiguous(), [oh, ow], antialias=True)
        got = resize_uint8(arr, (oh, ow))
        diff = np.abs(got.astype(int) - want.permute(1, 2, 0).numpy().astype(int)).max()
        mismatches += diff > 0
        assert diff <= 1
    if platform.machine().lower() in ("x86_64", "amd64"):  # torch's AVX2 uint8 kernel: exact
        assert mismatches == 0


def test_bundle_predicts_in_a_process_where_torch_cannot_be_imported(deployed, tmp_path):
    from hotstart.cli import main

    bundle = tmp_path / "bundle"
    assert main(["export", str(deployed.run), "--bundle", str(bundle)]) == 0
    assert sorted(p.name for p in bundle.iterdir()) == ["README.md", "hotstart-export.json", "hotstart_contract", "model.onnx",
                                                        "predictor.py"]
    script = BLOCKER + textwrap.dedent(f"""
        try:
            import torch
        except ImportError:
            pass
        else:
            raise SystemExit("the blocker does not block")
        import runpy
        sys.argv = ["predictor.py", {str(bundle / "model.onnx")!r}, {str(deployed.files[0])!r}, "--json"]
        sys.path.insert(0, {str(bundle)!r})
        runpy.run_path({str(bundle / "predictor.py")!r}, run_name="__main__")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip())
    from PIL import Image

    label, probs = deployed.learner.predict(Image.open(deployed.files[0]))
    assert out["label"] == label and out["top"][0][0] == label
    assert out["top"][0][1] == pytest.approx(float(probs.max()), abs=1e-4)


def test_a_bundles_predictor_takes_a_folder_of_images_as_hotstart_predict_does(deployed, tmp_path):
    """The bundle's predictor.py refused a folder (``[Errno 21] Is a directory``) where ``hotstart
    predict`` lists the images under it; both now list it with the contract's one walker (sorted,
    subfolders included, hidden files and other suffixes left out), and print the same lines."""
    import shutil

    from hotstart.cli import main

    bundle = tmp_path / "bundle"
    assert main(["export", str(deployed.run), "--bundle", str(bundle)]) == 0
    photos = tmp_path / "photos"
    (photos / "sub").mkdir(parents=True)
    shutil.copy(deployed.files[0], photos / "a.png")
    shutil.copy(deployed.files[1], photos / "sub" / "b.png")
    (photos / "broken.png").write_text("not an image")
    (photos / "notes.txt").write_text("skipped")
    shutil.copy(deployed.files[1], photos / ".hidden.png")
    (tmp_path / "empty").mkdir()

    def run(code, *inputs):
        return subprocess.run([sys.executable, "-c", BLOCKER + code, str(bundle / "model.onnx"), *map(str, inputs),
                               "--json"], capture_output=True, text=True, timeout=120, cwd=bundle)

    bundled = "import runpy\nsys.path.insert(0, '.')\nsys.argv[0] = 'predictor.py'\nrunpy.run_path('predictor.py', run_name='__main__')\n"
    direct = "from hotstart.cli import main\nsys.exit(main(['predict', *sys.argv[1:]]))\n"
    ours, theirs = run(bundled, photos, deployed.files[0]), run(direct, photos, deployed.files[0])
    assert ours.returncode == theirs.returncode == 1, (ours.stderr, theirs.stderr)  # broken.png
    assert ours.stdout == theirs.stdout and ours.stderr == theirs.stderr
    objects = [json.loads(line) for line in ours.stdout.splitlines()]
    assert [o["image"] for o in objects] == [str(photos / "a.png"), str(photos / "broken.png"),
                                             str(photos / "sub" / "b.png"), str(deployed.files[0])]
    empty = run(bundled, tmp_path / "empty")
    assert empty.returncode == 1 and empty.stdout == ""
    assert f"error: {tmp_path / 'empty'}: a folder with no image files under it" in empty.stderr


def test_cli_predict_onnx_never_imports_torch_and_reports_bad_images(deployed, tmp_path):
    bad = tmp_path / "broken.png"
    bad.write_text("not an image")
    argv = ["predict", str(deployed.onnx), str(deployed.files[0]), str(bad), str(deployed.files[1]), "--top-k", "2"]
    script = BLOCKER + f"from hotstart.cli import main\nsys.exit(main({argv!r}))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(str(deployed.files[0])) and lines[1].startswith(str(deployed.files[1]))
    assert str(bad) in proc.stderr and "cannot load image" in proc.stderr
    from PIL import Image

    label, probs = deployed.learner.predict(Image.open(deployed.files[0]))
    top = sorted(range(10), key=lambda i: -float(probs[i]))[:2]
    assert lines[0] == f"{deployed.files[0]}: {label} ({top[0]} {probs[top[0]]:.3f}, {top[1]} {probs[top[1]]:.3f})"


def test_cli_predict_takes_a_folder_of_images_and_json_has_an_object_per_input(deployed, tmp_path):
    """A folder INPUT stands for the images under it (it was ``[Errno 21] Is a directory``); with
    --json an image that fails gets an ``error`` object in its place (it got none: a reader of the
    JSON lines could not tell which input was missing). Still without torch."""
    import json
    import shutil

    photos = tmp_path / "photos"
    (photos / "sub").mkdir(parents=True)
    shutil.copy(deployed.files[0], photos / "a.png")
    shutil.copy(deployed.files[1], photos / "sub" / "b.png")
    (photos / "broken.png").write_text("not an image")
    (photos / "notes.txt").write_text("not an image either, and not one by its name: skipped")
    shutil.copy(deployed.files[1], photos / ".hidden.png")
    (tmp_path / "empty").mkdir()

    def predict(*inputs):
        argv = ["predict", str(deployed.onnx), *map(str, inputs), "--json"]
        script = BLOCKER + f"from hotstart.cli import main\nsys.exit(main({argv!r}))\n"
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)

    proc = predict(photos, deployed.files[0])
    assert proc.returncode == 1, proc.stderr
    objects = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["image"] for o in objects] == [str(photos / "a.png"), str(photos / "broken.png"),
                                             str(photos / "sub" / "b.png"), str(deployed.files[0])]
    assert [("error" in o, "label" in o) for o in objects] == [(False, True), (True, False), (False, True),
                                                               (False, True)]
    assert "cannot load image" in objects[1]["error"] and str(photos / "broken.png") in proc.stderr
    assert objects[0]["label"] == objects[3]["label"]  # the same image, once in the folder
    proc = predict(tmp_path / "empty", deployed.files[0])
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout
    assert proc.stderr.strip().splitlines() == [f"error: {tmp_path / 'empty'}: a folder with no image files under it "
                                                f"(.jpg, .jpeg, .png, .bmp, .gif, .tif, .tiff, .webp); give image "
                                                f"files or a folder of them"]


def test_cli_export_onnx_and_predict_with_the_saved_learner(deployed, tmp_path, capsys):
    from hotstart.cli import main

    out = tmp_path / "digits.onnx"
    assert main(["export", str(deployed.run), "--format", "onnx", "--out", str(out)]) == 0
    assert "largest difference from torch" in capsys.readouterr().out
    assert out.read_bytes() == deployed.onnx.read_bytes()  # deterministic: the same model, the same file
    files = [str(f) for f in deployed.files]
    assert main(["predict", str(deployed.run), *files, "--json"]) == 0
    from_learner = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["predict", str(out), *files, "--json"]) == 0
    from_onnx = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["label"] for r in from_learner] == [r["label"] for r in from_onnx]
    for a, b in zip(from_learner, from_onnx):
        assert np.allclose([p for _, p in a["top"]], [p for _, p in b["top"]], atol=1e-4)
    from hotstart.deploy import open_model  # train's --out folder opens as `hotstart predict` opens it

    assert open_model(deployed.run).predict(deployed.files[0])[0] == from_onnx[0]["label"]
    assert main(["export", str(tmp_path / "missing"), "--out", str(out)]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_int8_export_is_3x_smaller_and_within_one_point(deployed, tmp_path, capsys):
    import onnx

    from hotstart.cli import main
    from hotstart.predictor import Predictor

    out = tmp_path / "digits-int8.onnx"
    assert main(["export", str(deployed.run), "--format", "onnx", "--quantize", "int8", "--out", str(out),
                 "--measure"]) == 0
    printed = capsys.readouterr().out
    for key in ("valid accuracy fp32", "valid accuracy int8", "size ratio", "latency ratio int8 / fp32, batch 1",
                "latency ratio int8 / fp32, batch 32"):
        assert key in printed, printed
    model = onnx.load(str(out))
    ops = {n.op_type for n in model.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops  # QDQ format
    weights_q = [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.INT8]
    assert weights_q and any(len(i.dims) == 1 and i.dims[0] > 1 for i in model.graph.initializer
                             if i.data_type == onnx.TensorProto.FLOAT and "scale" in i.name)  # per channel
    assert deployed.onnx.stat().st_size >= 3 * out.stat().st_size
    reported = {k: float(printed.split(f"valid accuracy {k}: ")[1].split()[0]) for k in ("fp32", "int8")}
    assert reported["fp32"] == pytest.approx(deployed.learner.validate()["accuracy"], abs=1e-4)
    int8 = Predictor.load(out)
    assert "int8" in int8.meta["quantization"]
    assert int8.evaluate(deployed.images, deployed.targets)["accuracy"] == pytest.approx(reported["int8"], abs=1e-4)
    assert abs(reported["int8"] - reported["fp32"]) <= 0.01
    # "largest difference from torch" is the int8 file's own (int8 rounding: far above the fp32 file's)
    int8_diff = float(printed.split("largest difference from torch on a check batch: ")[1].split()[0])
    fp32_diff = float(printed.split("largest difference of the fp32 file from torch: ")[1].split()[0])
    assert int8_diff > 10 * fp32_diff and int8_diff < 1.0
    # no intermediate shapes with the symbolic batch (tract refuses concrete shapes against them)
    assert not [vi.name for vi in model.graph.value_info if any(d.dim_param for d in vi.type.tensor_type.shape.dim)]


def test_export_failure_names_the_layer(deployed, tmp_path, capfd):
    import torch.nn as nn

    from hotstart import tasklearner
    from hotstart.export import ExportError
    from hotstart.models import TaskModel

    class DataDependent(nn.Module):
        def forward(self, x):
            return x * 2 if x.mean() > 0 else x  # a branch on values: torch.export cannot trace it

    backbone = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), DataDependent(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    learner = tasklearner(deployed.learner.task, None, model=TaskModel(backbone, nn.Linear(8, 10)), progress=False)
    with pytest.raises(ExportError, match=r"backbone\.1 \(DataDependent") as e:
        learner.export(tmp_path / "x.onnx")
    # one paragraph (tests/test_export_failures.py holds the other formats to it): no colour codes
    # (the ONNX exporter's message has them), no partial graph printed to stderr
    text = str(e.value)
    assert "What to try" in text and "data-dependent control flow" in text
    assert "\n" not in text and "\x1b[" not in text, repr(text)
    assert "def forward" not in capfd.readouterr().err
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.slow
def test_pt2_package_equals_eager_and_predicts(deployed, tmp_path, capfd, caplog):
    """The one AOTInductor compile of the suite (about a minute on 2 cores): SmallCNN at 8x8. Without
    torch's "No CUDA runtime is found" notice (logged on a CPU machine with a CUDA toolkit)."""
    from hotstart import ImageClassificationSingle, tasklearner
    from hotstart.cli import main
    from hotstart.runtimes import Pt2Runtime

    task = ImageClassificationSingle(deployed.learner.task.blocks, size=(8, 8), augment=False)
    learner = tasklearner(task, None, seed=0, progress=False)
    path = tmp_path / "digits.pt2"
    report = learner.export(path, inductor_configs={"aot_inductor.compile_wrapper_opt_level": "O0"})
    assert report.max_abs_diff <= 1e-4
    assert "No CUDA runtime" not in caplog.text + capfd.readouterr().err
    names = zipfile.ZipFile(path).namelist()
    assert any(n.endswith(".so") for n in names) and not any(n.endswith((".pkl", "data.pkl")) for n in names)
    pt2 = Pt2Runtime.load(path)
    meta = pt2.meta
    assert meta["kind"] == "ImageClassificationSingle" and meta["size"] == [8, 8]
    assert json.loads(json.dumps(meta["task"])) == task.to_dict()
    x = torch.stack([task.encode_input(img) for img in deployed.images[:7]])  # another batch size than traced
    with torch.no_grad():
        want = learner.model.eval()(x).numpy()
    got = pt2.run(x.numpy())
    assert got.shape == (7, 10) and float(np.abs(got - want).max()) <= 1e-4
    assert main(["predict", str(path), str(deployed.files[0]), "--json"]) == 0
    printed = capfd.readouterr()
    assert "No CUDA runtime" not in printed.err + caplog.text
    out = json.loads(printed.out.strip().splitlines()[-1])
    from PIL import Image

    assert out["label"] == learner.predict(Image.open(deployed.files[0]))[0]

    # A package that fails the check never replaces `path`: the previous file stays as it was, and
    # no temporary file is left. The compile is this test's real package again (copied: a second
    # compile would cost another minute), so the load and the check are real; tolerance=-1 fails.
    from hotstart.export import ExportError

    package, previous = path.read_bytes(), b"the previous export"
    path.write_bytes(previous)

    def compile_again(program, package_path, inductor_configs=None):
        if hasattr(package_path, "write"):
            package_path.write(package)
        else:
            Path(package_path).write_bytes(package)
        return package_path

    with mock.patch.object(torch._inductor, "aoti_compile_and_package", compile_again):
        with pytest.raises(ExportError, match="differ by up to"):
            learner.export(path, tolerance=-1.0)
    assert path.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["digits.pt2"]


def test_multilabel_export_and_predictor_agree_with_the_learner(deployed, tmp_path):
    from hotstart import ImageClassificationMulti, Image, LabelMulti, tasklearner
    from hotstart.predictor import Predictor

    classes = ["even", "odd", "small", "large"]
    task = ImageClassificationMulti((Image(channels=None), LabelMulti(classes)), size=(12, 12), augment=False)
    learner = tasklearner(task, None, seed=0, progress=False)  # untrained: parity, not accuracy
    learner.export(tmp_path / "multi.onnx")
    p = Predictor.load(tmp_path / "multi.onnx")
    assert p.meta["activation"] == "sigmoid" and p.meta["image_mode"] == "auto" and p.meta["channels"] == 3
    for img in deployed.images[:20]:  # grayscale images into a 3-channel model: repeated channels
        labels, probs = learner.predict(img)
        plabels, pprobs = p.predict(img)
        assert labels == plabels and np.abs(probs.numpy() - pprobs).max() < 1e-4
    targets = [["even", "small"]] * 20
    right = sum(sum((c in set(pl)) == (c in set(t)) for c in classes)
                for (pl, _), t in zip(p.predict_many(deployed.images[:20]), targets))
    assert p.evaluate(deployed.images[:20], targets)["accuracy"] == pytest.approx(right / 80)


def test_pte_matches_learner_predict_on_every_validation_digit(deployed, tmp_path, capfd):
    """ExecuTorch (.pte, XNNPACK, fp32): the same labels as learner.predict on all 359 validation
    digits and probabilities within 1e-4; the batch is static (4 here: padded and split)."""
    pytest.importorskip("executorch", reason="install hotstart[edge] for the .pte export")
    from hotstart.cli import main
    from hotstart.runtimes import PteRuntime

    out = tmp_path / "digits.pte"
    assert main(["export", str(deployed.run), "--format", "pte", "--batch-size", "4", "--out", str(out)]) == 0
    printed = capfd.readouterr()
    assert "largest difference from torch" in printed.out
    assert "cpuinfo" not in printed.err, printed.err  # ExecuTorch's notices stay off the terminal
    pte = PteRuntime.load(out)
    assert pte.batch_size == 4 and pte.meta["format"] == "hotstart.pte/1" and pte.meta["size"] == [16, 16]
    assert pte.meta["task"] == deployed.learner.task.to_dict()
    task = deployed.learner.task
    x = torch.stack([task.encode_input(img) for img in deployed.images])
    logits = pte.run(x.numpy())  # 359 = 89 batches of 4 + one padded batch of 3
    with torch.no_grad():
        want = torch.softmax(deployed.learner.model.eval()(x), 1).numpy()
    got = np.exp(logits - logits.max(1, keepdims=True))
    got /= got.sum(1, keepdims=True)
    labels = [deployed.learner.predict(img)[0] for img in deployed.images]
    assert [task.classes[i] for i in got.argmax(1)] == labels
    assert float(np.abs(got - want).max()) < 1e-4
    label, probs = pte.predict(deployed.images[0])
    assert label == labels[0] and np.allclose(probs, want[0], atol=1e-4)
    assert main(["predict", str(out), str(deployed.files[0]), "--json"]) == 0
    from PIL import Image

    printed = capfd.readouterr()
    assert json.loads(printed.out.strip())["label"] == deployed.learner.predict(Image.open(deployed.files[0]))[0]
    assert "cpuinfo" not in printed.err, printed.err
