"""styleval report: HTML/Markdown tables with the evaluation's numbers and embedded figures."""
from __future__ import annotations

import argparse
import re

import pytest

from styleval.cli.score_cmd import load_records
from styleval.evaluation import evaluate, load_evaluation
from styleval.evaluation.summary import estimate, estimate_parts, fmt
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
        value, half = estimate_parts(r.corpus_score, r.ci)
        assert f'{value} <span class="ci" title="95% CI [' in page and f"]\">{half}</span>" in page
    for row in ev.overall.itertuples(index=False):
        assert estimate_parts(row.value, ev.overall_ci(row.system, row.score))[0] in page
    # the style row of rewrite: score, interval, significantly better than copy (a) and tidy (c)
    acc = ev.result.get("style_accuracy", "rewrite")
    value, half = estimate_parts(acc.corpus_score, acc.ci)
    assert re.search(re.escape(f'{value} <span class="ci" title="95% CI [') + r"[0-9.]+, [0-9.]+"
                     + re.escape(f']">{half}</span><sup>ac</sup>'), page)


def test_html_figures_embedded(page):
    imgs = re.findall(r'<img [^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(imgs) == 2
    import base64

    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in imgs)
    assert "http://" not in page and "https://" not in page  # self-contained


def test_markdown_and_from_json(ev, tmp_path, page):
    md = render_markdown(ev)
    copy = ev.result.get("bleu/src", "copy")
    assert "| bleu/src ↑ |" in md and f"| {estimate(copy.corpus_score, copy.ci)} " in md
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


# ------------------------------------------------------------------------------- human judgments in the report
def _write_human(ev, path, *, system_rename=None, segment_fmt="{}"):
    """Two annotators, aspects content (a monotone function of bleu/src) and style (of style_accuracy)."""
    import csv

    rows = []
    for system in ev.systems:
        if system == ev.settings.get("anchor"):
            continue  # the anchor row of the human references (the example has two per input): nobody judges it
        bleu = ev.result.get("bleu/src", system)
        acc = ev.result.get("style_accuracy", system)
        for seg, b, a in zip(bleu.ids, bleu.segment_scores, acc.segment_scores):
            name = (system_rename or {}).get(system, system)
            seg = segment_fmt.format(seg)
            for annotator, shift in (("a1", 0.0), ("a2", 0.5)):
                rows.append([name, seg, annotator, "content", 1 + 4 * float(b) / 100 + shift])
                rows.append([name, seg, annotator, "style", 1 + 3 * float(a) + shift])
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["system", "segment", "annotator", "aspect", "score"])
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def human_csv(ev, tmp_path_factory):
    return _write_human(ev, tmp_path_factory.mktemp("human") / "judgments.csv")


@pytest.fixture(scope="module")
def human_page(ev, human_csv):
    return render_html(ev, human=human_csv)


def test_human_correlations_match_meta_run(ev, human_csv):
    from styleval.meta import Judgments, MetaRunOptions, MetaTask, metric_table_from_result, run
    from styleval.report.html import SEGMENT_TASK, SYSTEM_TASK, human_correlations

    corr = human_correlations(ev, human_csv)
    assert corr["aspects"] == ["content", "style"] and set(corr["metrics"]) == {r.metric for r in ev.result}
    judgments = Judgments.read(human_csv)
    table = metric_table_from_result(ev.result)
    assert corr["anchor"] == "human-reference" and corr["systems"] == ["copy", "rewrite", "tidy"]
    table = table[table["system"] != "human-reference"]  # the report leaves the anchor out of the correlations
    for aspect in ("content", "style"):
        sys_res = run(MetaTask(aspect=aspect, **SYSTEM_TASK), judgments, table,
                      options=MetaRunOptions(curves=True, curves_min_n=2))
        seg_res = run(MetaTask(aspect=aspect, **SEGMENT_TASK), judgments, table)
        for metric in corr["metrics"]:
            assert corr["system"][metric][aspect] == pytest.approx(sys_res.statistic(metric), nan_ok=True)
            assert corr["segment"][metric][aspect] == pytest.approx(seg_res.statistic(metric), nan_ok=True)
        assert corr["curves"][aspect]["bleu/src"] == sys_res.curves["bleu/src"]
    # constructed so: human content is increasing in bleu/src, human style in style_accuracy
    assert corr["system"]["bleu/src"]["content"] == pytest.approx(1.0)
    assert corr["segment"]["bleu/src"]["content"] == pytest.approx(1.0)
    assert corr["system"]["style_accuracy"]["style"] == pytest.approx(1.0)
    assert corr["segment"]["style_accuracy"]["style"] == pytest.approx(1.0)
    assert corr["curves"]["content"]["bleu/src"]["top"][-1] == (3, pytest.approx(1.0))
    assert "level=segment;method=kendall_tau_like;average_by=item" in corr["tasks"]["segment"]["content"]


