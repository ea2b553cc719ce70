"""The web application through Starlette's test client: annotator isolation, admin credential, CSRF,
idempotent resubmission, malicious outputs shown as text, export confined to its directory."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from styleval.human import CampaignSpec, Store, build_campaign  # noqa: E402
from styleval.human.web import create_app  # noqa: E402
from styleval.records import Record  # noqa: E402

ADMIN = "web-test-admin-token"
EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _records() -> list[Record]:
    return [Record(id=str(i), source=f"source {i} &amp; <b>bold</b>", output=f"{s} says {EVIL} {i}", system=s)
            for s in ("s1", "s2") for i in range(3)]


@pytest.fixture()
def env(tmp_path: Path):
    store = Store(tmp_path / "w.db")
    spec = CampaignSpec("web", "direct-assessment", ["ann1", "ann2"], controls=0, repeats=0, degraded=0)
    created = store.create_campaign(build_campaign(spec, _records()))
    app = create_app(store, admin_token=ADMIN, export_dir=tmp_path / "exports")
    yield {"client": TestClient(app, base_url="http://127.0.0.1"), "store": store, "tokens": created.tokens,
           "cid": created.id, "tmp": tmp_path}
    store.close()


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def _form(csrf: str, value: int = 40) -> dict[str, str]:
    return {"csrf": csrf, "style.0": str(value), "content.0": str(value), "fluency.0": str(value)}


def _login(client: TestClient) -> None:
    r = client.post("/admin/login", data={"csrf": _csrf(client.get("/admin/login").text), "token": ADMIN},
                    follow_redirects=False)
    assert r.status_code == 303


def test_annotator_flow_headers_and_escaping(env) -> None:
    c, tok = env["client"], env["tokens"]["ann1"]
    home = c.get(f"/a/{tok}")
    assert home.status_code == 200 and "Examples" in home.text
    assert "default-src 'none'" in home.headers["content-security-policy"]
    assert home.headers["referrer-policy"] == "no-referrer" and home.headers["x-frame-options"] == "DENY"
    page = c.get(f"/a/{tok}/item/1")
    assert "<script>" not in page.text and "<img" not in page.text and "<b>" not in page.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text
    csrf = _csrf(page.text)
    r = c.post(f"/a/{tok}/item/1", data=_form(csrf, 40), follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/a/{tok}/item/2"
    r2 = c.post(f"/a/{tok}/item/1", data=_form(csrf, 99), follow_redirects=False)  # resubmission
    assert r2.status_code == 303
    assert env["store"].judgment_count() == 1
    ann = env["store"].annotator_by_token(tok)
    assert env["store"].assignment(ann.id, 1).answers == {"style": [40], "content": [40], "fluency": [40]}
    assert "Your answer is saved" in c.get(f"/a/{tok}/item/1").text
    bad = c.post(f"/a/{tok}/item/2", data={**_form(csrf), "style.0": "101"})
    assert bad.status_code == 422 and "from 0 to 100" in bad.text
    for pos in range(2, 4):
        c.post(f"/a/{tok}/item/{pos}", data=_form(csrf, 10 * pos))
    assert c.get(f"/a/{tok}/next", follow_redirects=False).headers["location"].endswith("/done")


def test_annotators_see_only_their_own_assignments(env) -> None:
    c, t1, t2 = env["client"], env["tokens"]["ann1"], env["tokens"]["ann2"]
    store = env["store"]
    a1, a2 = store.annotator_by_token(t1), store.annotator_by_token(t2)
    assert c.get("/a/not-a-valid-token").status_code == 404
    assert c.get(f"/a/{t1}/item/999").status_code == 404
    # positions are per annotator: the same number through another token is that annotator's own item
    csrf = _csrf(c.get(f"/a/{t1}/item/1").text)
    c.post(f"/a/{t2}/item/1", data=_form(csrf, 77))
    assert store.assignment(a1.id, 1).answers is None
    assert store.assignment(a2.id, 1).answers == {"style": [77], "content": [77], "fluency": [77]}
    own = {store.assignment(a1.id, p).assignment_id for p in range(1, 4)}
    other = {store.assignment(a2.id, p).assignment_id for p in range(1, 4)}
    assert not own & other


def test_csrf_is_required(env) -> None:
    c, tok = env["client"], env["tokens"]["ann1"]
    c.get(f"/a/{tok}/item/1")
    assert c.post(f"/a/{tok}/item/1", data=_form("forged")).status_code == 403
    assert c.post(f"/a/{tok}/item/1", data={k: v for k, v in _form("x").items() if k != "csrf"}).status_code == 403
    other = TestClient(c.app, base_url="http://127.0.0.1")  # another browser: its own cookie, token not valid
    csrf = _csrf(c.get(f"/a/{tok}/item/1").text)
    other.get("/")
    assert other.post(f"/a/{tok}/item/1", data=_form(csrf)).status_code == 403
    assert env["store"].judgment_count() == 0
    login = c.post("/admin/login", data={"csrf": "forged", "token": ADMIN}, follow_redirects=False)
    assert login.status_code == 403


def test_admin_needs_credential(env) -> None:
    c, cid = env["client"], env["cid"]
    assert c.get("/admin", follow_redirects=False).headers["location"] == "/admin/login"
    assert c.get(f"/admin/campaigns/{cid}/export.csv").status_code in (401, 200) and \
        "system,segment" not in c.get(f"/admin/campaigns/{cid}/export.csv", follow_redirects=False).text
    wrong = c.post("/admin/login", data={"csrf": _csrf(c.get("/admin/login").text), "token": "nope-nope-nope"})
    assert wrong.status_code == 401
    c.cookies.set("styleval_admin", "0" * 64)
    assert c.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 303
    bearer = c.get(f"/admin/campaigns/{cid}/export.csv", headers={"Authorization": f"Bearer {ADMIN}"})
    assert bearer.status_code == 200 and bearer.text.startswith("system,segment,annotator,aspect,score")
    # an annotator token is not an admin credential
    tok = env["tokens"]["ann1"]
    assert c.get(f"/admin/campaigns/{cid}", headers={"Authorization": f"Bearer {tok}"},
                 follow_redirects=False).status_code == 303


def test_dashboard_export_and_path_traversal(env) -> None:
    c, tok, cid, tmp = env["client"], env["tokens"]["ann1"], env["cid"], env["tmp"]
    csrf = _csrf(c.get(f"/a/{tok}/item/1").text)
    for pos in range(1, 4):
        c.post(f"/a/{tok}/item/{pos}", data=_form(csrf, 20 * pos))
    _login(c)
    dash = c.get(f"/admin/campaigns/{cid}")
    assert dash.status_code == 200 and "3 / 6 judgments" in dash.text and "<script>" not in dash.text
    csrf = _csrf(dash.text)
    for name in ("../escape.csv", "/tmp/abs.csv", "sub/x.csv", "..%2Fx.csv"):
        r = c.post(f"/admin/campaigns/{cid}/export", data={"csrf": csrf, "filename": name})
        assert "Export refused" in r.text
    assert not (tmp / "escape.csv").exists() and not Path("/tmp/abs.csv").exists()
    r = c.post(f"/admin/campaigns/{cid}/export", data={"csrf": csrf, "filename": "good.jsonl"})
    assert "Exported to" in r.text
    lines = (tmp / "exports" / "good.jsonl").read_text().splitlines()
    assert len(lines) == 3 * 3
    assert c.get(f"/admin/campaigns/{cid}/export.tsv").text.count("\n") == 1 + 9


def test_admin_creates_campaign_from_uploads(env) -> None:
    c = env["client"]
    _login(c)
    csrf = _csrf(c.get("/admin").text)
    files = [("sources", ("src.txt", b"hello there\nsee you\n")),
             ("outputs", ("<b>sysA</b>.txt", b"Hello.\nGoodbye.\n")), ("outputs", ("sysB.txt", b"Hi.\nBye.\n"))]
    data = {"csrf": csrf, "name": "uploaded", "protocol": "relative", "annotators": "2", "per_item": "2",
            "controls": "1", "repeats": "1", "degraded": "1", "direction": "informal->formal"}
    r = c.post("/admin/campaigns", data=data, files=files)
    assert r.status_code == 200, r.text
    links = re.findall(r"http://127\.0\.0\.1/a/[A-Za-z0-9_-]+", r.text)
    assert len(links) == 2
    info = env["store"].campaign("uploaded")
    assert info.protocol == "relative" and len(info.config["systems"]) == 2
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", s) for s in info.config["systems"])
    assert c.get(links[0].replace("http://127.0.0.1", "")).status_code == 200
    again = c.post("/admin/campaigns", data=data, files=files)
    assert again.status_code == 422 and "already exists" in again.text
    anon = TestClient(c.app, base_url="http://127.0.0.1")
    assert anon.post("/admin/campaigns", data=data, files=files).status_code == 401
