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


# ---------------------------------------------------------------------- issue 33
def _campaign_files(tmp_path: Path) -> list[str]:
    (tmp_path / "src.txt").write_text("a b c\nd e f\ng h i\n")
    (tmp_path / "sys.txt").write_text("A B C\nD E F\nG H I\n")
    return ["--protocol", "direct-assessment", "--sources", str(tmp_path / "src.txt"), "--outputs",
            str(tmp_path / "sys.txt"), "--controls", "0", "--repeats", "0", "--degraded", "0"]


def _in_process_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("styleval: error: "), err
    return err[0]


def test_links_destination_is_checked_before_the_database(tmp_path: Path, capsys) -> None:
    """Finding 4: `--links-out missing/links.tsv` exited 2 after the campaign (and its tokens) were committed;
    `revoke-link --links-out nofolder/x.tsv` exited 2 after the old link was revoked."""
    from styleval.cli.main import main

    db = tmp_path / "l.db"
    files = _campaign_files(tmp_path)
    assert main(["campaign", "create", "--db", str(db), "--name", "c", *files, "--annotators", "ann,bob",
                 "--links-out", str(tmp_path / "missing" / "links.tsv")]) == 2
    assert "does not exist" in _in_process_error(capsys)
    assert not db.exists()  # nothing was touched: the same command works once the folder is there
    assert main(["campaign", "create", "--db", str(db), "--name", "c", *files, "--annotators", "ann,bob",
                 "--links-out", str(tmp_path / "links.tsv")]) == 0
    tokens = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    old = tokens["ann"].rsplit("/", 1)[1]
    assert main(["campaign", "revoke-link", "--db", str(db), "c", "ann", "--links-out",
                 str(tmp_path / "nofolder" / "x.tsv")]) == 2
    assert "does not exist" in _in_process_error(capsys)
    store = Store(db)
    try:
        assert store.annotator_by_token(old) is not None  # the old link still works
    finally:
        store.close()


def test_links_survive_a_file_failing_after_the_commit(tmp_path: Path, capsys, monkeypatch) -> None:
    """Finding 4: when the links file fails after the commit, the new links are still shown."""
    import styleval.outputs
    from styleval.cli.main import main
    from styleval.errors import OutputError

    def disk_full(path, text, encoding="utf-8", *, private=False):
        raise OutputError("could not be written (No space left on device); nothing was left there", path)

    db = tmp_path / "f.db"
    monkeypatch.setattr(styleval.outputs, "write_text", disk_full)
    out = tmp_path / "links.tsv"
    assert main(["campaign", "create", "--db", str(db), "--name", "c", *_campaign_files(tmp_path), "--annotators",
                 "ann,bob", "--links-out", str(out)]) == 2
    captured = capsys.readouterr()
    links = dict(line.split("\t") for line in captured.out.splitlines())
    assert sorted(links) == ["ann", "bob"] and "only copy" in captured.err and "No space left" in captured.err
    store = Store(db)
    try:
        assert all(store.annotator_by_token(link.rsplit("/", 1)[1]) for link in links.values())
    finally:
        store.close()
    assert main(["campaign", "revoke-link", "--db", str(db), "c", "bob", "--links-out", str(out)]) == 2
    captured = capsys.readouterr()
    name, link = captured.out.strip().split("\t")
    assert name == "bob" and "printed above" in captured.err
    store = Store(db)
    try:
        assert store.annotator_by_token(link.rsplit("/", 1)[1]) is not None
    finally:
        store.close()


