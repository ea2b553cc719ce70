"""The anchor row of the human references in ``evaluate``: added by default when every input has two references or
more, absent with one, left out with ``anchor=False`` / ``--no-anchor``, required with ``--anchor``; its scores are
those of the plain scoring API on each input's first reference against the others, and the real systems' scores,
intervals, tests and correlations with human judgments are the same with and without it."""
from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pytest

import styleval
from styleval.cli.main import main
from styleval.cli.score_cmd import load_records
from styleval.errors import InputError
from styleval.evaluation import evaluate
from styleval.evaluation.anchor import ANCHOR_SYSTEM
from styleval.meta.judgments import Judgments
from styleval.records import Record
from styleval.report.html import human_correlations, render_html, render_markdown
from styleval.report.text import text_report

SETTINGS = dict(fast=True, bootstrap=60, seed=3)


def _example() -> list[Record]:
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return load_records(ns)


@pytest.fixture(scope="module")
def records() -> list[Record]:
    return _example()


@pytest.fixture(scope="module")
def with_anchor(records):
    return evaluate(records, **SETTINGS)


@pytest.fixture(scope="module")
def without(records):
    return evaluate(records, anchor=False, **SETTINGS)


def test_added_by_default_with_two_references_per_input(records, with_anchor, without):
    assert {len(r.references) for r in records} == {2}  # the bundled example has references to spare
    assert with_anchor.systems == ["copy", "rewrite", "tidy", ANCHOR_SYSTEM]
    assert without.systems == ["copy", "rewrite", "tidy"]
    assert with_anchor.settings["anchor"] == ANCHOR_SYSTEM and with_anchor.settings["anchor_references"] == [1, 1]
    assert with_anchor.settings["anchor_auto"] is True and "anchor" not in without.settings
    line = next(r for r in with_anchor.rationale if r.startswith("anchor:"))
    assert ("each input's first reference scored as an output against the other reference, so its "
            "reference-based scores use one reference fewer than the systems' (1 instead of 2") in line
    assert "--no-anchor" in line and not any(r.startswith("anchor:") for r in without.rationale)
    # the corpus facts are those of the real systems
    assert with_anchor.settings["size"] == without.settings["size"] == "3 systems × 30 segments"
    nrefs = {s: with_anchor.result.get("bleu/ref", s).signature.to_dict()["nrefs"] for s in with_anchor.systems}
    assert nrefs == {"copy": 2, "rewrite": 2, "tidy": 2, ANCHOR_SYSTEM: 1}


def test_real_systems_scores_are_unchanged(with_anchor, without):
    for r in without.result:
        a = with_anchor.result.get(r.metric, r.system)
        assert a.ids == r.ids and a.corpus_score == r.corpus_score
        assert np.array_equal(np.asarray(a.segment_scores), np.asarray(r.segment_scores), equal_nan=True)
        assert a.ci == r.ci and str(a.signature) == str(r.signature)
    for system in without.systems:
        for name in ("hm", "gm", "j"):
            assert with_anchor.overall_score(system, name) == without.overall_score(system, name)
            assert with_anchor.overall_ci(system, name) == without.overall_ci(system, name)
    # the tests between real systems are the same; the anchor only adds its own pairs
    def tests(comparisons):
        return {(c.metric, c.system, c.baseline): (c.delta, c.p_value) for c in comparisons
                if ANCHOR_SYSTEM not in (c.system, c.baseline)}
    assert tests(with_anchor.result.comparisons) == tests(without.result.comparisons)
    assert tests(with_anchor.overall_comparisons) == tests(without.overall_comparisons)
    assert any(ANCHOR_SYSTEM in (c.system, c.baseline) for c in with_anchor.result.comparisons)


def test_anchor_scores_equal_the_plain_api(records, with_anchor):
    firsts = {}
    for r in records:
        firsts.setdefault(r.id, r)
    plain = [Record(id=r.id, source=r.source, output=r.references[0], references=r.references[1:], system="ref1",
                    direction=r.direction) for r in firsts.values()]
    result = styleval.score(plain, with_anchor.metric_specs, bootstrap=0, significance="none")
    compared = 0
    for r in result:
        anchor = with_anchor.result.get(r.metric, ANCHOR_SYSTEM)
        assert anchor.ids == r.ids
        assert np.allclose(anchor.segment_scores, r.segment_scores, equal_nan=True), r.metric
        assert anchor.corpus_score == pytest.approx(r.corpus_score, rel=1e-12), r.metric
        compared += 1
    assert compared == len(with_anchor.metric_specs) >= 8


def test_report_shows_it_as_the_anchor(with_anchor):
    data = with_anchor.to_dict()
    text = text_report(data)
    assert "human-reference (d, anchor)" in text and "rewrite (b)" in text
    page = render_html(with_anchor)
    summary = re.search(r'<ul class="summary">(.*?)</ul>', page, re.S).group(1)
    assert "human-reference" not in summary and "leads on" in summary
    assert "anchor: human-reference is not a system" in page
    assert "<th>human-reference (d, anchor)</th>" in page
    # the signatures: the systems' first, then the anchor's with one reference fewer
    sigs = dict(re.findall(r"<li><b>([^<]+)</b>: <code>([^<]+)</code></li>", page))
    assert "nrefs:2" in sigs["bleu/ref"] and "nrefs:1" in sigs["bleu/ref (human-reference)"]
    markdown = render_markdown(data)
    assert "| human-reference (d, anchor) |" in markdown and "**bleu/ref (human-reference)**" in markdown


