"""Parallel pairs: the view of a dataset that transfer models train on.

A :class:`ParallelData` is a list of :class:`RewriteGroup` s: one source sentence with one or more target rewrites.
Training uses every (source, rewrite) pair; evaluation uses each source once with all its rewrites as references.
Splits are made by **source** (a group is never cut), so no rewrite of a held-out source is seen in training.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

from ..errors import InputError
from .split import shuffled_parts


@dataclass(frozen=True)
class RewriteGroup:
    """A source sentence and its target-style rewrites (at least one)."""

    source: str
    targets: tuple[str, ...]


@dataclass
class ParallelData:
    """Source/target groups with where they came from (``origin``) and how they were split (``split``)."""

    groups: list[RewriteGroup]
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


def split_by_source(groups: Sequence[RewriteGroup], *, seed: int = 13, fractions: tuple[float, float] = (0.8, 0.1),
                    origin: str = "") -> dict[str, ParallelData]:
    """Cut the groups into train/dev/test by ``fractions`` (train, dev) with :func:`~.split.shuffled_parts`.

    On ParaDetox this is the cut of :func:`styleval.datasets.paradetox.labelled_splits` (same rows, seed and
    fractions), so the test sources are exactly those the shipped toxicity classifier held out. A source text that
    occurs in several groups stays in the first split it falls into: later copies are dropped from dev and test,
    so no held-out source was trained on. Groups without a rewrite are left out.
    """
    if not (0 < fractions[0] < 1 and 0 <= fractions[1] < 1 and sum(fractions) < 1):
        raise InputError(f"fractions must be (train, dev) with train + dev < 1, got {fractions}")
    cuts = dict(zip(("train", "dev", "test"), shuffled_parts(len(groups), fractions, seed=seed)))
    seen: set[str] = set()
    out = {}
    for name, idx in cuts.items():
        chosen = []
        for i in idx:
            g = groups[i]
            if (name != "train" and g.source in seen) or not g.targets:
                continue
            chosen.append(g)
        seen.update(g.source for g in chosen)
        out[name] = ParallelData(chosen, origin=origin, split=f"{name} of a split by source, seed {seed}, "
                                                               f"fractions {fractions[0]:g}/{fractions[1]:g}/"
                                                               f"{1 - sum(fractions):g}")
    return out


def holdout(data: ParallelData, fraction: float = 0.05, *, seed: int = 13) -> tuple[ParallelData, ParallelData]:
    """A (train, dev) split by source of ``data``, for selection when no dev data is given."""
    if not 0 < fraction < 1:
        raise InputError(f"the held-out fraction must lie in (0, 1), got {fraction}")
    dev_part, train_part = shuffled_parts(len(data.groups), (fraction,), seed=seed, rounding="nearest", at_least=1)
    dev_idx, train_idx = sorted(dev_part), sorted(train_part)
    dev_sources = {data.groups[i].source for i in dev_idx}
    train = [data.groups[i] for i in train_idx if data.groups[i].source not in dev_sources]
    what = f"{fraction:g} of the sources held out by source, seed {seed}"
    return (ParallelData(train, data.origin, f"{data.split}; rest after {what}".lstrip("; ")),
            ParallelData([data.groups[i] for i in dev_idx], data.origin, f"{data.split}; {what}".lstrip("; ")))
