"""The web application through Starlette's test client: annotator isolation, admin credential, CSRF,
idempotent resubmission, malicious outputs shown as text, export confined to its directory."""
from __future__ import annotations

import os
import re
import stat
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


def _stamp(html: str) -> str:
    return re.search(r'name="shown" value="([^"]+)"', html).group(1)


def _form(csrf: str, value: int = 40, shown: str | None = None) -> dict[str, str]:
    """A direct-assessment answer with every slider marked as moved (and the item's stamp when given)."""
    form = {"csrf": csrf}
    for aspect in ("style", "content", "fluency"):
        form.update({f"{aspect}.0": str(value), f"{aspect}.0.set": "1"})
    if shown is not None:
        form["shown"] = shown
    return form


def _item_form(client: TestClient, token: str, position: int, value: int = 40) -> dict[str, str]:
    """Open the item page like a browser and answer it with its own CSRF token and time stamp."""
    page = client.get(f"/a/{token}/item/{position}")
    assert page.status_code == 200, page.text
    return _form(_csrf(page.text), value, _stamp(page.text))


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
    first = _form(csrf, 40, _stamp(page.text))
    r = c.post(f"/a/{tok}/item/1", data=first, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/a/{tok}/item/2"
    again = c.post(f"/a/{tok}/item/1", data=first, follow_redirects=False)  # a retry: acknowledged again
    assert again.status_code == 303 and again.headers["location"] == f"/a/{tok}/item/2"
    r2 = c.post(f"/a/{tok}/item/1", data=_form(csrf, 99, _stamp(page.text)), follow_redirects=False)
    assert r2.status_code == 409 and "NOT saved" in r2.text  # a changed answer is reported, not dropped silently
    assert env["store"].judgment_count() == 1
    ann = env["store"].annotator_by_token(tok)
    assert env["store"].assignment(ann.id, 1).answers == {"style": [40], "content": [40], "fluency": [40]}
    assert "Your answer is saved" in c.get(f"/a/{tok}/item/1").text
    bad = c.post(f"/a/{tok}/item/2", data={**_item_form(c, tok, 2), "style.0": "101"})
    assert bad.status_code == 422 and "from 0 to 100" in bad.text
    for pos in range(2, 4):
        assert c.post(f"/a/{tok}/item/{pos}", data=_item_form(c, tok, pos, 10 * pos),
                      follow_redirects=False).status_code == 303
    assert c.get(f"/a/{tok}/next", follow_redirects=False).headers["location"].endswith("/done")


def test_annotators_see_only_their_own_assignments(env) -> None:
    c, t1, t2 = env["client"], env["tokens"]["ann1"], env["tokens"]["ann2"]
    store = env["store"]
    a1, a2 = store.annotator_by_token(t1), store.annotator_by_token(t2)
    assert c.get("/a/not-a-valid-token").status_code == 404
    assert c.get(f"/a/{t1}/item/999").status_code == 404
    # positions are per annotator: the same number through another token is that annotator's own item
    csrf = _csrf(c.get(f"/a/{t1}/item/1").text)
    c.post(f"/a/{t2}/item/1", data={**_item_form(c, t2, 1, 77), "csrf": csrf})
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
    for pos in range(1, 4):
        c.post(f"/a/{tok}/item/{pos}", data=_item_form(c, tok, pos, 20 * pos))
    _login(c)
    dash = c.get(f"/admin/campaigns/{cid}")
    assert dash.status_code == 200 and "3 / 6 judgments" in dash.text and "<script>" not in dash.text
    # a test client answers within milliseconds: that annotator is flagged, not "ok"
    row = re.search(r'<tr class="flagged" id="annotator-1">.*?</tr>', dash.text, re.S).group(0)
    assert "ann1" in row and re.search(r"implausibly fast \(median [01]\.\d s per item\)", row), row
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


# ---------------------------------------------------------------------- admin sessions and throttling
class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _app(env, **kwargs) -> TestClient:
    app = create_app(env["store"], admin_token=kwargs.pop("token", ADMIN), export_dir=env["tmp"] / "exports",
                     **kwargs)
    return TestClient(app, base_url=kwargs.pop("base_url", "http://127.0.0.1"))


def test_session_replayed_after_logout_is_refused(env) -> None:
    c, cid = env["client"], env["cid"]
    _login(c)
    cookie = c.cookies.get("styleval_admin")
    assert cookie and len(cookie) >= 40
    assert c.get(f"/admin/campaigns/{cid}/export.csv").text.startswith("system,segment")
    r = c.post("/admin/logout", data={"csrf": _csrf(c.get("/admin").text)}, follow_redirects=False)
    assert r.status_code == 303
    thief = TestClient(c.app, base_url="http://127.0.0.1")
    thief.cookies.set("styleval_admin", cookie)  # the copied cookie, replayed after logout
    replay = thief.get(f"/admin/campaigns/{cid}/export.csv", follow_redirects=False)
    assert replay.status_code == 303 and replay.headers["location"] == "/admin/login"
    assert thief.get("/admin", follow_redirects=False).status_code == 303
    # the database holds only a hash of the session id
    import sqlalchemy as sa

    from styleval.human.storage import schema

    with env["store"].engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(schema.admin_sessions)).scalar_one() == 0
    _login(c)
    with env["store"].engine.connect() as conn:
        (stored,) = conn.execute(sa.select(schema.admin_sessions.c.id_hash)).scalars().all()
    assert stored != c.cookies.get("styleval_admin")


