"""Output destinations: checked before any work starts, written atomically.

A run that scores for minutes must not end in a traceback because ``--json`` points into a missing folder, and a
full disk must not leave a half-written file where a complete one was expected. :func:`check_destinations` is called
before scoring; :func:`atomic_writer` writes to a temporary file in the destination's folder and renames it over the
destination only when everything was written and flushed.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import tempfile
from pathlib import Path
from typing import IO, Iterator

from .errors import OutputError


def check_destination(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`OutputError` unless ``path`` can be written as a file: its folder exists and is writable, and
    the path is not a folder. Creates nothing that stays."""
    p = Path(path)
    if p.exists() and p.is_dir():
        raise OutputError("is a folder; give a file name", p)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"folder {str(parent)!r} does not exist; create it first", p)
    if not parent.is_dir():
        raise OutputError(f"{str(parent)!r} is not a folder", p)
    if p.exists() and not os.access(p, os.W_OK):
        raise OutputError("exists and is not writable", p)
    try:  # a real probe: permissions, read-only mounts and ACLs all show here
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"cannot write in folder {str(parent)!r} ({exc.strerror or exc})", p) from None
    return p


def check_destinations(*paths: str | os.PathLike[str] | None) -> None:
    """:func:`check_destination` for every path given (None skipped); two outputs to one file are an error."""
    seen: dict[Path, str] = {}
    for path in paths:
        if path is None or str(path) == "":
            continue
        p = check_destination(path)
        key = p.resolve()
        if key in seen:
            raise OutputError(f"given as two outputs ({seen[key]} and {path}); each output needs its own file", p)
        seen[key] = str(path)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False, encoding: str = "utf-8"
                  ) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` (same folder, so the
    rename is atomic), on any error it is removed and ``path`` is left as it was. OS errors become
    :class:`OutputError` naming the destination."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = _create_beside(p, parent)
    except OSError as exc:
        raise OutputError(f"cannot write in folder {str(parent)!r} ({exc.strerror or exc})", p) from None
    try:
        handle: IO = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="")
        with handle as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except OSError as exc:
        _remove(tmp)
        raise OutputError(f"could not be written ({exc.strerror or exc}); nothing was left there", p) from None
    except BaseException:
        _remove(tmp)
        raise


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_writer(path, encoding=encoding) as fh:
        fh.write(text)


def _create_beside(p: Path, parent: Path) -> tuple[int, str]:
    """A new, exclusive temporary file next to ``p``, created with the permissions an ordinary file gets (0666 less
    the process umask, applied by the OS: no umask is read or changed, which other threads could see)."""
    for _ in range(100):
        tmp = str(parent / f".{p.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(parent))


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
