"""Learned content preservation: does a rewrite keep the meaning of its source or reference?

A :class:`PreservationModel` is a weighted average of parts (``model.py``): a logistic head over pair features of a
frozen encoder (MiniLM) and a spaCy parse (``features.py``: sentence and token similarity, content words kept and
added with style words set aside, named entities, numbers, negation), optionally a LoRA-tuned cross-encoder
(``cross_encoder.py``) and the plain sentence cosine. ``train.py`` fits a model by a :class:`PreservationRecipe`
on pair files (``data.py``), ``negatives.py`` makes meaning-changing rewrites that keep the style, ``corpus.py``
assembles the shipped models' public training data and held-out tests, ``pretrained/`` ships the default and the
fast model.
"""
from .data import PairData, read_pairs, write_pairs
from .features import FEATURES, PairFeaturizer
from .model import PreservationModel, upgrade_model_folder
from .pretrained import DEFAULT_MODEL, load_preservation_model, resolve_preservation_model, shipped_models
from .train import PreservationRecipe, default_style_words, train_preservation_model

__all__ = ["PairData", "read_pairs", "write_pairs", "FEATURES", "PairFeaturizer", "PreservationModel",
           "upgrade_model_folder", "DEFAULT_MODEL", "load_preservation_model", "resolve_preservation_model",
           "shipped_models", "PreservationRecipe", "default_style_words", "train_preservation_model"]