def test_sessions_end_on_token_change_and_expiry(env) -> None:
    clock = FakeClock()
    from styleval.human.web.app import Limits

    c = _app(env, clock=clock, limits=Limits(session_ttl_s=60))
    _login(c)
    cid = env["cid"]
    assert c.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 200
    clock.now += 59
    assert c.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 200
    clock.now += 2  # past the expiry
    assert c.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 303
    _login(c)
    assert c.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 200
    cookie = c.cookies.get("styleval_admin")
    # the server restarts with another admin token: every session opened under the old one is gone
    other = _app(env, token="a-completely-different-token")
    other.cookies.set("styleval_admin", cookie)
    assert other.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 303
    again = _app(env)  # and switching back does not bring them back
    again.cookies.set("styleval_admin", cookie)
    assert again.get(f"/admin/campaigns/{cid}", follow_redirects=False).status_code == 303


def test_session_cookie_is_secure_over_tls(env) -> None:
    plain = env["client"].post("/admin/login", data={"csrf": _csrf(env["client"].get("/admin/login").text),
                                                     "token": ADMIN}, follow_redirects=False)
    assert "secure" not in plain.headers["set-cookie"].lower()
    tls = TestClient(env["client"].app, base_url="https://127.0.0.1")
    page = tls.get("/admin/login")
    assert "secure" in page.headers["set-cookie"].lower()  # the CSRF cookie too
    r = tls.post("/admin/login", data={"csrf": _csrf(page.text), "token": ADMIN}, follow_redirects=False)
    cookie = r.headers["set-cookie"]
    assert r.status_code == 303 and "styleval_admin=" in cookie
    assert "secure" in cookie.lower() and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    assert "max-age=43200" in cookie.lower()


def test_login_throttling_grows_and_blocks_even_the_right_token(env) -> None:
    from styleval.human.web.sessions import LoginThrottle

    clock = FakeClock()
    c = _app(env, throttle=LoginThrottle(free_attempts=3, base_delay_s=1.0, max_delay_s=8.0, clock=clock))
    csrf = _csrf(c.get("/admin/login").text)

    def attempt(token: str):
        return c.post("/admin/login", data={"csrf": csrf, "token": token}, follow_redirects=False)

    assert [attempt(f"wrong-token-{i:04d}").status_code for i in range(3)] == [401, 401, 401]
    fourth = attempt("wrong-token-0003")  # after 3 wrong tokens the wait has begun: the 4th is not compared
    assert fourth.status_code == 429 and fourth.headers["retry-after"] == "1"
    blocked = attempt(ADMIN)
    assert blocked.status_code == 429 and blocked.headers["retry-after"] == "1"
    assert "wait 1 s" in blocked.text and "styleval_admin" not in blocked.headers.get("set-cookie", "")
    waits = []
    for _ in range(5):
        clock.now += 9  # past the wait, but not quiet long enough to be forgotten
        assert attempt("wrong-again-xxxx").status_code == 401
        waits.append(int(attempt("wrong-again-xxxx").headers["retry-after"]))
    assert waits == [2, 4, 8, 8, 8]  # doubling, capped at max_delay_s
    # a bearer header is throttled the same way (it is a way to guess the token too)
    bearer = c.get(f"/admin/campaigns/{env['cid']}/export.csv", headers={"Authorization": f"Bearer {ADMIN}"})
    assert bearer.status_code == 429
    clock.now += 9
    assert attempt(ADMIN).status_code == 303  # after the wait the right token works, and resets the count
    csrf = _csrf(c.get("/admin/login").text)  # logged in now: forms carry tokens bound to the session
    assert attempt("wrong-token-9999").status_code == 401 and attempt(ADMIN).status_code == 303


