"""Shen et al.'s Yelp sentiment sentences (``yelp-shen/``): ``data/yelp/sentiment.<split>.0`` negative and
``.1`` positive, splits ``dev`` and ``test`` (the train split is not in the shared data)."""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..readers.text import StrPath, read_lines
from .labelled import LabelledData
from .paths import dataset_dir

SPLITS = ("dev", "test")
LABELS = ("negative", "positive")  # file suffix .0, .1


def path(root: StrPath | None, split: str, label: int) -> Path:
    """The file of ``split`` with sentiment ``label`` (0 negative, 1 positive)."""
    if split not in SPLITS:
        raise InputError(f"unknown yelp-shen split {split!r}; choose from {', '.join(SPLITS)}")
    if label not in (0, 1):
        raise InputError(f"yelp-shen label must be 0 (negative) or 1 (positive), got {label!r}")
    return dataset_dir(root, "yelp-shen") / "data" / "yelp" / f"sentiment.{split}.{label}"


def sentences(root: StrPath | None, split: str, label: int) -> list[str]:
    """The non-blank lines of one file, in order (line endings stripped, nothing else)."""
    return [t for t in read_lines(path(root, split, label), "utf-8") if t.strip()]


def labelled(root: StrPath | None, split: str) -> LabelledData:
    """Both files of ``split``: the negative sentences (label ``negative``), then the positive ones."""
    texts: list[str] = []
    labels: list[str] = []
    for k, name in enumerate(LABELS):
        lines = sentences(root, split, k)
        texts += lines
        labels += [name] * len(lines)
    return LabelledData(texts, labels, str(path(root, split, 0).parent / f"sentiment.{split}.*"))
