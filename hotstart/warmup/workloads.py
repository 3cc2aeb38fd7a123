"""Workloads: what the warmup runs, and the registry a package uses to add its own.

A workload names a task factory, a backbone, an input size, a batch size, a device, a precision
and whether to compile. Registering is explicit, on a `Registry` object you own::

    # mypkg/warm.py
    from hotstart import Image, Label, ImageClassificationSingle
    from hotstart.warmup import Registry

    registry = Registry()

    @registry.workload(backbone="resnet18", size=(224, 224), batch_size=32)
    def pets_classifier():
        return ImageClassificationSingle((Image(), Label([f"breed{i}" for i in range(37)])), size=(224, 224))

then ``python -m hotstart.warmup --module mypkg.warm`` runs it (every `Registry` found in the module),
like the "startup package" that Julia users write with PrecompileTools.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..errors import UsageError


@dataclass(frozen=True)
class Workload:
    """One configuration for the warmup to compile ahead of time: it builds the task, mock data
    from the task's blocks, a learner, and trains `steps` batches, so that a real fit of the same
    configuration finds its compiled graphs in the cache (3 s to load instead of a 34 s cold
    compile for resnet10t at 128x128 on a 2-core EPYC; compile_cache/policy.py). Register one with
    `Registry.workload` (the module docstring has an example).

    The compiled graphs serve any batch size (the batch dimension is compiled dynamic) and any
    number of classes (the head is not compiled), but only this backbone, input channels and
    size, device, precision and memory layout: the manifest's key.

    Attributes:
        name: unique within a registry; shown in the table, matched by ``--only``.
        task: a function building the task (called when the workload runs, not when registered).
        backbone: a timm name, or None for hotstart's small CNN.
        size: an image workload's input size (H, W), which must match the task's; None for a
            workload whose input has no height and width (a table row, a series). A compiled
            workload needs one: the compile cache's key names it. ``--list`` shows what the
            input really is from the task itself (warmup/inputs.py), not from this field.
        batch_size: the training batch size (validation gets one batch and one of half the size,
            so both the full and the last partial batch are compiled).
        device: ``"cpu"`` or ``"cuda"`` (skipped where there is no CUDA device).
        precision: Fabric's name; None: the task's default, what `tasklearner` would pick.
        compile: compile the backbone (filling the compile cache); False only runs the fit.
        steps: training batches to run; a compiled workload runs at least 4, so that its warm
            step can be timed against an eager one (warmup/step_times.py).
        description: one line for ``--list``.
    """

    name: str                                   # unique, shown in tables and used by --only
    task: Callable[[], object]                  # builds the task; its blocks make the mock data
    backbone: str | None = None                 # timm name, or None for hotstart's small CNN
    size: tuple[int, int] | None = (128, 128)   # image input size (must match the task's); None: not an image
    batch_size: int = 16                        # training batch size
    device: str = "cpu"                         # "cpu" or "cuda"
    precision: str | None = None                # Fabric's name; None: the task's default (what tasklearner picks)
    compile: bool = True                        # compile the backbone (fills the compile cache)
    steps: int = 2                              # training batches (compiled: at least 4); validation gets 2
    description: str = field(default="", compare=False)

    def matches(self, patterns: Iterable[str] | None) -> bool:
        """Whether `name` matches one of the shell-style `patterns` (``"resnet*"``); None or
        empty matches every workload."""
        return not patterns or any(fnmatch.fnmatch(self.name, p) for p in patterns)

    def __post_init__(self):
        if self.size is None and self.compile:
            raise UsageError(f"workload {self.name!r}: compile=True needs size=(H, W), which the compile cache's key "
                             "names; a workload without an image size runs eager (compile=False)")


class Registry:
    """An ordered, resettable set of workloads (no global state: make one, fill it, pass it)."""

    def __init__(self, workloads: Iterable[Workload] = ()):
        self._items: dict[str, Workload] = {}
        for w in workloads:
            self.add(w)

    def add(self, workload: Workload) -> Workload:
        if workload.name in self._items:
            raise UsageError(f"a workload named {workload.name!r} is already registered")
        self._items[workload.name] = workload
        return workload

    def workload(self, name: str | None = None, **options) -> Callable:
        """Decorator: register the decorated task factory as a workload with `options`."""
        def register(factory):
            self.add(Workload(name=name or factory.__name__, task=factory, **options))
            return factory
        return register

    def remove(self, name: str) -> None:
        del self._items[name]

    def clear(self) -> None:
        self._items.clear()

    def __iter__(self):
        return iter(list(self._items.values()))

    def __len__(self):
        return len(self._items)

    def __contains__(self, name):
        return name in self._items

    def __repr__(self):
        return f"Registry({list(self._items)})"


def builtin_workloads(cuda: bool | None = None) -> list[Workload]:
    """The built-in workloads: single- and multi-label classification with the default backbone
    and with resnet18 at the task's default size (128x128), plus the digits main job's
    configuration; on CPU, and on CUDA when it is there. The head is not compiled, so the
    multi-label workload reuses the single-label one's backbone graphs.

    Each runs with the defaults a user's ``tasklearner(task, data)`` gets on this machine (precision,
    memory layout: learner/precision.py, learner/memory_format.py), so what it warms is what a
    default run asks the compile cache for (``compile="auto"``, compile_cache/policy.py)."""
    import torch

    if cuda is None:
        cuda = torch.cuda.is_available()
    devices = ["cpu"] + (["cuda"] if cuda else [])
    out = []
    for dev in devices:
        for backbone in (None, "resnet18"):
            tag = backbone or "smallcnn"
            out.append(Workload(f"single-{tag}-128-{dev}", _single_rgb, backbone=backbone, device=dev,
                                description="ImageClassificationSingle, RGB 128x128"))
            out.append(Workload(f"multi-{tag}-128-{dev}", _multi_rgb, backbone=backbone, device=dev,
                                description="ImageClassificationMulti, RGB 128x128"))
        out.append(Workload(f"digits-smallcnn-32-{dev}", _digits, size=(32, 32), device=dev,
                            description="ImageClassificationSingle, grayscale 32x32 (python -m hotstart train)"))
        # Not compiled: the compile cache's manifest keys name image backbones (in_chans, size),
        # and an MLP this small runs no faster compiled. It runs the whole table path (setup on
        # mock rows with missing values and unseen categories, embeddings, BatchNorm, MLP).
        out.append(Workload(f"tabular-mlp-{dev}", _tabular, device=dev, compile=False, size=None,
                            description="TabularClassificationSingle, 3 categorical + 4 continuous columns"))
        out += _spatial_workloads(dev)
        # Not compiled, as the table workload: the manifest key names image backbones. It runs the
        # whole series path (setup on mock random walks, InceptionTime, loss, metrics) eagerly.
        out.append(Workload(f"timeseries-inceptiontime-{dev}", _timeseries, backbone="inceptiontime", device=dev,
                            compile=False, size=None, batch_size=8,
                            description="TSClassificationSingle, 3 channels x 96 steps, InceptionTime"))
    return out


def _spatial_workloads(dev: str) -> list[Workload]:
    """Segmentation (U-Net on the small CNN's stages) and keypoints, at the CLI's 32x32 defaults.

    Not compiled: the manifest key names backbone, channels and size but not the model kind, so a
    compiled U-Net encoder would mark the same-named classifier configuration warm. These run
    the whole path (mocks, encodings, model, loss, metrics) eagerly; compile them once the key
    says what kind of model it is.
    """
    return [Workload(f"segmentation-smallcnn-32-{dev}", _segmentation, size=(32, 32), device=dev, compile=False,
                     description="ImageSegmentation, grayscale 32x32, 11 classes (train --task segmentation)"),
            Workload(f"keypoints-smallcnn-32-{dev}", _keypoints, size=(32, 32), device=dev, compile=False,
                     description="ImageKeypointRegression, grayscale 32x32, 1 point (train --task keypoints)")]


def _segmentation():
    from ..blocks import Image, Mask
    from ..tasks import ImageSegmentation

    classes = ["background"] + [str(d) for d in range(10)]
    return ImageSegmentation((Image(channels=1), Mask(classes)), size=(32, 32), augment={"flip": 0.0})


def _keypoints():
    from ..blocks import Image, Keypoints
    from ..tasks import ImageKeypointRegression

    return ImageKeypointRegression((Image(channels=1), Keypoints(1)), size=(32, 32))


def _single_rgb():
    from ..blocks import Image, Label
    from ..tasks import ImageClassificationSingle

    return ImageClassificationSingle((Image(), Label([str(i) for i in range(10)])))


def _multi_rgb():
    from ..blocks import Image, LabelMulti
    from ..tasks import ImageClassificationMulti

    return ImageClassificationMulti((Image(), LabelMulti([f"tag{i}" for i in range(5)])))


def _digits():
    from ..blocks import Image, Label
    from ..tasks import ImageClassificationSingle

    return ImageClassificationSingle((Image(channels=1), Label(list(range(10)))), size=(32, 32), augment={"flip": 0.0})


def _tabular():
    from ..blocks import Label, TableRow
    from ..tasks import TabularClassificationSingle

    row = TableRow(categorical=["a", "b", "c"], continuous=["x", "y", "z", "w"])
    return TabularClassificationSingle((row, Label(["no", "yes"])))


def _timeseries():
    from ..blocks import Label, TimeSeries
    from ..tasks import TSClassificationSingle

    return TSClassificationSingle((TimeSeries(3, length=96), Label(["a", "b", "c"])))


def registries_in_module(module) -> list[Registry]:
    """Every `Registry` defined at the top level of a user's module."""
    return [v for v in vars(module).values() if isinstance(v, Registry)]
