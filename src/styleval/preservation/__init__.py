"""Learned content preservation: does a rewrite keep the meaning of its source or reference?

A :class:`PreservationModel` is a weighted average of parts (``model.py``): a logistic head over pair features of a
frozen encoder (MiniLM) and a spaCy parse (``features.py``: sentence and token similarity, content words kept and
added with style words set aside, named entities, numbers, negation), optionally a LoRA-tuned cross-encoder
(``cross_encoder.py``) and the plain sentence cosine; ``data.py`` reads and writes pair files, ``pretrained/`` ships
the default and the fast model. Training lives in :mod:`styleval.training.preservation` (a model by a
``PreservationRecipe``), :mod:`styleval.training.negatives` (meaning-changing rewrites that keep the style) and
:mod:`styleval.training.preservation_corpus` (the shipped models' public training data and held-out tests).
"""
from .data import PairData, read_pairs, write_pairs
from .features import FEATURES, PairFeaturizer
from .model import LogisticHead, PairSetup, PreservationModel, upgrade_model_folder
from .pretrained import DEFAULT_MODEL, load_preservation_model, resolve_preservation_model, shipped_models

__all__ = ["PairData", "read_pairs", "write_pairs", "FEATURES", "PairFeaturizer", "LogisticHead", "PairSetup",
           "PreservationModel",
           "upgrade_model_folder", "DEFAULT_MODEL", "load_preservation_model", "resolve_preservation_model",
           "shipped_models"]
