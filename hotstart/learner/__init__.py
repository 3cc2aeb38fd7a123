"""The learner: a small training loop with events and callbacks, and `tasklearner` to build one."""
from .callbacks import (Callback, CancelBatch, CancelEpoch, CancelFit, EarlyStopping, GradientClip, LogTo,
                        NonFiniteLossError, SaveBestModel, ToDevice, ToGPU)
from .loop import Learner, fit_one_cycle
from .lr_find import LRFindResult
from .loading import load_learner
from .tasklearner import tasklearner

__all__ = ["Learner", "tasklearner", "fit_one_cycle", "load_learner", "LRFindResult", "Callback",
           "CancelBatch", "CancelEpoch", "CancelFit", "EarlyStopping", "GradientClip", "LogTo", "NonFiniteLossError",
           "SaveBestModel", "ToDevice", "ToGPU"]
