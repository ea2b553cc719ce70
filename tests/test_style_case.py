"""``case=auto|sensitive|blind`` on the style metrics: the release detector, the parameter in params and signature,
the auto decision on cased and lower-cased corpora, and what a model sees under each setting."""
from __future__ import annotations

import numpy as np
import pytest

import styleval
from styleval.datasets import lai2022, pt16
from styleval.errors import InputError
from styleval.evaluation.plan import CorpusFacts
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.records import Direction, Record
from styleval.style_models import LabelledData
from styleval.textnorm.casing import (BLIND, LOWERCASED_SHARE, SENSITIVE, TOKENIZED_SHARE, case_evidence,
                                      is_tokenized, release_case)
from styleval.textnorm.lower_tokens import lower_tokens
from styleval.training.options import CardText, HeadOptions, StyleTarget
from styleval.training.style import train_style_model

FORMAL = ["I would be grateful for your reply.", "The committee approved the proposal.",
          "Please find the attached report.", "We regret to inform you of the delay.",
          "Thank you for your kind assistance.", "The results are presented below."]
INFORMAL = ["lol no way dude!!", "gonna grab food, u coming?", "omg thats sooo cool", "idk man whatever lol",
            "haha yeah i know right", "wanna hang out later??"]
STYLE_METRICS = ("style_accuracy", "style_probability", "style_emd", "style_regression")


# -- the detector ---------------------------------------------------------------------------------------------------
def test_detector_shares_and_thresholds() -> None:
    ev = case_evidence(["Hello there.", "hello there", "i do n't know .", "1234", ""])
    assert ev.n_texts == 3  # texts without a letter say nothing
    assert ev.no_capital_share == pytest.approx(2 / 3) and ev.tokenized_share == pytest.approx(1 / 3)
    assert ev.tokenized and not ev.lowercased and ev.decision == BLIND  # 1/3 >= 0.3
    assert [is_tokenized(t) for t in ("do n't", "it 's", "yes , sir", "fine .", "don't", "U.S.A.", "a-b")] == \
        [True, True, True, True, False, False, False]
    # just under / at the thresholds
    nine = ["all lower here"] * 9 + ["One Capital"]
    assert case_evidence(nine).no_capital_share == LOWERCASED_SHARE and case_evidence(nine).decision == BLIND
    assert case_evidence(nine[1:]).no_capital_share < LOWERCASED_SHARE
    assert case_evidence(nine[1:]).decision == SENSITIVE
    three = ["a b ."] * 3 + ["A b."] * 7
    assert case_evidence(three).tokenized_share == TOKENIZED_SHARE and case_evidence(three).decision == BLIND
    assert case_evidence([]).decision == SENSITIVE and "no letters" in case_evidence([]).reason()
    # informal sources alone may lack capitals; the references of a cased release keep it case-sensitive
    sources = ["gonna be late, sorry", "idk what u mean", "Sure thing"]
    assert release_case(sources, [["I will be late; I apologise."], ["I do not know."], ["Certainly."]]).decision \
        == SENSITIVE
    assert release_case(sources + ["no caps at all"] * 30).decision == BLIND


def test_detector_on_the_shared_releases(shared_data) -> None:
    inputs = lai2022.xformal(shared_data, [lai2022.XFORMAL_INPUTS]).texts
    refs = [[t] for t in lai2022.xformal(shared_data, lai2022.XFORMAL_REFERENCES[:1]).texts]
    cased = release_case(inputs, refs)
    assert cased.decision == SENSITIVE and cased.n_texts == 160
    assert cased.no_capital_share == 39 / 160 and cased.tokenized_share == 2 / 160
    assert "case-sensitive" in cased.reason() and "24%" in cased.reason()
    lowered = release_case([lower_tokens(t) for t in inputs], [[lower_tokens(r) for r in rs] for rs in refs])
    assert lowered.decision == BLIND and lowered.lowercased and lowered.no_capital_share == 1.0
    lower_only = release_case([t.lower() for t in inputs], [[r.lower() for r in rs] for rs in refs])
    assert lower_only.decision == BLIND and lower_only.lowercased and not lower_only.tokenized
    yelp = (shared_data / "yelp-dualrl" / "outputs" / "yelp" / "Human0" / "test.0.tsf").read_text().splitlines()
    assert case_evidence(yelp).decision == BLIND
    assert case_evidence(pt16.labelled(shared_data, "tune").texts).tokenized  # PT16: cased but tokenized


