"""Pavlick & Tetreault (2016) sentence formality (``pt16/``): ``train.csv`` 4,477 / ``tune.csv`` 500 /
``test.csv`` 3,000 sentences with a formality score from -3 to 3 (columns ``SID,label,sentence``).

A missing sentence is written ``None`` (17 rows of the test split, 15 of them with label ``None``): such rows,
and blank ones, are left out and their line numbers kept in ``skipped``.
"""
from __future__ import annotations

from ..errors import InputError
from ..readers.text import StrPath
from .labelled import LabelledData, read_labelled
from .paths import dataset_dir

SPLITS = ("train", "tune", "test")


def labelled(root: StrPath | None, split: str, *, binary: bool = False, threshold: float = 0.0) -> LabelledData:
    """The sentences of ``split`` with their scores (floats), or with ``binary=True`` the labels ``formal``
    (score > ``threshold``) / ``informal`` (Lai et al.'s C-PT16)."""
    if split not in SPLITS:
        raise InputError(f"unknown PT16 split {split!r}; choose from {', '.join(SPLITS)}")
    path = dataset_dir(root, "pt16") / f"{split}.csv"
    data = read_labelled(path, text_col="sentence", label_col="label", numeric=True, missing=("None",),
                         encoding="utf-8")
    if binary:
        data.labels = ["formal" if y > threshold else "informal" for y in data.labels]
    return data
