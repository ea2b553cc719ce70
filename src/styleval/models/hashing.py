"""Content hashes of model files, computed once and remembered on disk.

The hash is sha256 over the sorted relative paths and bytes of every file (a single file: its bytes), so a
model copied elsewhere keeps its hash and a changed file changes it. Hashing 100 MB takes a few tenths of a
second; the result is stored in ``<cache>/hashes.json`` keyed by the absolute path and a fingerprint of
sizes and modification times, so later runs only ``stat`` the files.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

_LOCK = threading.Lock()
_MEMO: dict[str, tuple[str, str]] = {}  # abs path -> (fingerprint, hash)
_CHUNK = 1 << 20


def cache_dir() -> Path:
    """``$STYLEVAL_CACHE``, else ``$XDG_CACHE_HOME/styleval``, else ``~/.cache/styleval``."""
    env = os.environ.get("STYLEVAL_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "styleval"


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))
        out += [Path(root) / f for f in sorted(files) if not f.endswith(".pyc")]
    return sorted(out, key=lambda p: p.relative_to(path).as_posix() if p != path else "")


def fingerprint(path: str | Path) -> str:
    """Cheap identity of the current state: relative paths, sizes and modification times."""
    path = Path(path)
    h = hashlib.sha256()
    for f in _files(path):
        st = f.stat()
        rel = f.relative_to(path).as_posix() if f != path else f.name
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def compute_hash(path: str | Path) -> str:
    """sha256 over relative paths and bytes (no cache)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(path)
    h = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                h.update(chunk)
        return h.hexdigest()
    for f in _files(path):
        rel = f.relative_to(path).as_posix()
        h.update(rel.encode() + b"\0")
        h.update(str(f.stat().st_size).encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                h.update(chunk)
    return h.hexdigest()


def _store_path() -> Path:
    return cache_dir() / "hashes.json"


def _read_store() -> dict[str, dict[str, str]]:
    try:
        with open(_store_path(), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_store(data: dict[str, dict[str, str]]) -> None:
    target = _store_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".hashes-", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, target)
    except OSError:  # a read-only cache is not an error: the hash is simply recomputed next time
        pass


def content_hash(path: str | Path) -> str:
    """The content hash of a file or folder, from the in-process memo, the disk cache, or computed."""
    path = Path(path).resolve()
    key = str(path)
    fp = fingerprint(path)
    with _LOCK:
        memo = _MEMO.get(key)
        if memo and memo[0] == fp:
            return memo[1]
        store = _read_store()
        entry = store.get(key)
        if entry and entry.get("fingerprint") == fp and entry.get("sha256"):
            _MEMO[key] = (fp, entry["sha256"])
            return entry["sha256"]
    digest = compute_hash(path)
    with _LOCK:
        _MEMO[key] = (fp, digest)
        store = _read_store()
        store[key] = {"fingerprint": fp, "sha256": digest}
        _write_store(store)
    return digest


def short_hash(path: str | Path, n: int = 12) -> str:
    return content_hash(path)[:n]


def clear_memo() -> None:
    with _LOCK:
        _MEMO.clear()
