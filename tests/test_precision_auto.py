"""Precision (learner/precision.py): ``"auto"`` is bf16-mixed where the CPU has bf16 units, chosen
from the CPU's flags, fp32 elsewhere; not given, image classification gets "auto" and every other
task fp32; given, exactly what was asked."""
import pytest

from hotstart import tasklearner
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


@pytest.mark.parametrize("flags, precision", [(frozenset({"avx512_bf16"}), "bf16-mixed"),
                                               (frozenset({"avx2"}), "32-true")])
def test_the_backend_follows_the_choice(monkeypatch, flags, precision):
    """make_backend(precision="auto") asks the flags (here given): one CPU process is a
    PlainBackend either way, in bf16-mixed (torch.autocast) or fp32, without Lightning Fabric."""
    monkeypatch.setattr("hotstart.learner.precision.cpu_flags", lambda cpuinfo="/proc/cpuinfo": flags)
    backend = make_backend(accelerator="cpu", precision="auto")
    assert type(backend).__name__ == "PlainBackend" and backend.precision == precision


def test_no_precision_is_fp32_without_fabric():
    backend = make_backend(accelerator="cpu")
    assert type(backend).__name__ == "PlainBackend" and backend.precision == "32-true"


X86_BF16, X86 = frozenset({"avx2", "avx512_bf16"}), frozenset({"avx2"})


@pytest.mark.parametrize("requested, default, flags, expected", [
    (None, True, X86_BF16, ("bf16-mixed", "the CPU has AVX-512 BF16; precision='32-true' for fp32")),
    (None, True, X86, ("32-true", "the CPU has no bf16 units (AMX or AVX-512 BF16)")),
    (None, False, X86_BF16, ("32-true", "bf16 is the default for image classification only; "
                                        "precision='auto' for bf16 where it runs")),
    ("auto", False, X86_BF16, ("bf16-mixed", "the CPU has AVX-512 BF16; precision='32-true' for fp32")),
    ("32-true", True, X86_BF16, ("32-true", "as asked")),
    (32, True, X86_BF16, ("32-true", "as asked")),
    ("bf16", True, X86, ("bf16-mixed", "as asked")),  # emulated where there are no units: asked for
    ("16-mixed", True, X86_BF16, ("16-mixed", "as asked")),
])
def test_the_precision_rule(monkeypatch, requested, default, flags, expected):
    """learner/precision.py's rule: explicit as given, "auto" by the hardware, not given by the
    task (image classification: bf16 where there are units) and the hardware; with the reason."""
    from hotstart.learner.precision import choose_precision

    monkeypatch.setattr("hotstart.learner.precision.cpu_flags", lambda cpuinfo="/proc/cpuinfo": flags)
    assert choose_precision(requested, accelerator="cpu", bf16_by_default=default) == expected


def test_the_units_are_named_in_the_reason(tmp_path):
    from hotstart.learner.precision import bf16_units

    amx = cpuinfo(tmp_path, "avx2 avx512_bf16 amx_bf16 amx_tile")
    assert bf16_units("cpu", cpuinfo=amx) == (True, "the CPU has AMX and AVX-512 BF16")
    assert bf16_units("cuda", cuda_bf16=True) == (True, "the GPU computes in bf16")
    assert bf16_units("cuda", cuda_bf16=False) == (False, "the GPU has no bf16 units")


def test_tasklearner_defaults_image_classification_to_bf16_only_where_units_are(monkeypatch, make_learner):
    """Not given: bf16-mixed for image classification on a CPU with bf16 units, fp32 without, with
    or without data (a loaded model predicts as the learner that saved it); an explicit precision
    and a tabular task get fp32."""
    from hotstart import TabularClassificationSingle, ToDevice, datasets

    monkeypatch.setattr("hotstart.learner.precision.cpu_flags", lambda cpuinfo="/proc/cpuinfo": X86_BF16)
    assert make_learner().backend.precision == "bf16-mixed"
    assert make_learner(precision="32-true").backend.precision == "32-true"
    assert make_learner(callbacks=[ToDevice("cpu", precision="32-true")]).backend.precision == "32-true"
    assert make_learner(data=None).backend.precision == "bf16-mixed"
    data, blocks = datasets.load("penguins", target="species")
    table = tasklearner(TabularClassificationSingle(blocks), data, seed=0, progress=False)
    assert table.backend.precision == "32-true" and "image classification only" in table.choices["precision"].why
    monkeypatch.setattr("hotstart.learner.precision.cpu_flags", lambda cpuinfo="/proc/cpuinfo": X86)
    assert make_learner().backend.precision == "32-true"
