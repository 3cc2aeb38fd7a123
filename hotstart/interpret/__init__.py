"""Interpretation: read a trained learner's predictions on the validation set and show where it
goes wrong. Nothing here trains or changes the learner.

    from hotstart.interpret import ClassificationInterpretation, SegmentationInterpretation
    interp = ClassificationInterpretation.from_learner(learner)
    interp.confusion_matrix(); interp.most_confused(min_val=2); interp.plot_top_losses(9)
"""
from .classification import ClassificationInterpretation
from .segmentation import SegmentationInterpretation

__all__ = ["ClassificationInterpretation", "SegmentationInterpretation"]
