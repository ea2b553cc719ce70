"""The report's segment explorer driven in a real headless Chromium: sorting, filtering, the two-system difference,
the disagreement view (metric against metric and against human scores), a click on a plot point, keyboard use,
an output holding markup shown as text, and the page opening from ``file://`` with no network request.

Expected values come from the evaluation itself (its segment scores and texts), computed here in Python beside
the page's JavaScript. Screenshots go to ``$STYLEVAL_SCREENSHOTS`` when set.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

webdriver = pytest.importorskip("selenium.webdriver")

from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from styleval.cli.score_cmd import load_records  # noqa: E402
from styleval.evaluation import evaluate  # noqa: E402
from styleval.meta.judgments import Judgments  # noqa: E402
from styleval.records import Record  # noqa: E402
from styleval.report.html import render_html  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
EVIL = '<script>alert(1)</script><img src=x onerror="window.__pwned=1"> thanks'

pytestmark = pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
                                reason="Debian's chromium and chromium-driver are not installed "
                                       "(run scripts/setup_human_eval_deps.sh)")


def _records() -> list[Record]:
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    records = load_records(ns)
    for r in records:  # an untrusted output: markup and an event handler
        if r.system == "tidy" and r.id == "2":
            r.output = EVIL
    return records


def _human(records: list[Record]) -> Judgments:
    """Two annotators' fluency scores: 1-5 by output length in words (a stand-in rater with a clear rule)."""
    rows = []
    for r in records:
        words = len(r.output.split())
        for annotator, shift in (("a1", 0), ("a2", 1)):
            rows.append({"system": r.system, "segment": r.id, "annotator": annotator, "aspect": "fluency",
                         "score": float(min(5, 1 + (words + shift) // 3))})
    return Judgments.from_records(rows)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict[str, Any]:
    records = _records()
    human = _human(records)
    ev = evaluate(records, fast=True, bootstrap=50)
    page = render_html(ev, human=human)
    path = tmp_path_factory.mktemp("explorer") / "report.html"
    path.write_text(page, encoding="utf-8")
    payload = json.loads(re.search(r'<script type="application/json" id="sv-data">(.*?)</script>', page,
                                   re.S).group(1))
    means = human.frame.groupby(["system", "segment"])["score"].mean()
    scores = {r.metric: {r.system: {}} for r in ev.result}
    for r in ev.result:
        scores[r.metric][r.system] = dict(zip(r.ids, map(float, r.segment_scores)))
    scores["human fluency"] = {s: {g: float(v) for (s2, g), v in means.items() if s2 == s} for s in ev.systems}
    return {"ev": ev, "records": records, "path": path, "url": path.as_uri(), "payload": payload,
            "scores": scores, "ids": list(dict.fromkeys(r.id for r in records)), "systems": ev.systems}


def _options(extra: tuple[str, ...] = (), width: int = 1300, logs: bool = False):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--window-size={width},1000", *extra):
        opts.add_argument(flag)
    if logs:
        opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return opts


@pytest.fixture()
def browser(report) -> Iterator:
    profile = tempfile.mkdtemp(prefix="styleval-chromium-")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER),
                              options=_options((f"--user-data-dir={profile}",), logs=True))
    driver.set_page_load_timeout(30)
    try:
        driver.get(report["url"])
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("return document.documentElement.getAttribute('data-explorer')") == "ready")
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _select(driver, element_id: str, text: str) -> None:
    Select(driver.find_element(By.ID, element_id)).select_by_visible_text(text)


def _shown(driver) -> list[str]:
    """The ids of the inputs on the current page, in order."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#sv-table tr.input td > b')).map(b => b.textContent)")


def _matching(driver) -> int:
    return int(re.match(r"(\d+) of \d+ inputs match", driver.find_element(By.ID, "sv-count").text).group(1))


def _dec(report, metric: str) -> int:
    return next(m["dec"] for m in report["payload"]["metrics"] if m["key"] == metric)


def _shot(driver, name: str) -> None:
    folder = os.environ.get("STYLEVAL_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / name))


def test_sort_by_a_metric_of_one_system(report, browser):
    values = report["scores"]["chrf/src"]["rewrite"]
    dec = _dec(report, "chrf/src")
    _select(browser, "sv-sort", "chrf/src (content)")
    _select(browser, "sv-sortsys", "rewrite")
    shown = [round(values[i], dec) for i in _shown(browser)]
    assert len(shown) == 20 and shown == sorted(shown) and shown[0] == round(min(values.values()), dec)
    _select(browser, "sv-order", "best first")
    shown = [round(values[i], dec) for i in _shown(browser)]
    assert shown == sorted(shown, reverse=True) and shown[0] == round(max(values.values()), dec)
    _shot(browser, "explorer-sorted.png")


def test_filters_text_decision_and_range(report, browser):
    records = report["records"]
    by_id: dict[str, list[str]] = {}
    for r in records:
        by_id.setdefault(r.id, [r.id, r.source, *r.references]).append(r.output)
    browser.find_element(By.ID, "sv-text").send_keys("lol")
    assert _matching(browser) == sum(any("lol" in t.lower() for t in texts) for texts in by_id.values()) > 0
    browser.find_element(By.ID, "sv-text").clear()
    browser.execute_script("document.getElementById('sv-text').dispatchEvent(new Event('input'))")
    assert _matching(browser) == len(by_id)
    # style fail of one system: its classifier decision is 0
    _select(browser, "sv-system", "rewrite")
    _select(browser, "sv-decision", "style fail")
    acc = report["scores"]["style_accuracy"]["rewrite"]
    assert _matching(browser) == sum(v == 0 for v in acc.values()) > 0
    rows = browser.find_elements(By.CSS_SELECTOR, "#sv-table tr.sys th")
    assert {r.text for r in rows} == {"rewrite"}
    # J = 0
    _select(browser, "sv-decision", "J = 0")
    j = report["ev"].overall_segments["j"]["rewrite"]
    assert _matching(browser) == sum(v == 0 for v in j.values())
    _select(browser, "sv-decision", "any decision")
    # a range of the sort metric (bleu/ref of rewrite)
    _select(browser, "sv-sort", "bleu/ref (content)")
    _select(browser, "sv-sortsys", "rewrite")
    browser.find_element(By.ID, "sv-min").send_keys("50")
    browser.find_element(By.ID, "sv-max").send_keys("90")
    dec = _dec(report, "bleu/ref")
    bleu = report["scores"]["bleu/ref"]["rewrite"]
    assert _matching(browser) == sum(50 <= round(v, dec) <= 90 for v in bleu.values()) > 0


def test_two_systems_where_they_differ_most(report, browser):
    _select(browser, "sv-view", "two systems: where they differ most")
    _select(browser, "sv-a", "copy")
    _select(browser, "sv-b", "rewrite")
    _select(browser, "sv-dm", "bleu/ref (content)")
    dec = _dec(report, "bleu/ref")
    a, b = report["scores"]["bleu/ref"]["copy"], report["scores"]["bleu/ref"]["rewrite"]
    gaps = {i: abs(round(a[i], dec) - round(b[i], dec)) for i in report["ids"]}
    differing = [i for i in report["ids"] if gaps[i] != 0]
    assert _matching(browser) == len(differing)
    shown = _shown(browser)
    assert [gaps[i] for i in shown] == sorted((gaps[i] for i in differing), reverse=True)[:len(shown)]
    assert {r.text for r in browser.find_elements(By.CSS_SELECTOR, "#sv-table tr.sys th")} == {"copy", "rewrite"}
    note = browser.find_element(By.CSS_SELECTOR, "#sv-table tr.input .note").text
    assert f"by {gaps[shown[0]]:.{dec}f}" in note


def _discordance(report, m1: str, m2: str) -> dict[str, float]:
    """Per input: the share of system pairs that ``m1`` and ``m2`` order oppositely (both higher is better here)."""
    systems = report["systems"]
    d1, d2 = _dec(report, m1), _dec(report, m2)
    out = {}
    for i in report["ids"]:
        c = n = 0
        for k, s in enumerate(systems):
            for t in systems[k + 1:]:
                if any(i not in report["scores"][m][u] for m in (m1, m2) for u in (s, t)):
                    continue  # nobody judged the anchor row: a pair without scores is not counted, as on the page
                x = round(report["scores"][m1][s][i], d1) - round(report["scores"][m1][t][i], d1)
                y = round(report["scores"][m2][s][i], d2) - round(report["scores"][m2][t][i], d2)
                n += 1
                c += x * y < 0
        if c:
            out[i] = c / n
    return out


@pytest.mark.parametrize("m1,m2", [("bleu/ref", "chrf/src"), ("meteor/ref", "human fluency")])
def test_metrics_disagree(report, browser, m1, m2):
    _select(browser, "sv-view", "metrics disagree")
    _select(browser, "sv-m1", f"{m1} ({'human' if m1.startswith('human') else 'content'})")
    _select(browser, "sv-m2", f"{m2} ({'human' if m2.startswith('human') else 'content'})")
    expected = _discordance(report, m1, m2)
    assert _matching(browser) == len(expected) > 0
    shown = _shown(browser)
    assert [expected[i] for i in shown] == sorted(expected.values(), reverse=True)[:len(shown)]
    _shot(browser, f"explorer-disagree-{m2.replace(' ', '-').replace('/', '-')}.png")


def _click_point(driver, img_id: str, point: dict[str, Any]) -> None:
    img = driver.find_element(By.ID, img_id)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
    size = driver.execute_script("return [arguments[0].naturalWidth, arguments[0].clientWidth, "
                                 "arguments[0].clientHeight]", img)
    scale = size[1] / size[0]
    ActionChains(driver).move_to_element_with_offset(
        img, int(point["x"] * scale - size[1] / 2), int(point["y"] * scale - size[2] / 2)).click().perform()


def test_clicking_plot_points_opens_their_segments(report, browser):
    figures = {f["img"]: f["points"] for f in report["payload"]["figures"]}
    rewrite = report["systems"].index("rewrite")
    point = next(p for p in figures["fig-tradeoff"] if p["system"] == rewrite)
    _click_point(browser, "fig-tradeoff", point)
    assert "from the plot: rewrite" in browser.find_element(By.ID, "sv-count").text
    assert _matching(browser) == len(report["ids"])
    assert browser.find_element(By.CSS_SELECTOR, "#sv-table tr.hit th").text == "rewrite"
    browser.find_element(By.ID, "sv-clear").click()
    # a box plot outlier: exactly the segments with that value
    outlier = max((p for p in figures["fig-distribution"] if "ids" in p), key=lambda p: len(p["ids"]))
    metric = report["payload"]["metrics"][outlier["metric"]]["key"]
    system = report["systems"][outlier["system"]]
    _click_point(browser, "fig-distribution", outlier)
    assert _matching(browser) == len(outlier["ids"])
    assert set(_shown(browser)) == set(outlier["ids"])
    value = float(re.search(r"= ([-0-9.e+]+) \(", outlier["label"]).group(1))
    assert all(abs(report["scores"][metric][system][i] - value) <= 5e-4 * max(1, abs(value))
               for i in outlier["ids"])


def _click_at(driver, img_id: str, x: float, y: float) -> None:
    """A click at pixel (x, y) of the image's PNG (as the payload's points and boxes give them)."""
    _click_point(driver, img_id, {"x": x, "y": y})


@pytest.mark.parametrize("value", [1, 0])
def test_clicking_a_bar_of_a_binary_metric_opens_that_decision(report, browser, value):
    """A bar of style accuracy (0/1 per segment): the bar itself opens the system's segments the classifier passed,
    the space above it those it failed; a click anywhere in the region counts, not only at its centre."""
    figures = {f["img"]: f["points"] for f in report["payload"]["figures"]}
    rewrite = report["systems"].index("rewrite")
    metric = next(k for k, m in enumerate(report["payload"]["metrics"]) if m["key"] == "style_accuracy")
    bar = next(p for p in figures["fig-distribution"]
               if p.get("equals") == value and p["system"] == rewrite and p["metric"] == metric)
    acc = report["scores"]["style_accuracy"]["rewrite"]
    expected = {i for i, v in acc.items() if v == value}
    assert 0 < len(expected) < len(acc) and bar["label"] == (
        f"style_accuracy = {value} (rewrite, {len(expected)} segment{'s' if len(expected) != 1 else ''})")
    left, top, right, bottom = bar["box"]
    assert right - left > 30  # the bar's width, far more than the 12 px a point is clickable within
    x, y = left + 0.2 * (right - left), top + 0.8 * (bottom - top)  # off-centre, inside the region
    _click_at(browser, "fig-distribution", x, y)
    assert f"from the plot: {bar['label']}" in browser.find_element(By.ID, "sv-count").text
    assert _matching(browser) == len(expected)
    assert set(_shown(browser)) == expected if len(expected) <= 20 else set(_shown(browser)) < expected
    hit = browser.find_elements(By.CSS_SELECTOR, "#sv-table tr.hit th")
    assert hit and {h.text for h in hit} == {"rewrite"}
    assert Select(browser.find_element(By.ID, "sv-sortsys")).first_selected_option.text == "rewrite"
    _shot(browser, f"explorer-bar-{value}.png")
    # the same region from the list of points under the figure
    browser.find_element(By.ID, "sv-clear").click()
    assert _matching(browser) == len(report["ids"])
    browser.execute_script("document.querySelector('#fig-distribution-points').closest('details').open = true")
    button = next(b for b in browser.find_elements(By.CSS_SELECTOR, "#fig-distribution-points button")
                  if b.text == bar["label"])
    button.click()
    assert _matching(browser) == len(expected)


def test_anchor_row_is_labelled_and_left_out_of_the_mean(report, browser):
    """The human references' anchor row (the example has two references per input) is named as the anchor, and
    sorting by "mean of the systems" averages the real systems only."""
    payload = report["payload"]
    anchor = payload["anchor"]
    assert payload["systems"][anchor] == "human-reference"
    names = {r.text for r in browser.find_elements(By.CSS_SELECTOR, "#sv-table tr.sys th")}
    assert "human-reference (anchor)" in names and "human-reference" not in names
    _select(browser, "sv-sort", "bleu/ref (content)")
    assert Select(browser.find_element(By.ID, "sv-sortsys")).first_selected_option.text == (
        "mean of the systems (not the anchor)")
    dec = _dec(report, "bleu/ref")
    real = [s for s in report["systems"] if s != "human-reference"]
    mean = {i: np.mean([round(report["scores"]["bleu/ref"][s][i], dec) for s in real]) for i in report["ids"]}
    shown = _shown(browser)
    assert [mean[i] for i in shown] == sorted(mean.values())[:len(shown)]
    with_anchor = {i: np.mean([round(report["scores"]["bleu/ref"][s][i], dec) for s in report["systems"]])
                   for i in report["ids"]}
    assert [with_anchor[i] for i in shown] != sorted(with_anchor.values())[:len(shown)]  # the anchor would move it


def test_keyboard(report, browser):
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("/")
    active = browser.switch_to.active_element
    assert active.get_attribute("id") == "sv-text"
    active.send_keys("formal")
    browser.find_element(By.ID, "sv-text").clear()
    browser.execute_script("document.getElementById('sv-text').dispatchEvent(new Event('input'))")
    browser.find_element(By.TAG_NAME, "h1").click()
    first = _shown(browser)
    body.send_keys("]")
    assert _shown(browser) != first and "page 2 of 2" in browser.find_element(By.ID, "sv-count").text
    body.send_keys("[")
    assert _shown(browser) == first


def test_markup_in_an_output_is_text(report, browser):
    browser.find_element(By.ID, "sv-text").send_keys("alert(1)")
    assert _matching(browser) == 1
    cells = browser.find_elements(By.CSS_SELECTOR, "#sv-table td.o")
    assert any("<script>alert(1)</script>" in c.text for c in cells)
    assert not browser.find_elements(By.CSS_SELECTOR, "#sv-table script, #sv-table img")
    assert browser.execute_script("return window.__pwned === undefined")
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    _shot(browser, "explorer-markup.png")


def test_opens_offline_with_no_request(report):
    """Every request must go nowhere: a proxy on a closed port and every host resolving to nothing. The page must
    still render its explorer, and the performance log must show no request but the file itself and its data:
    images; no console message may report a blocked resource (the CSP lets the page's own code run)."""
    profile = tempfile.mkdtemp(prefix="styleval-chromium-")
    options = _options((f"--user-data-dir={profile}", "--proxy-server=http://127.0.0.1:9",
                        "--host-resolver-rules=MAP * ~NOTFOUND"), logs=True)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(report["url"])
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("return document.documentElement.getAttribute('data-explorer')") == "ready")
        requests = []  # (the document asking, the URL asked for)
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                requests.append((message["params"].get("documentURL"), message["params"]["request"]["url"]))
        ours = [u for doc, u in requests if doc == report["url"]]
        assert report["url"] in ours and all(u == report["url"] or u.startswith("data:") for u in ours), ours
        # nothing at all went to a network (the browser's own chrome:// pages are not network requests)
        assert not [u for _, u in requests if not u.startswith(("file:", "data:", "chrome:"))], requests
        console = [e["message"] for e in driver.get_log("browser")]
        assert not [m for m in console if "Content Security Policy" in m or "ERR_" in m], console
        assert len(_shown(driver)) == 20
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.parametrize("width", [1300, 420])
def test_readable_at_1300_px_and_narrow(report, width):
    profile = tempfile.mkdtemp(prefix="styleval-chromium-")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER),
                              options=_options((f"--user-data-dir={profile}",), width=width))
    try:
        driver.get(report["url"])
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("return document.documentElement.getAttribute('data-explorer')") == "ready")
        # the page never scrolls sideways: the wide segment table scrolls inside its own box
        inner = driver.execute_script("return window.innerWidth")
        assert inner <= max(width, 500)  # headless Chromium's narrowest window is about 500 px
        assert driver.execute_script("return document.documentElement.scrollWidth") <= inner
        wrap = driver.find_element(By.CSS_SELECTOR, ".tablewrap")
        assert wrap.size["width"] <= inner
        driver.execute_script("document.getElementById('explorer').scrollIntoView()")
        _shot(driver, f"explorer-{width}px.png")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# ------------------------------------------------------------------------- a `styleval score` run (issue 52)
