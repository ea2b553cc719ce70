"""The Yelp test set with the outputs released with DualRL (Luo et al., 2019) (``yelp-dualrl/``): 500 + 500
inputs, 4 human rewrites (``outputs/yelp/Human0..3``, the references) and the outputs of published systems.

View: :func:`records`.
"""
from __future__ import annotations

import re
from typing import Sequence

from ..errors import InputError
from ..readers.plain import build_records
from ..readers.text import StrPath, read_lines, read_lines_with_fallback
from ..records import Record
from .paths import dataset_dir

DIRECTIONS = ("negative->positive", "positive->negative")  # test.0, test.1
_HUMAN = re.compile(r"^Human\d+$")
#: Human2/test.0.tsf line 29 has "décor" with the "é" in GBK (bytes a8 a6), the only non-UTF-8 text in the data
FALLBACK_ENCODING = "gbk"


def records(root: StrPath | None, systems: Sequence[str] | None = None,
            include_humans_as_systems: bool = True) -> list[Record]:
    """Every chosen system's outputs with sources and references.

    Sources ``data/yelp/test.0`` (negative->positive) and ``test.1`` (positive->negative); outputs
    ``outputs/yelp/<System>/test.{0,1}.tsf``; references the four human rewrites ``outputs/yelp/Human0..3``.
    Ids ``"test.0/1"``..``"test.0/500"``, ``"test.1/1"``..``"test.1/500"``.

    Systems: the 11 non-human folders in name order (``systems`` selects some of them, in the order given),
    then, when ``include_humans_as_systems``, ``Human0``..``Human3``. A human "system" is scored against the
    *other three* humans only (its own rewrite is left out of its references: with it, it would match a
    reference exactly); every other system has all four references, in the order Human0..3.

    Some files end without a newline (``wc -l`` says 499): their last line is read as a normal line, and every
    file must have exactly as many lines as its source file, otherwise :class:`InputError`.
    One line is not UTF-8: ``Human2/test.0.tsf`` line 29 has a GBK-encoded "é"; lines that are not valid UTF-8
    are decoded as GBK and named (``"<file>:<line> (gbk)"``) in ``meta["encoding_repaired"]`` of every record
    that uses them (as output or reference).
    """
    base = dataset_dir(root, "yelp-dualrl")
    out_root = base / "outputs" / "yelp"
    if not out_root.is_dir():
        raise InputError("folder does not exist", out_root)
    folders = sorted(p.name for p in out_root.iterdir() if p.is_dir() and not p.name.startswith("."))
    humans = [f for f in folders if _HUMAN.match(f)]
    machines = [f for f in folders if not _HUMAN.match(f)]
    if not humans:
        raise InputError("no Human0..Human3 reference folders", out_root)
    available = machines + humans if include_humans_as_systems else machines
    if systems is None:
        chosen = available
    else:
        unknown = [s for s in systems if s not in available]
        if unknown:
            raise InputError(f"unknown system(s) {', '.join(map(repr, unknown))}; available: {', '.join(available)}",
                             out_root)
        chosen = list(systems)

    records: list[Record] = []
    for k, direction in enumerate(DIRECTIONS):
        src_path = base / "data" / "yelp" / f"test.{k}"
        src = (str(src_path), read_lines(src_path, "utf-8"))
        files = {f: out_root / f / f"test.{k}.tsf" for f in dict.fromkeys([*chosen, *humans])}
        read = {f: read_lines_with_fallback(p, FALLBACK_ENCODING) for f, p in files.items()}
        ids = [f"test.{k}/{i}" for i in range(1, len(src[1]) + 1)]
        for system in chosen:
            ref_folders = [h for h in humans if h != system]
            recs = build_records((str(files[system]), read[system][0]), src,
                                 [(str(files[h]), read[h][0]) for h in ref_folders], system=system,
                                 direction=direction, ids=ids)
            for folder in (system, *ref_folders):
                for line in read[folder][1]:
                    recs[line - 1].meta.setdefault("encoding_repaired", []).append(
                        f"{files[folder]}:{line} ({FALLBACK_ENCODING})")
            records += recs
    # system by system, test.0 before test.1 within a system
    order = {s: i for i, s in enumerate(chosen)}
    records.sort(key=lambda r: order[r.system])  # stable: keeps test.0 then test.1, line order
    return records
