"""styleval evaluate end to end on the sentiment and toxicity directions: small slices of yelp-dualrl
(negative->positive) and ParaDetox (toxic->neutral), fast battery. The shipped classifier of the direction must be
chosen and its style accuracy must be that of ``styleval.score`` with the same metric on the same records."""
from __future__ import annotations

from pathlib import Path

import pytest

from styleval import score
from styleval.evaluation import evaluate

N_SEGMENTS = 50
BOOTSTRAP = 200


def _check_style_model(ev, records, model: str, styles: str) -> None:
    assert ev.settings["style_model"] == model
    style_line = next(line for line in ev.rationale if line.startswith("style:"))
    assert f"shipped classifier {model!r}" in style_line and f"covering the styles {styles}" in style_line
    for spec in (f"style_accuracy:model={model}", "style_accuracy"):  # named, and chosen by direction (auto)
        direct = score(records, [spec], bootstrap=BOOTSTRAP)
        assert direct.systems == [s for s in ev.systems if s != ev.settings.get("anchor")]
        for system in direct.systems:  # the real systems (the anchor row: tests/test_evaluate_anchor.py)
            d, e = direct.get("style_accuracy", system), ev.result.get("style_accuracy", system)
            assert e.corpus_score == d.corpus_score and e.ci == d.ci
            assert list(e.segment_scores) == list(d.segment_scores)
            assert f"|style_model:{model}|" in str(d.signature)
            if spec != "style_accuracy":  # the auto spec's signature says model:auto, then the model it resolved to
                assert str(e.signature) == str(d.signature)


@pytest.fixture(scope="module")
def yelp(shared_data):
    from styleval.datasets import read_yelp_dualrl

    records = read_yelp_dualrl(shared_data, systems=["DualRL", "DeleteOnly_Li"], include_humans_as_systems=False)
    keep = {f"test.0/{i}" for i in range(1, N_SEGMENTS + 1)}  # test.0: negative->positive
    return [r for r in records if r.id in keep]


def test_yelp_sentiment_negative_to_positive(yelp):
    assert len(yelp) == 2 * N_SEGMENTS and {str(r.direction) for r in yelp} == {"negative->positive"}
    ev = evaluate(yelp, fast=True, bootstrap=BOOTSTRAP)
    _check_style_model(ev, yelp, "sentiment-classifier-yelp", "negative, positive")
    assert ev.aspects["content"][-3:] == ["bleu/ref", "chrf/ref", "meteor/ref"]  # the four human rewrites
    assert "up to 4 reference(s)" in ev.rationale[0]
    # four references per input: the first scored against the other three is the anchor row, by default
    assert ev.systems == ["DualRL", "DeleteOnly_Li", "human-reference"] and ev.settings["anchor_references"] == [3, 3]
    assert ev.result.get("bleu/ref", "human-reference").signature.to_dict()["nrefs"] == 3
    for system in ("DualRL", "DeleteOnly_Li"):
        acc = ev.result.get("style_accuracy", system).corpus_score
        assert 0.5 < acc <= 1.0  # both published systems mostly reach the positive side
        for name in ("hm", "gm", "j"):
            low, high = ev.overall_ci(system, name)
            assert low <= ev.overall_score(system, name) <= high


def _paradetox(root: Path) -> list:
    """The first N_SEGMENTS ParaDetox rows with three crowd rewrites: system ``crowd`` outputs the first rewrite,
    system ``copy`` the toxic input; both are compared with the other two rewrites. The shipped toxicity
    classifier was trained on most ParaDetox rows, so these accuracies are not held-out figures."""
    from styleval.datasets import paradetox
    from styleval.readers.plain import build_records

    path, all_rows = paradetox.rows(root)
    full = [(str(r.line), [r.toxic, *r.rewrites]) for r in all_rows
            if len(r.rewrites) == 3 and r.toxic.strip() and all(f.strip() for f in r.rewrites)]
    rows = full[:N_SEGMENTS]
    ids = [i for i, _ in rows]
    source = (str(path), [f[0] for _, f in rows])
    refs = [(f"{path}:neutral2", [f[2] for _, f in rows]), (f"{path}:neutral3", [f[3] for _, f in rows])]
    crowd = build_records((f"{path}:neutral1", [f[1] for _, f in rows]), source, refs, system="crowd",
                          direction="toxic->neutral", ids=ids)
    copy = build_records(source, source, refs, system="copy", direction="toxic->neutral", ids=ids)
    return crowd + copy


def test_paradetox_toxic_to_neutral(shared_data):
    records = _paradetox(shared_data)
    ev = evaluate(records, fast=True, bootstrap=BOOTSTRAP)
    _check_style_model(ev, records, "toxicity-classifier-paradetox", "neutral, toxic")
    acc = {s: ev.result.get("style_accuracy", s).corpus_score for s in ev.systems}
    assert acc["crowd"] > 0.8 and acc["copy"] < 0.3  # rewrites read as neutral, the toxic inputs do not
    assert ev.overall_score("crowd", "j") > ev.overall_score("copy", "j")
    test = next(c for c in ev.overall_comparisons if c.metric == "j" and {c.system, c.baseline} == {"crowd", "copy"})
    assert test.p_value < 0.05
    assert ev.result.get("bleu/src", "copy").corpus_score == pytest.approx(100.0)
