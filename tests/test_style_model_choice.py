"""evaluate on a sentiment direction: choosing the style model reads the shipped models' labels without loading
any formality model, and the rationale's calibration sentence agrees with the signature."""
from __future__ import annotations

from pathlib import Path

import pytest

import styleval
from styleval.cli.main import build_parser
from styleval.errors import InputError
from styleval.evaluation.battery import style_model_facts
from styleval.models.pool import get_pool
from styleval.progress import reporting
from styleval.style_models.model import CLASSIFIER, REGRESSOR, StyleModel
from styleval.style_models.pretrained import choose_shipped

SENTIMENT = frozenset({"negative", "positive"})


@pytest.fixture()
def loads(monkeypatch) -> list[str]:
    """The model folders StyleModel.load reads from now on (the pool emptied first, so nothing is cached)."""
    seen: list[str] = []
    real = StyleModel.load

    def load(cls, folder):
        seen.append(Path(folder).name)
        return real(folder)

    get_pool().clear()
    monkeypatch.setattr(StyleModel, "load", classmethod(load))
    return seen


def test_a_sentiment_direction_loads_only_the_sentiment_model(loads) -> None:
    heard: list[str] = []
    with reporting(lambda description, done, total: heard.append(description)):
        facts = style_model_facts("auto", SENTIMENT)
    assert facts.name == "sentiment-classifier-yelp" and loads == ["sentiment-classifier-yelp"]
    assert heard and not any("formality" in d for d in heard), heard
    assert choose_shipped(CLASSIFIER, {"formal", "informal"}) == "formality-classifier-pt16"
    with pytest.raises(InputError, match=r"formality-regressor-pt16 \(informal, formal\)"):
        choose_shipped(REGRESSOR, set(SENTIMENT))
    assert loads == ["sentiment-classifier-yelp"]  # choosing read model.json files only


def test_the_calibration_sentence_agrees_with_the_signature() -> None:
    facts = style_model_facts("auto", SENTIMENT)
    records = [styleval.Record(str(i), src, out, system="A", direction="negative:positive")
               for i, (src, out) in enumerate([("the food was cold", "the food was warm"),
                                               ("rude staff", "friendly staff")], start=1)]
    signature = str(styleval.score(records, ["style_accuracy"], bootstrap=0).get("style_accuracy", "A").signature)
    assert "calibrated:yes" in signature and "style_calibration:none" in signature
    note = facts.calibration_note
    assert "calibrated=yes" in note and "style_calibration:none" in note and "no calibration" not in note
    calibrated = style_model_facts("formality-classifier-pt16", frozenset({"formal", "informal"})).calibration_note
    assert "decides with its" in calibrated


def test_evaluate_help_names_the_fluency_metrics() -> None:
    verbs = next(a for a in build_parser()._actions if a.dest == "verb").choices
    text = " ".join(verbs["evaluate"].format_help().split())
    assert "fluency (acceptability, the shipped classifier, and perplexity under a language model)" in text


def test_the_style_model_reports_its_encoding_counts() -> None:
    """style_accuracy on the sentiment model (an adapted MiniLM block) is no longer one silent stage: it reports
    loading its encoder and each batch of texts encoded."""
    get_pool().clear()
    records = [styleval.Record(str(i), f"the soup was cold {i}", f"the soup was warm number {i}", system="A",
                               direction="negative:positive") for i in range(1, 71)]
    heard: list[tuple[str, int, int]] = []
    styleval.score(records, ["style_accuracy"], bootstrap=0, progress=lambda *call: heard.append(call))
    inner = [(d.split(": ", 1)[1], done, total) for d, done, total in heard if ": " in d]
    assert ("loading adapted encoder minilm", 0, 1) in inner
    counts = [(done, total) for d, done, total in inner if d == "style model encoding texts [texts]"]
    assert counts == [(64, 70), (70, 70)], counts  # batches of 64
