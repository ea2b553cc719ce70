"""Labelled text for training style models: a generic table reader and the public style datasets.

A :class:`LabelledData` is parallel lists of texts and labels (strings for classifiers, floats for
regressors) with where they came from. Tables are TSV, CSV or JSON lines with a text and a label column
(:func:`read_labelled`). The dataset loaders read the public corpora from the folder the caller gives
(``../shared/data``); nothing is bundled.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..readers.tabular import iter_delimited, table_format
from ..readers.text import iter_json_objects
from ..readers.text import StrPath, read_lines


@dataclass
class LabelledData:
    """Texts with one label each; ``origin`` names the file(s), ``skipped`` the 1-based lines left out."""

    texts: list[str]
    labels: list[Any]
    origin: str = ""
    skipped: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.labels):
            raise InputError(f"{len(self.texts)} texts but {len(self.labels)} labels", self.origin or None)

    def __len__(self) -> int:
        return len(self.texts)

    def data_hash(self) -> str:
        """sha256 over ``text\\tlabel`` lines, in order: identifies the training data in a model card."""
        h = hashlib.sha256()
        for t, y in zip(self.texts, self.labels):
            h.update(f"{t}\t{y}\n".encode("utf-8"))
        return h.hexdigest()

    def subset(self, index: Sequence[int], origin: str | None = None) -> "LabelledData":
        return LabelledData([self.texts[i] for i in index], [self.labels[i] for i in index],
                            origin if origin is not None else self.origin)

    def __add__(self, other: "LabelledData") -> "LabelledData":
        return LabelledData(self.texts + other.texts, self.labels + other.labels, f"{self.origin}+{other.origin}")

    def label_set(self) -> list[str]:
        return sorted({str(y) for y in self.labels})


def _label(value: Any, numeric: bool, path: StrPath, line: int) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("empty label", path, line)
    if numeric:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise InputError(f"label {value!r} is not a number (a regressor needs numeric labels)", path,
                             line) from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def read_labelled(path: StrPath, *, text_col: str = "text", label_col: str = "label", numeric: bool = False,
                  format: str | None = None, drop_empty: bool = True,
                  missing: Sequence[str] = ()) -> LabelledData:
    """Read a TSV/CSV/JSONL table with a text and a label column.

    ``numeric=True`` parses labels as floats (regression). Rows whose text is empty are left out and their
    line numbers kept in ``skipped`` (``drop_empty=False`` makes them an error); so are rows whose text equals
    one of ``missing`` (PT16 writes ``None`` for a missing sentence).
    """
    fmt = table_format(path, format)
    texts: list[str] = []
    labels: list[Any] = []
    skipped: list[int] = []
    if fmt == "jsonl":
        rows = iter_json_objects(path)
    else:
        header, raw = iter_delimited(path, fmt)
        for col in (text_col, label_col):
            if col not in header:
                raise InputError(f"no column {col!r}; columns: {', '.join(header)}", path)
        rows = ((n, dict(zip(header, fields))) for n, fields in raw)
    for n, row in rows:
        for col in (text_col, label_col):
            if col not in row:
                raise InputError(f"no field {col!r}; fields: {', '.join(map(str, row))}", path, n)
        text = row[text_col]
        text = "" if text is None else str(text)
        if not text.strip() or text in missing:
            if drop_empty:
                skipped.append(n)
                continue
            raise InputError("empty text", path, n)
        texts.append(text)
        labels.append(_label(row[label_col], numeric, path, n))
    if not texts:
        raise InputError("no labelled rows", path)
    return LabelledData(texts, labels, str(path), skipped)


# -- public datasets --------------------------------------------------------------------------------------
def _folder(root: StrPath, name: str) -> Path:
    base = Path(root)
    path = base / name if (base / name).is_dir() else base
    if not path.is_dir():
        raise InputError("dataset folder not found", path)
    return path


def load_pt16(root: StrPath, split: str, *, binary: bool = False, threshold: float = 0.0) -> LabelledData:
    """Pavlick & Tetreault (2016) sentence formality, ``split`` train/tune/test; scores -3..3.

    ``binary=True`` gives ``formal`` (score > threshold) / ``informal`` labels (Lai et al.'s C-PT16).
    Missing sentences (written ``None``: 17 in test, 2 in train) are skipped.
    """
    path = _folder(root, "pt16") / f"{split}.csv"
    data = read_labelled(path, text_col="sentence", label_col="label", numeric=True, missing=("None",))
    if binary:
        data.labels = ["formal" if y > threshold else "informal" for y in data.labels]
    return data


def load_yelp_shen(root: StrPath, split: str) -> LabelledData:
    """Shen et al.'s Yelp sentiment sentences, split ``dev`` or ``test``: ``negative`` (.0), ``positive`` (.1)."""
    folder = _folder(root, "yelp-shen") / "data" / "yelp"
    texts: list[str] = []
    labels: list[str] = []
    for k, name in ((0, "negative"), (1, "positive")):
        lines = [t for t in read_lines(folder / f"sentiment.{split}.{k}") if t.strip()]
        texts += lines
        labels += [name] * len(lines)
    return LabelledData(texts, labels, str(folder / f"sentiment.{split}.*"))


def load_paradetox(root: StrPath, *, seed: int = 13, fractions: tuple[float, float] = (0.8, 0.1)
                   ) -> dict[str, LabelledData]:
    """ParaDetox toxic sentences (``toxic``) and their crowd rewrites (``neutral``), split by source sentence.

    Rows (a toxic sentence with its 1-3 rewrites) are shuffled with ``seed`` and cut into train/dev/test by
    ``fractions``, so no rewrite of a held-out sentence is seen in training. Duplicate texts keep their
    first row's split.
    """
    path = _folder(root, "paradetox") / "paradetox" / "paradetox.tsv"
    lines = read_lines(path)
    header = lines[0].split("\t") if lines else []
    if "toxic" not in header:
        raise InputError(f"no column 'toxic'; columns: {', '.join(header)}", path)
    groups = []
    for line in lines[1:]:  # rows have 2-4 fields: trailing empty rewrites are sometimes cut off
        fields = line.split("\t")
        toxic, neutral = fields[0], [f for f in fields[1:] if f.strip()]
        if toxic.strip():
            groups.append((toxic, neutral))
    order = list(range(len(groups)))
    random.Random(seed).shuffle(order)
    n_train = int(len(order) * fractions[0])
    n_dev = int(len(order) * fractions[1])
    parts = {"train": order[:n_train], "dev": order[n_train:n_train + n_dev], "test": order[n_train + n_dev:]}
    seen: set[str] = set()
    out: dict[str, LabelledData] = {}
    for split, idx in parts.items():
        texts: list[str] = []
        labels: list[str] = []
        for i in idx:
            toxic, neutral = groups[i]
            for text, label in [(toxic, "toxic"), *((n, "neutral") for n in neutral)]:
                if text not in seen:
                    seen.add(text)
                    texts.append(text)
                    labels.append(label)
        out[split] = LabelledData(texts, labels, f"{path}[{split}, seed={seed}]")
    return out


def split_data(data: LabelledData, fraction: float, *, seed: int = 13) -> tuple[LabelledData, LabelledData]:
    """A random (1 - fraction, fraction) split, e.g. to hold out a model-selection set from training data."""
    order = list(range(len(data)))
    random.Random(seed).shuffle(order)
    k = int(round(len(order) * fraction))
    return data.subset(sorted(order[k:])), data.subset(sorted(order[:k]))


def read_style_files(files: dict[str, StrPath]) -> LabelledData:
    """Texts of known style from plain text files, one text per line: ``{style: path}``. An empty line is an error
    (naming the file and line), never skipped: a calibration sample should be exactly what the user gave."""
    if len(files) < 2:
        raise InputError(f"need a file for each of two styles, got {len(files)}: {', '.join(files) or '(none)'}")
    texts: list[str] = []
    labels: list[str] = []
    for style, path in files.items():
        lines = read_lines(path)
        if not lines:
            raise InputError("no texts in the file", path)
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                raise InputError(f"empty line in the {style!r} texts (one text per line, no blank lines)", path, n)
            texts.append(line)
            labels.append(style)
    origin = " + ".join(f"{style}={path}" for style, path in files.items())
    return LabelledData(texts, labels, origin)
