"""Style models: reading labelled tables, training on a tiny set, saving and loading a model folder, and the
shipped models (load, sensible predictions on held-out sentences, card scores match a recomputation)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from styleval.errors import InputError, UnknownNameError
from styleval.datasets.paradetox import labelled_splits as load_paradetox
from styleval.datasets.yelp_shen import labelled as load_yelp_shen
from styleval.style_models import (LabelledData, StyleModel, load_style_model, read_labelled, resolve_style_model,
                                   shipped_models)
from styleval.training.options import CardText, HeadOptions, StyleTarget
from styleval.training.style import evaluate, train_style_model

FORMAL = ["I would be grateful if you could reply at your earliest convenience.",
          "The committee has approved the proposal.", "Please find the attached report.",
          "We regret to inform you that the meeting is postponed.", "Thank you for your assistance.",
          "The results are presented in the following section.", "It is not advisable to proceed.",
          "I am writing to request further information."]
INFORMAL = ["lol no way dude!!", "gonna grab some food, u coming?", "omg that's sooo cool",
            "idk man, whatever lol", "haha yeah i know right", "wanna hang out later??",
            "ugh this is sooo boring", "yep thats fine by me :)"]


@pytest.fixture(scope="module")
def tiny() -> LabelledData:
    return LabelledData(FORMAL + INFORMAL, ["formal"] * 8 + ["informal"] * 8, "tiny")


def test_read_labelled_tables(tmp_path) -> None:
    tsv = tmp_path / "d.tsv"
    tsv.write_text("text\tlabel\nhello there\tinformal\n\tformal\nGood day.\tformal\n", encoding="utf-8")
    data = read_labelled(tsv)
    assert data.texts == ["hello there", "Good day."] and data.labels == ["informal", "formal"]
    assert data.skipped == [3]
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"sentence": "a", "score": 1.5}\n{"sentence": "b", "score": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"d.jsonl:2"):
        read_labelled(jsonl, text_col="sentence", label_col="score", numeric=True)
    with pytest.raises(InputError, match="no column 'missing'; columns: text, label"):
        read_labelled(tmp_path / "d.tsv", label_col="label", text_col="missing")


def test_train_save_load_classifier(tiny, tmp_path) -> None:
    model = train_style_model(tiny, selection=tiny, held_out=tiny, target=StyleTarget(aliases={"formality": "formal"}),
                              head=HeadOptions(features="tfidf+hand", grid=[1.0, 10.0]),
                              card=CardText(name="tiny-formality"))
    assert model.labels == ["formal", "informal"]
    assert model.card["held_out"]["scores"]["accuracy"] == 1.0
    folder = model.save(tmp_path / "tiny-formality")
    for name in ("model.json", "weights.npz", "vocab.json", "model_card.json", "README.md"):
        assert (folder / name).is_file()
    card = json.loads((folder / "model_card.json").read_text(encoding="utf-8"))
    assert card["training"]["data_hash"] == tiny.data_hash() and card["labels"] == ["formal", "informal"]
    again = StyleModel.load(folder)
    probe = ["Kindly confirm receipt of this letter.", "lol dude u there??"]
    np.testing.assert_allclose(again.predict_proba(probe), model.predict_proba(probe), atol=1e-6)
    assert again.predict(probe) == ["formal", "informal"]
    assert again.style_index("Formality") == 0 and again.style_index("INFORMAL") == 1
    with pytest.raises(InputError, match="not among the styles"):
        again.style_index("positive")
    assert resolve_style_model(folder) == folder.resolve()
    assert load_style_model(folder).predict(probe) == ["formal", "informal"]
    assert again.resources()["style_model"] == "tiny-formality"


def test_train_regressor(tiny) -> None:
    scores = [2.0 + 0.1 * i for i in range(8)] + [-2.0 - 0.1 * i for i in range(8)]
    data = LabelledData(tiny.texts, scores, "tiny-scores")
    model = train_style_model(data, selection=data, target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                              head=HeadOptions(features="tfidf+hand"))
    pred = model.regress(["Please find enclosed the signed contract.", "lol nope!!"])
    assert pred[0] > pred[1]
    assert model.style_index("formal") == 1
    with pytest.raises(InputError, match="regressor"):
        model.predict_proba(["x"])


def test_bad_folders(tmp_path) -> None:
    with pytest.raises(InputError, match="no model.json"):
        StyleModel.load(tmp_path)
    with pytest.raises(UnknownNameError):
        resolve_style_model("no-such-model")


SHIPPED = ["formality-regressor-pt16", "formality-classifier-pt16", "formality-classifier-pt16-cased",
           "sentiment-classifier-yelp", "toxicity-classifier-paradetox"]


def _shipped(name: str) -> StyleModel:
    if name not in shipped_models():
        pytest.skip(f"{name} is not built (studies/shipped_models/train_style_models.py)")
    return load_style_model(name)


def test_shipped_sentiment(shared_data) -> None:
    model = _shipped("sentiment-classifier-yelp")
    assert model.predict(["the food was cold and the waiter was rude .", "best pizza in town , friendly staff !"]) \
        == ["negative", "positive"]
    test = load_yelp_shen(shared_data, "test")
    assert model.card["held_out"]["n"] == len(test) and model.card["held_out"]["data_hash"] == test.data_hash()
    rng = np.random.default_rng(0)
    sl = test.subset(sorted(rng.choice(len(test), 1500, replace=False)))
    acc = evaluate(model, sl)["accuracy"]
    assert acc == pytest.approx(model.card["held_out"]["scores"]["accuracy"], abs=0.02)


def test_shipped_toxicity(shared_data) -> None:
    model = _shipped("toxicity-classifier-paradetox")
    test = load_paradetox(shared_data)["test"]
    assert model.card["held_out"]["data_hash"] == test.data_hash()
    full = evaluate(model, test)  # 3,000 texts: the card's figure exactly
    assert full["accuracy"] == pytest.approx(model.card["held_out"]["scores"]["accuracy"], abs=1e-9)
    assert model.style_index("non-toxic") == model.style_index("neutral")


@pytest.mark.parametrize("name", ["formality-regressor-pt16", "formality-classifier-pt16",
                                  "formality-classifier-pt16-cased"])
def test_shipped_formality(name, shared_data) -> None:
    from styleval.datasets.pt16 import labelled as load_pt16

    model = _shipped(name)
    formal, informal = "I would appreciate your advice on this matter .", "lol u r so right dude !!"
    if model.kind == "regressor":
        s = model.regress([formal, informal])
        assert s[0] > s[1]
        test = load_pt16(shared_data, "test")
    else:
        assert model.predict([formal, informal]) == ["formal", "informal"]
        test = load_pt16(shared_data, "test", binary=True)
    assert model.card["held_out"]["data_hash"] == test.data_hash()
    assert model.card["held_out"]["n"] == len(test) == 2983


@pytest.mark.slow
@pytest.mark.parametrize("name", ["formality-regressor-pt16", "formality-classifier-pt16",
                                  "formality-classifier-pt16-cased"])
def test_shipped_formality_card_matches_slice(name, shared_data) -> None:
    """Sentence embeddings of 400 texts: about a minute on two busy cores, hence slow."""
    from styleval.datasets.pt16 import labelled as load_pt16

    model = _shipped(name)
    test = load_pt16(shared_data, "test", binary=model.kind == "classifier")
    key = "spearman" if model.kind == "regressor" else "accuracy"
    assert evaluate(model, test.subset(range(400)))[key] == pytest.approx(model.card["held_out"]["scores"][key],
                                                                          abs=0.08)
