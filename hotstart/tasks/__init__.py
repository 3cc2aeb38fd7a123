"""Tasks: blocks + encodings, from which head, loss, metrics and mocks follow."""
from .base import SupervisedTask
from .classification import ImageClassificationMulti, ImageClassificationSingle

__all__ = ["SupervisedTask", "ImageClassificationSingle", "ImageClassificationMulti"]
