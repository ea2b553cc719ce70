"""Style metrics: target-style accuracy and probability, direction-corrected EMD, oriented regressor score and the
formality F-score; directions whose styles a model lacks are clear errors."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.records import Direction
from styleval.style_models import LabelledData, shipped_models
from styleval.training.options import CardText, HeadOptions, StyleTarget
from styleval.training.style import train_style_model
from styleval.style_models.fscore import fscore_from_tags
from styleval.engine.options import StatisticsOptions

FORMAL = ["I would be grateful for your reply.", "The committee approved the proposal.",
          "Please find the attached report.", "We regret to inform you of the delay.",
          "Thank you for your kind assistance.", "The results are presented below."]
INFORMAL = ["lol no way dude!!", "gonna grab food, u coming?", "omg thats sooo cool", "idk man whatever lol",
            "haha yeah i know right", "wanna hang out later??"]


@pytest.fixture(scope="module")
def formality_folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("models")
    data = LabelledData(FORMAL + INFORMAL, ["formal"] * 6 + ["informal"] * 6, "tiny")
    clf = train_style_model(data, selection=data, head=HeadOptions(features="tfidf+hand", grid=[10.0]),
                            card=CardText(name="tiny-clf"))
    reg_data = LabelledData(data.texts, [2.0] * 6 + [-2.0] * 6, "tiny")
    reg = train_style_model(reg_data, selection=reg_data,
                            target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                            head=HeadOptions(features="tfidf+hand", grid=[0.3]), card=CardText(name="tiny-reg"))
    return str(clf.save(base / "clf")), str(reg.save(base / "reg"))


def batch(outputs, sources, direction) -> Batch:
    d = Direction.parse(direction)
    return Batch(ids=[str(i) for i in range(len(outputs))], outputs=outputs, sources=sources,
                 references=[[] for _ in outputs], directions=[d] * len(outputs), system="sys")


def test_accuracy_probability_emd(formality_folders) -> None:
    clf, _ = formality_folders
    b = batch(["I would appreciate your reply.", "lol dude!!"], ["lol dude u there??", "lol dude u there??"],
              "informal->formal")
    # sources without a capital letter read as a lower-cased release to case=auto: the cased model sees case here
    acc = registry.create("style_accuracy", model=clf, case="sensitive").score(b)
    assert list(acc.segment_scores) == [1.0, 0.0] and acc.corpus_score == 0.5
    prob = registry.create("style_probability", model=clf, case="sensitive").score(b)
    assert prob.segment_scores[0] > 0.5 > prob.segment_scores[1]
    emd = registry.create("style_emd", model=clf, case="sensitive").score(b)
    assert emd.segment_scores[0] > 0
    assert abs(emd.segment_scores[1]) < 0.2  # output = source style: little movement
    # by hand from the statistics: |p_target(out) - p_target(src)| with the sign of the change (two classes)
    p_src, p_out = emd.stats[:, 1], emd.stats[:, 2]
    np.testing.assert_allclose(emd.segment_scores, np.abs(p_out - p_src) * np.where(p_out >= p_src, 1, -1))
    assert emd.signature.resources["style_model"] == "tiny-clf"
    assert emd.signature.params == {"model": clf, "ground": "unit", "case": "sensitive"}
    # reversed direction: moving toward formal is now the wrong way
    rev = registry.create("style_emd", model=clf, case="sensitive").score(batch(["I would appreciate your reply."],
                                                              ["lol dude u there??"], "formal->informal"))
    assert rev.segment_scores[0] < 0


def test_unknown_styles_are_clear_errors(formality_folders) -> None:
    clf, reg = formality_folders
    b = batch(["great food"], ["awful food"], "negative->positive")
    with pytest.raises(InputError, match=r"style 'positive' is not among the styles of model 'tiny-clf'"):
        registry.create("style_accuracy", model=clf).score(b)
    with pytest.raises(InputError, match="needs a classifier"):
        registry.create("style_accuracy", model=reg).score(b)
    none = Batch(ids=["0"], outputs=["x"], sources=["y"], references=[[]], directions=[None])
    with pytest.raises(InputError, match="direction"):
        registry.create("style_probability", model=clf).score(none)


def test_regressor_is_oriented_by_direction(formality_folders) -> None:
    _, reg = formality_folders
    texts = ["I would appreciate your reply.", "lol dude!!"]
    up = registry.create("style_regression", model=reg).score(batch(texts, texts, "informal->formal"))
    down = registry.create("style_regression", model=reg).score(batch(texts, texts, "formal->informal"))
    np.testing.assert_allclose(up.segment_scores, -down.segment_scores)
    assert up.segment_scores[0] > up.segment_scores[1]
    rel = registry.create("style_regression", model=reg, relative=True).score(batch(texts, texts[::-1],
                                                                                   "informal->formal"))
    assert rel.segment_scores[0] > 0 > rel.segment_scores[1]


def test_fscore_by_hand_and_spacy() -> None:
    # 2 nouns + 1 article + 1 preposition - 1 pronoun - 1 verb over 6 words: (100 * 2/6 + 100) / 2
    tags = [("The", "DET"), ("report", "NOUN"), ("of", "ADP"), ("Smith", "PROPN"), ("it", "PRON"),
            ("shows", "VERB"), (".", "PUNCT")]
    assert fscore_from_tags(tags) == pytest.approx((100 * 2 / 6 + 100) / 2)
    assert np.isnan(fscore_from_tags([("!", "PUNCT")]))
    texts = ["The analysis of the results of the committee confirms the importance of the proposal.",
             "oh wow i really really like it so much"]
    m = registry.create("formality_fscore")
    up = m.score(batch(texts, texts, "informal->formal"))
    assert up.segment_scores[0] > 60 > up.segment_scores[1]
    down = m.score(batch(texts, texts, "formal->informal"))
    np.testing.assert_allclose(down.segment_scores, 100 - up.segment_scores)
    with pytest.raises(InputError, match="formal"):
        m.score(batch(texts, texts, "negative->positive"))
    assert "spacy_model_hash" in up.signature.resources


def test_auto_picks_a_shipped_model() -> None:
    if "toxicity-classifier-paradetox" not in shipped_models():
        pytest.skip("shipped toxicity model not built")
    b = batch(["you are a wonderful person", "shut up you stupid idiot"], ["x", "y"], "toxic->neutral")
    res = registry.create("style_accuracy").score(b)
    assert list(res.segment_scores) == [1.0, 0.0]
    assert res.signature.resources["style_model"] == "toxicity-classifier-paradetox"


def test_style_regression_gets_an_interval_through_score():
    """Its statistics hold no placeholder NaN, so the bootstrap interval is computed like any other metric's."""
    import styleval
    from styleval.examples import get
    from styleval.readers import read_system_dir

    ex = get("formality")
    recs = read_system_dir(ex.systems_dir, ex.source, list(ex.references), direction=ex.direction)
    result = styleval.score(recs, ["style_regression"], options=StatisticsOptions(bootstrap=100))
    for r in result:
        assert r.ci is not None and r.ci[0] <= r.corpus_score <= r.ci[1]
    # the full rewrite is more formal than the copied input
    assert result.get("style_regression", "rewrite").corpus_score > result.get("style_regression", "copy").corpus_score


