"""The C export (hotstart/export/c): int8 C that equals onnxruntime, on the host and on an emulated Cortex-M4.

One small digits model (SmallCNN widths 8-16-32 at 16x16, ~20 k parameters; conftest's
`digits_micro`) is trained once per session; its int8 ONNX file is the reference that onnxruntime
runs and the C export converts.
Rounding: onnxruntime's kernels requantize in float32 and round half to even; the C requantizes
with a Q31 multiplier and a shift in 64-bit integers, also rounding half to even (qmath.py).
"""
import re
import shutil
import subprocess

import numpy as np
import pytest
import torch

from needs import missing

CFLAGS = ["-std=c99", "-Wall", "-Werror", "-O2"]


def assert_integer_only(source: str) -> None:
    """No float type, floating literal or heap call in the code (comments aside)."""
    code = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    assert not re.search(r"\b(float|double|malloc|calloc|free)\b", code)
    assert not re.search(r"\b\d+\.\d*(e[-+]?\d+)?f?\b", code)


@pytest.fixture(scope="module")
def small(tmp_path_factory, digits_micro, digits_micro_int8):
    """conftest's session model (shared with the LiteRT, TF Lite Micro and IREE tests) and its int8 ONNX."""
    from types import SimpleNamespace

    import onnx

    from hotstart.export.c import onnx_to_c
    from hotstart.export.c.check import validation_pixels

    learner, int8 = digits_micro, digits_micro_int8
    tmp = tmp_path_factory.mktemp("c-export")
    report = onnx_to_c(int8, tmp / "c", harness=True)
    model = onnx.load(str(int8))
    from hotstart.export.c.convert import hotstart_meta

    meta = hotstart_meta(model)
    pixels, targets = validation_pixels(learner, meta)
    return SimpleNamespace(learner=learner, int8=int8, folder=tmp / "c", report=report, meta=meta,
                           pixels=pixels, targets=targets, tmp=tmp)


@pytest.fixture(scope="module")
def host_build(small):
    cc = shutil.which("cc")
    if cc is None:
        missing("no C compiler: install one (Debian: apt-get install gcc) for the host build")
    exe = small.folder / "harness"
    subprocess.run([cc, *CFLAGS, "-o", str(exe), str(small.folder / "harness.c"), str(small.folder / "model.c")],
                   check=True, capture_output=True, text=True)
    return exe


def test_model_c_is_c99_integer_only_with_one_static_arena(small):
    source = (small.folder / "model.c").read_text()
    includes = {line.split()[1] for line in source.splitlines() if line.startswith("#include")}
    assert includes == {"<stdint.h>", "<string.h>", '"model.h"'}
    assert_integer_only(source)
    assert source.count("static int32_t hs_arena_words[(HOTSTART_ARENA_BYTES + 3) / 4];") == 1
    header = (small.folder / "model.h").read_text()
    assert "int hotstart_predict(const uint8_t *image, int8_t *logits);" in header
    assert "#define HOTSTART_INPUT_HEIGHT 16" in header and "#define HOTSTART_NUM_CLASSES 10" in header
    # the arena: the largest two tensors alive together (8 x 16 x 16 in and out of the second conv)
    assert "#define HOTSTART_ARENA_BYTES 4096" in header
    assert small.report.extra["needs RAM (activation arena)"] == "4096 bytes"


def test_host_build_equals_onnxruntime_on_every_validation_digit(small, host_build):
    from hotstart.export.c import host

    labels, logits = host.run_host(host_build, small.pixels, 10)
    from hotstart.export.c.convert import convert
    import onnx

    program = convert(onnx.load(str(small.int8))).program
    ref = host.onnxruntime_codes(small.int8.read_bytes(), small.pixels, small.meta, program.output.scale,
                                 program.output.zero_point)
    assert len(labels) == len(small.targets) == 359  # the whole validation split of the 1,797 digits
    assert (labels == ref.argmax(1)).all()
    steps = np.abs(logits - ref)
    assert steps.max() <= 1, f"{(steps > 0).sum()} logits differ, by up to {steps.max()} steps"
    accuracy = np.mean([small.meta["classes"][i] == t for i, t in zip(labels, small.targets)])
    assert accuracy > 0.8, accuracy


