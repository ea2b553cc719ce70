"""The thin dialect layer: engine creation with SQLite durability settings, and an insert-or-ignore."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

WRITE = "styleval_write"


def database_url(target: str | Path) -> str:
    """A SQLAlchemy URL from a URL or a file path (a path means SQLite); ``postgresql://`` uses psycopg 3."""
    text = str(target)
    for prefix in ("postgresql://", "postgres://"):
        if text.startswith(prefix):
            return "postgresql+psycopg://" + text[len(prefix):]
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def _create_private(path: Path) -> None:
    """Create a new SQLite file readable by its owner only (it holds the server secret); SQLite gives its WAL and
    shared-memory files the same mode. An existing file is left as it is."""
    if path.exists():
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError:
        return  # e.g. the folder is missing: SQLite's own error, turned into one line by the Store, follows
    os.close(fd)


def make_engine(target: str | Path) -> sa.Engine:
    """An engine for ``target``.

    SQLite: WAL journal, ``synchronous=FULL`` (a commit is on disk before it returns), foreign keys on, a 30 s
    busy timeout, and write transactions opened with ``BEGIN IMMEDIATE`` so concurrent writers queue instead of
    failing on a stale snapshot. A new SQLite file is created with mode 600. PostgreSQL: default (read committed,
    synchronous commit). Statement parameters are never put in error messages (they can hold the server secret).
    """
    url = database_url(target)
    if url.startswith("sqlite"):
        plain_path = url[len("sqlite:///"):]
        if url.startswith("sqlite:///") and plain_path != ":memory:" and "?" not in url \
                and not plain_path.startswith("file:"):
            _create_private(Path(plain_path))
        engine = sa.create_engine(url, connect_args={"timeout": 30, "check_same_thread": False},
                                  pool_size=8, max_overflow=32, pool_timeout=60, hide_parameters=True)

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")

        return engine
    return sa.create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=32, pool_timeout=60,
                            hide_parameters=True)


def insert_ignore(engine: sa.Engine, table: sa.Table, conflict: list[str]) -> Any:
    """``INSERT ... ON CONFLICT (conflict) DO NOTHING`` for the engine's dialect."""
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing(index_elements=conflict)
    if engine.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing(index_elements=conflict)
    # pragma: no cover - only SQLite and PostgreSQL are supported
    raise NotImplementedError(f"database {engine.dialect.name!r} is not supported (use SQLite or PostgreSQL)")