def test_throttle_is_per_client_and_forgets() -> None:
    from styleval.human.web.sessions import LoginThrottle

    clock = FakeClock()
    t = LoginThrottle(free_attempts=1, base_delay_s=2.0, max_delay_s=10.0, clock=clock)
    assert t.failed("a") == 2.0 and t.failed("a") == 4.0 and t.failed("a") == 8.0  # the wait starts at once
    assert t.wait("a") == 8.0 and t.wait("b") == 0
    clock.now += 21  # quiet for longer than twice the longest delay
    assert t.wait("a") == 0 and t.failed("a") == 2.0


# ---------------------------------------------------------------------- honest judgments
def test_untouched_sliders_are_refused(env) -> None:
    c, tok, store = env["client"], env["tokens"]["ann1"], env["store"]
    form = _item_form(c, tok, 1, 50)
    untouched = {k: v for k, v in form.items() if not k.endswith(".set")}
    r = c.post(f"/a/{tok}/item/1", data=untouched)
    assert r.status_code == 422 and "move the slider" in r.text and "How well does the text match" in r.text
    r = c.post(f"/a/{tok}/item/1", data={k: v for k, v in form.items() if k != "fluency.0.set"})
    assert r.status_code == 422 and "How fluent" in r.text
    assert 'name="style.0.set" value="1" checked' in r.text  # what was set stays set on the page
    assert f'name="shown" value="{form["shown"]}"' in r.text  # and the time still counts from the first showing
    assert store.judgment_count() == 0
    assert c.post(f"/a/{tok}/item/1", data=form, follow_redirects=False).status_code == 303
    ann = store.annotator_by_token(tok)
    assert store.assignment(ann.id, 1).answers == {"style": [50], "content": [50], "fluency": [50]}


def test_time_stamps_must_be_present_and_bound_to_their_item(env) -> None:
    import time

    from styleval.human.web import security

    c, tok, store = env["client"], env["tokens"]["ann1"], env["store"]
    ann = store.annotator_by_token(tok)
    form1, form2 = _item_form(c, tok, 1), _item_form(c, tok, 2)
    missing = {k: v for k, v in form1.items() if k != "shown"}
    r = c.post(f"/a/{tok}/item/1", data=missing)
    assert r.status_code == 422 and "time stamp is missing" in r.text
    replayed = {**form1, "shown": form2["shown"]}  # item 2's stamp on item 1
    r = c.post(f"/a/{tok}/item/1", data=replayed)
    assert r.status_code == 422 and "does not belong to this item" in r.text
    when, sig = form1["shown"].rsplit(".", 1)
    forged = {**form1, "shown": f"{float(when) - 600:.3f}.{sig}"}  # pretending the page was shown 10 min earlier
    assert c.post(f"/a/{tok}/item/1", data=forged).status_code == 422
    aid = store.assignment(ann.id, 1).assignment_id
    stale = {**form1, "shown": security.stamp(store.secret, aid, time.time() - 2 * 86400)}
    assert "too long ago" in c.post(f"/a/{tok}/item/1", data=stale).text
    assert store.judgment_count() == 0
    assert c.post(f"/a/{tok}/item/1", data=form1, follow_redirects=False).status_code == 303
    (row,) = store.judged_rows(env["cid"])
    assert row.seconds is not None and 0 <= row.seconds < 60


# ---------------------------------------------------------------------- revoked links
def test_admin_revokes_a_link_and_keeps_the_judgments(env) -> None:
    c, tok, store, cid = env["client"], env["tokens"]["ann1"], env["store"], env["cid"]
    assert c.post(f"/a/{tok}/item/1", data=_item_form(c, tok, 1), follow_redirects=False).status_code == 303
    ann = store.annotator_by_token(tok)
    _login(c)
    dash = c.get(f"/admin/campaigns/{cid}")
    anon = TestClient(c.app, base_url="http://127.0.0.1")
    assert anon.post(f"/admin/campaigns/{cid}/annotators/{ann.id}/revoke-link",
                     data={"csrf": _csrf(dash.text)}).status_code in (401, 403)
    r = c.post(f"/admin/campaigns/{cid}/annotators/{ann.id}/revoke-link", data={"csrf": _csrf(dash.text)})
    assert r.status_code == 200 and "the old link no longer works" in r.text
    new = re.search(r"http://127\.0\.0\.1/a/([A-Za-z0-9_-]+)", r.text).group(1)
    assert new != tok
    assert c.get(f"/a/{tok}").status_code == 404 and c.get(f"/a/{tok}/item/2").status_code == 404
    home = c.get(f"/a/{new}")
    assert home.status_code == 200
    assert store.progress(ann.id)[0] == 1 and "Your answer is saved" in c.get(f"/a/{new}/item/1").text
    other = env["store"].annotator_by_token(env["tokens"]["ann2"])
    assert c.post(f"/admin/campaigns/{cid}/annotators/{other.id + 100}/revoke-link",
                  data={"csrf": _csrf(dash.text)}).status_code == 404


