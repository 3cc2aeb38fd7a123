"""Shared fixtures: small slices of the built-in digits, tiny tasks and learners.

Learner tests run on 2 CPU cores, so they use a few hundred 8x8 digits at 8x8 or 16x16 with the
default small CNN; only the accuracy and start-up tests use more.
"""
import os

# matplotlib picks its backend on first import: a headless one for the whole test process.
os.environ.setdefault("MPLBACKEND", "Agg")
# A `hotstart serve` running on this machine must not take the tests' `hotstart train` runs:
# only tests/test_serve*.py use a server, their own, in a temporary runtime folder.
os.environ["HOTSTART_SERVER"] = "0"
# compile="auto" (the default) compiles when the compile cache says a configuration is warm: the
# tests must not depend on what `python -m hotstart.warmup` left in this machine's cache. Every
# test (and every process it starts) gets an empty cache folder of its own unless it sets one.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

_test_cache_dir = tempfile.mkdtemp(prefix="hotstart-test-compile-cache-")
os.environ["HOTSTART_CACHE_DIR"] = _test_cache_dir
# The folder is the test process's own: removed when it exits, so runs leave nothing in /tmp.
atexit.register(shutil.rmtree, _test_cache_dir, ignore_errors=True)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

# The tests' models are tiny: one intra-op thread is as fast, and far faster than two when the
# machine's cores are shared with other work (OpenMP threads then wait on each other).
torch.set_num_threads(int(os.environ.get("HOTSTART_TEST_THREADS", "1")))

# Property-based tests (hypothesis): few examples by default, so the suite stays within its time
# budget; derandomized and without an example database, so CI runs are repeatable and write
# nothing into the checkout. HYPOTHESIS_PROFILE=dev (or thorough) searches harder, locally.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - the "test" extra installs it
    pass
else:
    settings.register_profile("ci", max_examples=10, deadline=None, derandomize=True, database=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("dev", max_examples=100, deadline=None)
    settings.register_profile("thorough", max_examples=1000, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    config.addinivalue_line("markers", "prestart(*jobs): the test waits for these tests/prestart.py jobs, "
                                       "started in the background when collection ends")
    config.addinivalue_line("markers", "run_last: run after every other test (its prestart job is queued first)")


def pytest_collection_modifyitems(items):
    """Tests marked ``run_last`` run after the others, in their order."""
    items.sort(key=lambda item: item.get_closest_marker("run_last") is not None)


def pytest_collection_finish(session):
    """Start the prestart jobs of the selected tests (tests/prestart.py): those of ``run_last``
    tests first, since they are needed last (the QAT checks' ~130 s job then runs on the second
    core while the suite's own process starts the others' jobs itself as it reaches them), then
    the rest in collection order."""
    import prestart

    def jobs(items):
        return [name for item in items for mark in item.iter_markers(prestart.MARKER) for name in mark.args]

    last = [item for item in session.items if item.get_closest_marker("run_last") is not None]
    names = jobs(last) + jobs(item for item in session.items if item.get_closest_marker("run_last") is None)
    if names and not session.config.option.collectonly:
        prestart.submit(*dict.fromkeys(names))


def pytest_terminal_summary(terminalreporter):
    """What the background jobs cost and how long the tests waited for them (tests/prestart.py)."""
    import sys

    if "prestart" in sys.modules:
        for line in sys.modules["prestart"].summary():
            terminalreporter.write_line(line)


def pytest_sessionfinish(session):
    import sys

    if "prestart" in sys.modules:
        sys.modules["prestart"].shutdown()


@pytest.fixture(scope="session")
def digits():
    """``(Data, blocks)`` of all 1,797 digits (lazy: images are built when read)."""
    from hotstart import datasets

    return datasets.load("digits")


@pytest.fixture(scope="session")
def digits_small(digits):
    """The first 200 digits as ``(Data, blocks)``: 160 train / 40 valid with the default split."""
    data, blocks = digits
    return data.subset(list(range(200))), blocks


@pytest.fixture(scope="session")
def digits_micro(digits):
    """The microcontroller-sized digits model, trained once per session and shared by the exports
    that run it elsewhere (the C export, LiteRT, TF Lite Micro, IREE): SmallCNN widths 8-16-32
    (``smallcnn_micro``, ~18 k parameters) at 16x16, 2 epochs, seed 0, train's default split (359
    validation digits). Tests must not train it further."""
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = tasklearner(task, data, backbone="smallcnn_micro", seed=0, valid_pct=0.2, progress=False)
    learner.fit_one_cycle(2, 1e-2)
    return learner


@pytest.fixture(scope="session")
def digits_micro_int8(digits_micro, tmp_path_factory):
    """`digits_micro` quantized by onnxruntime (int8 QDQ .onnx, 256 training images): the int8
    reference the C export converts and the other int8 runtimes are compared with."""
    path = tmp_path_factory.mktemp("digits-micro") / "digits-int8.onnx"
    digits_micro.export(path, quantize="int8", measure=False)
    return path


@pytest.fixture
def small_task(digits_small):
    from hotstart import ImageClassificationSingle

    _, blocks = digits_small
    return ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})


@pytest.fixture
def make_learner(digits_small, small_task):
    """``make_learner(**kwargs)``: a small-CNN learner on 200 digits at 8x8, batch 32, no progress."""
    from hotstart import tasklearner

    data, _ = digits_small

    def make(**kwargs):
        kwargs.setdefault("seed", 0)
        kwargs.setdefault("progress", False)
        kwargs.setdefault("batch_size", 32)
        return tasklearner(kwargs.pop("task", small_task), kwargs.pop("data", data), **kwargs)

    return make


@pytest.fixture
def random_rgb():
    """``random_rgb(n, size=(24, 24), seed=0)``: n random RGB PIL images."""
    from PIL import Image as PILImage

    def make(n, size=(24, 24), seed=0):
        rng = np.random.default_rng(seed)
        return [PILImage.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)) for _ in range(n)]

    return make


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def state_equal(a: dict, b: dict) -> bool:
    """Two state dicts hold the same keys and bit-identical tensors."""
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def snapshot(module) -> dict:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}