def test_human_section_in_html(ev, human_csv, human_page):
    import base64

    from styleval.report.html import LEVEL_LABELS, human_correlations

    imgs = re.findall(r'<img [^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', human_page)
    assert len(imgs) == 5  # trade-off, distributions, two heatmaps, top-N curves
    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in imgs)
    assert "Agreement with human judgments" in human_page
    assert "Correlation with human judgments (system Pearson r)" in human_page
    assert "Correlation with human judgments (segment Kendall tau-like)" in human_page
    assert "Top-N / last-N system-level correlation" in human_page
    corr = human_correlations(ev, human_csv)
    table = re.search(r'<table class="human">(.*?)</table>', human_page).group(1)
    rows = {re.match(r"<td>([^<]*)</td>", r).group(1): re.findall(r"<td>([^<]*)</td>", r)[1:]
            for r in re.findall(r"<tr>(<td>.*?)</tr>", table)}
    for metric in corr["metrics"]:
        expected = [fmt(corr[lv][metric][a]) for a in ("content", "style") for lv in ("system", "segment")]
        assert rows[metric] == expected
    assert rows["bleu/src"][0] == fmt(1.0) and rows["bleu/src"][1] == fmt(1.0)
    assert f"content: {LEVEL_LABELS['system']}" in table
    md = render_markdown(ev, human=corr)
    assert "## Agreement with human judgments" in md and f"| bleu/src | {fmt(1.0)} | {fmt(1.0)} |" in md


def test_human_mismatch_errors(ev, tmp_path):
    from styleval.errors import InputError
    from styleval.report.html import human_correlations

    bad = _write_human(ev, tmp_path / "bad_system.csv", system_rename={"copy": "kopie"})
    with pytest.raises(InputError, match=r"system\(s\) not in the evaluation: 'kopie'"):
        human_correlations(ev, bad)
    bad = _write_human(ev, tmp_path / "bad_ids.csv", segment_fmt="{:0>3}")
    with pytest.raises(InputError, match="not in the evaluation.*leading zeros"):
        render_html(ev, human=bad)
    from styleval.meta import Judgments

    partial = Judgments.read(_write_human(ev, tmp_path / "ok.csv"))
    frame = partial.frame
    frame = frame[~((frame["system"] == "tidy") & (frame["aspect"] == "style"))]
    with pytest.raises(InputError, match="aspect 'style' has no judgment of system.*'tidy'"):
        human_correlations(ev, Judgments.from_frame(frame))


def test_cli_report_with_human(ev, tmp_path, human_csv):
    from styleval.cli import report_cmd
    from styleval.report.html import human_correlations

    ev.write_json(tmp_path / "ev.json")
    parser = argparse.ArgumentParser()
    report_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["report", str(tmp_path / "ev.json"), "--html", str(tmp_path / "r.html"),
                              "--markdown", str(tmp_path / "r.md"), "--human", str(human_csv)])
    assert args.run(args) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 5 and "Agreement with human judgments" in page
    # from the JSON form: the same numbers as from the Evaluation object
    corr_json = human_correlations(load_evaluation(tmp_path / "ev.json"), human_csv)
    corr_obj = human_correlations(ev, human_csv)
    for level in ("system", "segment"):
        for m in corr_obj["metrics"]:
            assert corr_json[level][m] == pytest.approx(corr_obj[level][m], nan_ok=True)
    assert "## Agreement with human judgments" in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_cli_evaluate_human_option(tmp_path, human_csv):
    from styleval.cli import evaluate_cmd
    from styleval.errors import InputError

    parser = argparse.ArgumentParser()
    evaluate_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["evaluate", "--example", "formality", "--fast", "--human", str(human_csv)])
    assert args.human == str(human_csv)
    with pytest.raises(InputError, match="--human adds correlations to the report"):
        args.run(args)  # fails before any scoring
