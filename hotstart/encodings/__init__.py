"""Encodings: how blocks become tensors and back, per context (training / validation / inference)."""
from .base import Context, Encoding
from .keypoints import KeypointScaling
from .labels import MultiHot, OneHot
from .preprocessing import IMAGENET_MEAN, IMAGENET_STD, ImagePreprocessing
from .projective import ProjectiveTransforms
from .tabular import TabularPreprocessing
from .timeseries import SeriesPreprocessing, TargetScaling

__all__ = ["Context", "Encoding", "OneHot", "MultiHot", "ImagePreprocessing", "ProjectiveTransforms",
           "IMAGENET_MEAN", "IMAGENET_STD", "TabularPreprocessing", "KeypointScaling",
           "SeriesPreprocessing", "TargetScaling"]