# -- the parameter --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """A cased classifier and regressor (TF-IDF with case-keeping characters + hand features) and a case-blind
    classifier (lower-tokens before its features)."""
    base = tmp_path_factory.mktemp("case-models")
    data = LabelledData(FORMAL + INFORMAL, ["formal"] * 6 + ["informal"] * 6, "tiny")
    clf = train_style_model(data, selection=data, head=HeadOptions(features="tfidf+hand", grid=[10.0]),
                            card=CardText(name="tiny-cased"))
    blind = train_style_model(data, selection=data,
                              head=HeadOptions(features="tfidf+hand", grid=[10.0], text_norm="lower-tokens"),
                              card=CardText(name="tiny-blind"))
    reg = train_style_model(LabelledData(data.texts, [2.0] * 6 + [-2.0] * 6, "tiny"), selection=None,
                            target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                            head=HeadOptions(features="tfidf+hand", grid=[0.3]), card=CardText(name="tiny-reg"))
    return {"clf": str(clf.save(base / "clf")), "blind": str(blind.save(base / "blind")),
            "reg": str(reg.save(base / "reg"))}


def _batch(outputs: list[str], sources: list[str], refs: list[list[str]] | None = None) -> Batch:
    d = Direction.parse("informal->formal")
    return Batch(ids=[str(i) for i in range(len(outputs))], outputs=outputs, sources=sources,
                 references=refs or [[] for _ in outputs], directions=[d] * len(outputs), system="sys")


CASED_SOURCES = ["gonna be late, sorry", "Idk what u mean", "Sure thing, see ya"]
FORMAL_OUTPUTS = ["I will be late, and I apologise.", "I do not know what you mean.", "Certainly, I will see you."]


@pytest.mark.parametrize("name", STYLE_METRICS)
def test_case_in_params_and_signature(name, tiny_models) -> None:
    model = tiny_models["reg" if name == "style_regression" else "clf"]
    with pytest.raises(InputError, match="case must be one of auto, sensitive, blind"):
        registry.create(name, model=model, case="lower")
    metric = registry.create(name, model=model)
    assert metric.case == "auto" and metric.get_params()["case"] == "auto"
    res = metric.score(_batch(FORMAL_OUTPUTS, CASED_SOURCES))
    assert res.signature.params["case"] == "auto"
    assert res.signature.resources["case_as"] == SENSITIVE  # a cased release: the cased model sees case
    facts = res.extra["case"]
    assert facts["case_as"] == SENSITIVE and facts["evidence"]["decision"] == SENSITIVE
    assert facts["evidence"]["no_capital_share"] == pytest.approx(1 / 3, abs=1e-4)
    assert "case-sensitive" in facts["reason"]
    blind = registry.create(name, model=model, case="blind").score(_batch(FORMAL_OUTPUTS, CASED_SOURCES))
    assert blind.signature.params["case"] == "blind" and blind.signature.resources["case_as"] == BLIND
    assert "evidence" not in blind.extra["case"]  # nothing detected: the user decided
    assert "case:blind" in str(blind.signature) and "case_as:blind" in str(blind.signature)


def test_blind_ignores_the_case_of_outputs_and_sensitive_sees_it(tiny_models) -> None:
    lowered = [lower_tokens(t) for t in FORMAL_OUTPUTS]
    for name, model in (("style_probability", tiny_models["clf"]), ("style_regression", tiny_models["reg"])):
        blind = registry.create(name, model=model, case="blind")
        a = blind.score(_batch(FORMAL_OUTPUTS, CASED_SOURCES)).segment_scores
        b = blind.score(_batch(lowered, CASED_SOURCES)).segment_scores
        np.testing.assert_allclose(a, b, atol=1e-12)
        sensitive = registry.create(name, model=model, case="sensitive")
        c = sensitive.score(_batch(FORMAL_OUTPUTS, CASED_SOURCES)).segment_scores
        d = sensitive.score(_batch(lowered, CASED_SOURCES)).segment_scores
        assert c.mean() > d.mean()  # lower case counts against formality when the model sees it


def test_auto_decides_from_the_inputs(tiny_models) -> None:
    """The same outputs, in a cased release and in a lower-cased tokenized one: auto sees case in the first only."""
    metric = registry.create("style_probability", model=tiny_models["clf"])
    lowered_outputs = [lower_tokens(t) for t in FORMAL_OUTPUTS]
    refs = [[t] for t in FORMAL_OUTPUTS]
    in_cased = metric.score(_batch(lowered_outputs, CASED_SOURCES, refs))
    in_lowered = metric.score(_batch(lowered_outputs, [lower_tokens(s) for s in CASED_SOURCES],
                                     [[lower_tokens(r) for r in rs] for rs in refs]))
    assert in_cased.signature.resources["case_as"] == SENSITIVE
    assert in_lowered.signature.resources["case_as"] == BLIND
    assert in_lowered.extra["case"]["evidence"]["no_capital_share"] == 1.0
    # blind, a lower-cased output scores as its cased original would
    cased_blind = registry.create("style_probability", model=tiny_models["clf"], case="blind").score(
        _batch(FORMAL_OUTPUTS, CASED_SOURCES, refs))
    np.testing.assert_allclose(in_lowered.segment_scores, cased_blind.segment_scores, atol=1e-12)


def test_case_blind_model(tiny_models) -> None:
    """A model that lower-cases its input cannot be case-sensitive: an error when asked, blind (said so) under
    auto."""
    with pytest.raises(InputError, match="case=sensitive needs a cased model"):
        registry.create("style_accuracy", model=tiny_models["blind"], case="sensitive").score(
            _batch(FORMAL_OUTPUTS, CASED_SOURCES))
    res = registry.create("style_accuracy", model=tiny_models["blind"]).score(_batch(FORMAL_OUTPUTS, CASED_SOURCES))
    assert res.signature.resources["case_as"] == BLIND
    assert res.extra["case"]["evidence"]["decision"] == SENSITIVE and "case-blind" in res.extra["case"]["note"]
    from styleval.style_models import StyleModel

    assert StyleModel.load(tiny_models["clf"]).cased and not StyleModel.load(tiny_models["blind"]).cased


# -- the evaluation plan's fact -------------------------------------------------------------------------------------
def _records(sources, outputs_by_system, refs=None) -> list[Record]:
    return [Record(id=str(i), source=s, output=outs[i], references=[refs[i]] if refs else [], system=system,
                   direction="informal->formal")
            for system, outs in outputs_by_system.items() for i, s in enumerate(sources)]


def test_corpus_facts_case() -> None:
    sources = ["gonna be late, sorry", "Idk what u mean", "Sure thing, see ya", "That is Fine by me"]
    outputs = {"cased": ["I will be late.", "I do not know.", "Certainly.", "That is fine."],
               "lower": ["i will be late.", "i do not know.", "certainly.", "that is fine."]}
    facts = CorpusFacts.of(_records(sources, outputs))
    assert facts.case.decision == SENSITIVE and facts.case.n_texts == 4  # each segment once, not once per system
    assert facts.lowercased_systems == ("lower",)
    low = CorpusFacts.of(_records([s.lower() for s in sources], outputs))
    assert low.case.decision == BLIND and low.lowercased_systems == ()


def test_rationale_says_how_case_was_decided() -> None:
    from styleval.evaluation.plan import BatteryChoices, StyleModelFacts, plan_evaluation

    sources = ["gonna be late, sorry", "Idk what u mean", "Sure thing, see ya", "That is Fine by me"]
    outputs = {"cased": ["I will be late.", "I do not know.", "Certainly.", "That is fine."],
               "lower": ["i will be late.", "i do not know.", "certainly.", "that is fine."]}
    style = StyleModelFacts(name="m", chosen=False, labels=("formal", "informal"), feature_blocks="hand",
                            calibration_note="", cased=False, cased_slot="m-cased")
    plan = plan_evaluation(CorpusFacts.of(_records(sources, outputs)), BatteryChoices(fast=True), style)
    text = " ".join(plan.rationale)
    assert "case=auto: case-sensitive" in text and "'m-cased'" in text
    assert "outputs of lower are lower-cased while their sources are cased" in text and "28-31" in text
    low = plan_evaluation(CorpusFacts.of(_records([s.lower() for s in sources], outputs)), BatteryChoices(fast=True),
                          style)
    assert "case=auto: case-blind" in " ".join(low.rationale) and "warning" not in " ".join(low.rationale)


def test_score_records_carry_the_case_facts(tiny_models) -> None:
    refs = ["I will be late.", "I do not know.", "Certainly.", "That is fine."]
    sources = ["gonna be late, sorry", "Idk what u mean", "Sure thing, see ya", "That is Fine by me"]
    recs = _records(sources, {"a": refs}, refs)
    res = styleval.score(recs, [f"style_accuracy:model={tiny_models['clf']}"], bootstrap=0)
    r = res.get("style_accuracy", "a")
    assert r.signature.resources["case_as"] == SENSITIVE and r.extra["case"]["evidence"]["n_texts"] == 8


# -- the case cues and the shipped pair -----------------------------------------------------------------------------
def test_case_cues_by_hand(tmp_path) -> None:
    from styleval.style_models import StyleModel
    from styleval.style_models.features import CASE_CUES, case_cues

    cues = dict(zip(CASE_CUES, case_cues("i dunno. what do u mean? i'm lost, dont ask")))
    assert cues["sentence_starts_upper"] == 0.0 and cues["pronoun_i_upper"] == 0.0
    assert cues["pronoun_i_lower"] == pytest.approx(2 / 10) and cues["joined_contraction"] == pytest.approx(1 / 10)
    assert cues["apostrophe_dropped"] == pytest.approx(1 / 10) and cues["comma_rate"] == pytest.approx(1 / 10)
    cues = dict(zip(CASE_CUES, case_cues("I do n't know , really . Do you ?")))
    assert cues["sentence_starts_upper"] == 1.0 and cues["space_before_punct"] == pytest.approx(3 / 7)
    assert cues["split_clitic"] == pytest.approx(1 / 7) and cues["joined_contraction"] == 0.0
    data = LabelledData(FORMAL + INFORMAL, ["formal"] * 6 + ["informal"] * 6, "tiny")
    model = train_style_model(data, selection=data, head=HeadOptions(features="hand+case-cues", grid=[1.0]),
                              card=CardText(name="cues"))
    again = StyleModel.load(model.save(tmp_path / "cues"))
    np.testing.assert_allclose(again.raw_score(FORMAL), model.raw_score(FORMAL))
    assert [b.kind for b in again.blocks] == ["hand", "case-cues"]


CASED = "formality-classifier-pt16-cased"
BLIND_NAME = "formality-classifier-pt16"


def test_the_shipped_pair() -> None:
    from styleval.models import registry
    from styleval.style_models import load_style_model
    from styleval.style_models.pretrained import choose_shipped

    assert registry.cased_slot(registry.STYLE, BLIND_NAME) == CASED
    assert registry.cased_slot(registry.STYLE, CASED) is None
    assert choose_shipped("classifier", {"formal", "informal"}) == BLIND_NAME  # the slot is reached through the pair
    cased, blind = load_style_model(CASED), load_style_model(BLIND_NAME)
    assert cased.cased and not blind.cased and cased.labels == blind.labels == ["formal", "informal"]
    card = cased.card
    assert card["calibration"]["data"]["data"].endswith("fr.80.ref1-3") and card["calibration"]["method"] == "platt"
    assert card["selection"]["candidates"]["chosen"] in card["selection"]["candidates"]["figures"]
    assert card["held_out"]["data"] == "shared/data/pt16/test.csv"
    assert "pt16/train.csv" in card["training"]["data"]
    # lower case counts against formality for the cased model only
    formal = ["I would be grateful if you could send me the report.", "He is rather strange, but I like him."]
    lowered = [t.lower() for t in formal]
    assert (cased.raw_score(formal, "formal") > cased.raw_score(lowered, "formal")).all()
    np.testing.assert_allclose(blind.raw_score(formal, "formal"), blind.raw_score(lowered, "formal"))


def test_shipped_cased_model_reproduces_its_card(shared_data) -> None:
    """The AUC its card stores for the 240 fr.80.ref1-3 sentences (its calibration sample), recomputed."""
    from sklearn.metrics import roc_auc_score

    from styleval.style_models import load_style_model

    model = load_style_model(CASED)
    sample = lai2022.xformal(shared_data)
    auc = roc_auc_score([y == "formal" for y in sample.labels], model.raw_score(sample.texts, "formal"))
    assert auc == pytest.approx(model.card["calibration"]["scores"]["auc_raw_score"], abs=1e-6)


def test_the_pair_follows_case_on_lai(shared_data) -> None:
    """Lai et al.'s release as published reads as cased (the cased model scores it); lower-cased and tokenized, as
    a lower-cased release (the case-blind one does); case=sensitive on the blind model's name gives the cased one."""
    recs = [r for r in lai2022.records(shared_data) if r.system == "bart"]
    released = styleval.score(recs, ["style_accuracy"], bootstrap=0).get("style_accuracy", "bart")
    assert released.signature.resources["style_model"] == CASED
    assert released.signature.resources["case_as"] == SENSITIVE
    assert released.extra["case"]["evidence"]["no_capital_share"] == pytest.approx(39 / 160, abs=1e-4)
    low = [Record(id=r.id, source=lower_tokens(r.source), output=lower_tokens(r.output),
                  references=[lower_tokens(x) for x in r.references], system=r.system, direction=r.direction)
           for r in recs]
    lowered = styleval.score(low, ["style_accuracy"], bootstrap=0).get("style_accuracy", "bart")
    assert lowered.signature.resources["style_model"] == BLIND_NAME and lowered.signature.resources["case_as"] == BLIND
    named = styleval.score(low, [f"style_accuracy:model={BLIND_NAME},case=sensitive"], bootstrap=0)
    assert named.get("style_accuracy", "bart").signature.resources["style_model"] == CASED


def test_cased_model_on_the_unused_fr80_sentences(shared_data) -> None:
    """docs/results.md's figures on the 160 sentences no fit used (fr.input.80 + fr.80.ref0): AUC as written, and
    lower case counted against formality."""
    from sklearn.metrics import roc_auc_score

    from styleval.style_models import load_style_model

    sample = lai2022.xformal(shared_data, (lai2022.XFORMAL_INPUTS, lai2022.XFORMAL_REFERENCES[0]))
    y = [label == "formal" for label in sample.labels]
    model = load_style_model(CASED)
    assert roc_auc_score(y, model.raw_score(sample.texts, "formal")) == pytest.approx(0.915, abs=5e-4)
    lowered = [t.lower() for t in sample.texts]
    assert roc_auc_score(y, model.raw_score(lowered, "formal")) == pytest.approx(0.792, abs=5e-4)