def test_links_out_follows_a_symlink_and_refuses_an_input(tmp_path: Path, capsys) -> None:
    """Findings 1 and 2 for `campaign create --links-out`: a link is followed (and kept), the database file or
    an input file is never replaced."""
    from styleval.cli.main import main

    db = tmp_path / "s.db"
    files = _campaign_files(tmp_path)
    target, link = tmp_path / "real-links.tsv", tmp_path / "links.tsv"
    target.write_text("old\n")
    link.symlink_to(target)
    assert main(["campaign", "create", "--db", str(db), "--name", "c", *files, "--annotators", "ann",
                 "--links-out", str(link)]) == 0
    out = capsys.readouterr().out
    assert link.is_symlink() and target.read_text() == out and stat.S_IMODE(target.stat().st_mode) == 0o600
    db_bytes = db.read_bytes()
    assert main(["campaign", "revoke-link", "--db", str(db), "c", "ann", "--links-out", str(db)]) == 2
    assert "the --links-out output is the same file as the --db input" in _in_process_error(capsys)
    assert db.read_bytes() == db_bytes
    assert main(["campaign", "create", "--db", str(db), "--name", "d", *files, "--links-out",
                 str(tmp_path / "src.txt")]) == 2
    assert "the --links-out output is the same file as the --sources input" in _in_process_error(capsys)
    assert (tmp_path / "src.txt").read_text() == "a b c\nd e f\ng h i\n"
    assert main(["campaign", "export", "--db", str(db), "c", "--output", str(db)]) == 2
    assert "same file as the --db input" in _in_process_error(capsys)


def test_numeric_campaign_name_never_hides_another_campaigns_id(tmp_path: Path, capsys) -> None:
    """Finding 3 (CLI, SQLite): a campaign named "2" (id 1) and one named "other" (id 2)."""
    from styleval.cli.main import main

    db = tmp_path / "n.db"
    files = _campaign_files(tmp_path)
    for name in ("2", "other"):
        assert main(["campaign", "create", "--db", str(db), "--name", name, *files, "--annotators", "1"]) == 0
    capsys.readouterr()
    assert main(["campaign", "status", "--db", str(db), "2"]) == 2
    line = _in_process_error(capsys)
    assert "ambiguous" in line and "--id 2" in line and "--id 1" in line
    assert main(["campaign", "status", "--db", str(db), "--id", "2"]) == 0
    assert capsys.readouterr().out.startswith("other: ")
    assert main(["campaign", "status", "--db", str(db), "--id", "1"]) == 0
    assert capsys.readouterr().out.startswith("2: ")
    assert main(["campaign", "status", "--db", str(db), "other"]) == 0  # an unambiguous name
    assert capsys.readouterr().out.startswith("other: ")
    assert main(["campaign", "export", "--db", str(db), "--id", "1", "-o", str(tmp_path / "one.csv")]) == 0
    assert main(["campaign", "revoke-link", "--db", str(db), "--id", "2", "annotator-01"]) == 0
    capsys.readouterr()
    assert main(["campaign", "status", "--db", str(db), "--id", "2", "other"]) == 2
    assert "not both" in _in_process_error(capsys)


@pytest.mark.parametrize("name, annotators, code", [("tab\there", "1", "U+0009"), ("new\nline", "1", "U+000A"),
                                                    ("esc\x1b[31m", "1", "U+001B"), ("ok", "ann,b\x1bob", "U+001B")])
def test_control_characters_in_names_are_refused(tmp_path: Path, capsys, name: str, annotators: str,
                                                  code: str) -> None:
    """Finding 8: tab, newline and ESC in campaign or annotator names broke links.tsv and the terminal."""
    from styleval.cli.main import main

    db = tmp_path / "c.db"
    assert main(["campaign", "create", "--db", str(db), "--name", name, *_campaign_files(tmp_path),
                 "--annotators", annotators]) == 2
    line = _in_process_error(capsys)
    assert code in line and "printable" in line and "\x1b" not in line and not db.exists()


@pytest.mark.parametrize("value", ["-3", "+2", "0"])
def test_annotator_count_must_be_positive(tmp_path: Path, capsys, value: str) -> None:
    """Finding 9: `--annotators -3` created one annotator named "-3"."""
    from styleval.cli.main import main

    db = tmp_path / "a.db"
    assert main(["campaign", "create", "--db", str(db), "--name", "c", *_campaign_files(tmp_path),
                 "--annotators", value]) == 2
    line = _in_process_error(capsys)
    assert "annotators" in line and value in line and not db.exists()


