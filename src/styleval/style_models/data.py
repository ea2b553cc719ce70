"""Labelled text for style models: texts of known style for calibration (:func:`read_style_files`).

:class:`LabelledData`, :func:`read_labelled` and :func:`split_data` live in :mod:`styleval.datasets.labelled`;
the public corpora (PT16, yelp-shen, ParaDetox) are read by their modules in :mod:`styleval.datasets`.
"""
from __future__ import annotations

from ..datasets.labelled import LabelledData, read_labelled, split_data
from ..errors import InputError
from ..readers.text import StrPath, read_lines

__all__ = ["LabelledData", "read_labelled", "split_data", "read_style_files"]


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
