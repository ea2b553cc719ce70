"""How a fetched set stays trusted after ``styleval data fetch`` has checked it.

``fetch`` checks every file against the manifest's sha256 as it downloads, then writes a *stamp* beside the set
folder (``DIR/<name>.fetched.json``): the commit and each file's size and modification time as fetched, with the
manifest's sha256. From then
on:

* every reader of the set (:func:`~styleval.datasets.paths.dataset_dir`) compares each file's size and modification
  time with the stamp -- a ``stat`` per file, no reading -- and hashes only the files that differ: a file whose
  sha256 still matches the manifest (touched, copied) is stamped again, one that does not stops the read with an
  error naming it and the command that repairs it;
* ``styleval data fetch NAME`` makes the same check, and downloads again the files that fail it;
* ``styleval data fetch NAME --verify`` hashes every file, stamp or not, and downloads again those that differ.

A folder without a stamp (your own copy given with ``--root``, ``../shared/data``) is read as it is.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..readers.text import StrPath

STAMP_SUFFIX = ".fetched.json"
CHUNK = 1 << 16


@dataclass(frozen=True)
class Expected:
    """A file of a set as the manifest lists it."""

    path: str
    size: int
    sha256: str


def sha256_file(path: StrPath) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def stamp_path(folder: Path) -> Path:
    return folder.with_name(folder.name + STAMP_SUFFIX)


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def write_stamp(folder: Path, commit: str, files: Iterable[Expected]) -> None:
    """Record the size and modification time of ``files`` in ``folder`` as checked now, and their sha256."""
    data = {"format": 1, "commit": commit,
            "files": {f.path: {"stat": _stat(folder / f.path), "size": f.size, "sha256": f.sha256} for f in files}}
    target = stamp_path(folder)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, target)


def read_stamp(folder: Path) -> tuple[str, dict[str, list[int] | None], list[Expected]] | None:
    """The commit, the stamped ``{path: [size, mtime_ns]}`` and the files expected of ``folder``, or None when it
    has no readable stamp."""
    try:
        data = json.loads(stamp_path(folder).read_text(encoding="utf-8"))
        files = data["files"]
        stats = {str(k): v["stat"] for k, v in files.items()}
        expected = [Expected(str(k), int(v["size"]), str(v["sha256"])) for k, v in files.items()]
        return str(data["commit"]), stats, expected
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def failed_stamped(folder: Path) -> list[tuple[Expected, str]]:
    """:func:`failed_files` of a fetched set, against its stamp ([] for a folder without one)."""
    stamp = read_stamp(folder)
    if stamp is None:
        return []
    return failed_files(folder, stamp[0], stamp[2])


def failed_files(folder: Path, commit: str, files: Iterable[Expected], *, full: bool = False
                 ) -> list[tuple[Expected, str]]:
    """The files of ``folder`` that are not what the manifest says, each with why (missing, size, sha256).

    ``full``: hash every file; else only those whose size or modification time differ from the stamp (all of them
    when there is no stamp). Files hashed and found right are stamped again."""
    files = list(files)
    stamp = None if full else read_stamp(folder)
    stamped = None if stamp is None else stamp[1]
    bad: list[tuple[Expected, str]] = []
    hashed = False
    for f in files:
        path = folder / f.path
        now = _stat(path)
        if now is None:
            bad.append((f, "missing"))
            continue
        if stamped is not None and stamped.get(f.path) == now and now[0] == f.size:
            continue
        if now[0] != f.size:
            bad.append((f, f"{now[0]:,} bytes instead of {f.size:,}"))
            continue
        hashed = True
        digest = sha256_file(path)
        if digest != f.sha256:
            bad.append((f, f"sha256 {digest[:12]}... instead of the manifest's {f.sha256[:12]}..."))
    if hashed and not bad:
        write_stamp(folder, commit, files)
    return bad