#: the default metrics of `score` with a style metric and J: more score columns than a 1300 px window shows
SCORE_METRICS = "bleu,chrf,chrf++,ter,rouge1,rouge2,rougeL,meteor,pinc,levenshtein,style_accuracy,j"


@pytest.fixture(scope="module")
def score_report(tmp_path_factory) -> dict[str, Any]:
    """`styleval score --json` on the bundled example, then `styleval report s.json --html r.html`."""
    from styleval.cli.main import main

    folder = tmp_path_factory.mktemp("score-report")
    assert main(["score", "--example", "formality", "-m", SCORE_METRICS, "--bootstrap", "100",
                 "--json", str(folder / "s.json"), "-q", "--no-progress"]) == 0
    assert main(["report", str(folder / "s.json"), "--html", str(folder / "r.html")]) == 0
    data = json.loads((folder / "s.json").read_text(encoding="utf-8"))
    page = (folder / "r.html").read_text(encoding="utf-8")
    payload = json.loads(re.search(r'<script type="application/json" id="sv-data">(.*?)</script>', page,
                                   re.S).group(1))
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for seg in data["segments"]:
        scores.setdefault(seg["metric"], {})[seg["system"]] = seg["scores"]
    return {"url": (folder / "r.html").as_uri(), "payload": payload, "scores": scores, "data": data,
            "records": _records_plain()}


