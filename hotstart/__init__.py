"""hotstart: say what the data is, train it fast, take the model with you.

Public names import lazily (PEP 562 ``__getattr__``), so ``import hotstart`` costs almost
nothing beyond ``import torch``; timm, torchvision, Lightning and torchmetrics load only when a
name that needs them is first used, with the garbage collector paused while they load
(hotstart/gc_pause.py: ~0.15 s less for torch on this machine).

    >>> from hotstart import Image, Label, ImageClassificationSingle, tasklearner, datasets
"""
from __future__ import annotations

from .gc_pause import import_paused

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "Block": "hotstart.blocks",
    "Image": "hotstart.blocks",
    "Label": "hotstart.blocks",
    "LabelMulti": "hotstart.blocks",
    "Mask": "hotstart.blocks",
    "Keypoints": "hotstart.blocks",
    "Continuous": "hotstart.blocks",
    "TableRow": "hotstart.blocks",
    "TimeSeries": "hotstart.blocks",
    "Context": "hotstart.encodings",
    "ProjectiveTransforms": "hotstart.encodings",
    "ImagePreprocessing": "hotstart.encodings",
    "OneHot": "hotstart.encodings",
    "MultiHot": "hotstart.encodings",
    "TabularPreprocessing": "hotstart.encodings",
    "SupervisedTask": "hotstart.tasks",
    "ImageClassificationSingle": "hotstart.tasks",
    "ImageClassificationMulti": "hotstart.tasks",
    "ImageSegmentation": "hotstart.tasks",
    "ImageKeypointRegression": "hotstart.tasks",
    "KeypointScaling": "hotstart.encodings",
    "TabularClassificationSingle": "hotstart.tasks",
    "TabularRegression": "hotstart.tasks",
    "TSClassificationSingle": "hotstart.tasks",
    "TSRegression": "hotstart.tasks",
    "SeriesPreprocessing": "hotstart.encodings",
    "Learner": "hotstart.learner",
    "tasklearner": "hotstart.learner",
    "fit_one_cycle": "hotstart.learner",
    "load_learner": "hotstart.learner",
    "ToGPU": "hotstart.learner",
    "ToDevice": "hotstart.learner",
    "MixUp": "hotstart.learner",
    "CutMix": "hotstart.learner",
    "EMA": "hotstart.learner",
    "callbacks": "hotstart.learner",
}
_SUBMODULES = {"blocks", "encodings", "tasks", "datasets", "models", "learner", "show", "metrics", "warmup",
               "compile_cache", "interpret"}

__all__ = sorted(_LAZY) + sorted(_SUBMODULES)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_paused(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = import_paused(f"hotstart.{name}")
    else:
        raise AttributeError(f"module 'hotstart' has no attribute {name!r}")
    globals()[name] = value  # cache: the next lookup is a plain attribute
    return value


def __dir__():
    return __all__
