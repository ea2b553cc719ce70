"""``styleval serve`` and ``styleval campaign`` as an operator meets them: bad start-up options, broken databases
and secrets. Every failure is one line on stderr (no traceback), and no secret is ever printed."""
from __future__ import annotations

import os
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from styleval.human import CampaignSpec, Store, build_campaign  # noqa: E402
from styleval.human.storage import StorageError  # noqa: E402
from styleval.records import Record  # noqa: E402

HEX_SECRET = re.compile(r"[0-9a-f]{64}")


def _cli(*args: str, env: dict | None = None, cwd: Path | None = None, module: str = "styleval.cli.main",
         timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "STYLEVAL_ADMIN_TOKEN"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=timeout)


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("styleval: error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "serving on" not in proc.stderr
    return lines[0]


def test_short_admin_token_is_one_line_before_serving(tmp_path: Path) -> None:
    proc = _cli("serve", "--db", str(tmp_path / "s.db"), "--exit-after", "5",
                env={"STYLEVAL_ADMIN_TOKEN": "short"})
    line = _one_line_error(proc)
    assert "at least 12" in line and "STYLEVAL_ADMIN_TOKEN" in line and "short" not in line.split(":", 2)[2]


def test_corrupt_and_read_only_databases_are_one_line(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(os.urandom(8192))
    proc = _cli("serve", "--db", str(corrupt), "--exit-after", "5", env={"STYLEVAL_ADMIN_TOKEN": "x" * 20})
    line = _one_line_error(proc)
    assert str(corrupt) in line and "backup" in line
    # a database whose meta table refuses the new secret: the failing INSERT's parameters (the freshly
    # generated secret) must not reach the message
    damaged = tmp_path / "damaged.db"
    with sqlite3.connect(damaged) as conn:
        conn.execute("CREATE TABLE styleval_meta (key VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL "
                     "CHECK (length(value) < 5))")
    proc = _cli("campaign", "list", "--db", str(damaged))
    line = _one_line_error(proc)
    assert not HEX_SECRET.search(proc.stderr + proc.stdout), line
    with pytest.raises(StorageError) as info:
        Store(damaged)
    assert not HEX_SECRET.search(str(info.value)) and "\n" not in str(info.value)


def test_database_error_messages_say_what_to_do() -> None:
    import sqlalchemy as sa

    from styleval.human.storage import describe_database_error

    def err(text: str) -> str:
        return str(describe_database_error(sa.exc.OperationalError("SELECT 1", {"p": "secret"}, Exception(text)),
                                           "h.db"))

    assert "read-only" in err("attempt to write a readonly database") and "writable" in err("readonly database")
    assert "corrupt" in err("database disk image is malformed")
    assert "locked" in err("database is locked")
    assert "secret" not in err("anything at all") and "SELECT" not in err("anything at all")


def test_generated_admin_token_goes_to_a_private_file_never_to_the_terminal(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = _cli("serve", "--db", str(tmp_path / "t.db"), "--port", str(port), "--exit-after", "1", cwd=tmp_path,
                timeout=60)
    assert proc.returncode == 0, proc.stderr
    token_file = tmp_path / "styleval-admin-token"
    assert token_file.exists(), proc.stderr
    token = token_file.read_text().strip()
    assert len(token) >= 24 and stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token not in proc.stderr + proc.stdout and "styleval-admin-token" in proc.stderr
    assert stat.S_IMODE((tmp_path / "t.db").stat().st_mode) == 0o600
    # a URL's password is not printed either
    from styleval.cli.serve_cmd import shown_database

    assert shown_database("postgresql://ann:hunter2@db/x") == "postgresql://ann:***@db/x"


@pytest.mark.parametrize("option,value", [("--controls", "-1"), ("--degraded", "-2"), ("--repeats", "500")])
def test_bad_campaign_counts_are_one_line(tmp_path: Path, option: str, value: str) -> None:
    (tmp_path / "src.txt").write_text("a\nb\n")
    (tmp_path / "sys.txt").write_text("A\nB\n")
    proc = _cli("campaign", "create", "--db", str(tmp_path / "c.db"), "--name", "x", "--protocol",
                "direct-assessment", "--sources", str(tmp_path / "src.txt"), "--outputs", str(tmp_path / "sys.txt"),
                option, value)
    line = _one_line_error(proc)
    assert option.lstrip("-") in line and value in line


def test_revoke_link_command(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    store = Store(db)
    records = [Record(id=str(i), source=f"s{i}", output=f"o{i}", system="x") for i in range(3)]
    created = store.create_campaign(build_campaign(
        CampaignSpec("rv", "similarity", ["ann", "bob"], controls=0, repeats=0, degraded=0, training=0), records))
    ann = store.annotator_by_token(created.tokens["ann"])
    store.submit(store.assignment(ann.id, 1).assignment_id, {"similarity": [1]}, shown_at=0.0, now=5.0)
    store.close()
    proc = _cli("campaign", "revoke-link", "--db", str(db), "rv", "ann", "--base-url", "https://eval.example")
    assert proc.returncode == 0, proc.stderr
    name, link = proc.stdout.strip().split("\t")
    assert name == "ann" and link.startswith("https://eval.example/a/")
    new_token = link.rsplit("/", 1)[1]
    store = Store(db)
    try:
        assert store.annotator_by_token(created.tokens["ann"]) is None
        assert store.annotator_by_token(new_token) == ann and store.progress(ann.id)[0] == 1
        assert store.annotator_by_token(created.tokens["bob"]) is not None  # nobody else is touched
    finally:
        store.close()
    out = tmp_path / "links.tsv"
    proc = _cli("campaign", "revoke-link", "--db", str(db), "rv", "bob", "--links-out", str(out))
    assert proc.returncode == 0 and proc.stdout == "" and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text().startswith("bob\t")
    line = _one_line_error(_cli("campaign", "revoke-link", "--db", str(db), "rv", "nobody"))
    assert "nobody" in line and "ann" in line


def test_database_failing_mid_command_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    import sqlalchemy as sa

    from styleval.cli import campaign_cmd

    def locked(self):
        raise sa.exc.OperationalError("SELECT * FROM campaigns", {"secret": "x" * 64}, Exception("database is locked"))

    monkeypatch.setattr(Store, "campaigns", locked)
    assert campaign_cmd.main(["list", "--db", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "locked" in err and "x" * 64 not in err and "SELECT" not in err, err
