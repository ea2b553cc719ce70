"""An on-disk cache of a server's answers, so that a rerun or a resumed run sends no request twice.

The key of a request is the sha256 of the server's address (credentials left out), the endpoint and the complete
request body (model name, messages or prompt, every decoding setting), written as canonical JSON; the value is the
server's answer as JSON. Only usable answers are stored (:mod:`.replies`), with the key scrubbed out, and every
entry read back is checked again: an entry of another shape (a hand-edited or foreign file) counts as missing and is
asked again. SQLite through :class:`~styleval.sqlitedb.SQLiteFile`, one transaction per answer, written as soon as
the answer arrives: a run killed mid-corpus keeps every answer it received. The API key is never part of a key or a
value.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence
from urllib.parse import urlsplit, urlunsplit

from ..sqlitedb import SQLiteFile
from .replies import problem

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
        self._file = SQLiteFile(path, _SCHEMA, "the request cache")
        self.path = self._file.path
        self.rejected = 0  # entries that were not usable answers (asked again)

    def close(self) -> None:
        self._file.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for key, endpoint, text in self._file.query_in(
                "SELECT key, endpoint, answer FROM answers WHERE key IN ({marks})", (), list(dict.fromkeys(keys))):
            try:
                answer = json.loads(text)
            except (json.JSONDecodeError, TypeError):
                answer = None
            if problem(str(endpoint), answer) is not None:
                self.rejected += 1
                continue
            found[key] = answer
        return found

    def put(self, key: str, endpoint: str, answer: Mapping[str, Any]) -> None:
        text = json.dumps(answer, sort_keys=True, ensure_ascii=False)
        self._file.write([("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", [(key, endpoint, text, time.time())])])

    def __len__(self) -> int:
        return int(self._file.query("SELECT COUNT(*) FROM answers")[0][0])
