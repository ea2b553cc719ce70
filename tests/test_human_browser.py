"""Browser test in headless Chromium: an annotator opens their link, reads the guidelines, completes a
direct-assessment task and a relative task; the admin dashboard and export show the judgments.

Screenshots of every page kind go to ``$STYLEVAL_SCREENSHOTS`` (or the test's temporary folder).
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver")

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from styleval.human import CampaignSpec, Store, build_campaign  # noqa: E402
from styleval.human.web import create_app  # noqa: E402
from styleval.meta.judgments import Judgments  # noqa: E402
from styleval.records import Record  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ADMIN = "browser-test-admin-token"
EVIL = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'

pytestmark = pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
                                reason="Debian's chromium and chromium-driver are not installed "
                                       "(run scripts/setup_human_eval_deps.sh)")


def _records() -> list[Record]:
    sources = ["hey can u send me the report", "that meeting was sooo long lol"]
    outputs = {"polite": ["Could you send me the report?", "That meeting was very long."],
               "evil": [f"Send the report {EVIL}", f"The meeting {EVIL} was long."]}
    return [Record(id=str(i + 1), source=src, output=outputs[s][i], system=s, direction="informal->formal")
            for s in outputs for i, src in enumerate(sources)]


@pytest.fixture()
def site(tmp_path: Path) -> Iterator[dict]:
    store = Store(tmp_path / "browser.db")
    none = dict(controls=0, repeats=0, degraded=0)
    da = store.create_campaign(build_campaign(CampaignSpec("da", "direct-assessment", ["ann"], **none), _records()))
    rel = store.create_campaign(build_campaign(CampaignSpec("rel", "relative", ["ann"], **none), _records()))
    app = create_app(store, admin_token=ADMIN, export_dir=tmp_path / "exports")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    stop = threading.Timer(150, lambda: setattr(server, "should_exit", True))  # never outlives the test
    stop.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    yield {"base": f"http://127.0.0.1:{port}", "store": store, "da": da, "rel": rel, "exports": tmp_path / "exports"}
    server.should_exit = True
    stop.cancel()
    thread.join(10)
    store.close()


@pytest.fixture()
def browser() -> Iterator:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="styleval-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1200,1000"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("STYLEVAL_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _full_page(driver, path: Path) -> None:
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1200, min(max(height + 40, 700), 4000))
    driver.save_screenshot(str(path))
    driver.set_window_size(1200, 1000)


def _assert_not_executed(driver) -> None:
    assert driver.execute_script("return window.__pwned === undefined")
    assert not driver.find_elements(By.CSS_SELECTOR, ".candidate-text img, .candidate-text script")


def _click_and_load(driver, by: str, value: str) -> None:
    """Click an element that leaves the page, and wait until the next page replaced it."""
    element = driver.find_element(by, value)
    element.click()

    def replaced(_driver) -> bool:
        # Chromium reports a node of the old document either as stale or, while the new document is being
        # attached, as "Node with given id does not belong to the document": both mean the page was replaced.
        try:
            element.is_enabled()
            return False
        except WebDriverException:
            return True

    WebDriverWait(driver, 30).until(replaced)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")


def _answer_page(driver) -> None:
    """Answer every question on the item page (sliders moved, first/last radio options, ranks)."""
    for i, slider in enumerate(driver.find_elements(By.CSS_SELECTOR, "input.slider")):
        driver.execute_script("arguments[0].value = arguments[1];"
                              "arguments[0].dispatchEvent(new Event('input'));", slider, 20 + 25 * i)
    for fieldset in driver.find_elements(By.CSS_SELECTOR, "fieldset.aspect"):
        names = {r.get_attribute("name") for r in fieldset.find_elements(By.CSS_SELECTOR, "input[type=radio]")}
        for name in sorted(names):
            options = fieldset.find_elements(By.CSS_SELECTOR, f"input[type=radio][name='{name}']")
            options[-1 if "content" in name else 0].click()


def test_annotator_tasks_dashboard_and_export(site: dict, browser, tmp_path: Path) -> None:
    shots = _shots(tmp_path)
    base, d = site["base"], browser
    da_link = f"{base}/a/{site['da'].tokens['ann']}"

    d.get(da_link)
    assert "Welcome, ann" in d.page_source
    assert d.find_element(By.ID, "guidelines").is_displayed()
    _full_page(d, shots / "annotator_home.png")
    d.get(da_link + "/guidelines")
    assert "Examples" in d.find_element(By.ID, "guidelines").text
    _full_page(d, shots / "guidelines.png")
    _click_and_load(d, By.ID, "continue")

    seen_evil = False
    for step in range(4):
        assert d.find_elements(By.ID, "judgment"), d.page_source
        texts = [e.text for e in d.find_elements(By.CSS_SELECTOR, ".candidate-text")]
        seen_evil |= any("<script>" in t for t in texts)
        _assert_not_executed(d)
        _answer_page(d)
        assert d.find_element(By.CSS_SELECTOR, "output.value").text == "20"  # app.js shows the value
        if step == 0 or seen_evil and not (shots / "item_malicious_output.png").exists():
            _full_page(d, shots / ("item_direct_assessment.png" if step == 0 else "item_malicious_output.png"))
        _click_and_load(d, By.ID, "submit")
    assert seen_evil
    assert "You have completed 4 of 4" in d.find_element(By.ID, "progress").text
    _full_page(d, shots / "done.png")

    rel_link = f"{base}/a/{site['rel'].tokens['ann']}"
    d.get(rel_link)
    _click_and_load(d, By.ID, "start")
    for step in range(2):
        _assert_not_executed(d)
        assert "Text B" in d.page_source and "(masked)" in d.page_source
        d.find_element(By.ID, "submit").click()  # incomplete: the browser's own validation keeps us here
        assert d.find_elements(By.ID, "judgment")
        _answer_page(d)
        if step == 0:
            _full_page(d, shots / "item_relative.png")
        _click_and_load(d, By.ID, "submit")
    assert "2 of 2" in d.find_element(By.ID, "progress").text

    d.get(f"{base}/admin")
    assert d.current_url.endswith("/admin/login")
    d.find_element(By.ID, "token").send_keys("wrong-token-xxxxxxxx")
    _click_and_load(d, By.ID, "login")
    assert "Wrong admin token" in d.find_element(By.ID, "error").text
    _full_page(d, shots / "admin_login.png")
    d.find_element(By.ID, "token").send_keys(ADMIN)
    _click_and_load(d, By.ID, "login")
    assert d.find_element(By.ID, "campaigns").text.count("direct-assessment") == 1
    _full_page(d, shots / "admin_index.png")

    d.get(f"{base}/admin/campaigns/{site['da'].id}")
    systems = d.find_element(By.ID, "systems").text
    assert "polite" in systems and "evil" in systems and "No judgments" not in systems
    assert "1 / 1" not in d.find_element(By.ID, "overall").text and "4 / 4" in d.find_element(By.ID, "overall").text
    _full_page(d, shots / "dashboard.png")
    field = d.find_element(By.NAME, "filename")
    field.clear()
    field.send_keys("da.csv")
    _click_and_load(d, By.CSS_SELECTOR, "#export button")
    assert "Exported to" in d.find_element(By.ID, "message").text
    _full_page(d, shots / "dashboard_export.png")
    exported = Judgments.read(site["exports"] / "da.csv")
    assert len(exported) == 4 * 3 and set(exported.systems) == {"polite", "evil"}
    assert sorted(exported.frame.query("aspect == 'style'")["score"]) == [20.0] * 4

    d.get(f"{base}/admin/campaigns/{site['rel'].id}")
    assert "naturalness" in d.find_element(By.ID, "systems").text
    _full_page(d, shots / "dashboard_relative.png")
    for name in ("annotator_home", "guidelines", "item_direct_assessment", "item_malicious_output", "done",
                 "item_relative", "admin_login", "admin_index", "dashboard", "dashboard_export"):
        assert (shots / f"{name}.png").stat().st_size > 5000, name


def test_untouched_sliders_sessions_and_revoked_links(site: dict, browser, tmp_path: Path) -> None:
    """Page behaviour of the hardening: what 0 and 100 mean on the item page, an untouched slider refused (not
    stored as 50), a session cookie replayed after logout refused, and a revoked annotator link."""
    shots = _shots(tmp_path)
    base, d, store = site["base"], browser, site["store"]
    token = site["da"].tokens["ann"]
    d.get(f"{base}/a/{token}/item/1")
    for fieldset in d.find_elements(By.CSS_SELECTOR, "fieldset.aspect"):
        ends = fieldset.find_element(By.CSS_SELECTOR, ".ends").text
        assert "0 =" in ends and "100 =" in ends, ends
    assert "0 = none of the meaning is kept" in d.find_element(By.ID, "aspect-content").text
    assert {o.text for o in d.find_elements(By.CSS_SELECTOR, "output.value")} == {"not set"}

    _click_and_load(d, By.ID, "submit")  # nothing moved
    assert "move the slider" in d.find_element(By.ID, "error").text
    assert store.judgment_count() == 0
    _full_page(d, shots / "item_untouched_refused.png")
    first = d.find_elements(By.CSS_SELECTOR, "input.slider")[0]
    d.execute_script("arguments[0].value = 50; arguments[0].dispatchEvent(new Event('input'));", first)
    boxes = d.find_elements(By.CSS_SELECTOR, "label.moved input")
    assert [b.is_selected() for b in boxes] == [True, False, False]  # moving (even to 50) marks it as answered
    boxes[1].click()  # ticking "set" by hand answers the starting value deliberately
    _click_and_load(d, By.ID, "submit")
    assert "How fluent" in d.find_element(By.ID, "error").text  # only the third is still missing
    assert [b.is_selected() for b in d.find_elements(By.CSS_SELECTOR, "label.moved input")] == [True, True, False]
    _answer_page(d)
    _click_and_load(d, By.ID, "submit")
    assert "/item/" in d.current_url and store.judgment_count() == 1
    (row,) = store.judged_rows(site["da"].id)
    assert row.seconds is not None and row.seconds > 0

    # an admin session copied before logout is dead after it
    d.get(f"{base}/admin/login")
    d.find_element(By.ID, "token").send_keys(ADMIN)
    _click_and_load(d, By.ID, "login")
    d.get(f"{base}/admin/campaigns/{site['da'].id}")
    stolen = d.get_cookie("styleval_admin")["value"]
    _click_and_load(d, By.ID, "logout")
    assert d.current_url.endswith("/admin/login")
    d.add_cookie({"name": "styleval_admin", "value": stolen, "path": "/"})
    d.get(f"{base}/admin/campaigns/{site['da'].id}")
    assert d.current_url.endswith("/admin/login")

    # revoking the annotator's link on the dashboard: a new link, the old one dead, the judgment kept
    d.find_element(By.ID, "token").send_keys(ADMIN)
    _click_and_load(d, By.ID, "login")
    d.get(f"{base}/admin/campaigns/{site['da'].id}")
    assert "check" in d.find_element(By.ID, "quality").text or "ok" in d.find_element(By.ID, "quality").text \
        or "no failed check" in d.find_element(By.ID, "quality").text
    _click_and_load(d, By.CSS_SELECTOR, "#annotator-1 form.revoke button")
    assert "the old link no longer works" in d.find_element(By.ID, "message").text
    new_link = d.find_element(By.CSS_SELECTOR, "#new-link code").text
    assert new_link.startswith(base + "/a/") and token not in new_link
    _full_page(d, shots / "dashboard_new_link.png")
    d.get(f"{base}/a/{token}")
    assert "This link is not valid" in d.find_element(By.ID, "error").text
    d.get(new_link + "/item/1")
    assert "Your answer is saved" in d.find_element(By.ID, "submitted").text


def _opaque_background(driver, element) -> str:
    """The colour behind ``element``: its own background or the first ancestor's that is not transparent."""
    return driver.execute_script(
        "let e = arguments[0];"
        "while (e) { const c = getComputedStyle(e).backgroundColor;"
        "  if (c && c !== 'transparent' && c !== 'rgba(0, 0, 0, 0)') return c; e = e.parentElement; }"
        "return 'rgb(255, 255, 255)';", element)


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(float(v)) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])