def test_learner_export_c_from_the_cli_writes_model_and_header_and_checks_itself(small, tmp_path, capsys):
    """``hotstart export MODEL_DIR --format c`` -> learner.export(..., format="c"): int8, C, self-check."""
    if shutil.which("cc") is None:
        missing("no C compiler: install one (Debian: apt-get install gcc)")
    from hotstart.cli import main

    small.learner.save(tmp_path / "model")
    assert main(["export", str(tmp_path / "model"), "--format", "c", "--out", str(tmp_path / "c" / "digits.c"),
                 "--ram-limit", "16384"]) == 0
    printed = capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["digits.c", "digits.h"]
    assert '#include "digits.h"' in (tmp_path / "c" / "digits.c").read_text()
    assert "needs RAM (activation arena): 4096 bytes" in printed
    assert "labels equal onnxruntime's: 359 / 359" in printed
    assert "largest logit difference from onnxruntime (int8 steps): 0" in printed \
        or "largest logit difference from onnxruntime (int8 steps): 1" in printed
    accuracy = float(printed.split("valid accuracy (C): ")[1].split()[0])
    assert accuracy > 0.8


def test_resnet10t_class_model_at_32x32_agrees_with_onnxruntime(digits, tmp_path):
    """timm's resnet10t layout (tiered deep stem, max pool, avg-pool downsampling, residual adds) at
    narrower widths, so that it trains and compiles in seconds."""
    if shutil.which("cc") is None:
        missing("no C compiler: install one (Debian: apt-get install gcc)")
    from timm.models.resnet import BasicBlock, ResNet

    from hotstart import ImageClassificationSingle, tasklearner
    from hotstart.export.c import host, onnx_to_c
    from hotstart.export.c.check import validation_pixels
    from hotstart.export.c.convert import convert
    import onnx

    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(32, 32), augment={"flip": 0.0})
    # timm draws the initial weights from the global RNG, whose state here depends on the tests
    # before this one: a fixed seed, restored after. (CI drew an init whose logits differed from
    # onnxruntime's by 3 steps on one image: one-step float32 rounding differences inside
    # onnxruntime's fused kernels grow through the residual adds; labels stayed equal.)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=0, in_chans=1, stem_width=8, stem_type="deep_tiered",
                     avg_down=True, channels=(16, 32, 64, 128))
    learner = tasklearner(task, data.subset(list(range(600))), backbone=net, seed=0, valid_pct=0.2, progress=False)
    learner.fit_one_cycle(1, 3e-3)
    int8 = tmp_path / "resnet-int8.onnx"
    learner.export(int8, quantize="int8", measure=False, calibrate=128)
    onnx_to_c(int8, tmp_path / "c", harness=True)
    assert_integer_only((tmp_path / "c" / "model.c").read_text())  # the float32 average is emulated
    program = convert(onnx.load(str(int8))).program
    kinds = {type(op).__name__ for op in program.ops} | {op.kind for op in program.ops if hasattr(op, "kind")}
    assert {"Conv", "Add", "Pool", "max", "avg", "GlobalAvgPool", "Linear"} <= kinds
    exe = host.compile_host(tmp_path / "c")
    pixels, _ = validation_pixels(learner, {**program_meta(int8)})
    labels, logits = host.run_host(exe, pixels, 10)
    ref = host.onnxruntime_codes(int8.read_bytes(), pixels, program_meta(int8), program.output.scale,
                                 program.output.zero_point)
    steps = np.abs(logits - ref)
    top2 = np.sort(ref, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 2 * steps.max()  # a label that no rounding difference can flip
    print(f"resnet-class: {len(pixels)} images, labels equal {(labels == ref.argmax(1)).sum()}, logits equal "
          f"{np.mean(steps == 0):.4f}, within 1 step {np.mean(steps <= 1):.4f}, largest {steps.max()}")
    # onnxruntime averages 2 x 2 windows in float32 (its rounding noise breaks the frequent exact
    # ties): the C emulates that arithmetic exactly in integers (kernels/avg_f32.c). What is left
    # are a few one-step differences where onnxruntime's fused kernels round a product in float32.
    assert steps.max() <= 1 and np.mean(steps == 0) >= 0.98  # the issue asks for <= 1 step; most are exact (0.99-1.0 seen)
    assert (labels == ref.argmax(1))[clear].all() and np.mean(labels == ref.argmax(1)) >= 0.98


def c_and_onnxruntime(learner, int8, tmp_path):
    """The int8 file `int8` as C (host build) and in onnxruntime on `learner`'s validation images:
    (C labels, C logits, onnxruntime's logits), int8 codes."""
    import onnx

    from hotstart.export.c import host, onnx_to_c
    from hotstart.export.c.check import validation_pixels
    from hotstart.export.c.convert import convert

    onnx_to_c(int8, tmp_path / "c", harness=True)
    exe = host.compile_host(tmp_path / "c")
    meta = program_meta(int8)
    pixels, _ = validation_pixels(learner, meta)
    labels, logits = host.run_host(exe, pixels, 10)
    out = convert(onnx.load(str(int8))).program.output
    return labels, logits, host.onnxruntime_codes(int8.read_bytes(), pixels, meta, out.scale, out.zero_point)


def program_meta(path):
    import onnx

    from hotstart.export.c.convert import hotstart_meta

    return hotstart_meta(onnx.load(str(path), load_external_data=False))
ARM_TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm")


def test_cortex_m4_firmware_in_qemu_equals_the_host_build(small, host_build):
    absent = [t for t in ARM_TOOLS if shutil.which(t) is None]
    if absent:
        missing(f"{', '.join(absent)} not found: install Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi "
                    f"and qemu-system-arm (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)")
    from hotstart.export.c import firmware, host

    images = small.pixels[:20]
    (small.folder / "hotstart_test_images.h").write_text(firmware.test_images_header(images))
    cmd = firmware.cortex_m_command(small.folder)
    assert {"-std=c99", "-Wall", "-Werror", "-O2", "-mcpu=cortex-m4", "-mthumb"} <= set(cmd)
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    out = firmware.run_qemu(small.folder / "model.elf")
    labels, logits = host.parse_lines(out, 10)
    host_labels, host_logits = host.run_host(host_build, images, 10)
    assert len(labels) == 20
    assert (labels == host_labels).all() and (logits == host_logits).all()
    size = firmware.arm_size(small.folder / "model.elf")
    figures = firmware.qemu_figures(out)
    ticks, calibration, stack = figures["ticks"], figures["calibration"], figures["stack"]
    print(f"Cortex-M4 (qemu mps2-an386): flash {size['flash']} B (text {size['text']} + data {size['data']}), "
          f"RAM {size['ram']} B (data + bss incl. a 2048 B stack, {stack} B of it used); "
          f"{figures['instructions']:,.0f} instructions per inference (qemu -icount)")
    assert size["flash"] < 64 * 1024 and size["ram"] < 16 * 1024
    assert 0 < stack < 2048 and ticks > 0 and calibration > 0


def test_unsupported_layer_fails_naming_the_layer_and_op(small, tmp_path):
    import torch.nn as nn

    from hotstart import tasklearner
    from hotstart.export import ExportError

    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.act = nn.Softsign()

        def forward(self, x):
            return self.act(self.conv(x)).mean((2, 3))

    from hotstart import datasets

    data, _ = datasets.load("digits")
    learner = tasklearner(small.learner.task, data.subset(list(range(100))), backbone=Odd(), seed=0, progress=False)
    with pytest.raises(ExportError, match=r"layer 'backbone\.act' \(ONNX node .*, op (Softsign|Abs|Div)\) is not supported"):
        learner.export(tmp_path / "odd.c", format="c", calibrate=16)
    assert not (tmp_path / "odd.c").exists()


def test_fp32_model_and_ram_limit_fail_with_a_message(small, tmp_path):
    from hotstart.export import ExportError
    from hotstart.export.c import onnx_to_c

    fp32 = tmp_path / "fp32.onnx"
    small.learner.export(fp32)
    with pytest.raises(ExportError, match="fp32.*quantize='int8'"):
        onnx_to_c(fp32, tmp_path / "c1")
    with pytest.raises(ExportError, match=r"needs 4096 bytes of RAM.*limit of 3000 bytes.*alive: t\d"):
        onnx_to_c(small.int8, tmp_path / "c2", ram_limit=3000)
    assert not (tmp_path / "c1").exists() and not (tmp_path / "c2").exists()


def test_cli_export_format_c_with_harness_and_ram_limit(small, tmp_path, capsys):
    from hotstart.cli import main

    out = tmp_path / "fw"
    assert main(["export", str(small.int8), "--format", "c", "--out", str(out), "--harness",
                 "--ram-limit", "16384"]) == 0
    printed = capsys.readouterr().out
    assert "needs RAM (activation arena): 4096 bytes" in printed
    assert {"model.c", "model.h", "harness.c", "cortex_m_main.c", "cortex_m_startup.c", "cortex_m.ld"} <= \
        {p.name for p in out.iterdir()}
    assert main(["export", str(small.int8), "--format", "c", "--out", str(tmp_path / "x"), "--ram-limit", "100"]) == 1
    assert "needs 4096 bytes of RAM" in capsys.readouterr().err


def test_a_c_re_export_without_the_harness_replaces_the_one_with_it(small, tmp_path, capsys):
    """It was refused: the swap took the earlier export's harness files for files of yours. Now the
    earlier export goes whole (no harness file stays); a file of yours in the folder is still refused,
    named, before the export runs."""
    from hotstart.cli import main
    from hotstart.export.manifest import MANIFEST

    out = tmp_path / "fw"
    assert main(["export", str(small.int8), "--format", "c", "--out", str(out), "--harness"]) == 0
    assert "cortex_m_main.c" in {p.name for p in out.iterdir()}
    assert main(["export", str(small.int8), "--format", "c", "--out", str(out)]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == sorted(["model.c", "model.h", MANIFEST])
    (out / "harness").write_bytes(b"\x7fELF")
    capsys.readouterr()
    assert main(["export", str(small.int8), "--format", "c", "--out", str(out), "--harness"]) == 1
    assert "(harness)" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == sorted(["harness", "model.c", "model.h", MANIFEST])


def test_depthwise_strided_padded_and_clipped_layers_equal_onnxruntime(digits, tmp_path):
    """The ops hotstart's own backbones leave out: depthwise and strided convolution, ReLU6 (which the
    quantizer folds into the output range), average pooling with padding (border windows hold fewer
    values), max pooling with ceil_mode, flatten."""
    if shutil.which("cc") is None:
        missing("no C compiler: install one (Debian: apt-get install gcc)")
    import onnx
    import torch.nn as nn

    from hotstart import ImageClassificationSingle, tasklearner
    from hotstart.export.c.convert import convert

    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8), nn.ReLU6(),
                        nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                        nn.MaxPool2d(2, ceil_mode=True), nn.Flatten())
    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(20, 20), augment={"flip": 0.0})
    learner = tasklearner(task, data.subset(list(range(300))), backbone=net, seed=0, progress=False)
    learner.fit_one_cycle(1, 1e-2)
    int8 = tmp_path / "odd-int8.onnx"
    learner.export(int8, quantize="int8", measure=False, calibrate=64)
    program = convert(onnx.load(str(int8))).program
    convs = [op for op in program.ops if type(op).__name__ == "Conv"]
    assert [c.groups for c in convs] == [1, 8] and convs[1].stride == (2, 2)
    labels, logits, ref = c_and_onnxruntime(learner, int8, tmp_path)
    assert np.abs(logits - ref).max() <= 1 and np.mean(labels == ref.argmax(1)) >= 0.98