def _judgments(records: list[Record]) -> Judgments:
    rows = [{"system": r.system, "segment": r.id, "annotator": "a1", "aspect": "fluency",
             "score": float(min(5, 1 + len(r.output.split()) // 3))} for r in records]
    return Judgments.from_records(rows)


def test_correlations_with_human_judgments_leave_the_anchor_out(records, with_anchor, without):
    human = _judgments(records)  # the real systems only: nobody judged the anchor
    a, b = human_correlations(with_anchor, human), human_correlations(without, human)
    assert a["systems"] == b["systems"] == ["copy", "rewrite", "tidy"]
    assert a["anchor"] == ANCHOR_SYSTEM and a["excluded"] == [] and b["anchor"] is None
    for level in ("system", "segment"):
        for metric, by_aspect in b[level].items():
            assert a[level][metric] == pytest.approx(by_aspect, nan_ok=True)
    page = render_html(with_anchor, human=human)
    assert "The anchor row human-reference (the human references, not a system) is left out" in page


def test_absent_with_one_reference_and_required_by_anchor_true(records):
    one = [Record(id=r.id, source=r.source, output=r.output, references=r.references[:1], system=r.system,
                  direction=r.direction) for r in records if r.system in ("rewrite", "tidy")]
    ev = evaluate(one, fast=True, bootstrap=0, significance="none")
    assert ev.systems == ["rewrite", "tidy"] and "anchor" not in ev.settings
    assert not any(r.startswith("anchor:") for r in ev.rationale)
    with pytest.raises(InputError, match="fewer than two references"):
        evaluate(one, fast=True, bootstrap=0, anchor=True)
    # one input short of references is enough to leave the anchor out by default
    mixed = [Record(id=r.id, source=r.source, output=r.output,
                    references=r.references[:1] if r.id == "3" else r.references, system=r.system,
                    direction=r.direction) for r in records if r.system == "rewrite"]
    assert "anchor" not in evaluate(mixed, fast=True, bootstrap=0, significance="none").settings
    # a system already named like the anchor: no anchor by default, an error when required
    named = [Record(id=r.id, source=r.source, output=r.output, references=r.references, system=ANCHOR_SYSTEM,
                    direction=r.direction) for r in records if r.system == "rewrite"]
    assert evaluate(named, fast=True, bootstrap=0, significance="none").systems == [ANCHOR_SYSTEM]
    with pytest.raises(InputError, match="already named"):
        evaluate(named, fast=True, bootstrap=0, anchor=True)


def test_cli_default_no_anchor_and_anchor(tmp_path, capsys):
    out, off = tmp_path / "ev.json", tmp_path / "off.json"
    args = ["evaluate", "--example", "formality", "--fast", "--bootstrap", "0", "--significance", "none", "-q"]
    assert main(args + ["--json", str(out)]) == 0
    assert main(args + ["--no-anchor", "--json", str(off)]) == 0
    data, plain = json.loads(out.read_text("utf-8")), json.loads(off.read_text("utf-8"))
    assert data["score"]["settings"]["systems"] == ["copy", "rewrite", "tidy", ANCHOR_SYSTEM]
    assert data["settings"]["anchor"] == ANCHOR_SYSTEM
    assert plain["score"]["settings"]["systems"] == ["copy", "rewrite", "tidy"] and "anchor" not in plain["settings"]
    real = {(c["metric"], c["system"]): c["score"] for c in data["score"]["corpus"] if c["system"] != ANCHOR_SYSTEM}
    assert real == {(c["metric"], c["system"]): c["score"] for c in plain["score"]["corpus"]}
    # `report` from the file shows it as the anchor too
    html = tmp_path / "r.html"
    assert main(["report", str(out), "--html", str(html)]) == 0
    assert "anchor: human-reference is not a system" in html.read_text("utf-8")
    # --anchor with one reference per input: one line, exit 2
    src, ref, sys_ = tmp_path / "src.txt", tmp_path / "ref.txt", tmp_path / "a.txt"
    src.write_text("hey u\nthx\n", "utf-8")
    ref.write_text("Hello, you.\nThank you.\n", "utf-8")
    sys_.write_text("Hello you.\nThanks.\n", "utf-8")
    capsys.readouterr()
    args = ["evaluate", "--source", str(src), "--reference", str(ref), "--system", f"a={sys_}",
            "--direction", "informal:formal", "--fast", "--bootstrap", "0", "--significance", "none", "-q"]
    assert main(args + ["--anchor"]) == 2
    err = capsys.readouterr().err.strip()
    assert "fewer than two references" in err and "\n" not in err and "Traceback" not in err
    assert main(args) == 0  # by default: no anchor, no error


def test_anchor_line_with_varying_reference_counts():
    from styleval.evaluation.anchor import anchor_line, anchor_records, anchor_settings, wants_anchor

    records = [Record(id=str(i), source="hi", output="Hello.", references=["Hello."] * n, system="a",
                      direction="informal->formal") for i, n in ((1, 2), (2, 4), (3, 3))]
    assert wants_anchor(records, None) and not wants_anchor(records, False) and not wants_anchor([], None)
    anchored = anchor_records(records)
    assert [len(r.references) for r in anchored] == [1, 3, 2]
    settings = anchor_settings(anchored, auto=True)
    assert settings == {"anchor": ANCHOR_SYSTEM, "anchor_references": [1, 3], "anchor_auto": True}
    line = anchor_line(settings)
    assert "against the other 1 to 3 references" in line and "(1 to 3 instead of 2 to 4, its signatures' nrefs)" in line
    assert "asked for with --anchor" in anchor_line(anchor_settings(anchored, auto=False))
    assert anchor_line({}) == ""
