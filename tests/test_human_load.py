"""Load and crash test: 50 concurrent simulated annotators submit 5,000 judgments to a real server process,
which is killed with SIGKILL half-way and restarted; every acknowledged judgment must be in the database.

The annotators behave like browsers under the hardened checks: each opens its item page first (for the CSRF token
and the item's signed time stamp), marks every slider as moved, and after a connection error re-sends the same
form (same stamp). Nothing may be refused (no 409 or 422), lost or stored twice, and every stored judgment has a
time.

The counts are written to ``$STYLEVAL_REPORTS/human_load.json`` (or the test's temporary folder).
"""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("sqlalchemy")

import sqlalchemy as sa  # noqa: E402

from styleval.human import CampaignSpec, Store, build_campaign  # noqa: E402
from styleval.human.storage import schema  # noqa: E402
from styleval.records import Record  # noqa: E402

ANNOTATORS = 50
PER_ANNOTATOR = 100
TOTAL = ANNOTATORS * PER_ANNOTATOR
DEADLINE_S = 240.0
ADMIN = "load-test-admin-token"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(db: Path, port: int, export_dir: Path) -> subprocess.Popen:
    env = {**os.environ, "STYLEVAL_ADMIN_TOKEN": ADMIN}
    proc = subprocess.Popen([sys.executable, "-m", "styleval.cli.serve_cmd", "--db", str(db), "--port", str(port),
                             "--export-dir", str(export_dir), "--exit-after", str(DEADLINE_S + 30)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/")
            if conn.getresponse().status == 200:
                conn.close()
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def _answers(annotator: int, position: int) -> dict[str, str]:
    base = (annotator * 7 + position * 13) % 101
    return {"style.0": str(base), "content.0": str((base + 31) % 101), "fluency.0": str((base + 67) % 101)}


def _form(annotator: int, position: int) -> dict[str, str]:
    """The answers as the page sends them: every slider marked as moved."""
    answers = _answers(annotator, position)
    return {**answers, **{f"{k}.set": "1" for k in answers}}


class Annotator(threading.Thread):
    """One simulated annotator: a bounded loop of POSTs, retrying the same item after connection errors."""

    def __init__(self, index: int, token: str, port: int, stop_at: float, acked: dict, lock: threading.Lock,
                 stats: dict) -> None:
        super().__init__(daemon=True)
        self.index, self.token, self.port, self.stop_at = index, token, port, stop_at
        self.acked, self.lock, self.stats = acked, lock, stats
        self.cookie = self.csrf = None
        self.stamps: dict[int, str] = {}  # position -> the signed stamp of its page
        self.conn: http.client.HTTPConnection | None = None

    def _request(self, method: str, path: str, body: str | None = None) -> http.client.HTTPResponse:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        headers = {"Cookie": self.cookie} if self.cookie else {}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        self.conn.request(method, path, body=body, headers=headers)
        return self.conn.getresponse()

    def _fail(self) -> None:
        with self.lock:
            self.stats["connection_errors"] += 1
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        time.sleep(0.2)

    def _open(self, position: int) -> None:
        """GET the item page: the CSRF cookie and token (first time) and the item's time stamp."""
        resp = self._request("GET", f"/a/{self.token}/item/{position}")
        html = resp.read().decode()
        if resp.status != 200:
            raise http.client.HTTPException(f"item page {resp.status}")
        if self.cookie is None:
            self.cookie = resp.getheader("set-cookie", "").split(";", 1)[0]
            self.csrf = re.search(r'name="csrf" value="([^"]+)"', html).group(1)
        self.stamps[position] = re.search(r'name="shown" value="([^"]+)"', html).group(1)

    def run(self) -> None:
        position: int | None = 1
        while time.monotonic() < self.stop_at:
            try:
                if position not in self.stamps:
                    self._open(position)
                    continue
                body = urlencode({"csrf": self.csrf, "shown": self.stamps[position], **_form(self.index, position)})
                resp = self._request("POST", f"/a/{self.token}/item/{position}", body)
                resp.read()
            except (OSError, http.client.HTTPException, AttributeError):
                self._fail()
                continue
            if resp.status != 303:
                with self.lock:
                    self.stats["unexpected_status"] += 1
                    self.stats[f"status_{resp.status}"] = self.stats.get(f"status_{resp.status}", 0) + 1
                time.sleep(0.2)
                continue
            with self.lock:  # acknowledged: the server committed before answering
                self.acked[(self.index, position)] = _answers(self.index, position)
            location = resp.getheader("location", "")
            if location.endswith("/done"):
                return
            position = int(location.rsplit("/", 1)[1])


@pytest.mark.slow
def test_load_with_crash_and_restart(tmp_path: Path) -> None:
    db = tmp_path / "load.db"
    records = [Record(id=str(seg), source=f"source sentence number {seg}", output=f"output {sys_} {seg}",
                      system=f"sys{sys_}", direction="informal->formal")
               for sys_ in range(5) for seg in range(TOTAL // 5)]
    spec = CampaignSpec("load", "direct-assessment", annotators=ANNOTATORS, per_item=1, controls=0, repeats=0,
                        degraded=0)
    store = Store(db)
    created = store.create_campaign(build_campaign(spec, records))
    store.close()
    tokens = list(created.tokens.values())
    port = _free_port()
    proc = _start(db, port, tmp_path / "exports")
    acked: dict = {}
    lock = threading.Lock()
    stats = {"connection_errors": 0, "unexpected_status": 0}
    start = time.monotonic()
    threads = [Annotator(i, tok, port, start + DEADLINE_S, acked, lock, stats) for i, tok in enumerate(tokens)]
    for th in threads:
        th.start()
    restarted = False
    acked_at_kill = 0
    try:
        while time.monotonic() < start + DEADLINE_S and any(th.is_alive() for th in threads):
            if not restarted and len(acked) >= TOTAL // 2:
                acked_at_kill = len(acked)
                proc.send_signal(signal.SIGKILL)
                proc.wait(10)
                proc = _start(db, port, tmp_path / "exports")
                restarted = True
            time.sleep(0.05)
        for th in threads:
            th.join(timeout=max(0.0, start + DEADLINE_S + 5 - time.monotonic()))
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    elapsed = time.monotonic() - start

    store = Store(db)
    try:
        names = {a.id: i for i, a in enumerate(sorted(store.annotators(created.id), key=lambda a: a.name))}
        rows = store.judged_rows(created.id)
        in_db = store.judgment_count(created.id)
        with store.engine.connect() as conn:
            distinct = conn.execute(sa.select(sa.func.count(sa.distinct(schema.judgments.c.assignment_id)))
                                    ).scalar_one()
    finally:
        store.close()
    index_of = {name: i for i, name in enumerate(created.tokens)}
    stored = {(index_of[r.annotator], r.position): r.answers for r in rows}
    missing = [k for k in acked if k not in stored]
    wrong = [k for k, ans in acked.items() if k in stored and stored[k] != {
        "style": [int(ans["style.0"])], "content": [int(ans["content.0"])], "fluency": [int(ans["fluency.0"])]}]
    untimed = sum(r.seconds is None for r in rows)
    report = {"annotators": ANNOTATORS, "target_judgments": TOTAL, "acknowledged": len(acked),
              "acknowledged_before_kill": acked_at_kill, "in_database": in_db, "missing_acknowledged": len(missing),
              "duplicated": in_db - distinct, "answers_differing": len(wrong), "without_time": untimed,
              "killed_and_restarted": restarted, "seconds": round(elapsed, 1), **stats}
    out_dir = Path(os.environ.get("STYLEVAL_REPORTS", tmp_path))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "human_load.json").write_text(json.dumps(report, indent=2))
    print("human load test:", json.dumps(report))
    assert names  # the annotators are there
    assert restarted, report
    assert not missing and not wrong, report
    assert len(acked) == TOTAL and in_db == TOTAL and distinct == TOTAL, report
    assert stats["unexpected_status"] == 0 and untimed == 0, report
