"""Style models (classifiers and regressors trained from labelled text), shipped defaults, style lexicons.

* :class:`StyleModel`, loaded from a versioned folder with a model card (trained by :mod:`styleval.training.style`);
* :func:`load_style_model`: a shipped model by name (:func:`shipped_models`) or a model folder, loaded once;
* :mod:`styleval.style_models.lexicon`: style lexicons (Mir et al. 2019), masking and removal of style words;
* :mod:`styleval.style_models.distance`: direction-corrected Earth Mover's Distance between style distributions;
* :mod:`styleval.style_models.fscore`: Heylighen & Dewaele's formality F-score from part-of-speech frequencies.
"""
from __future__ import annotations

from .data import LabelledData, read_labelled, split_data
from .model import CLASSIFIER, REGRESSOR, StyleModel
from .pretrained import load_style_model, resolve_style_model, shipped_models
from .features import BLOCKS
from .adapted_block import AdaptedEncoderBlock

BLOCKS[AdaptedEncoderBlock.kind] = AdaptedEncoderBlock

__all__ = ["LabelledData", "read_labelled", "split_data",
           "StyleModel", "CLASSIFIER", "REGRESSOR", "load_style_model", "resolve_style_model", "shipped_models",
           "AdaptedEncoderBlock"]
