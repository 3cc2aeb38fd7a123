"""Tasks: blocks + encodings, from which head, loss, metrics and mocks follow."""
from .base import SupervisedTask
from .classification import ImageClassificationMulti, ImageClassificationSingle
from .keypoints import ImageKeypointRegression
from .segmentation import ImageSegmentation
from .tabular import TabularClassificationSingle, TabularRegression
from .timeseries import TSClassificationSingle, TSRegression

__all__ = ["SupervisedTask", "ImageClassificationSingle", "ImageClassificationMulti", "TabularClassificationSingle",
           "TabularRegression", "ImageSegmentation", "ImageKeypointRegression",
           "TSClassificationSingle", "TSRegression"]
