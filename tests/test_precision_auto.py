"""``precision="auto"`` (learner/precision.py): bf16-mixed where the CPU has bf16 units, chosen from
the CPU's flags; fp32 elsewhere, and fp32 when precision is not given."""
import pytest
import torch
import torch.nn as nn

from hotstart import ImageClassificationSingle, tasklearner
from hotstart.learner.backend import make_backend
from hotstart.learner.precision import auto_precision, cpu_flags, cpu_has_bf16_units

X86_HEAD = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n"


def cpuinfo(tmp_path, flags: str, name="cpuinfo"):
    path = tmp_path / name
    path.write_text(f"{X86_HEAD}flags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    return str(path)


@pytest.mark.parametrize("flags, expected", [
    ("fpu sse2 avx2 avx512f avx512_vnni avx512_bf16", "bf16-mixed"),  # this machine's AMD EPYC: AVX-512 BF16
    ("fpu sse2 avx2 avx512f amx_bf16 amx_tile amx_int8", "bf16-mixed"),  # Intel Sapphire Rapids: AMX
    ("fpu sse2 avx2 avx512f avx512_vnni", "32-true"),  # AVX-512 without BF16: bf16 would be emulated
    ("fpu sse2 avx2 fma", "32-true"),
])
def test_the_cpu_choice_is_made_from_the_flags(tmp_path, flags, expected):
    assert auto_precision("cpu", cpuinfo=cpuinfo(tmp_path, flags)) == expected


def test_flag_names_are_matched_whole_not_as_substrings(tmp_path):
    path = cpuinfo(tmp_path, "fpu xavx512_bf16 amx_bf16x")
    assert not cpu_has_bf16_units(path)
    assert auto_precision("cpu", cpuinfo=path) == "32-true"


def test_no_cpuinfo_means_fp32(tmp_path):
    missing = str(tmp_path / "absent")
    assert cpu_flags(missing) == frozenset()
    assert auto_precision("cpu", cpuinfo=missing) == "32-true"


def test_arm_features_line_is_read(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text("processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\nCPU implementer\t: 0x41\n")
    assert {"bf16", "i8mm"} <= cpu_flags(str(path))
    assert auto_precision("cpu", cpuinfo=str(path)) == "32-true"  # torch's CPU bf16 kernels are measured on x86 only


def test_cuda_follows_the_device_bf16_support():
    assert auto_precision("cuda", cuda_bf16=True) == "bf16-mixed"
    assert auto_precision("cuda", cuda_bf16=False) == "32-true"
    assert auto_precision("mps") == "32-true"


@pytest.mark.parametrize("flags, backend_name", [(frozenset({"avx512_bf16"}), "FabricBackend"),
                                                  (frozenset({"avx2"}), "PlainBackend")])
def test_the_backend_follows_the_choice(monkeypatch, flags, backend_name):
    """make_backend(precision="auto") asks the flags (here given), and builds Fabric's bf16-mixed
    backend or the plain fp32 one."""
    monkeypatch.setattr("hotstart.learner.precision.cpu_flags", lambda cpuinfo="/proc/cpuinfo": flags)
    backend = make_backend(accelerator="cpu", precision="auto")
    assert type(backend).__name__ == backend_name
    if backend_name == "FabricBackend":
        assert backend.precision == "bf16-mixed"


def test_no_precision_is_fp32_without_fabric():
    backend = make_backend(accelerator="cpu")
    assert type(backend).__name__ == "PlainBackend"


def test_auto_trains_digits_in_bf16_when_the_cpu_has_bf16_units(digits, monkeypatch, tmp_path):
    """Through Fabric's bf16-mixed plugin: the layers compute in bf16, the weights stay fp32, and
    the digits are learned. The CPU's flags are given (`cpu_flags` replaced), so the test runs
    on any x86 CPU (torch emulates bf16 where there are no bf16 units)."""
    monkeypatch.setattr("hotstart.learner.precision.cpu_flags",
                        lambda cpuinfo="/proc/cpuinfo": frozenset({"avx512_bf16"}))
    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(8, 8), augment=False)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Flatten(), nn.Linear(task.channels * 64, 128), nn.ReLU(), nn.Linear(128, 10))
    seen = set()
    model[-1].register_forward_hook(lambda m, i, out: seen.add(out.dtype) if out.device.type != "meta" else None)
    learner = tasklearner(task, data, model=model, seed=0, progress=False, batch_size=32, precision="auto")
    assert learner.backend.precision == "bf16-mixed"
    learner.fit_one_cycle(2, 3e-2)
    assert seen == {torch.bfloat16}
    assert learner.validate()["accuracy"] >= 0.95
    assert all(p.dtype == torch.float32 for p in learner.model.parameters())
