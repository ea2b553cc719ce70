"""Labelled text: the view of a dataset that style models train and are tested on.

A :class:`LabelledData` is parallel lists of texts and labels (strings for classifiers, floats for regressors)
with where they came from; :func:`read_labelled` reads one from a TSV, CSV or JSON-lines table.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import InputError
from ..readers.tabular import iter_delimited, table_format
from ..readers.text import StrPath, iter_json_objects
from .split import shuffled_parts


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
                  missing: Sequence[str] = (), encoding: str | None = None) -> LabelledData:
    """Read a TSV/CSV/JSONL table with a text and a label column.

    ``numeric=True`` parses labels as floats (regression). Rows whose text is empty are left out and their
    line numbers kept in ``skipped`` (``drop_empty=False`` makes them an error); so are rows whose text equals
    one of ``missing`` (PT16 writes ``None`` for a missing sentence). ``encoding``: of the file (default: UTF-8,
    or :func:`~styleval.readers.text.inputs_encoded`'s).
    """
    fmt = table_format(path, format)
    texts: list[str] = []
    labels: list[Any] = []
    skipped: list[int] = []
    if fmt == "jsonl":
        rows = iter_json_objects(path, encoding)
    else:
        header, raw = iter_delimited(path, fmt, encoding)
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


def split_data(data: LabelledData, fraction: float, *, seed: int = 13) -> tuple[LabelledData, LabelledData]:
    """A seeded (1 - fraction, fraction) split (:func:`~.split.shuffled_parts`, nearest rounding), each part in
    the data's order, e.g. to hold out a model-selection set from training data."""
    held, rest = shuffled_parts(len(data), (fraction,), seed=seed, rounding="nearest")
    return data.subset(sorted(rest)), data.subset(sorted(held))