# ---------------------------------------------------------------------- request bounds
HUGE = ["99999999999999999999999", "2147483648", "0", "-1", "1e3", "abc", "%20"]


@pytest.mark.parametrize("raw", HUGE)
def test_path_integers_are_bounded(env, raw: str) -> None:
    c, tok, cid = env["client"], env["tokens"]["ann1"], env["cid"]
    assert c.get(f"/a/{tok}/item/{raw}").status_code == 404
    assert c.post(f"/a/{tok}/item/{raw}", data=_item_form(c, tok, 1)).status_code == 404
    _login(c)
    for path in (f"/admin/campaigns/{raw}", f"/admin/campaigns/{raw}/export.csv"):
        r = c.get(path, follow_redirects=False)
        assert r.status_code == 404 and "default-src 'none'" in r.headers["content-security-policy"]
    csrf = _csrf(c.get("/admin").text)
    assert c.post(f"/admin/campaigns/{cid}/annotators/{raw}/revoke-link", data={"csrf": csrf}).status_code == 404
    assert c.post(f"/admin/campaigns/{raw}/export", data={"csrf": csrf, "filename": "x.csv"}).status_code == 404
    assert env["store"].judgment_count() == 0


def test_bodies_over_the_limit_are_refused_before_reading(env) -> None:
    from styleval.human.web.app import Limits

    c = _app(env, limits=Limits(upload_bytes=4000, form_bytes=1000))
    tok = env["tokens"]["ann1"]
    form = _item_form(c, tok, 1)
    big = c.post(f"/a/{tok}/item/1", data={**form, "padding": "x" * 5000})
    assert big.status_code == 413 and "too large" in big.text and big.headers["x-frame-options"] == "DENY"
    assert c.post("/admin/login", data={"csrf": "x", "token": "y" * 5000}).status_code == 413

    def chunks():  # no Content-Length: the body is counted while it streams in
        for _ in range(50):
            yield b"a=" + b"b" * 100 + b"&"

    streamed = c.post(f"/a/{tok}/item/1", content=chunks(),
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert streamed.status_code == 413
    assert env["store"].judgment_count() == 0
    # the admin upload has its own, larger limit; without a session it is refused before the body is read
    files = [("sources", ("src.txt", b"a\n" * 3000)), ("outputs", ("s.txt", b"b\n" * 3000))]
    assert c.post("/admin/campaigns", data={"csrf": "x"}, files=files).status_code == 413
    small = [("sources", ("src.txt", b"a\n")), ("outputs", ("s.txt", b"b\n"))]
    assert c.post("/admin/campaigns", data={"csrf": "x"}, files=small).status_code == 401
    _login(c)
    r = c.post("/admin/campaigns", data={"csrf": _csrf(c.get("/admin").text)}, files=files)
    assert r.status_code == 413 and "3.90625 KiB" in r.text


def _upload(c: TestClient, **fields) -> object:
    files = fields.pop("files", [("sources", ("src.txt", b"hello there\nsee you\n")),
                                 ("outputs", ("sysA.txt", b"Hello.\nGoodbye.\n"))])
    data = {"csrf": _csrf(c.get("/admin").text), "name": "up", "protocol": "direct-assessment", "annotators": "2",
            **fields}
    return c.post("/admin/campaigns", data=data, files=files)


@pytest.mark.parametrize("fields,expected", [
    ({"controls": "100000"}, "controls must be a whole number from 0 to 100"),
    ({"degraded": "-1"}, "degraded must be a whole number"),
    ({"per_item": "99999999999999999999999"}, "per_item is too large"),
    ({"repeats": "abc"}, "repeats must be a whole number"),
    ({"annotators": "99999999999999"}, "annotators is too large"),
    ({"annotators": "5000"}, "1 to 1000 annotators"),
    ({"name": "n" * 300}, "at most 200"),
])
def test_campaign_form_values_are_bounded(env, fields: dict, expected: str) -> None:
    c = env["client"]
    _login(c)
    r = _upload(c, **fields)
    assert r.status_code == 422 and expected in r.text, r.text[-800:]
    assert [x.name for x in env["store"].campaigns()] == ["web"]


def test_upload_errors_name_the_uploaded_file(env) -> None:
    c = env["client"]
    _login(c)
    files = [("sources", ("my-sources.txt", b"one\ntwo\n")), ("outputs", ("sysA.txt", b"only one line\n"))]
    r = _upload(c, files=files)
    assert r.status_code == 422
    message = re.search(r'id="message">([^<]*)<', r.text).group(1)
    assert "sysA.txt" in message and "my-sources.txt" in message, message
    assert "/tmp" not in message and "output-0.txt" not in message, message


# ---------------------------------------------------------------------- faults
def test_errors_carry_the_security_headers(env, monkeypatch) -> None:
    import sqlalchemy as sa

    c, tok, store = env["client"], env["tokens"]["ann1"], env["store"]

    def boom(*_a, **_k):
        raise RuntimeError("unexpected")

    monkeypatch.setattr(store, "progress", boom)
    r = c.get(f"/a/{tok}")
    assert r.status_code == 500 and "Something went wrong" in r.text
    assert "default-src 'none'" in r.headers["content-security-policy"] and r.headers["x-frame-options"] == "DENY"
    assert "Traceback" not in r.text and "unexpected" not in r.text

    def readonly(*_a, **_k):
        raise sa.exc.OperationalError("INSERT ...", {}, Exception("attempt to write a readonly database"))

    monkeypatch.undo()  # progress works again; now the database refuses the write
    monkeypatch.setattr(store, "submit", readonly)
    form = _item_form(c, tok, 1)
    r = c.post(f"/a/{tok}/item/1", data=form)
    assert r.status_code == 503 and "NOT saved" in r.text and r.headers["referrer-policy"] == "no-referrer"
    for status_path in (f"/a/{tok}/item/999", "/nope"):
        r = c.get(status_path)
        assert r.status_code == 404 and "default-src 'none'" in r.headers["content-security-policy"]


def test_export_on_a_full_disk_leaves_no_file(env, monkeypatch) -> None:
    from styleval.meta.judgments import Judgments

    c, cid, tmp = env["client"], env["cid"], env["tmp"]
    _login(c)
    csrf = _csrf(c.get(f"/admin/campaigns/{cid}").text)

    def full_disk(self, path, format=None):
        Path(path).write_bytes(b"")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Judgments, "write", full_disk)
    r = c.post(f"/admin/campaigns/{cid}/export", data={"csrf": csrf, "filename": "full.csv"})
    assert r.status_code == 422 and "Export refused" in r.text and "No space left on device" in r.text
    exports = tmp / "exports"
    assert not exports.exists() or list(exports.iterdir()) == []


