"""ParaDetox (``paradetox/``): toxic sentences with 1-3 crowd-verified neutral rewrites,
``paradetox/paradetox.tsv`` (header ``toxic neutral1 neutral2 neutral3``, tab-separated, no quoting).

Rows have 2-4 fields (trailing empty rewrites are sometimes cut off). A few rewrites hold a line break, which
splits their row in two: the second half reads as a row of its own. Every view starts from :func:`rows` and
every shuffle is :func:`~.split.shuffled_parts` with seed 13 by default, so the splits below are the ones the
shipped toxicity classifier, the ParaDetox transfer baselines and the preservation model were trained on:

* :func:`labelled_splits`: rows with a toxic sentence, cut 80/10/10 into train/dev/test; texts labelled
  ``toxic`` / ``neutral``, a duplicate text kept in its first split only (style models);
* :func:`parallel_splits`: the same rows and cut as groups (toxic -> its rewrites), by source (transfer models);
* :func:`first_rewrites`: (toxic, first rewrite) of the rows that have both, cut 80/20 (preservation model).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..readers.text import StrPath, read_lines
from .labelled import LabelledData
from .parallel import RewriteGroup, ParallelData, split_by_source
from .paths import data_home, default_root
from .split import shuffled_parts

HEADER = ("toxic", "neutral1")
SEED = 13


@dataclass(frozen=True)
class Row:
    """One line of the file after the header: ``line`` (1-based), the toxic sentence and the other fields as
    read (possibly empty)."""

    line: int
    toxic: str
    rewrites: tuple[str, ...]


def path(root: StrPath | None) -> Path:
    """``<root>/paradetox/paradetox.tsv``, where ``root`` is the dataset folder or its parent (``None``: the
    shared data)."""
    if root is None and not (default_root() / "paradetox").is_dir() and (data_home() / "paradetox").is_dir():
        base = data_home()  # the copy `styleval data fetch` downloaded
    else:
        base = Path(root) if root is not None else default_root()
    folder = base / "paradetox" if (base / "paradetox" / "paradetox").is_dir() else base
    return folder / "paradetox" / "paradetox.tsv"


def rows(root: StrPath | None) -> tuple[Path, list[Row]]:
    """The file and its rows in file order (fields split on tabs only, nothing stripped)."""
    file = path(root)
    lines = read_lines(file, "utf-8")
    header = tuple(lines[0].split("\t")) if lines else ()
    if header[:2] != HEADER:
        raise InputError(f"expected a header starting with 'toxic<TAB>neutral1', found {' | '.join(header)!r}",
                         file, 1)
    out = []
    for line, text in enumerate(lines[1:], start=2):
        fields = text.split("\t")
        out.append(Row(line, fields[0], tuple(fields[1:])))
    return file, out


def _with_toxic(root: StrPath | None) -> tuple[Path, list[Row]]:
    """Rows with a toxic sentence: the items every 80/10/10 split shuffles."""
    file, all_rows = rows(root)
    return file, [r for r in all_rows if r.toxic.strip()]


def labelled_splits(root: StrPath | None, *, seed: int = SEED, fractions: tuple[float, float] = (0.8, 0.1)
                    ) -> dict[str, LabelledData]:
    """Toxic sentences (``toxic``) and their rewrites (``neutral``), split by toxic sentence into train/dev/test.

    Rows are shuffled with ``seed`` and cut by ``fractions`` (train, dev), so no rewrite of a held-out sentence is
    seen in training. Texts are as in the file; a text seen before (in any split) is left out.
    """
    file, kept = _with_toxic(root)
    parts = dict(zip(("train", "dev", "test"), shuffled_parts(len(kept), fractions, seed=seed)))
    seen: set[str] = set()
    out: dict[str, LabelledData] = {}
    for split, idx in parts.items():
        texts: list[str] = []
        labels: list[str] = []
        for i in idx:
            row = kept[i]
            neutral = [f for f in row.rewrites if f.strip()]
            for text, label in [(row.toxic, "toxic"), *((n, "neutral") for n in neutral)]:
                if text not in seen:
                    seen.add(text)
                    texts.append(text)
                    labels.append(label)
        out[split] = LabelledData(texts, labels, f"{file}[{split}, seed={seed}]")
    return out


def groups(root: StrPath | None) -> tuple[list[RewriteGroup], Path]:
    """Each row with a toxic sentence as a :class:`RewriteGroup` (stripped texts), in file order, and the file. A row
    without a rewrite is kept (an empty group; :func:`split_by_source` leaves it out)."""
    file, kept = _with_toxic(root)
    return [RewriteGroup(r.toxic.strip(), tuple(f.strip() for f in r.rewrites if f.strip())) for r in kept], file


def parallel_splits(root: StrPath | None, *, seed: int = SEED, fractions: tuple[float, float] = (0.8, 0.1)
                    ) -> dict[str, ParallelData]:
    """ParaDetox (toxic -> neutral) split by toxic source: train/dev/test, the cut of :func:`labelled_splits`."""
    found, file = groups(root)
    return split_by_source(found, seed=seed, fractions=fractions, origin=str(file))


def first_rewrites(root: StrPath | None, *, held_out: bool = False, seed: int = SEED,
                   train_fraction: float = 0.8) -> list[tuple[str, str]]:
    """(toxic, first rewrite) of the rows where both are non-blank, texts as in the file; shuffled with ``seed``,
    the first ``train_fraction`` train, the rest held out (``held_out=True``)."""
    _, all_rows = rows(root)
    pairs = [(r.toxic, r.rewrites[0]) for r in all_rows if r.rewrites and r.toxic.strip() and r.rewrites[0].strip()]
    train, rest = shuffled_parts(len(pairs), (train_fraction,), seed=seed)
    return [pairs[i] for i in (rest if held_out else train)]
