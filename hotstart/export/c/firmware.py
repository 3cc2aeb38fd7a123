"""The harness files beside the model: a host program (any ``cc``) and a bare-metal Cortex-M one.

`harness_files(name)` gives what ``hotstart export --format c --harness`` writes next to
``NAME.c`` / ``NAME.h``:

=======================  ===========================================================================
harness.c                host: reads raw H x W x C uint8 images, prints ``label logit...`` per image
cortex_m_main.c          Cortex-M: the same output for the images in hotstart_test_images.h, then
                         SysTick ticks per inference, a calibration loop and the stack used
cortex_m_startup.c       vector table, .data / .bss set-up, semihosting output and exit
cortex_m_semihosting.h   their shared declarations
cortex_m.ld              linker script: flash at 0x0, RAM at 0x20000000 (QEMU mps2-an386)
hotstart_test_images.h   images for cortex_m_main.c (`test_images_header` writes your own)
=======================  ===========================================================================

The build commands are `host_command` and `cortex_m_command`; the README shows them.
"""
from __future__ import annotations

import numpy as np

from .emit import template

CORTEX_M_FILES = ("cortex_m_main.c", "cortex_m_startup.c", "cortex_m_semihosting.h", "cortex_m.ld")
CFLAGS = ["-std=c99", "-Wall", "-Werror", "-O2"]
CORTEX_M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft", "-ffunction-sections", "-fdata-sections",
                   "-nostartfiles", "-Wl,--gc-sections"]
QEMU_COMMAND = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                "-semihosting-config", "enable=on,target=native"]


def _fill(text: str, name: str) -> str:
    return text.replace("@MODEL_H@", f"{name}.h").replace("@MODEL_C@", f"{name}.c")


def test_images_header(images) -> str:
    """``hotstart_test_images.h`` for cortex_m_main.c: N images of H x W x C uint8 (resized pixels)."""
    images = np.asarray(images, dtype=np.uint8)
    n = len(images)
    flat = images.reshape(n, -1)
    rows = ",\n    ".join("{" + ", ".join(map(str, row.tolist())) + "}" for row in flat)
    body = (f"static const uint8_t hs_test_images[{n}][{flat.shape[1]}] = {{\n    {rows}\n}};\n")
    return (f"/* {n} test images for cortex_m_main.c (H x W x C uint8 each) */\n#include <stdint.h>\n"
            f"#define HS_TEST_IMAGES {n}\n{body}")


def harness_files(name: str, images=None) -> dict[str, str]:
    """{file name: text} of the host and Cortex-M harnesses for model `name`."""
    files = {"harness.c": _fill(template("harness.c"), name)}
    for f in CORTEX_M_FILES:
        files[f] = _fill(template(f), name)
    if images is not None:
        files["hotstart_test_images.h"] = test_images_header(images)
    return files


def host_command(folder, name: str = "model", cc: str = "cc", out: str = "harness") -> list[str]:
    return [cc, *CFLAGS, "-o", str(folder / out), str(folder / "harness.c"), str(folder / f"{name}.c")]


def cortex_m_command(folder, name: str = "model", gcc: str = "arm-none-eabi-gcc", out: str = "model.elf") -> list[str]:
    return [gcc, *CFLAGS, *CORTEX_M4_FLAGS, "-T", str(folder / "cortex_m.ld"), "-o", str(folder / out),
            str(folder / "cortex_m_main.c"), str(folder / "cortex_m_startup.c"), str(folder / f"{name}.c")]


def run_qemu(elf, timeout: float = 120.0, icount: bool = True) -> str:
    """Run a Cortex-M harness in QEMU's mps2-an386; its semihosting output (QEMU writes it to
    stderr) and stdout together. ``-icount shift=0``: virtual time counts instructions."""
    import subprocess

    cmd = [*QEMU_COMMAND, *(["-icount", "shift=0"] if icount else []), "-kernel", str(elf)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout + done.stderr


def qemu_figures(output: str) -> dict:
    """cortex_m_main.c's closing lines -> {"ticks", "calibration", "stack", "instructions"}: SysTick
    ticks per inference, ticks for the 2,000,000-instruction calibration loop, stack bytes used, and
    instructions per inference (exact under ``-icount shift=0``, where time counts instructions)."""
    fields = dict(line.split()[:2] for line in output.splitlines()
                  if line.split()[:1] in (["ticks"], ["calibration"], ["stack"]))
    ticks, calibration, stack = (int(fields[k]) for k in ("ticks", "calibration", "stack"))
    return {"ticks": ticks, "calibration": calibration, "stack": stack,
            "instructions": ticks * 2_000_000 / calibration if calibration > 0 else float("nan")}


def arm_size(elf, size_tool: str = "arm-none-eabi-size") -> dict:
    """``arm-none-eabi-size``'s text / data / bss, and flash = text + data, RAM = data + bss (bss
    holds the stack, see cortex_m_startup.c)."""
    import subprocess

    out = subprocess.run([size_tool, str(elf)], capture_output=True, text=True, check=True).stdout.splitlines()
    text, data, bss = (int(v) for v in out[1].split()[:3])
    return {"text": text, "data": data, "bss": bss, "flash": text + data, "ram": data + bss}
