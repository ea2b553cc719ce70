"""What a report says about the run it shows: the command, the input files with their hashes, and the date.

The CLI records these facts in the evaluation's settings (``settings["run"]``) when it evaluates, so a report
written later from the JSON (``styleval report ev.json``) still names the command and files that produced it.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import shlex
from pathlib import Path
from typing import Any, Sequence

#: files are hashed in blocks of this many bytes
_BLOCK = 1 << 20


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def run_facts(command: Sequence[str], inputs: Sequence[tuple[str, str]], *,
              now: _dt.datetime | None = None) -> dict[str, Any]:
    """``{"command", "date", "inputs": [{"option", "path", "sha256", "bytes"}]}`` for ``command`` (the words after
    ``styleval``) and its input files ``(option, path)``; the date is UTC, to the second."""
    when = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc).replace(microsecond=0)
    files = []
    first: dict[str, str] = {}  # a file named by several options (--example and --source) is listed once
    for option, path in inputs:
        first.setdefault(str(path), option)
    for path, option in first.items():
        p = Path(path)
        files.append({"option": option, "path": str(p), "sha256": file_sha256(p), "bytes": p.stat().st_size})
    return {"command": "styleval " + shlex.join(command), "date": when.isoformat().replace("+00:00", "Z"),
            "inputs": files}