# --- each feature by its own test (a planted bug in any of them was caught only by the resnet-class test) ---
def _kernel_driver(tmp_path, body: str) -> list[int]:
    """Compile the C kernels (the text the export emits) with a `main` of `body`; its printed integers."""
    from importlib import resources

    kernels = resources.files("hotstart.export.c") / "templates" / "kernels"
    source = ("#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n"
              + (kernels / "common.c").read_text() + (kernels / "add.c").read_text()
              + "int main(void)\n{\n" + body + "\n    return 0;\n}\n")
    (tmp_path / "driver.c").write_text(source)
    subprocess.run([shutil.which("cc"), "-std=c99", "-O2", "-o", str(tmp_path / "driver"), str(tmp_path / "driver.c")],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(tmp_path / "driver")], check=True, capture_output=True, text=True).stdout
    return [int(v) for v in out.split()]


def _half_to_even(numerator: int, shift: int) -> int:
    from fractions import Fraction

    return round(Fraction(numerator, 1 << shift))  # Python rounds a Fraction's tie to even


def test_requantization_rounds_exact_ties_half_to_even_as_onnxruntime(tmp_path):
    """acc * mult / 2^shift landing exactly on a half: to the even neighbour, for either sign (half
    up, CMSIS-NN's rule, would give 1, 2, 0, -1, 3, ... here)."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler: install one (Debian: apt-get install gcc)")
    cases = [(acc, 1 << 30, 31) for acc in (1, 3, 5, 7, -1, -3, -5, -7)]  # acc / 2: a tie for every odd acc
    cases += [(acc, 3 << 28, 30) for acc in (2, 6, -2, -6, 10)]  # acc * 3 / 4: ties at acc = 2 mod 4
    cases += [(acc, 1 << 30, 32) for acc in (2, 6, -2, -6, 1, -1, 3)]  # acc / 4: ties and non-ties
    body = "\n".join(f"    printf(\"%d\\n\", (int)hs_requant({a}, {m}, {s}));" for a, m, s in cases)
    got = _kernel_driver(tmp_path, body)
    assert got == [_half_to_even(a * m, s) for a, m, s in cases], (cases, got)
    assert got[:8] == [0, 2, 2, 4, 0, -2, -2, -4]


def test_the_residual_add_subtracts_each_inputs_own_zero_point_and_rounds_ties_to_even(tmp_path):
    """``(a - za) * ma + (b - zb) * mb``: each input's own zero point, one rounding, half to even."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler: install one (Debian: apt-get install gcc)")
    from hotstart.export.c.qmath import add_multipliers

    rng = np.random.default_rng(0)
    a, b = rng.integers(-128, 128, 64), rng.integers(-128, 128, 64)
    for za, zb, zy, sa, sb, sy in [(-128, 3, -5, 0.02, 0.05, 0.06), (17, -90, 0, 0.5, 0.5, 1.0), (0, 0, 0, 1, 1, 2)]:
        ma, mb, shift = add_multipliers(sa, sb, sy)
        body = (f"    const int8_t a[64] = {{{', '.join(map(str, a))}}}, b[64] = {{{', '.join(map(str, b))}}};\n"
                f"    int8_t y[64];\n    hs_add(a, b, 64, {za}, {zb}, {ma}, {mb}, {shift}, {zy}, -128, 127, y);\n"
                f"    for (int i = 0; i < 64; ++i) printf(\"%d\\n\", y[i]);")
        got = _kernel_driver(tmp_path, body)
        want = [int(np.clip(_half_to_even((int(x) - za) * ma + (int(w) - zb) * mb, shift) + zy, -128, 127))
                for x, w in zip(a, b)]
        assert got == want, (za, zb)


