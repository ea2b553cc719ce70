"""Style metrics; importing this package registers them.

Registered: ``style_accuracy``, ``style_probability``, ``style_emd`` (classifier), ``style_regression``
(regressor), ``formality_fscore`` (POS frequencies). Not registered (modifiers the CLI applies through flags):
:class:`StyleMask`, :class:`StyleRemove`.
"""
from .classifier import StyleAccuracy, StyleEMD, StyleProbability
from .masking import StyleMask, StyleRemove
from .regressor import FormalityFScore, StyleRegression

__all__ = ["StyleAccuracy", "StyleProbability", "StyleEMD", "StyleRegression", "FormalityFScore", "StyleMask",
           "StyleRemove"]
