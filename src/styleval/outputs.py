"""Output destinations: checked before any work starts, written atomically, never put in place of what stands there.

A run that scores for minutes must not end in a traceback because ``--json`` points into a missing folder, and a
full disk must not leave a half-written file where a complete one was expected. :func:`check_destinations` is called
before scoring; :func:`atomic_writer` writes to a temporary file in the destination's folder and renames it over the
destination only when everything was written and flushed.

What stands at a destination is respected: ``-`` is standard output; a character device or a named pipe is written
through (opened and written, never replaced); a symbolic link is followed, so its target is written (atomically when
it is a regular file) and the link stays; a folder, a block device or a socket is refused. A destination that is the
same file as one of the run's inputs is refused before any work, naming both roles.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterable, Iterator, Union

from .errors import OutputError

STDOUT = "-"

#: an output or input given either as a bare path or as (role, path), the role naming it in messages ("--csv")
Named = Union[str, "os.PathLike[str]", tuple[str, Union[str, "os.PathLike[str]", None]], None]


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, words in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISFIFO, "a named pipe"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def _writes_through(mode: int) -> bool:
    """Whether an existing destination of this type is written in place (never replaced by a new file)."""
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _target(p: Path) -> Path:
    """Where a write to ``p`` lands: the end of its chain of symbolic links (``p`` itself when it is none)."""
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def check_destination(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`OutputError` unless ``path`` can be written: ``-`` (standard output), a writable character
    device or named pipe, or a file (through its symbolic links) whose folder exists and is writable. A folder, a
    block device or a socket is refused. Creates nothing that stays."""
    p = Path(path)
    if str(path) == STDOUT:
        return p
    try:
        st: os.stat_result | None = os.stat(p)  # follows symbolic links
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"cannot be inspected ({exc.strerror or exc})", p) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            raise OutputError("is a folder; give a file name", p)
        if not _writes_through(st.st_mode):
            raise OutputError(f"is {kind}, which styleval neither replaces nor writes into; give a file name", p)
        if not os.access(p, os.W_OK):
            raise OutputError(f"is {kind} that is not writable", p)
        return p
    target = _target(p)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"folder {str(parent)!r} does not exist; create it first", p)
    if not parent.is_dir():
        raise OutputError(f"{str(parent)!r} is not a folder", p)
    if st is not None and not os.access(target, os.W_OK):
        raise OutputError("exists and is not writable", p)
    try:  # a real probe: permissions, read-only mounts and ACLs all show here
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"cannot write in folder {str(parent)!r} ({exc.strerror or exc})", p) from None
    return p


def _named(item: Named, default_role: str) -> tuple[str, str] | None:
    if item is None:
        return None
    role, path = item if isinstance(item, tuple) else (default_role, item)
    return None if path is None or str(path) == "" else (role, str(path))


def _identity(path: str) -> tuple[str, tuple[int, int] | None]:
    """A file's resolved path and (device, inode) when it exists: two names of one file share one of them."""
    try:
        st = os.stat(path)
        inode: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except OSError:
        inode = None
    return os.path.realpath(path), inode


def input_files(role: str, path: str | os.PathLike[str] | None) -> list[tuple[str, str]]:
    """``(role, file)`` for an input given on the command line; a folder stands for every file under it (a system
    folder, a dataset release)."""
    if path is None or str(path) in ("", STDOUT):
        return []
    p = Path(path)
    if p.is_dir():
        found = []
        for root, _dirs, files in os.walk(p):
            found += [(f"{role} file", os.path.join(root, name)) for name in files]
            if len(found) > 100_000:  # an unreasonable input folder: its top files are checked, no more
                break
        return found
    return [(role, str(p))]


