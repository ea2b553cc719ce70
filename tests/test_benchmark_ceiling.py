"""``benchmark --ceiling --strata``: every task's human ceiling and one-rater figure, the metrics' shares of it and
the agreement strata in text, JSON, CSV, LaTeX and the HTML heat map (whose new row a real headless Chromium reads);
Mir et al.'s release (means of three raters) says it has one score per item."""
from __future__ import annotations

import io
import json
import math
import os
import shutil
import tempfile

import pandas as pd
import pytest

from styleval.benchmark import benchmark
from styleval.benchmark.render import outputs
from styleval.meta.ceiling import task_ceiling

pytestmark = pytest.mark.shared_data
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def bench(shared_data):
    return benchmark([], ["lai2022", "mir2019"], root=shared_data, ci=30, n_permutations=0, ceiling=True,
                     strata=True)


@pytest.fixture(scope="module")
def rendered(bench):
    return outputs(bench)


def test_every_lai_task_has_the_ceiling_meta_computes(bench, shared_data):
    from styleval.benchmark.sets import lai2022_set

    judgments = lai2022_set(shared_data).judgments
    lai = [t for t in bench.tasks if t.task.set == "lai2022"]
    assert len(lai) == 18
    for t in lai[:4]:
        again = task_ceiling(t.task.task, judgments, ci=30)
        assert t.ceiling.ceiling == pytest.approx(again.ceiling, abs=1e-12)
        assert t.ceiling.one_rater == pytest.approx(again.one_rater, abs=1e-12)
    content = bench.task("lai2022", "content", "segment")
    comet = content.row("src:comet")
    assert content.share_of_ceiling(comet) == pytest.approx(comet.statistic / content.ceiling.ceiling)
    assert 0.6 < content.ceiling.ceiling < 0.8 and 0.35 < content.ceiling.one_rater < 0.6
    # one rater against the rest is below the ceiling on every per-input task the raters agree on at all
    for t in lai:
        if t.task.task.level == "segment" and not math.isnan(t.ceiling.ceiling):
            assert t.ceiling.one_rater < t.ceiling.ceiling


def test_mir2019_says_one_score_per_item(bench):
    mir = [t for t in bench.tasks if t.task.set == "mir2019"]
    assert mir and all(t.ceiling.single for t in mir) and all(t.strata is None for t in mir)


def test_strata_of_the_content_and_style_tasks(bench):
    for kind in ("content", "style"):
        strata = bench.task("lai2022", kind, "segment").strata
        assert strata.unit == "input" and strata.sizes["agree"] + strata.sizes["disagree"] == 80
        assert set(strata.figures) == {r.metric for r in bench.task("lai2022", kind, "segment").rows}
    assert bench.task("lai2022", "content", "system").strata is None


def test_every_output_shows_the_ceiling(bench, rendered):
    assert "human ceiling" in rendered["text"] and "share of the ceiling: src:comet" in rendered["text"]
    assert "agreement strata (inputs" in rendered["text"]
    data = json.loads(rendered["json"])
    task = next(t for t in data["tasks"] if t["label"] == "lai2022 content segment kendall_tau_like")
    assert task["ceiling"]["available"] and task["ceiling"]["assumption"].startswith("the human mean is a true")
    assert task["rows"][0]["share_of_ceiling"] > 0.5 and task["strata"]["rule"]
    frame = pd.read_csv(io.StringIO(rendered["csv"]))
    assert frame["ceiling"].notna().any() and "share_of_ceiling" in frame.columns
    assert "human ceiling &" in rendered["latex"] and "one rater vs rest &" in rendered["latex"]
    assert "<tr class='ceiling'>" in rendered["html"]


@pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
                    reason="Debian's chromium and chromium-driver are not installed")
def test_heat_map_ceiling_row_in_a_browser(bench, rendered, tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    page = tmp_path / "bench.html"
    page.write_text(rendered["html"], encoding="utf-8")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="styleval-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        driver.get(page.as_uri())
        rows = driver.find_elements(By.CSS_SELECTOR, "tr.ceiling")
        assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["style", "content", "fluency"]
        content = rows[1]
        assert content.is_displayed()
        cells = content.find_elements(By.TAG_NAME, "td")
        headers = driver.find_elements(By.CSS_SELECTOR, "th.task")
        assert len(cells) == len(headers) + 2
        column = next(i for i, h in enumerate(headers)
                      if h.text.strip() == "lai2022 content segment kendall_tau_like")
        cell = cells[column + 2]
        task = bench.task("lai2022", "content", "segment")
        assert cell.text == f"{task.ceiling.ceiling:.3f}"
        title = cell.get_attribute("title")
        assert "one rater vs the rest" in title and f"{task.ceiling.one_rater:.3f}" in title
        assert "src:comet at" in title and "of the ceiling" in title
        # the row opens its aspect's block: the first metric row of content follows it
        following = driver.execute_script("return arguments[0].nextElementSibling.cells[0].textContent", content)
        assert following == "content"
        mir = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")[2:] if c.text]
        assert "one score" in mir
        assert driver.find_element(By.CSS_SELECTOR, "p.ceiling-note").is_displayed()
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