def _records_plain() -> list[Record]:
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return load_records(ns)


class _Page:
    """A headless Chromium on ``url`` at ``width`` px, the explorer ready."""

    def __init__(self, url: str, width: int = 1300):
        self.profile = tempfile.mkdtemp(prefix="styleval-chromium-")
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER),
                                       options=_options((f"--user-data-dir={self.profile}",), width=width))
        self.driver.set_page_load_timeout(30)
        self.url = url

    def __enter__(self):
        self.driver.get(self.url)
        WebDriverWait(self.driver, 20).until(
            lambda d: d.execute_script("return document.documentElement.getAttribute('data-explorer')") == "ready")
        return self.driver

    def __exit__(self, *exc):
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)


def test_a_score_run_opens_in_the_explorer(score_report):
    """`report` on `score --json`: the tables, the plots and the explorer with every text, sorted and opened from
    the trade-off plot as for an evaluation."""
    records = score_report["records"]
    by_key = {(r.system, r.id): r for r in records}
    with _Page(score_report["url"]) as driver:
        assert driver.find_element(By.TAG_NAME, "h1").text == "styleval scores"
        assert driver.find_element(By.CSS_SELECTOR, "p.run").text.startswith("Scored on")
        assert driver.find_elements(By.ID, "fig-tradeoff") and driver.find_elements(By.ID, "fig-distribution")
        assert _matching(driver) == len({r.id for r in records})
        # every text on the first page is the example's own
        for block in driver.find_elements(By.CSS_SELECTOR, "#sv-table tbody"):
            ident = block.find_element(By.CSS_SELECTOR, "tr.input td > b").text
            source = block.find_element(By.CSS_SELECTOR, "tr.input .src span:not(.lab)").text
            assert source == by_key[("copy", ident)].source
            for row in block.find_elements(By.CSS_SELECTOR, "tr.sys"):
                system = row.find_element(By.TAG_NAME, "th").text
                if system == "copy":  # no edits: the output as it is
                    assert row.find_element(By.CSS_SELECTOR, "td.o").text == by_key[(system, ident)].output
        # sort by a metric of one system, best first
        values = score_report["scores"]["bleu/ref"]["rewrite"]
        dec = next(m["dec"] for m in score_report["payload"]["metrics"] if m["key"] == "bleu/ref")
        _select(driver, "sv-sort", "bleu/ref (content)")
        _select(driver, "sv-sortsys", "rewrite")
        _select(driver, "sv-order", "best first")
        shown = [round(values[i], dec) for i in _shown(driver)]
        assert shown == sorted(shown, reverse=True) and shown[0] == round(max(values.values()), dec)
        # the trade-off plot (style_accuracy against the first content metric) opens a system's segments
        driver.execute_script("document.querySelector('#fig-tradeoff-points').closest('details').open = true")
        next(b for b in driver.find_elements(By.CSS_SELECTOR, "#fig-tradeoff-points button")
             if b.text.startswith("rewrite")).click()
        assert "from the plot: rewrite" in driver.find_element(By.ID, "sv-count").text
        assert driver.find_element(By.CSS_SELECTOR, "#sv-table tr.hit th").text == "rewrite"
        _shot(driver, "explorer-score-run.png")