def test_a_residual_add_of_inputs_with_different_zero_points_equals_onnxruntime(digits, tmp_path):
    """End to end: a ReLU branch (zero point at the bottom of its range) added to a plain one (zero
    point mid-range), so a zero point taken from the wrong input moves every output by many steps."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler: install one (Debian: apt-get install gcc)")
    import onnx
    import torch.nn as nn

    from hotstart import ImageClassificationSingle, tasklearner
    from hotstart.export.c.convert import convert

    class TwoBranches(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(1, 8, 3, padding=1)
            self.relu_branch = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
            self.plain_branch = nn.Conv2d(8, 8, 3, padding=1)
            self.pool = nn.AdaptiveAvgPool2d(1)

        def forward(self, x):
            x = self.stem(x)
            return self.pool(self.relu_branch(x) + self.plain_branch(x)).flatten(1)

    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(12, 12), augment={"flip": 0.0})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = TwoBranches()
    learner = tasklearner(task, data.subset(list(range(300))), backbone=net, seed=0, progress=False)
    learner.fit_one_cycle(1, 1e-2)
    int8 = tmp_path / "add-int8.onnx"
    learner.export(int8, quantize="int8", calibrate=64)
    program = convert(onnx.load(str(int8))).program
    adds = [op for op in program.ops if type(op).__name__ == "Add"]
    assert len(adds) == 1 and abs(adds[0].a.zero_point - adds[0].b.zero_point) >= 32, \
        [(op.a.zero_point, op.b.zero_point) for op in adds]
    _, logits, ref = c_and_onnxruntime(learner, int8, tmp_path)
    assert np.abs(logits - ref).max() <= 1 and np.mean(logits == ref) >= 0.98


def test_saturated_outputs_equal_onnxruntime_exactly(small, host_build, tmp_path):
    """Where onnxruntime's output is saturated (-128 or 127) the C's is the same code, not one step
    off: every other comparison allows one step of rounding, so an output clamp at 126 passed them
    all. Calibrated on 4 images only, the int8 ranges are narrow, and the validation digits drive
    many logits to the limits."""
    int8 = tmp_path / "narrow-int8.onnx"
    small.learner.export(int8, quantize="int8", calibrate=4)
    _, logits, ref = c_and_onnxruntime(small.learner, int8, tmp_path)
    saturated = (ref == 127) | (ref == -128)
    assert (ref == 127).sum() >= 10 and (ref == -128).sum() >= 1, ((ref == 127).sum(), (ref == -128).sum())
    assert (logits[saturated] == ref[saturated]).all(), np.argwhere(logits[saturated] != ref[saturated])
    assert np.abs(logits - ref).max() <= 1
