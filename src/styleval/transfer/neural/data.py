"""Parallel style data for training transfer models: plain parallel files, the GYAFC layout, ParaDetox.

A :class:`ParallelData` is a list of :class:`Group` s: one source sentence with one or more target rewrites.
Training uses every (source, rewrite) pair; evaluation uses each source once with all its rewrites as references.
Splits are made by **source** (a group is never cut), so no rewrite of a held-out source is seen in training.
"""
from __future__ import annotations

import os

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ...errors import InputError
from ...readers.text import StrPath, read_lines

#: rule-based preprocessing of the sources (Rao & Tetreault's rules, :mod:`styleval.transfer.rules`)
PREPROCESSING = ("none", "rules-formal", "rules-informal")


@dataclass(frozen=True)
class Group:
    """A source sentence and its target-style rewrites (at least one)."""

    source: str
    targets: tuple[str, ...]


@dataclass
class ParallelData:
    """Source/target groups with where they came from (``origin``) and how they were split (``split``)."""

    groups: list[Group]
    origin: str = ""
    split: str = ""

    def __len__(self) -> int:
        return len(self.groups)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (source, rewrite) pair, in group order."""
        return [(g.source, t) for g in self.groups for t in g.targets]

    @property
    def sources(self) -> list[str]:
        return [g.source for g in self.groups]

    def data_hash(self) -> str:
        """sha256 over ``source\\ttarget`` pair lines, in order: identifies training data in a model card."""
        h = hashlib.sha256()
        for s, t in self.pairs():
            h.update(f"{s}\t{t}\n".encode("utf-8"))
        return h.hexdigest()

    def describe(self) -> dict[str, object]:
        return {"origin": self.origin, "split": self.split, "sources": len(self.groups),
                "pairs": len(self.pairs()), "sha256": self.data_hash()[:16]}


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
        groups.append(Group(s, tuple(targets_i)))
    if not groups:
        raise InputError("no sentence pairs", sources)
    return ParallelData(groups, origin=f"{sources} -> {', '.join(map(str, target_files))}")


def read_gyafc_groups(root: StrPath, direction: str, *, domain: str | None = None,
                      split: str = "train") -> ParallelData:
    """A GYAFC split in its release layout (sources and their ``.ref*`` rewrites), through the GYAFC reader."""
    from ...readers.gyafc import gyafc_inputs

    segments = gyafc_inputs(root, domain, direction, split)
    groups = [Group(s.source.strip(), tuple(r.strip() for r in s.references if r.strip())) for s in segments]
    groups = [g for g in groups if g.targets]
    if not groups:
        raise InputError(f"no GYAFC sources with a rewrite for {direction}, split {split}", root)
    return ParallelData(groups, origin=f"GYAFC {root} [{domain or 'both domains'}, {direction}]", split=split)


def paradetox_groups(root: StrPath) -> tuple[list[Group], Path]:
    """ParaDetox's toxic sentences with their 1-3 crowd rewrites, in file order (``paradetox/paradetox.tsv``).

    Rows without a toxic sentence are not pairs and are left out (as :func:`styleval.style.load_paradetox` does, so
    the shuffles match); rows without a rewrite are kept here and left out by :func:`split_by_source`.
    """
    base = Path(root)
    folder = base / "paradetox" if (base / "paradetox" / "paradetox").is_dir() else base
    path = folder / "paradetox" / "paradetox.tsv"
    lines = read_lines(path)
    header = lines[0].split("\t") if lines else []
    if not header or header[0] != "toxic":
        raise InputError(f"expected a first column 'toxic'; columns: {', '.join(header)}", path, 1)
    groups = []
    for line in lines[1:]:  # 2-4 fields: trailing empty rewrites are sometimes cut off
        fields = line.split("\t")
        toxic, neutral = fields[0].strip(), [f.strip() for f in fields[1:] if f.strip()]
        if not toxic:  # a few rows have no toxic sentence: not a pair (left out, as the style data loader does)
            continue
        groups.append(Group(toxic, tuple(neutral)))  # 5 rows have no rewrite: kept here, left out by the split
    return groups, path


def split_by_source(groups: Sequence[Group], *, seed: int = 13, fractions: tuple[float, float] = (0.8, 0.1),
                    origin: str = "") -> dict[str, ParallelData]:
    """Shuffle the groups with ``seed`` and cut them into train/dev/test by ``fractions`` (train, dev).

    This is the row shuffle of :func:`styleval.style.load_paradetox` (same seed, same cut), so on ParaDetox the
    test sources are exactly those the shipped toxicity classifier held out. A source text that occurs in
    several groups stays in the first split it falls into: later copies are dropped from dev and test, so no
    held-out source was trained on.
    """
    if not (0 < fractions[0] < 1 and 0 <= fractions[1] < 1 and sum(fractions) < 1):
        raise InputError(f"fractions must be (train, dev) with train + dev < 1, got {fractions}")
    order = list(range(len(groups)))
    random.Random(seed).shuffle(order)
    n_train = int(len(order) * fractions[0])
    n_dev = int(len(order) * fractions[1])
    cuts = {"train": order[:n_train], "dev": order[n_train:n_train + n_dev], "test": order[n_train + n_dev:]}
    seen: set[str] = set()
    out = {}
    for name, idx in cuts.items():
        chosen = []
        for i in idx:
            g = groups[i]
            if (name != "train" and g.source in seen) or not g.targets:  # a source without rewrite is left out
                continue
            chosen.append(g)
        seen.update(g.source for g in chosen)
        out[name] = ParallelData(chosen, origin=origin, split=f"{name} of a split by source, seed {seed}, "
                                                               f"fractions {fractions[0]:g}/{fractions[1]:g}/"
                                                               f"{1 - sum(fractions):g}")
    return out


def load_paradetox_splits(root: StrPath, *, seed: int = 13, fractions: tuple[float, float] = (0.8, 0.1)
                          ) -> dict[str, ParallelData]:
    """ParaDetox (toxic -> neutral) split by toxic source: train/dev/test :class:`ParallelData`."""
    groups, path = paradetox_groups(root)
    return split_by_source(groups, seed=seed, fractions=fractions, origin=str(path))


def holdout(data: ParallelData, fraction: float = 0.05, *, seed: int = 13) -> tuple[ParallelData, ParallelData]:
    """A (train, dev) split by source of ``data``, for selection when no dev data is given."""
    if not 0 < fraction < 1:
        raise InputError(f"the held-out fraction must lie in (0, 1), got {fraction}")
    order = list(range(len(data.groups)))
    random.Random(seed).shuffle(order)
    k = max(1, int(round(len(order) * fraction)))
    dev_idx, train_idx = sorted(order[:k]), sorted(order[k:])
    dev_sources = {data.groups[i].source for i in dev_idx}
    train = [data.groups[i] for i in train_idx if data.groups[i].source not in dev_sources]
    what = f"{fraction:g} of the sources held out by source, seed {seed}"
    return (ParallelData(train, data.origin, f"{data.split}; rest after {what}".lstrip("; ")),
            ParallelData([data.groups[i] for i in dev_idx], data.origin, f"{data.split}; {what}".lstrip("; ")))


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
    return ParallelData([Group(rule(g.source), g.targets) for g in data.groups], data.origin,
                        f"{data.split}; sources preprocessed with {name}")


def iter_batches(items: Sequence[int], batch_size: int, rnd: random.Random | None = None) -> Iterable[list[int]]:
    """Indices in batches (shuffled when ``rnd`` is given)."""
    order = list(items)
    if rnd is not None:
        rnd.shuffle(order)
    for i in range(0, len(order), batch_size):
        yield order[i:i + batch_size]


__all__ = ["Group", "ParallelData", "PREPROCESSING", "read_parallel_files", "read_gyafc_groups", "paradetox_groups",
           "split_by_source", "load_paradetox_splits", "holdout", "preprocessor", "preprocess_groups",
           "iter_batches"]