def test_the_j_column_is_in_view_at_1300_px(score_report):
    """The overall score comes first among the score columns: at 1300 px it is in view although the table is
    wider than its box (the other metrics scroll inside it)."""
    with _Page(score_report["url"], width=1300) as driver:
        driver.execute_script("document.getElementById('explorer').scrollIntoView()")
        box = driver.execute_script("var w = document.querySelector('.tablewrap'); "
                                    "var r = w.getBoundingClientRect(); return [r.left, r.right, w.scrollWidth, "
                                    "w.clientWidth, window.innerWidth]")
        assert box[2] > box[3]  # the table is wider than its box: some columns are out of view
        heads = driver.execute_script(
            "return Array.from(document.querySelectorAll('#sv-head th')).map(function (t) {"
            "var r = t.getBoundingClientRect(); return [t.textContent, r.left, r.right]; })")
        j = next(h for h in heads if h[0] == "j\u00a0↑")
        assert box[0] <= j[1] and j[2] <= min(box[1], box[4]), (j, box)
        assert heads[-1][2] > box[1]  # the last metric is not: the test would fail with J last
        _shot(driver, "explorer-j-1300px.png")


_BREAKS = """
var out = [];
document.querySelectorAll('#sv-head th').forEach(function (th) {
  var chars = [];
  var walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    var node = walker.currentNode;
    for (var i = 0; i < node.length; i++) chars.push([node, i]);
  }
  var text = chars.map(function (c) { return c[0].data[c[1]]; }).join(''), prev = null;
  chars.forEach(function (c, k) {
    var range = document.createRange(); range.setStart(c[0], c[1]); range.setEnd(c[0], c[1] + 1);
    var rects = range.getClientRects();
    if (!rects.length || text[k] === ' ') return;
    var top = rects[0].top;
    if (prev !== null && top > prev.top + 2) out.push([text, text.slice(0, k)]);
    prev = {top: top};
  });
});
return out;
"""