def test_sentiment_guidelines_and_a_readable_new_link_button(site: dict, browser, tmp_path: Path) -> None:
    """A negative->positive campaign's guidelines show sentiment examples, no formality one; on the dashboard
    the "new link" button is drawn in a colour that stands out from the table behind it."""
    shots = _shots(tmp_path)
    base, d, store = site["base"], browser, site["store"]
    records = [Record(id=str(i + 1), source=src, output=out, system=s, direction="negative->positive")
               for s in ("A", "B") for i, (src, out) in enumerate([("the soup was cold", "the soup was hot"),
                                                                     ("rude staff", "kind staff")])]
    senti = store.create_campaign(build_campaign(CampaignSpec("senti", "direct-assessment", ["ann"], controls=0,
                                                              repeats=0, degraded=0), records))
    d.get(f"{base}/a/{senti.tokens['ann']}/guidelines")
    text = d.find_element(By.ID, "guidelines").text
    examples = text[text.index("Examples"):text.index("Protocol after")]  # the citation names its formality study
    assert "clearly positive" in examples and "formal" not in examples.lower(), text
    _full_page(d, shots / "guidelines_sentiment.png")
    d.get(f"{base}/a/{site['da'].tokens['ann']}/guidelines")  # the formality campaign keeps its examples
    text = d.find_element(By.ID, "guidelines").text
    assert "clearly formal" in text and "clearly positive" not in text

    d.get(f"{base}/admin/login")
    d.find_element(By.ID, "token").send_keys(ADMIN)
    _click_and_load(d, By.ID, "login")
    d.get(f"{base}/admin/campaigns/{site['da'].id}")
    button = d.find_element(By.CSS_SELECTOR, "form.revoke button.link")
    assert button.text == "new link" and button.is_displayed()
    fg, bg = _rgb(button.value_of_css_property("color")), _rgb(_opaque_background(d, button))
    assert fg != (255, 255, 255), "white text"
    assert sum(abs(a - b) for a, b in zip(fg, bg)) > 250, (fg, bg)  # far from the background it sits on
    _full_page(d, shots / "dashboard_new_link.png")