def test_short_admin_token_is_refused(env) -> None:
    from styleval.errors import InputError

    with pytest.raises(InputError, match="at least 12"):
        create_app(env["store"], admin_token="short", export_dir=env["tmp"])


# ---------------------------------------------------------------------- issue 33
def test_planted_csrf_cookie_earns_no_admin_form_token(env) -> None:
    """Finding 6: a client chose the styleval_csrf cookie, got the token for it from GET /admin/login, and an
    admin session carrying that cookie accepted it. Admin form tokens now derive from the server-side session."""
    cid = env["cid"]
    attacker = _app(env)
    attacker.cookies.set("styleval_csrf", "planted-by-the-attacker-0123456789")
    planted_token = _csrf(attacker.get("/admin/login").text)
    victim = _app(env)
    _login(victim)
    victim.cookies.set("styleval_csrf", "planted-by-the-attacker-0123456789")
    r = victim.post(f"/admin/campaigns/{cid}/export", data={"csrf": planted_token, "filename": "stolen.csv"})
    assert r.status_code == 403 and not (env["tmp"] / "exports" / "stolen.csv").exists()
    own = _csrf(victim.get(f"/admin/campaigns/{cid}").text)  # the admin's own page carries the bound token
    assert own != planted_token
    r = victim.post(f"/admin/campaigns/{cid}/export", data={"csrf": own, "filename": "mine.csv"})
    assert r.status_code == 200 and (env["tmp"] / "exports" / "mine.csv").exists()
    # a session ended by logout takes its tokens with it
    victim.post("/admin/logout", data={"csrf": own}, follow_redirects=False)
    assert victim.post(f"/admin/campaigns/{cid}/export", data={"csrf": own, "filename": "x.csv"},
                       follow_redirects=False).status_code in (401, 403)


