"""Report: Mir et al. 2019 Fig. 2 trade-off plots (one curve per model through its ``model@setting`` systems,
naturalness against style intensity) and correlations with human judgments that leave systems out."""
from __future__ import annotations

import argparse
import base64
import csv
import re
from dataclasses import replace

import numpy as np
import pytest

from styleval.cli.score_cmd import load_records
from styleval.evaluation import evaluate
from styleval.evaluation.summary import fmt
from styleval.report import plots
from styleval.report.html import human_correlations, render_html, render_markdown

#: example system -> name in this evaluation: model "edit" at settings 0, 2 and 10 (10 sorts last), model "rules"
#: at settings 1 and 2, and the single system "ref" (the first reference as output)
RENAME = {"copy": "edit@0", "tidy": "edit@2", "rewrite": "edit@10"}


def _records():
    from styleval.training.transfer.rules import to_formal

    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    base = load_records(ns)
    out = [replace(r, system=RENAME[r.system]) for r in base]
    tidy = [r for r in base if r.system == "tidy"]
    out += [replace(r, system="rules@1", output=to_formal(r.source)) for r in tidy]
    out += [replace(r, system="rules@2", output=to_formal(r.output)) for r in tidy]
    out += [replace(r, system="ref", output=r.references[0]) for r in tidy]
    return out


@pytest.fixture(scope="module")
def ev():
    # its own "ref" system is the first reference as an output: no anchor row beside it
    return evaluate(_records(), fast=True, bootstrap=100, naturalness="unigram", anchor=False)


@pytest.fixture(scope="module")
def data(ev):
    return ev.to_dict()


def _curves(fig) -> dict[str, list]:
    lines = [line for ax in fig.axes for line in ax.get_lines()]
    out: dict[str, list] = {}
    for line in lines:
        gid = line.get_gid() or ""
        if gid.startswith("curve:"):
            out.setdefault(gid[len("curve:"):], []).append(line)
    return out


def test_settings_convention():
    assert plots.split_setting("caae@0.5") == ("caae", "0.5")
    assert plots.split_setting("a@b@c") == ("a@b", "c")
    assert plots.split_setting("plain") == ("plain", None) and plots.split_setting("x@") == ("x@", None)
    curves = plots.model_curves(["m@10", "n@s10", "m@2", "single", "n@s2", "m@0.5"])
    assert curves == {"m": [("0.5", "m@0.5"), ("2", "m@2"), ("10", "m@10")],
                      "n": [("s2", "n@s2"), ("s10", "n@s10")], "single": [(None, "single")]}


def test_style_content_plot_one_curve_per_model(ev, data):
    fig = plots.tradeoff_figure(data)
    curves = _curves(fig)
    assert sorted(curves) == ["edit", "rules"]  # "ref" has one setting: a point, no curve
    assert all(len(lines) == 1 for lines in curves.values())
    (edit,) = curves["edit"]
    order = ["edit@0", "edit@2", "edit@10"]  # numeric setting order
    assert list(edit.get_xdata()) == pytest.approx([ev.result.get("style_accuracy", s).corpus_score for s in order])
    assert list(edit.get_ydata()) == pytest.approx([ev.result.get("bleu/ref", s).corpus_score for s in order])
    (rules,) = curves["rules"]
    assert len(rules.get_xdata()) == 2
    points = {line.get_gid() for ax in fig.axes for line in ax.get_lines()
              if (line.get_gid() or "").startswith("point:")}
    assert points == {f"point:{s}" for s in ev.systems}


def test_naturalness_plot(ev, data):
    from styleval import score

    assert ev.aspects["fluency"] == ["naturalness"] and "naturalness:classifier=unigram,seed=12345" in ev.metric_specs
    # the naturalness metric of styleval.score, fitted with evaluate's seed
    direct = score(_records(), ["naturalness:classifier=unigram,seed=12345"], bootstrap=100)
    for system in ev.systems:
        e, d = ev.result.get("naturalness", system), direct.get("naturalness", system)
        assert e.corpus_score == d.corpus_score and e.ci == d.ci
    assert ev.result.get("naturalness", "edit@0").corpus_score == 0.0  # a copy is never "more natural"
    fig = plots.naturalness_figure(data)
    curves = _curves(fig)
    assert sorted(curves) == ["edit", "rules"] and all(len(v) == 1 for v in curves.values())
    (edit,) = curves["edit"]
    order = ["edit@0", "edit@2", "edit@10"]
    assert list(edit.get_xdata()) == pytest.approx([ev.result.get("style_emd", s).corpus_score for s in order])
    assert list(edit.get_ydata()) == pytest.approx([ev.result.get("naturalness", s).corpus_score for s in order])
    assert "style_emd" in fig.axes[0].get_xlabel() and "naturalness" in fig.axes[0].get_ylabel()