@pytest.mark.parametrize("width", [1300, 900])
def test_column_headers_break_only_between_words(score_report, width):
    """A heading wraps at a space, after '/' or after '_' (sentence_/cosine/src), never inside a word."""
    with _Page(score_report["url"], width=width) as driver:
        breaks = driver.execute_script(_BREAKS)
        assert breaks, "no heading wraps: nothing was tested"
        for heading, before in breaks:
            assert before.rstrip()[-1:] in ("/", "_") or before.endswith(" "), (heading, before)


def test_filters_of_one_view_are_named_in_another_and_reset(report, browser):
    """A system and a range set in "all inputs" do not act in "two systems" (which has its own systems and order):
    the page says they are set but not applied there, and "reset all filters" clears every filter."""
    ids = report["ids"]
    _select(browser, "sv-system", "tidy")
    _select(browser, "sv-sort", "bleu/ref (content)")
    browser.find_element(By.ID, "sv-min").send_keys("40")
    assert _matching(browser) < len(ids)
    assert "filters in effect: system tidy; bleu/ref in [40, ∞]" in browser.find_element(By.ID, "sv-active").text
    _select(browser, "sv-view", "two systems: where they differ most")
    _select(browser, "sv-a", "copy")
    _select(browser, "sv-b", "rewrite")
    _select(browser, "sv-dm", "bleu/ref (content)")
    dec = _dec(report, "bleu/ref")
    a, b = report["scores"]["bleu/ref"]["copy"], report["scores"]["bleu/ref"]["rewrite"]
    assert _matching(browser) == sum(round(a[i], dec) != round(b[i], dec) for i in ids)  # neither filter acts
    line = browser.find_element(By.ID, "sv-active").text
    assert "no filter in effect" in line and "not applied here: system tidy; bleu/ref in [40, ∞]" in line
    browser.find_element(By.ID, "sv-text").send_keys("lol")  # a filter of every view
    assert "filters in effect: text “lol”" in browser.find_element(By.ID, "sv-active").text
    browser.find_element(By.ID, "sv-reset").click()
    assert browser.find_element(By.ID, "sv-active").text == "no filter in effect"
    assert not browser.find_element(By.ID, "sv-reset").is_displayed()
    assert browser.find_element(By.ID, "sv-text").get_attribute("value") == ""
    _select(browser, "sv-view", "all inputs")
    assert _matching(browser) == len(ids)
    assert Select(browser.find_element(By.ID, "sv-system")).first_selected_option.text == "all systems"
    assert browser.find_element(By.ID, "sv-min").get_attribute("value") == ""