@pytest.mark.parametrize("verb", [["list"], ["status", "c"]])
def test_campaign_output_into_a_closed_pipe_is_quiet(tmp_path: Path, verb: list[str]) -> None:
    """Finding 10: `campaign status ... | head -1` printed a BrokenPipeError traceback."""
    db = tmp_path / "p.db"
    store = Store(db)
    records = [Record(id=str(i), source=f"s{i}", output=f"o{i}", system="x") for i in range(3)]
    for i in range(3):
        store.create_campaign(build_campaign(CampaignSpec("c" if i == 0 else f"c{i}", "similarity", 2, controls=0,
                                                          repeats=0, degraded=0, training=0), records))
    store.close()
    for module in ("styleval.cli.main", "styleval.cli.campaign_cmd"):
        args = [sys.executable, "-m", module, *(["campaign"] if module.endswith("main") else []), verb[0],
                "--db", str(db), *verb[1:]]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stdout.close()  # the reader is gone before the first line is written, as `head` after its line
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and err == "", err


def test_database_not_made_by_styleval_is_refused_untouched(tmp_path: Path) -> None:
    """Finding 12: `serve` on an unrelated SQLite file with a `campaigns` table added its tables to it."""
    other = tmp_path / "shop.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE campaigns (id INTEGER PRIMARY KEY, budget REAL)")
        conn.execute("INSERT INTO campaigns VALUES (1, 99.5)")
    before = other.read_bytes()
    line = _one_line_error(_cli("serve", "--db", str(other), "--exit-after", "5",
                                env={"STYLEVAL_ADMIN_TOKEN": "x" * 20}))
    assert "not created by styleval" in line and "campaigns" in line and str(other) in line
    with pytest.raises(StorageError, match="not created by styleval"):
        Store(other)
    assert other.read_bytes() == before
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["campaigns"]
    # a styleval database of another schema version is refused too; an empty file is welcome
    ours = tmp_path / "ours.db"
    Store(ours).close()
    with sqlite3.connect(ours) as conn:
        conn.execute("UPDATE styleval_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StorageError, match="schema version '99'"):
        Store(ours)
    empty = tmp_path / "empty.db"
    empty.touch()
    Store(empty).close()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _login_statuses(extra: list[str], tmp_path: Path, name: str) -> list[int]:
    """Start `styleval serve`, send 6 wrong admin tokens each with a new X-Forwarded-For, then the right one."""
    import time

    import httpx

    port = _free_port()
    token = "forwarded-test-token"
    env = {k: v for k, v in os.environ.items() if k != "STYLEVAL_ADMIN_TOKEN"}
    env["STYLEVAL_ADMIN_TOKEN"] = token
    server = subprocess.Popen([sys.executable, "-m", "styleval.cli.main", "serve", "--db", str(tmp_path / name),
                               "--port", str(port), "--exit-after", "60", *extra], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                httpx.get(base + "/", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base) as client:
            csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/admin/login").text).group(1)
            statuses = [client.post("/admin/login", data={"csrf": csrf, "token": f"wrong-token-{i:02d}"},
                                    headers={"X-Forwarded-For": f"10.0.0.{i + 1}"}).status_code for i in range(6)]
            statuses.append(client.post("/admin/login", data={"csrf": csrf, "token": token},
                                        headers={"X-Forwarded-For": "10.0.0.99"},
                                        follow_redirects=False).status_code)
        return statuses
    finally:
        server.terminate()
        server.wait(30)


def test_login_throttle_ignores_forwarded_headers_unless_told(tmp_path: Path) -> None:
    """Finding 5: 40 wrong tokens with a new X-Forwarded-For each were all compared, never throttled."""
    assert _login_statuses([], tmp_path, "plain.db") == [401, 401, 401, 429, 429, 429, 429]
    # behind a proxy the operator names, the forwarded address is the client: six different clients
    assert _login_statuses(["--forwarded-allow-ips", "127.0.0.1"], tmp_path, "proxy.db") == [401] * 6 + [303]
