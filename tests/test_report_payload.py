"""The report's explorer data, header and summary without a browser: texts stored once, scores at their display
precision, the documented sample above the budget, per-segment J, the run's command and file hashes, the
Content-Security-Policy, the summary of leaders and the note beside perplexity."""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re

import numpy as np
import pytest

from styleval.cli.main import main
from styleval.cli.score_cmd import load_records
from styleval.errors import InputError
from styleval.evaluation import evaluate, load_evaluation
from styleval.evaluation.summary import aspect_rows, display_decimals, system_letters
from styleval.evaluation.texts import segment_texts
from styleval.examples import get
from styleval.records import Record
from styleval.report.header import case_note
from styleval.report.html import render_html


def _payload(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="sv-data">(.*?)</script>', page, re.S).group(1))


@pytest.fixture(scope="module")
def ev():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return evaluate(load_records(ns), fast=True, bootstrap=50)


@pytest.fixture(scope="module")
def page(ev):
    return render_html(ev)


def test_every_text_is_stored_once(ev, page):
    data = _payload(page)
    texts = ev.texts
    distinct = set(texts["source"]) | {r for refs in texts["references"] for r in refs} | {
        o for outs in texts["outputs"].values() for o in outs}
    assert len(data["strings"]) == len(set(data["strings"])) == len(distinct)
    copy = data["systems"].index("copy")  # the copy system's outputs are its sources: the same strings
    assert data["out"][copy] == data["src"]
    strings = data["strings"]
    assert [strings[k] for k in data["src"]] == texts["source"]
    tidy = data["systems"].index("tidy")
    assert [strings[k] for k in data["out"][tidy]] == texts["outputs"]["tidy"]


def test_segment_scores_at_the_display_precision(ev, page):
    data = _payload(page)
    for metric in ("bleu/ref", "style_emd", "meteor/src"):
        col = next(m for m in data["metrics"] if m["key"] == metric)
        corpus = [ev.result.get(metric, s).corpus_score for s in ev.systems]
        assert col["dec"] == display_decimals(max(corpus, key=abs))
        for k, system in enumerate(ev.systems):
            r = ev.result.get(metric, system)
            assert col["v"][k] == [round(float(v), col["dec"]) for v in r.segment_scores]
    style = next(m for m in data["metrics"] if m["key"] == "style_accuracy")
    assert style["binary"] and style["dec"] == 0 and data["decisions"]["style"] == data["metrics"].index(style)


def test_j_per_segment_is_the_product(ev):
    """Fast mode: J = STA · chrF/src ÷ 100 per segment (no fluency factor)."""
    for system in ev.systems:
        acc = ev.result.get("style_accuracy", system)
        chrf = ev.result.get("chrf/src", system)
        j = ev.overall_segments["j"][system]
        expected = np.asarray(acc.segment_scores) * np.asarray(chrf.segment_scores) / 100
        assert np.allclose([j[i] for i in acc.ids], expected)
        assert abs(np.mean(list(j.values())) - ev.overall_score(system, "j")) < 1e-12


def test_a_sample_above_the_budget(ev):
    # 3 systems and the anchor row: 20 inputs, each metric's lowest and highest one first
    page = render_html(ev, max_outputs=80)
    data = _payload(page)
    sample = data["sample"]
    assert sample is not None and sample["total"] == 30 and sample["per_metric"] == 1
    assert len(data["ids"]) == sample["embedded"] == 20 == sample["extremes"] + sample["random"]
    assert sample["note"] in page and "embeds 20 of the 30 inputs" in page
    for r_metric in ("bleu/ref", "chrf/src"):  # every metric's extremes are embedded
        pooled = sorted((float(v), i) for s in ev.systems
                        for i, v in zip(ev.result.get(r_metric, s).ids, ev.result.get(r_metric, s).segment_scores))
        assert pooled[0][1] in data["ids"] and pooled[-1][1] in data["ids"]
    assert render_html(ev, max_outputs=80) == page  # the sample is seeded
    assert _payload(render_html(ev))["sample"] is None


def test_inputs_must_agree_across_systems():
    a = Record(id="1", source="hi there", output="Hello.", system="a")
    b = Record(id="1", source="hi their", output="Hello!", system="b")
    with pytest.raises(InputError, match="segment '1': system 'b' has a different source or direction than system 'a'"):
        segment_texts([a, b])
    with pytest.raises(InputError, match="appears twice for system 'a'"):
        segment_texts([a, a])
    texts = segment_texts([a, Record(id="2", source="yo", output="", system="a"),
                           Record(id="1", source="hi there", output="Hi.", system="b")])
    assert texts["outputs"] == {"a": ["Hello.", ""], "b": ["Hi.", None]}  # empty kept, absent marked
    # a system scored against other references (a human rewrite against the other humans) keeps its own
    c = Record(id="1", source="hi there", output="Hey.", references=["Hi."], system="c")
    assert segment_texts([a, c])["system_references"] == {"c": {"1": ["Hi."]}}


def test_content_security_policy(page):
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    assert "default-src 'none'" in csp and "img-src data:" in csp and "unsafe" not in csp
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    for style in re.findall(r"<style>(.*?)</style>", page, re.S):
        assert base64.b64encode(hashlib.sha256(style.encode()).digest()).decode() in csp
    assert "http://" not in page and "https://" not in page


def test_summary_names_the_leaders(ev, page):
    data = ev.to_dict()
    letters = system_letters(ev.systems)
    summary = re.search(r'<ul class="summary">(.*?)</ul>', page, re.S).group(1)
    systems = [s for s in ev.systems if s != ev.settings["anchor"]]  # the anchor row leads on nothing
    assert systems == ["copy", "rewrite", "tidy"]
    for row in aspect_rows(data, "style") + aspect_rows(data, "content"):
        best = max(systems, key=lambda s: row["cells"][s]["score"])
        beaten = set(row["cells"][best]["marks"].lstrip("^")) - {letters[ev.settings["anchor"]]}
        others = {letters[s] for s in systems if s != best}
        phrase = ("significantly ahead of every other system" if beaten == others
                  else "no significant lead" if not beaten else "significantly ahead of")
        line = next(li for li in summary.split("<li>") if f"<b>{row['metric']}</b>" in li)
        after = line[line.index(f"<b>{row['metric']}</b>"):]
        assert line.startswith(f"{best} leads on") and after[after.index(" ("):].startswith(f" ({phrase}")
    # the rationale and signatures are folded away below the tables
    assert re.search(r"<details class=\"rationale\"><summary><h2>Why these metrics</h2>", page)
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Style</h2>") < page.index('class="rationale"')


def test_cli_records_command_files_and_date(tmp_path):
    out, html_path = tmp_path / "ev.json", tmp_path / "report.html"
    args = ["evaluate", "--example", "formality", "--fast", "--bootstrap", "20", "--json", str(out), "--html",
            str(html_path), "-q"]
    assert main(args) == 0
    run = load_evaluation(out)["settings"]["run"]
    assert run["command"] == "styleval " + " ".join(args)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", run["date"])
    source = get("formality").source
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    entry = next(f for f in run["inputs"] if f["path"] == str(source))
    assert entry["sha256"] == digest and entry["bytes"] == source.stat().st_size
    assert len({f["path"] for f in run["inputs"]}) == len(run["inputs"])  # each file once
    page = html_path.read_text(encoding="utf-8")
    assert f'title="sha256 {digest}"' in page and run["command"] in page and run["date"] in page
    again = tmp_path / "again.html"
    assert main(["report", str(out), "--html", str(again)]) == 0
    assert f'title="sha256 {digest}"' in again.read_text(encoding="utf-8")


def _case_data(sources: list[str]) -> dict:
    return {"texts": {"source": sources, "references": [[]] * len(sources)},
            "score": {"corpus": [{"metric": "perplexity", "metric_id": {"name": "perplexity"}}]}}


def test_note_beside_perplexity_for_a_lowercased_tokenized_release():
    lowered = ["the food was great , i 'll be back .", "do n't go there !", "staff was rude ."]
    note = case_note(_case_data(lowered))
    assert note.startswith("The inputs look lower-cased and tokenized (100% of 3 sources and references have no "
                           "capital letter, 100% show tokenization)")
    assert case_note(_case_data(["The food was great.", "Don't go there!", "Staff was rude."])) == ""
    data = _case_data(lowered)
    data["score"]["corpus"][0]["metric_id"]["name"] = "bleu"
    assert case_note(data) == ""  # no perplexity, no note


def test_anchor_row_of_the_human_references():
    import sacrebleu

    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    records = [r for r in load_records(ns) if r.system in ("rewrite", "tidy")]
    ev = evaluate(records, fast=True, bootstrap=20, anchor=True)
    assert ev.systems == ["rewrite", "tidy", "human-reference"] and ev.settings["anchor"] == "human-reference"
    anchor = ev.result.get("bleu/ref", "human-reference")
    firsts = {r.id: r for r in records}
    expected = [sacrebleu.sentence_bleu(firsts[i].references[0], firsts[i].references[1:]).score for i in anchor.ids]
    assert np.allclose(anchor.segment_scores, expected)
    assert ev.texts["outputs"]["human-reference"] == [firsts[i].references[0] for i in ev.texts["ids"]]
    assert ev.texts["system_references"]["human-reference"] == {i: firsts[i].references[1:] for i in ev.texts["ids"]}
    page = render_html(ev)
    summary = re.search(r'<ul class="summary">(.*?)</ul>', page, re.S).group(1)
    assert "rewrite leads on" in summary and "human-reference" not in summary
    assert "anchor: human-reference is not a system" in page and "asked for with --anchor" in page
    data = _payload(page)
    own = data["sysrefs"][str(data["systems"].index("human-reference"))]
    assert {data["ids"][int(k)]: [data["strings"][j] for j in v] for k, v in own.items()} == {
        i: firsts[i].references[1:] for i in data["ids"]}
    one_ref = [Record(id="1", source="hi", output="Hello.", references=["Hello."], system="a",
                      direction="informal->formal")]
    with pytest.raises(InputError, match="fewer than two references, e.g. '1'"):
        evaluate(one_ref, fast=True, anchor=True)


def test_bars_of_a_binary_metric_are_clickable_regions(ev, page):
    """Each bar of style accuracy (0/1 per segment) gives two regions: the bar (segments scored 1) and the space
    above it up to 1 (scored 0), stacked on one another, with the counts of the segment scores."""
    data = _payload(page)
    points = next(f["points"] for f in data["figures"] if f["img"] == "fig-distribution")
    metric = [m["key"] for m in data["metrics"]].index("style_accuracy")
    bars = [p for p in points if p.get("metric") == metric]
    assert bars and all("equals" in p and "box" in p and "ids" not in p for p in bars)
    assert "a bar of a 0/1 metric opens the system's segments scored 1" in page
    for k, system in enumerate(data["systems"]):
        scores = ev.result.get("style_accuracy", system).segment_scores
        mine = {p["equals"]: p for p in bars if p["system"] == k}
        counts = {v: int(sum(1 for s in scores if s == v)) for v in (0, 1)}
        assert set(mine) == {v for v, n in counts.items() if n}  # a region without segments is left out
        for v, p in mine.items():
            assert p["label"] == f"style_accuracy = {v} ({system}, {counts[v]} segment{'s' if counts[v] != 1 else ''})"
            left, top, right, bottom = p["box"]
            assert left < p["x"] < right and top <= p["y"] <= bottom
        if len(mine) == 2:  # the pass region sits right under the fail region, same width
            assert mine[1]["box"][1] == pytest.approx(mine[0]["box"][3], abs=0.2)
            assert mine[1]["box"][0] == mine[0]["box"][0] and mine[1]["box"][2] == mine[0]["box"][2]
            share = (mine[1]["box"][3] - mine[1]["box"][1]) / (mine[1]["box"][3] - mine[0]["box"][1])
            assert share == pytest.approx(counts[1] / len(scores), abs=0.01)  # the bar's height is the pass rate
