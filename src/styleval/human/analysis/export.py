"""Export in styleval's long judgment format (system, segment, annotator, aspect, score, direction).

Only normal items are exported (control, repeated, degraded and training items are quality control). In the
pair layout one annotator may see the same output in several pairs of a segment; its scores (a choice counts
1 won, 0 lost, 0.5 tie) are then averaged, so each (system, segment, annotator, aspect) appears once.
"""
from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

import pandas as pd

from styleval.errors import InputError
from styleval.meta.judgments import Judgments

from ..protocols import answers_to_rows, get_protocol
from ..storage import Store

EXPORT_FORMATS = ("csv", "tsv", "jsonl")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


def judgments(store: Store, campaign: int | str) -> Judgments:
    """The campaign's judgments of normal items as :class:`~styleval.meta.judgments.Judgments`."""
    info = store.campaign(campaign)
    protocol = get_protocol(info.protocol)
    rows = []
    for r in store.judged_rows(info.id):
        if r.kind != "normal":
            continue
        for system, aspect, score in answers_to_rows(protocol, r.answers, r.systems):
            rows.append({"system": system, "segment": r.segment, "annotator": r.annotator, "aspect": aspect,
                         "score": score, "direction": r.direction})
    if not rows:
        return Judgments.from_records([])
    frame = pd.DataFrame(rows)
    frame["direction"] = frame["direction"].astype(object)
    keys = ["system", "segment", "annotator", "aspect"]
    frame = (frame.groupby(keys, sort=False, dropna=False)
             .agg(score=("score", "mean"), direction=("direction", "first")).reset_index())
    return Judgments.from_records(frame.to_dict("records"))


def export_path(directory: str | Path, filename: str) -> Path:
    """``directory/filename`` after checking that it cannot land outside ``directory``.

    The name must be a plain file name (letters, digits, ``.``, ``_``, ``-``; no separators, no leading dot) with
    a csv, tsv or jsonl suffix; the resolved path must lie directly in the resolved directory and not be a link.
    """
    if not isinstance(filename, str) or not _SAFE_NAME.match(filename) or ".." in filename:
        raise InputError(f"export file name {filename!r} must be a plain name like 'judgments.csv'")
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if suffix not in EXPORT_FORMATS:
        raise InputError(f"export file name {filename!r} must end in .csv, .tsv or .jsonl")
    root = Path(directory).resolve()
    target = root / filename
    if target.is_symlink() or target.resolve().parent != root:
        raise InputError(f"export file {filename!r} would be written outside {root}")
    if target.exists() and not target.is_file():  # a folder, device or pipe of that name is never replaced
        raise InputError(f"export file {filename!r} exists in {root} and is not a regular file; choose another name")
    return target


def write_export(store: Store, campaign: int | str, directory: str | Path, filename: str) -> Path:
    """Write the long-format judgments to ``directory/filename`` (format from the suffix); returns the path.

    The table goes to a temporary file in the same folder, flushed to disk, then renamed over the target: a full
    disk or a crash leaves the previous file (or none), never a partial or empty one.
    """
    target = export_path(directory, filename)
    table = judgments(store, campaign)
    suffix = target.suffix.lstrip(".")
    temp = target.with_name(f".{target.stem}.{secrets.token_hex(6)}.partial.{suffix}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        table.write(temp, format=suffix)
        with open(temp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"could not write the export {target.name!r} in {target.parent}: {reason}; "
                         "nothing was written") from None
    return target


def export_text(store: Store, campaign: int | str, fmt: str = "csv") -> str:
    """The export as a string (for downloads)."""
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {fmt!r} (use {', '.join(EXPORT_FORMATS)})")
    frame = judgments(store, campaign).frame
    if fmt == "jsonl":
        return frame.to_json(orient="records", lines=True, force_ascii=False)
    return frame.to_csv(sep="," if fmt == "csv" else "\t", index=False, float_format="%.17g")
