"""Learned content preservation: does a rewrite keep the meaning of its source, whatever its style?

A :class:`PreservationModel` turns a (source or reference, output) pair into features from a frozen encoder
(MiniLM) and a spaCy parse (sentence and token similarity, content words kept and added with style words set
aside, named entities, numbers, negation) and a logistic head maps them to 0-1. ``train.py`` fits the head on
pair files (``data.py``), ``negatives.py`` makes meaning-changing rewrites that keep the style, ``corpus.py``
assembles the shipped model's public training data and held-out tests, ``pretrained/`` ships the model.
"""
from .data import PairData, read_pairs, write_pairs
from .features import FEATURES, PairFeaturizer
from .model import PreservationModel
from .pretrained import DEFAULT_MODEL, load_preservation_model, resolve_preservation_model, shipped_models
from .train import default_style_words, train_preservation_model

__all__ = ["PairData", "read_pairs", "write_pairs", "FEATURES", "PairFeaturizer", "PreservationModel", "DEFAULT_MODEL",
           "load_preservation_model", "resolve_preservation_model", "shipped_models", "default_style_words",
           "train_preservation_model"]
