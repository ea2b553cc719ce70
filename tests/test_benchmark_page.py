"""The benchmark's HTML page keeps every note the terminal prints under a task (metric ties, partial figures,
failed metrics), beside the figure and in its tooltip; its summary is a table; its signatures wrap.

The run: Lai et al. 2022's style and content tasks with the stored scores, BLEU scored, and three user score files
made from the stored pt16 style classifier's: its probability cut at 0.5 (a 0/1 score: most pairs the humans
order are metric ties), the same probability with 40 segments missing (a partial figure), and a file naming no
judged output (a failure).
What the page must show is read from the terminal text (``format_text``), not from the page's own code.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import tempfile

import pytest

from styleval.benchmark import benchmark
from styleval.benchmark.render import format_summary, format_text, to_html
from styleval.benchmark.sets import lai2022_set

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def run(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench-page")
    bench_set = lai2022_set(shared_data)
    bench_set.tasks = [t for t in bench_set.tasks if t.kind in ("style", "content")]
    stored = bench_set.stored[bench_set.stored["metric"] == "style:cls-pt16-target"]
    lines = [f"lai2022,{r.system},{r.segment},{{}}\n" for r in stored.itertuples()]
    head = "set,system,segment,score\n"
    (folder / "binary.csv").write_text(head + "".join(line.format(int(r.score >= 0.5)) for line, r in
                                                      zip(lines, stored.itertuples())), encoding="utf-8")
    (folder / "partial.csv").write_text(head + "".join(line.format(r.score) for line, r in
                                                       list(zip(lines, stored.itertuples()))[40:]), encoding="utf-8")
    (folder / "typo.csv").write_text(head + "lai2022,nobody,0,1.0\n", encoding="utf-8")
    scores = [f"{name}:style={folder / name}.csv" for name in ("binary", "partial", "typo")]
    result = benchmark(["bleu"], [bench_set], scores=scores, ci=50, n_permutations=0)  # bleu: a long signature
    page = to_html(result)
    (folder / "b.html").write_text(page, encoding="utf-8")
    return {"result": result, "text": format_text(result), "page": page, "url": (folder / "b.html").as_uri()}


def _terminal_notes(text: str) -> list[tuple[str, str, str]]:
    """(task label, metric, note) for every note line the terminal prints."""
    out = []
    for block in text.split("\n\n"):
        label = re.match(r"== (.*) ==", block)
        header = re.search(r"^notes(?: \(\* = some scores missing, left out\))?:\n", block, re.M)
        if not label or not header:  # the header explains '*' only where a figure carries one
            continue
        for line in block[header.end():].splitlines():
            if not line.startswith("  "):
                break
            metric, note = line.strip().split(": ", 1)
            out.append((label.group(1), metric, note))
    return out


def test_every_terminal_note_is_beside_its_figure_and_in_its_tooltip(run):
    notes = _terminal_notes(run["text"])
    kinds = {"ties": 0, "partial": 0, "failed": 0}
    for _, metric, note in notes:
        kinds["ties"] += "are metric ties" in note
        kinds["partial"] += metric == "partial" and "without a score of this metric left out" in note
        kinds["failed"] += note.startswith("FAILED on lai2022")
    assert all(kinds.values()), kinds  # the run has each kind of note
    page = run["page"]
    listed = dict(re.findall(r"<li id='note-(\d+)'>(.*?)</li>", page))
    assert len(listed) == len(notes)
    labels = {t.task.label: t.task.name for t in run["result"].tasks}
    columns = re.findall(r"<th class='task' title='([^']*)'>", page)
    rows = {re.search(r"<td>[^<]*</td><td>([^<]*)</td>", r).group(1): re.findall(r"<td(?: [^>]*)?>.*?</td>", r)[2:]
            for r in re.findall(r"<tr><td>.*?</tr>", page.split("</table>")[0])}  # the heat map's rows
    for label, metric, note in notes:
        number = next(n for n, item in listed.items()
                      if item == f"<b>{html.escape(label)}</b> · {html.escape(metric)}: {html.escape(note)}")
        cell = rows[html.escape(metric)][columns.index(html.escape(labels[label]))]
        assert f"<sup class='note'><a href='#note-{number}'>{number}</a></sup>" in cell, cell
        tooltip = html.unescape(re.search(r"title='([^']*)'", cell).group(1))
        assert note in tooltip
        if metric == "partial":
            assert re.search(r">[-0-9.]+\*<sup", cell)  # the partial figure keeps its star


def test_the_summary_is_a_table_with_the_terminals_rows(run):
    page = run["page"]
    assert "<pre>" not in page
    tables = re.findall(r"<table class='summary'><caption>(.*?)</caption>(.*?)</table>", page)
    text = format_summary(run["result"])
    assert [html.unescape(c) for c, _ in tables] == re.findall(r"^(\w+ \(\d+ tasks\)):$", text, re.M)
    for _, body in tables:
        for row in re.findall(r"<tr>(<td.*?)</tr>", body):
            cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            assert re.search(r"^" + r"\s+".join(re.escape(c) for c in cells if c) + r"\s*$", text, re.M), cells


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def test_signatures_wrap_in_a_browser(run):
    webdriver = pytest.importorskip("selenium.webdriver")
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="styleval-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=900,1000",
                 f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        driver.get(run["url"])
        boxes = driver.execute_script(
            "return Array.from(document.querySelectorAll('ul.signatures code')).map(function (c) {"
            "var r = c.getBoundingClientRect(); return [r.right, c.getClientRects().length]; })")
        width = driver.execute_script("return document.documentElement.clientWidth")
        assert boxes and all(right <= width for right, _ in boxes)
        assert any(lines > 1 for _, lines in boxes)  # the long ones wrap onto several lines
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
