"""The storage layer on a real PostgreSQL server, started privately for the session (Unix socket in a
temporary folder, no TCP) and torn down afterwards. Skipped only when the PostgreSQL binaries are missing."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("psycopg")

from styleval.human import CampaignSpec, Store, build_campaign  # noqa: E402
from styleval.human.analysis import dashboard, judgments  # noqa: E402
from styleval.records import Record  # noqa: E402


def _bindir() -> str | None:
    found = shutil.which("pg_ctl")
    if found:
        return str(Path(found).resolve().parent)
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return dirs[-1] if dirs else None


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    bindir = _bindir()
    if bindir is None or not os.path.exists(os.path.join(bindir, "initdb")):
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found: apt-get install postgresql")
    root = os.geteuid() == 0
    if root and shutil.which("su") is None:
        pytest.skip("running as root without 'su' to start PostgreSQL as the postgres user")
    tmp = tempfile.mkdtemp(prefix="styleval-pg-")
    data, sock = os.path.join(tmp, "data"), os.path.join(tmp, "sock")
    os.makedirs(sock)
    if root:
        shutil.chown(tmp, "postgres")
        shutil.chown(sock, "postgres")

    def sh(cmd: str) -> None:
        full = ["su", "postgres", "-s", "/bin/sh", "-c", cmd] if root else ["/bin/sh", "-c", cmd]
        subprocess.run(full, check=True, capture_output=True, timeout=120)

    port = 5433 + os.getpid() % 1000
    try:
        sh(f"{bindir}/initdb -D {data} -A trust -U styleval --no-sync -E UTF8 >/dev/null")
        sh(f"{bindir}/pg_ctl -D {data} -w -t 60 -l {tmp}/log -o \"-k {sock} -p {port} -c listen_addresses=''"
           f" -c fsync=on\" start >/dev/null")
        sh(f"{bindir}/createdb -h {sock} -p {port} -U styleval styleval")
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {exc.stderr.decode(errors='replace')}")
    try:
        yield f"postgresql://styleval@/styleval?host={sock}&port={port}"
    finally:
        try:
            sh(f"{bindir}/pg_ctl -D {data} -m fast -w -t 30 stop >/dev/null")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _records() -> list[Record]:
    return [Record(id=str(i), source=f"source {i}", output=f"output {s} {i}", system=s, direction="a->b")
            for s in ("x", "y") for i in range(6)]


def test_campaign_roundtrip_on_postgresql(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        assert store.engine.dialect.name == "postgresql"
        spec = CampaignSpec("pg", "likert-ranking", ["p1", "p2"], per_item=2, controls=1, repeats=1, degraded=1)
        created = store.create_campaign(build_campaign(spec, _records()))
        for token in created.tokens.values():
            ann = store.annotator_by_token(token)
            while (pos := store.next_position(ann.id)) is not None:
                view = store.assignment(ann.id, pos)
                k = len(view.texts)
                answers = {"formality": [1] * k, "fluency": [4] * k, "meaning": [5] * k,
                           "overall": list(range(1, k + 1))}
                assert store.submit(view.assignment_id, answers, shown_at=0.0)
                assert not store.submit(view.assignment_id, {**answers, "fluency": [1] * k})
        j = judgments(store, created.id)
        assert len(j) == 6 * 2 * 2 * 4  # segments x systems x annotators x aspects
        d = dashboard(store, created.id)
        assert d.done == d.total
        assert {s.system for s in d.systems} == {"x", "y"}
    finally:
        store.close()


def test_concurrent_resubmission_keeps_one_judgment(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        spec = CampaignSpec("pg-race", "similarity", 1, controls=0, repeats=0, degraded=0, training=0)
        created = store.create_campaign(build_campaign(spec, _records()))
        ann = store.annotator_by_token(created.tokens["annotator-01"])
        view = store.assignment(ann.id, 1)
        results: list[bool] = []
        lock = threading.Lock()

        def post(value: int) -> None:
            ok = store.submit(view.assignment_id, {"similarity": [value % 3]})
            with lock:
                results.append(ok)

        threads = [threading.Thread(target=post, args=(i,)) for i in range(16)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        assert results.count(True) == 1 and len(results) == 16
        assert store.judgment_count(created.id) == 1
    finally:
        store.close()


def test_limits_and_huge_positions_match_sqlite(pg_url: str, tmp_path: Path) -> None:
    """What SQLite refuses, PostgreSQL refuses with the same message (and nothing is written); positions and ids
    beyond int4 are simply not found on either."""
    from styleval.errors import InputError

    for target in (pg_url, tmp_path / "same.db"):
        store = Store(target)
        try:
            before = len(store.campaigns())
            long_segment = [Record(id="s" * 250, source="a", output="b", system="x")]
            built = build_campaign(CampaignSpec("pg-long", "similarity", 1, controls=0, repeats=0, degraded=0,
                                                training=0), long_segment)
            with pytest.raises(InputError, match="segment 's{37}...' has 250 characters; at most 200"):
                store.create_campaign(built)
            with pytest.raises(InputError, match="at most 200"):
                build_campaign(CampaignSpec("n" * 300, "similarity", 1), _records())
            assert len(store.campaigns()) == before
            created = store.create_campaign(build_campaign(
                CampaignSpec("n" * 200, "similarity", 1, controls=0, repeats=0, degraded=0, training=0), _records()))
            ann = store.annotator_by_token(created.tokens["annotator-01"])
            for position in (2**31 - 1, 2**31, 10**23):
                assert store.assignment(ann.id, position) is None
        finally:
            store.close()


def test_admin_sessions_on_postgresql(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        session = store.open_admin_session("fp-1", 60, now=100.0)
        assert store.admin_session_valid(session, "fp-1", now=120.0)
        assert not store.admin_session_valid(session, "fp-2", now=120.0)
        assert not store.admin_session_valid(session, "fp-1", now=161.0)
        store.close_admin_session(session)
        assert not store.admin_session_valid(session, "fp-1", now=120.0)
        kept = store.open_admin_session("fp-1", 60, now=100.0)
        gone = store.open_admin_session("fp-old", 60, now=100.0)
        assert store.revoke_admin_sessions(keep_fingerprint="fp-1") >= 1
        assert store.admin_session_valid(kept, "fp-1", now=110.0)
        assert not store.admin_session_valid(gone, "fp-old", now=110.0)
    finally:
        store.close()


def test_numeric_campaign_name_never_hides_another_campaigns_id_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    """Issue 33, finding 3 on PostgreSQL: the store, the admin pages and the download reach campaigns by id only;
    a name that is another campaign's id is refused as ambiguous (the SQLite twin is in test_human_web.py)."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient
    from test_human_web import ADMIN, check_ids_and_names_stay_apart

    from styleval.human.web import create_app

    store = Store(pg_url)
    try:
        check_ids_and_names_stay_apart(store, lambda: TestClient(
            create_app(store, admin_token=ADMIN, export_dir=tmp_path / "exports"), base_url="http://127.0.0.1"))
    finally:
        store.close()


def test_foreign_postgresql_database_is_refused_untouched(pg_url: str) -> None:
    """Issue 33, finding 12 on PostgreSQL: a schema holding someone else's tables is left alone."""
    import sqlalchemy as sa

    from styleval.human.storage import StorageError

    admin = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql("CREATE SCHEMA foreign_shop")
            conn.exec_driver_sql("CREATE TABLE foreign_shop.campaigns (id INTEGER PRIMARY KEY, budget REAL)")
        with pytest.raises(StorageError, match="not created by styleval"):
            Store(pg_url + "&options=-csearch_path%3Dforeign_shop")
        with admin.connect() as conn:
            names = conn.exec_driver_sql("SELECT table_name FROM information_schema.tables "
                                         "WHERE table_schema = 'foreign_shop'").scalars().all()
        assert names == ["campaigns"]
    finally:
        admin.dispose()
    Store(pg_url).close()  # the plain URL (the public schema, styleval's own) still opens