@pytest.mark.parametrize("view", ["two systems: where they differ most", "metrics disagree"])
def test_sort_controls_are_hidden_where_they_do_nothing(report, browser, view):
    controls = ("sv-sort", "sv-sortsys", "sv-order", "sv-min", "sv-max", "sv-system")
    assert all(browser.find_element(By.ID, c).is_displayed() for c in controls)
    _select(browser, "sv-view", view)
    assert not any(browser.find_element(By.ID, c).is_displayed() for c in controls)
    assert all(browser.find_element(By.ID, c).is_displayed() for c in ("sv-dir", "sv-decision", "sv-text"))
    _select(browser, "sv-view", "all inputs")
    assert all(browser.find_element(By.ID, c).is_displayed() for c in controls)


def test_copying_an_output_gives_the_output_not_the_deletions(report, browser):
    """Select a rewritten output (shown with its struck deletions) and press Ctrl+C: the copied text is the
    output itself."""
    record = next(r for r in report["records"] if r.system == "rewrite" and r.id == "1")
    browser.find_element(By.ID, "sv-text").send_keys(record.source[:12])
    block = next(b for b in browser.find_elements(By.CSS_SELECTOR, "#sv-table tbody")
                 if b.find_element(By.CSS_SELECTOR, "tr.input td > b").text == record.id)
    row = next(r for r in block.find_elements(By.CSS_SELECTOR, "tr.sys")
               if r.find_element(By.TAG_NAME, "th").text == "rewrite")
    span = row.find_element(By.CSS_SELECTOR, "td.o span.out")
    assert span.find_elements(By.TAG_NAME, "del")  # the view shows deletions inside the output
    browser.execute_script(
        "window.__copied = null; window.addEventListener('copy', function (e) {"
        "  window.__copied = e.clipboardData.getData('text/plain'); });"
        "var r = document.createRange(); r.selectNodeContents(arguments[0]);"
        "var s = window.getSelection(); s.removeAllRanges(); s.addRange(r);", span)
    ActionChains(browser).key_down(Keys.CONTROL).send_keys("c").key_up(Keys.CONTROL).perform()
    copied = WebDriverWait(browser, 5).until(lambda d: d.execute_script("return window.__copied"))
    assert copied == record.output
