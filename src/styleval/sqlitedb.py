"""The one way styleval opens its SQLite files (the statistics cache, the model-output cache, the judges' request
cache): a connection in autocommit mode with a busy timeout (several runs may share a file), the write-ahead log,
the schema created if absent, and every SQLite failure -- a file that is not a database, a corrupt one, a locked
or read-only one -- turned into one :class:`~styleval.errors.OutputError` naming the file and what to do.

A file is opened as a cache only when it is one: absent, empty, or a SQLite database whose tables are all
styleval's (:data:`CACHE_TABLES`). Any other file -- the user's input table named by mistake, another program's
SQLite database -- is refused before anything is written to it (not even the write-ahead log is switched on), and
never called disposable.

Each row a cache stores carries a checksum (:func:`row_check`) over its key and value, so that a changed or torn
row is found when it is read and recomputed instead of used.
"""
from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .errors import OutputError

BUSY_TIMEOUT_S = 30.0
_FIX = "if it is a styleval cache, delete it; otherwise name another file"
_HEADER = b"SQLite format 3\x00"
#: every table a styleval cache holds (statistics, model outputs, judge requests): a file with any other is not one
CACHE_TABLES = frozenset({"segment_stats", "metrics", "model_entries", "model_namespaces", "answers"})
_TABLE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)", re.IGNORECASE)


def foreign_file(path: Path, schema: str) -> str | None:
    """Why ``path`` is not a styleval cache (None when it is absent, empty or one): read only, nothing written."""
    try:
        if not path.exists() or path.stat().st_size == 0:
            return None
        if path.is_dir():
            return "it is a folder"
        with open(path, "rb") as fh:
            head = fh.read(len(_HEADER))
    except OSError:
        return None  # the connection below says what is wrong
    if head != _HEADER:
        return "it is not a SQLite file, so not a styleval cache (your data?)"
    ours = CACHE_TABLES | set(_TABLE.findall(schema))
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            tables = [str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        finally:
            db.close()
    except sqlite3.Error:
        return None  # a corrupt or locked file: the connection below says so
    other = sorted(t for t in tables if t not in ours and not t.startswith("sqlite_"))
    if other:
        shown = ", ".join(other[:4]) + (", ..." if len(other) > 4 else "")
        return f"it is another program's SQLite database (tables {shown}), not a styleval cache"
    return None


class SQLiteFile:
    """A SQLite file opened for one cache (``what``: "the statistics cache", for messages); thread-safe."""

    def __init__(self, path: str | Path, schema: str, what: str) -> None:
        self.path = Path(path)
        self.what = what
        self._lock = threading.RLock()
        foreign = foreign_file(self.path, schema)
        if foreign is not None:
            raise OutputError(f"cannot use this file as {what}: {foreign}; nothing was written to it: name another "
                              "file", self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the folder of {what}: {exc.strerror or exc}", self.path) from None
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                       timeout=BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            raise self.error("open", exc) from None
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(schema)
        except sqlite3.Error as exc:
            self._db.close()
            raise self.error("open", exc) from None

    def error(self, action: str, exc: sqlite3.Error) -> OutputError:
        """The one-line error of a failed ``action`` ("open", "read", "write")."""
        text = str(exc)
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return OutputError(f"{self.what} is not a readable SQLite file ({text}); {_FIX}", self.path)
        if "locked" in text or "busy" in text:
            return OutputError(f"cannot {action} {self.what}: it stayed locked by another process for "
                               f"{BUSY_TIMEOUT_S:.0f} s ({text})", self.path)
        if "readonly" in text or "read-only" in text:
            return OutputError(f"cannot {action} {self.what}: the file is read-only; name a writable file", self.path)
        return OutputError(f"cannot {action} {self.what}: {text}", self.path)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """All rows of one statement."""
        with self._lock:
            try:
                return list(self._db.execute(sql, params))
            except sqlite3.Error as exc:
                raise self.error("read", exc) from None

    def query_in(self, sql: str, fixed: Sequence[Any], keys: Sequence[Any], batch: int = 500
                 ) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (whose last placeholder is ``IN ({marks})``) for ``keys``, ``batch`` keys at a time."""
        for start in range(0, len(keys), batch):
            part = list(keys[start:start + batch])
            yield from self.query(sql.format(marks=",".join("?" * len(part))), (*fixed, *part))

    def write(self, statements: Iterable[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """``(sql, rows)`` pairs in one transaction (all or nothing, even when the process is killed)."""
        with self._lock:
            try:
                with self._db:
                    self._db.execute("BEGIN")
                    for sql, rows in statements:
                        self._db.executemany(sql, rows)
            except sqlite3.Error as exc:
                raise self.error("write", exc) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()


def row_check(*parts: bytes | str | int | None) -> bytes:
    """A 16-byte checksum of a row's key and value parts (each part length-prefixed, so no two rows share one)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = b"\xff" if part is None else (part.encode("utf-8") if isinstance(part, str)
                                             else str(part).encode("ascii") if isinstance(part, int) else part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()