def test_throttle_details(env) -> None:
    """Finding 11: Retry-After 0 for a client still blocked; the 4th wrong token compared although the wait
    starts after 3; a refused export answered 200."""
    from styleval.human.web.sessions import LoginThrottle

    clock = FakeClock()
    c = _app(env, throttle=LoginThrottle(free_attempts=3, base_delay_s=0.25, max_delay_s=8.0, clock=clock))
    csrf = _csrf(c.get("/admin/login").text)

    def attempt(token: str):
        return c.post("/admin/login", data={"csrf": csrf, "token": token}, follow_redirects=False)

    assert [attempt(f"wrong-token-{i:04d}").status_code for i in range(3)] == [401, 401, 401]
    blocked = attempt(ADMIN)  # the right token as the 4th try: not compared, the client waits first
    assert blocked.status_code == 429 and blocked.headers["retry-after"] == "1" and "wait 1 s" in blocked.text
    bearer = c.get("/admin", headers={"Authorization": f"Bearer {ADMIN}"})
    assert bearer.status_code == 429 and bearer.headers["retry-after"] == "1"  # 0.25 s left: never "0"
    clock.now += 0.3
    assert attempt(ADMIN).status_code == 303
    # a refused export says so in its status, not only in the page
    cid = env["cid"]
    page_csrf = _csrf(c.get(f"/admin/campaigns/{cid}").text)
    r = c.post(f"/admin/campaigns/{cid}/export", data={"csrf": page_csrf, "filename": "../escape.csv"})
    assert r.status_code == 422 and "Export refused" in r.text
    (env["tmp"] / "exports").mkdir(exist_ok=True)
    os.mkfifo(env["tmp"] / "exports" / "pipe.csv")  # never replaced by an export
    r = c.post(f"/admin/campaigns/{cid}/export", data={"csrf": page_csrf, "filename": "pipe.csv"})
    assert r.status_code == 422 and "not a regular file" in r.text
    assert stat.S_ISFIFO(os.lstat(env["tmp"] / "exports" / "pipe.csv").st_mode)


def test_numeric_campaign_name_never_hides_another_campaigns_id_on_the_web(env) -> None:
    """Finding 3 (web, SQLite): routes take ids only; a campaign named after another's id is not reached by it."""
    check_ids_and_names_stay_apart(env["store"], lambda: _app(env))


def check_ids_and_names_stay_apart(store, client_factory) -> None:
    """Create campaigns named str(k+2) (id k+1) and "other-k" (id k+2); every way in reaches the right one."""
    from styleval.errors import InputError

    probe = store.create_campaign(build_campaign(
        CampaignSpec(f"probe-{id(store)}", "direct-assessment", 1, controls=0, repeats=0, degraded=0), _records()))
    k = probe.id
    numeric = store.create_campaign(build_campaign(
        CampaignSpec(str(k + 2), "direct-assessment", 1, controls=0, repeats=0, degraded=0), _records()))
    other = store.create_campaign(build_campaign(
        CampaignSpec(f"other-{k}", "direct-assessment", 1, controls=0, repeats=0, degraded=0), _records()))
    assert (numeric.id, other.id) == (k + 1, k + 2)
    assert store.campaign(k + 2).name == f"other-{k}" and store.campaign(k + 1).name == str(k + 2)
    with pytest.raises(InputError, match="ambiguous"):
        store.campaign(str(k + 2))
    assert store.campaign(f"other-{k}").id == k + 2
    c = client_factory()
    _login(c)
    index = c.get("/admin").text
    assert f'href="/admin/campaigns/{k + 2}"' in index
    page = c.get(f"/admin/campaigns/{k + 2}")
    assert page.status_code == 200 and f"other-{k}" in page.text
    download = c.get(f"/admin/campaigns/{k + 2}/export.csv")
    assert download.headers["content-disposition"] == f'attachment; filename="campaign-{k + 2}.csv"'
    assert c.get(f"/admin/campaigns/{k + 1}").status_code == 200
    assert str(k + 2) in c.get(f"/admin/campaigns/{k + 1}").text
