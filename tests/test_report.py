"""styleval report: HTML/Markdown tables with the evaluation's numbers and embedded figures."""
from __future__ import annotations

import argparse
import re

import pytest

from styleval.cli.score_cmd import load_records
from styleval.evaluation import evaluate, load_evaluation
from styleval.evaluation.summary import fmt
from styleval.report.html import render_html, render_markdown, write_report


@pytest.fixture(scope="module")
def ev():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return evaluate(load_records(ns), fast=True, bootstrap=100)


@pytest.fixture(scope="module")
def page(ev):
    return render_html(ev)


def test_html_tables_and_numbers(ev, page):
    for heading in ("<h2>Style</h2>", "<h2>Content</h2>", "<h2>Overall</h2>", "Why these metrics"):
        assert heading in page
    assert page.count("<table>") == 3
    for r in ev.result:
        assert fmt(r.corpus_score) in page
        assert f"[{fmt(r.ci[0])}, {fmt(r.ci[1])}]" in page
    for row in ev.overall.itertuples(index=False):
        assert fmt(row.value) in page
    # the style row of rewrite: score, interval, significantly better than copy (a) and tidy (c)
    acc = ev.result.get("style_accuracy", "rewrite")
    assert f"{fmt(acc.corpus_score)} <span class=\"ci\">[{fmt(acc.ci[0])}, {fmt(acc.ci[1])}]</span><sup>ac</sup>" \
        in page


def test_html_figures_embedded(page):
    imgs = re.findall(r'<img [^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(imgs) == 2
    import base64

    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in imgs)
    assert "http://" not in page and "https://" not in page  # self-contained


def test_markdown_and_from_json(ev, tmp_path, page):
    md = render_markdown(ev)
    assert "| bleu/src ↑ |" in md and f"| {fmt(ev.result.get('bleu/src', 'copy').corpus_score)} [" in md
    ev.write_json(tmp_path / "ev.json")
    data = load_evaluation(tmp_path / "ev.json")
    assert render_html(data) == page and render_markdown(data) == md
    written = write_report(data, html=tmp_path / "r.html", markdown=tmp_path / "r.md")
    assert [p.name for p in written] == ["r.html", "r.md"]


def test_correlation_heatmap(ev):
    page = render_html(ev, correlations={"bleu/ref": {"meaning": 0.6, "fluency": 0.1},
                                         "style_accuracy": {"style": 0.8}})
    assert page.count("data:image/png;base64,") == 3


def test_cli_report(ev, tmp_path):
    from styleval.cli import report_cmd
    from styleval.errors import InputError

    ev.write_json(tmp_path / "ev.json")
    parser = argparse.ArgumentParser()
    report_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["report", str(tmp_path / "ev.json"), "--html", str(tmp_path / "r.html")])
    assert args.run(args) == 0
    assert (tmp_path / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(InputError):
        args = parser.parse_args(["report", str(tmp_path / "ev.json")])
        args.run(args)


def test_report_renders_in_headless_chromium(ev, tmp_path):
    """The HTML report opens in Debian's Chromium; the screenshot is kept in $STYLEVAL_SCREENSHOTS."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (scripts/setup_human_eval_deps.sh installs it)")
    html = tmp_path / "report.html"
    write_report(ev, html=str(html))
    folder = Path(os.environ.get("STYLEVAL_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "evaluation_report.png"
    shot.unlink(missing_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,1600", f"--screenshot={shot}"]
    subprocess.run([chromium, *flags, html.as_uri()], capture_output=True, timeout=120, check=False)
    # a blank or error page is a few kB; the tables and two embedded figures make it far larger
    assert shot.is_file() and shot.stat().st_size > 50_000
