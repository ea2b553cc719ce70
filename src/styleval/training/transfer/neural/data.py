"""Parallel style data for training transfer models: plain parallel files, source preprocessing, batches.

:class:`ParallelData` (groups of one source and its rewrites), :func:`split_by_source` and :func:`holdout` live in
:mod:`styleval.datasets.parallel`; the GYAFC layout and ParaDetox are read by :mod:`styleval.datasets.gyafc`
(:func:`~styleval.datasets.gyafc.parallel`) and :mod:`styleval.datasets.paradetox`
(:func:`~styleval.datasets.paradetox.parallel_splits`).
"""
from __future__ import annotations

import os
import random
from typing import Callable, Iterable, Sequence

from ....datasets.parallel import RewriteGroup, ParallelData, holdout, split_by_source
from ....errors import InputError
from ....readers.text import StrPath, read_lines

#: rule-based preprocessing of the sources (Rao & Tetreault's rules, :mod:`styleval.training.transfer.rules`)
PREPROCESSING = ("none", "rules-formal", "rules-informal")


def _check_text(text: str, path: StrPath, line: int, what: str) -> str:
    if not text.strip():
        raise InputError(f"empty {what} sentence", path, line)
    return text.strip()


def read_parallel_files(sources: StrPath, targets: StrPath | Sequence[StrPath]) -> ParallelData:
    """Sources, one per line, with one or more target files of the same length (line i rewrites source i).

    An empty source line is an error naming the file and line; an empty line in an extra target file (a source
    with fewer rewrites) is skipped, but the first target file must have a rewrite on every line.
    """
    target_files = [targets] if isinstance(targets, (str, os.PathLike)) else list(targets)
    if not target_files:
        raise InputError("no target file given", sources)
    src = read_lines(sources)
    columns = []
    for path in target_files:
        lines = read_lines(path)
        if len(lines) != len(src):
            raise InputError(f"{len(lines)} lines, but the source file {sources} has {len(src)}", path)
        columns.append((path, lines))
    groups = []
    for i, s in enumerate(src):
        s = _check_text(s, sources, i + 1, "source")
        first_path, first = columns[0]
        targets_i = [_check_text(first[i], first_path, i + 1, "target")]
        targets_i += [lines[i].strip() for _, lines in columns[1:] if lines[i].strip()]
        groups.append(RewriteGroup(s, tuple(targets_i)))
    if not groups:
        raise InputError("no sentence pairs", sources)
    return ParallelData(groups, origin=f"{sources} -> {', '.join(map(str, target_files))}")


def preprocessor(name: str) -> Callable[[str], str]:
    """The source-side preprocessing named ``name`` (one of :data:`PREPROCESSING`)."""
    if name == "none":
        return lambda text: text
    if name == "rules-formal":
        from ..rules import to_formal

        return to_formal
    if name == "rules-informal":
        from ..rules import to_informal

        return to_informal
    raise InputError(f"preprocessing must be one of {', '.join(PREPROCESSING)}; got {name!r}")


def preprocess_groups(data: ParallelData, name: str) -> ParallelData:
    """``data`` with the sources rewritten by :func:`preprocessor` (targets untouched)."""
    if name == "none":
        return data
    rule = preprocessor(name)
    return ParallelData([RewriteGroup(rule(g.source), g.targets) for g in data.groups], data.origin,
                        f"{data.split}; sources preprocessed with {name}")


def iter_batches(items: Sequence[int], batch_size: int, rnd: random.Random | None = None) -> Iterable[list[int]]:
    """Indices in batches (shuffled when ``rnd`` is given)."""
    order = list(items)
    if rnd is not None:
        rnd.shuffle(order)
    for i in range(0, len(order), batch_size):
        yield order[i:i + batch_size]


__all__ = ["RewriteGroup", "ParallelData", "PREPROCESSING", "read_parallel_files", "split_by_source", "holdout",
           "preprocessor", "preprocess_groups", "iter_batches"]
