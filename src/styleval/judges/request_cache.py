"""An on-disk cache of a server's answers, so that a rerun or a resumed run sends no request twice.

The key of a request is the sha256 of the server's address (credentials left out), the endpoint and the complete
request body (model name, messages or prompt, every decoding setting), written as canonical JSON; the value is the
server's answer as JSON. SQLite, write-ahead log, one transaction per answer, written as soon as the answer arrives:
a run killed mid-corpus keeps every answer it received. The API key is never part of a key or a value.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence
from urllib.parse import urlsplit, urlunsplit

from ..errors import OutputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, answer TEXT NOT NULL, stored REAL NOT NULL) WITHOUT ROWID;
"""


def public_url(url: str) -> str:
    """``url`` without user name and password (what may be written into keys, errors and logs)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), parts.query, ""))


def request_key(base_url: str, endpoint: str, body: Mapping[str, Any]) -> str:
    text = json.dumps({"base_url": public_url(base_url), "endpoint": endpoint, "body": body}, sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AnswerStore(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        ...

    def put(self, key: str, endpoint: str, answer: Mapping[str, Any]) -> None:
        ...


class MemoryAnswers:
    """Answers kept for one call only (``request_cache="none"``)."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {k: self._items[k] for k in keys if k in self._items}

    def put(self, key: str, endpoint: str, answer: Mapping[str, Any]) -> None:
        with self._lock:
            self._items[key] = dict(answer)

    def __len__(self) -> int:
        return len(self._items)


class RequestCache:
    """Answers by request key in a SQLite file (thread-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise OutputError(f"cannot open the request cache: {exc}", self.path) from None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        distinct = list(dict.fromkeys(keys))
        with self._lock:
            try:
                for start in range(0, len(distinct), 500):
                    part = distinct[start:start + 500]
                    marks = ",".join("?" * len(part))
                    for key, answer in self._db.execute(f"SELECT key, answer FROM answers WHERE key IN ({marks})",
                                                        part):
                        found[key] = json.loads(answer)
            except sqlite3.Error as exc:
                raise OutputError(f"cannot read the request cache: {exc}", self.path) from None
            except json.JSONDecodeError:
                raise OutputError("the request cache has a corrupt entry; delete the file to start afresh",
                                  self.path) from None
        return found

    def put(self, key: str, endpoint: str, answer: Mapping[str, Any]) -> None:
        text = json.dumps(answer, sort_keys=True, ensure_ascii=False)
        with self._lock:
            try:
                with self._db:
                    self._db.execute("BEGIN")
                    self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)",
                                     (key, endpoint, text, time.time()))
            except sqlite3.Error as exc:
                raise OutputError(f"cannot write the request cache: {exc}", self.path) from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
