"""Callbacks for the learner's loop. Each lives in its own file; see base.py for the events."""
from .base import Callback, CancelBatch, CancelEpoch, CancelFit
from .checkpoint import SaveBestModel
from .device import ToDevice, ToGPU
from .early_stopping import EarlyStopping
from .ema import EMA
from .grad_clip import GradientClip
from .loggers import LogTo
from .metrics import Metrics
from .mixup import CutMix, MixUp
from .nan_guard import NonFiniteGuard, NonFiniteLossError
from .progress import Progress
from .recorder import Recorder

__all__ = ["Callback", "CancelBatch", "CancelEpoch", "CancelFit", "SaveBestModel", "ToDevice", "ToGPU",
           "EarlyStopping", "EMA", "GradientClip", "MixUp", "CutMix", "LogTo", "Metrics", "NonFiniteGuard", "NonFiniteLossError", "Progress",
           "Recorder"]