def test_style_model_runs_once_per_distinct_text_of_a_run(monkeypatch):
    """style_accuracy, style_probability and style_emd share the style model's outputs within one run (the per-run
    memo): each distinct text goes through the model once, and every score equals the metric's score alone."""
    import styleval
    from styleval.examples import get
    from styleval.readers import read_system_dir
    from styleval.style_models.model import StyleModel

    ex = get("formality")
    recs = read_system_dir(ex.systems_dir, ex.source, list(ex.references), direction=ex.direction)
    metrics = ["style_accuracy", "style_probability", "style_emd"]
    alone = {m: styleval.score(recs, [m], options=StatisticsOptions(bootstrap=0)) for m in metrics}
    seen: list[str] = []
    real = StyleModel._decision

    def counting(self, texts):
        seen.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(StyleModel, "_decision", counting)
    together = styleval.score(recs, metrics, options=StatisticsOptions(bootstrap=0))
    distinct = {r.output for r in recs} | {r.source for r in recs}
    assert sorted(seen) == sorted(distinct)  # three metrics, one pass over each distinct text
    for m in metrics:
        for system in together.systems:
            a, b = alone[m].get(m, system), together.get(m, system)
            assert a.corpus_score == b.corpus_score
            np.testing.assert_array_equal(a.segment_scores, b.segment_scores)
    seen.clear()  # a second run has a memo of its own: the model runs again
    styleval.score(recs, ["style_accuracy"], options=StatisticsOptions(bootstrap=0))
    assert sorted(seen) == sorted({r.output for r in recs})