def test_naturalness_found_by_identity_not_by_label(data):
    """The naturalness column is the one whose metric id is the naturalness metric, whatever its label; a label
    that merely contains 'natural' is not taken."""
    corpus = [c for c in data["score"]["corpus"] if c["metric"] != "naturalness"]
    other = dict(data, score=dict(data["score"], corpus=corpus))
    assert plots.naturalness_points(other) is None
    with pytest.raises(Exception, match="no naturalness scores"):
        plots.naturalness_figure(other)
    style_rows = [c for c in corpus if c["metric"] == "style_accuracy"]
    decoy = [dict(c, metric="lm_naturalness", metric_id={"name": "perplexity"}, ci=None) for c in style_rows]
    other = dict(other, score=dict(other["score"], corpus=corpus + decoy))
    assert plots.naturalness_points(other) is None
    extra = [dict(c, metric="naturalness[classifier=embedding]", metric_id={"name": "naturalness"}, score=0.1 * i,
                  ci=None) for i, c in enumerate(style_rows)]
    other = dict(other, score=dict(other["score"], corpus=corpus + decoy + extra))
    label, points = plots.naturalness_points(other)
    assert label == "naturalness[classifier=embedding]" and len(points) == 6
    assert len(_curves(plots.naturalness_figure(other))) == 2


def test_figures_and_naturalness_row_in_html(ev, data):
    page = render_html(data)
    imgs = re.findall(r'<img [^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(imgs) == 3  # style-content, naturalness-style intensity, distributions
    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in imgs)
    assert "Naturalness–style intensity trade-off" in page and "Style–content trade-off" in page
    fluency = page[page.index("<h2>Fluency</h2>"):page.index("<h2>Overall</h2>")]
    nat = ev.result.get("naturalness", "edit@10")
    assert "<td>naturalness ↑</td>" in fluency and fmt(nat.corpus_score) in fluency
    assert "| naturalness ↑ |" in render_markdown(data)
    assert any(line.startswith("naturalness:") for line in ev.rationale)


# ------------------------------------------------------------------------------------- excluding systems
@pytest.fixture(scope="module")
def human_csv(ev, tmp_path_factory):
    """Two annotators scoring content and style with seeded noise around chrF/ref and style accuracy."""
    rng = np.random.default_rng(5)
    rows = []
    for system in ev.systems:
        chrf = ev.result.get("chrf/ref", system)
        acc = ev.result.get("style_accuracy", system)
        for seg, c, a in zip(chrf.ids, chrf.segment_scores, acc.segment_scores):
            for annotator in ("a1", "a2"):
                rows.append([system, seg, annotator, "content", 1 + 4 * float(c) / 100 + rng.normal(0, 0.8)])
                rows.append([system, seg, annotator, "style", 1 + 3 * float(a) + rng.normal(0, 0.8)])
    path = tmp_path_factory.mktemp("human") / "judgments.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["system", "segment", "annotator", "aspect", "score"])
        w.writerows(rows)
    return path


def test_excluded_correlations_equal_meta_run(ev, human_csv):
    from styleval.meta import Judgments, MetaRunOptions, MetaTask, metric_table_from_result, run
    from styleval.report.html import SEGMENT_TASK, SYSTEM_TASK

    corr = human_correlations(ev, human_csv, exclude_systems=["ref"])
    full = human_correlations(ev, human_csv)
    assert corr["excluded"] == ["ref"] and "ref" not in corr["systems"] and full["excluded"] == []
    judgments = Judgments.read(human_csv)
    table = metric_table_from_result(ev.result)
    changed = 0
    for aspect in ("content", "style"):
        sys_res = run(MetaTask(aspect=aspect, exclude=("ref",), **SYSTEM_TASK), judgments, table,
                      options=MetaRunOptions(curves=True, curves_min_n=2))
        seg_res = run(MetaTask(aspect=aspect, exclude=("ref",), **SEGMENT_TASK), judgments, table)
        assert sys_res.options["systems"] == sorted(corr["systems"])
        for metric in corr["metrics"]:
            assert corr["system"][metric][aspect] == pytest.approx(sys_res.statistic(metric), nan_ok=True)
            assert corr["segment"][metric][aspect] == pytest.approx(seg_res.statistic(metric), nan_ok=True)
            changed += not np.isclose(corr["system"][metric][aspect], full["system"][metric][aspect],
                                      equal_nan=True)
        assert corr["curves"][aspect]["chrf/ref"] == sys_res.curves["chrf/ref"]
        assert "exclude=ref" in corr["tasks"]["system"][aspect]
    assert changed > 0  # leaving the reference out moves the system-level figures
    with pytest.raises(Exception, match="neither evaluated nor judged"):
        human_correlations(ev, human_csv, exclude_systems=["nobody"])


def test_report_names_excluded_systems(ev, human_csv, tmp_path):
    from styleval.cli import report_cmd
    from styleval.errors import InputError

    ev.write_json(tmp_path / "ev.json")
    parser = argparse.ArgumentParser()
    report_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["report", str(tmp_path / "ev.json"), "--html", str(tmp_path / "r.html"), "--markdown",
                              str(tmp_path / "r.md"), "--human", str(human_csv), "--exclude-system", "ref"])
    assert args.run(args) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Excluded from the correlations: ref" in page
    corr = human_correlations(ev, human_csv, exclude_systems=["ref"])
    table = re.search(r'<table class="human">(.*?)</table>', page).group(1)
    row = re.search(r"<tr><td>style_accuracy</td>(.*?)</tr>", table).group(1)
    assert re.findall(r"<td>([^<]*)</td>", row)[2] == fmt(corr["system"]["style_accuracy"]["style"])
    assert "Excluded from the correlations: ref" in (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "No system is excluded" in render_html(ev, human=human_csv)
    with pytest.raises(InputError, match="give --human"):
        args = parser.parse_args(["report", str(tmp_path / "ev.json"), "--html", str(tmp_path / "x.html"),
                                  "--exclude-system", "ref"])
        args.run(args)