def check_destinations(*paths: Named, inputs: Iterable[tuple[str, str | os.PathLike[str] | None]] = ()) -> None:
    """:func:`check_destination` for every output given (None skipped; ``(role, path)`` names the option in
    messages). Two outputs to one file are an error, and so is an output that is the same file as one of
    ``inputs`` (``(role, path)`` pairs; see :func:`input_files` for folders): writing it would destroy the input."""
    outputs = [n for n in (_named(item, "output") for item in paths) if n is not None]
    seen: dict[str, str] = {}
    for role, path in outputs:
        p = check_destination(path)
        refuse_inputs((role, path), inputs=inputs)
        key = STDOUT if path == STDOUT else _identity(path)[0]
        if key in seen:
            raise OutputError(f"given as two outputs ({seen[key]} and {path}); each output needs its own file", p)
        seen[key] = path


def refuse_inputs(*paths: Named, inputs: Iterable[tuple[str, str | os.PathLike[str] | None]] = ()) -> None:
    """Raise :class:`OutputError` when an output (a path or ``(role, path)``) is the same file as one of
    ``inputs`` (``(role, path)`` pairs), by resolved path or by device and inode (a hard link): writing it would
    destroy that input. Only this is checked (see :func:`check_destinations` for the rest)."""
    in_ids = [(role, str(path), *_identity(str(path))) for role, path in inputs
              if path is not None and str(path) not in ("", STDOUT)]
    for named in (_named(item, "output") for item in paths):
        if named is None or named[1] == STDOUT:
            continue
        role, path = named
        real, inode = _identity(path)
        for in_role, in_path, in_real, in_inode in in_ids:
            if real == in_real or (inode is not None and inode == in_inode):
                raise OutputError(f"the {role} output is the same file as the {in_role} input {in_path}; "
                                  "writing it would destroy that input; give another file name", path)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False, encoding: str = "utf-8",
                  private: bool = False) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on success it replaces ``path`` (same folder, so the
    rename is atomic), on any error it is removed and ``path`` is left as it was. OS errors become
    :class:`OutputError` naming the destination. ``private``: the new file is readable by its owner only (0600).

    ``-`` writes to standard output; a character device or named pipe is written through; a symbolic link is
    followed (its target is what gets replaced, the link stays)."""
    p = Path(path)
    if str(path) == STDOUT:
        stream: IO = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    try:
        st: os.stat_result | None = os.stat(p)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not _writes_through(st.st_mode):  # checked before the work; here only if it changed meanwhile
            raise OutputError(f"is {_kind(st.st_mode)}; nothing was written", p)
        with _write_through(p, binary, encoding) as fh:
            yield fh
        return
    target = _target(p)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = _create_beside(target, parent, 0o600 if private else 0o666)
    except OSError as exc:
        raise OutputError(f"cannot write in folder {str(parent)!r} ({exc.strerror or exc})", p) from None
    try:
        handle: IO = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="")
        with handle as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if private:
            os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except OutputError:
        _remove(tmp)
        raise
    except OSError as exc:
        _remove(tmp)
        raise OutputError(f"could not be written ({exc.strerror or exc}); nothing was left there", p) from None
    except BaseException:
        _remove(tmp)
        raise


@contextlib.contextmanager
def _write_through(p: Path, binary: bool, encoding: str) -> Iterator[IO]:
    """Write into an existing device or pipe (opened without creating or truncating anything)."""
    try:
        fd = os.open(p, os.O_WRONLY)
    except OSError as exc:
        raise OutputError(f"cannot be opened for writing ({exc.strerror or exc})", p) from None
    try:
        handle: IO = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="")
        with handle as fh:
            yield fh
            fh.flush()
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"could not be written ({exc.strerror or exc})", p) from None


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8", *, private: bool = False) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, encoding=encoding, private=private) as fh:
        fh.write(text)


def shown(path: str | os.PathLike[str]) -> str:
    """A destination as messages name it (``-`` is standard output)."""
    return "standard output" if str(path) == STDOUT else str(Path(path))


def _create_beside(p: Path, parent: Path, mode: int = 0o666) -> tuple[int, str]:
    """A new, exclusive temporary file next to ``p``, created with the permissions an ordinary file gets (``mode``
    less the process umask, applied by the OS: no umask is read or changed, which other threads could see)."""
    for _ in range(100):
        tmp = str(parent / f".{p.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(parent))


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
