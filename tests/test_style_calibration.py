"""Calibration of style models: Platt and isotonic maps against independent fits (scikit-learn's logistic regression,
a hand-written pool-adjacent-violators), the balanced-accuracy threshold by hand, card round trip, calibrated
decisions in style_accuracy / style_probability / style_regression and their signatures, the calibrate-style verb
end to end, and clear errors for bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from styleval.cli.main import main
from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.records import Direction
from styleval.style_models import LabelledData, StyleModel
from styleval.training.options import CalibrationOptions, CardText, HeadOptions, StyleTarget
from styleval.training.style import train_style_model
from styleval.style_models.calibration import Calibration, balanced_accuracy
from styleval.training.calibration import (balanced_threshold, calibrate_style_model, fit_calibration, fit_isotonic,
                                           fit_platt)
from styleval.textnorm.lower_tokens import lower_tokens

FORMAL = ["I would be grateful for your reply.", "The committee approved the proposal.",
          "Please find the attached report.", "We regret to inform you of the delay.",
          "Thank you for your kind assistance.", "The results are presented below.",
          "I am writing to request further information.", "It is not advisable to proceed."]
INFORMAL = ["lol no way dude!!", "gonna grab food, u coming?", "omg thats sooo cool", "idk man whatever lol",
            "haha yeah i know right", "wanna hang out later??", "ugh this is sooo boring", "yep thats fine by me :)"]
# a held-aside sample in which formal text reads less formal than the training data (a shifted domain)
CAL_FORMAL = ["Thank you, I will call them tomorrow.", "Please tell me whether you are coming.",
              "I do not know what you mean.", "We will meet after work.", "That sounds like a good idea.",
              "I think you should talk to him.", "You are welcome to join us.", "It was a pleasant evening."]
CAL_INFORMAL = ["lol ok", "u coming or what", "thats so dumb haha", "idk lol", "gonna be late sry",
                "yeah whatever dude", "omg no way!!!", "wanna come?? lol"]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    base = tmp_path_factory.mktemp("cal-models")
    data = LabelledData(FORMAL + INFORMAL, ["formal"] * 8 + ["informal"] * 8, "tiny")
    clf = train_style_model(data, selection=data, target=StyleTarget(aliases={"formality": "formal"}),
                            head=HeadOptions(features="tfidf+hand", grid=[1.0]), card=CardText(name="tiny-clf"))
    reg_data = LabelledData(data.texts, [2.0] * 8 + [-2.0] * 8, "tiny")
    reg = train_style_model(reg_data, selection=reg_data,
                            target=StyleTarget(kind="regressor", poles=("informal", "formal")),
                            head=HeadOptions(features="tfidf+hand", grid=[0.3]), card=CardText(name="tiny-reg"))
    return clf.save(base / "clf"), reg.save(base / "reg")


def _sample() -> LabelledData:
    return LabelledData(CAL_FORMAL + CAL_INFORMAL, ["formal"] * 8 + ["informal"] * 8, "cal-sample")


# -- the fits against independent computations ---------------------------------------------------------------
def test_platt_matches_sklearn_balanced_logistic_regression() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    s = np.concatenate([rng.normal(1.0, 1.0, 60), rng.normal(-0.5, 1.5, 140)])
    y = np.concatenate([np.ones(60, bool), np.zeros(140, bool)])
    a, b = fit_platt(s, y)
    ref = LogisticRegression(C=1e10, class_weight="balanced", tol=1e-12, max_iter=10000).fit(s[:, None], y)
    assert a == pytest.approx(ref.coef_[0, 0], rel=1e-4)
    assert b == pytest.approx(ref.intercept_[0], rel=1e-4, abs=1e-6)


def _pav(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted pool-adjacent-violators written out by hand: fitted value of each point, in sorted order."""
    order = np.argsort(x, kind="mergesort")
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for i in order:
        blocks.append([y[i] * w[i], w[i], 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s2, w2, n2 = blocks.pop()
            blocks[-1][0] += s2
            blocks[-1][1] += w2
            blocks[-1][2] += n2
    return np.concatenate([[s / w] * n for s, w, n in blocks])


def test_isotonic_matches_hand_pav() -> None:
    rng = np.random.default_rng(1)
    s = rng.normal(size=80)
    y = (s + rng.normal(scale=1.0, size=80)) > 0.3
    xs, ys = fit_isotonic(s, y)
    n_pos, n_neg = y.sum(), (~y).sum()
    w = np.where(y, 80 / (2 * n_pos), 80 / (2 * n_neg))
    expected = _pav(s, y.astype(float), w)
    got = np.interp(np.sort(s), xs, ys)
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_balanced_threshold_and_accuracy_by_hand() -> None:
    s = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    y = np.array([False, False, True, False, True, True])
    # cuts between scores: at 0.25 -> recall(T)=3/3, recall(F)=2/3 -> .8333; at 0.45 -> 2/3, 3/3 -> .8333
    assert balanced_accuracy(y, s >= 0.25) == pytest.approx(5 / 6)
    t = balanced_threshold(s, y)
    assert t in (0.25, 0.45)
    assert balanced_accuracy(y, s >= t) == pytest.approx(5 / 6)
    assert np.isnan(balanced_accuracy(np.ones(3, bool), np.ones(3, bool)))


def test_fit_calibration_scores_and_errors() -> None:
    rng = np.random.default_rng(2)
    raw = np.concatenate([rng.normal(-1.0, 1.0, 50), rng.normal(-3.0, 1.0, 50)])  # all below 0: shifted
    truth = np.concatenate([np.ones(50, bool), np.zeros(50, bool)])
    cal = fit_calibration(raw, truth, positive="formal", negative="informal", options=CalibrationOptions(n_boot=200))
    before = cal.scores["before"]
    assert before["balanced_accuracy"] == pytest.approx(balanced_accuracy(truth, raw >= 0))
    assert cal.scores["after_in_sample"]["balanced_accuracy"] == pytest.approx(
        balanced_accuracy(truth, raw >= cal.threshold))
    assert cal.scores["after_in_sample"]["balanced_accuracy"] > before["balanced_accuracy"] + 0.2
    assert -3.0 < cal.threshold < -1.0 and cal.probability_threshold == pytest.approx(0.5)
    lo, hi = cal.scores["after_cross_validated"]["ci95"]
    assert lo <= cal.scores["after_cross_validated"]["balanced_accuracy"] <= hi
    iso = fit_calibration(raw, truth, positive="formal", negative="informal",
                          options=CalibrationOptions(method="isotonic", n_boot=50))
    assert iso.probability(np.array([iso.threshold]))[0] >= 0.5
    thr = fit_calibration(raw, truth, positive="formal", negative="informal",
                          options=CalibrationOptions(method="threshold", n_boot=50))
    assert thr.threshold == pytest.approx(balanced_threshold(raw, truth))
    with pytest.raises(InputError, match="at least 5 texts of each style"):
        fit_calibration(raw[:53], truth[:53], positive="formal", negative="informal")
    with pytest.raises(InputError, match="backwards"):
        fit_calibration(-raw, truth, positive="formal", negative="informal")
    with pytest.raises(InputError, match="unknown calibration method"):
        fit_calibration(raw, truth, positive="formal", negative="informal", options=CalibrationOptions(method="beta"))


def test_card_round_trip_and_signature(tiny_models, tmp_path) -> None:
    clf_dir, _ = tiny_models
    model = StyleModel.load(clf_dir)
    assert model.calibration is None and model.resources()["style_calibration"] == "none"
    cal_model = calibrate_style_model(model, _sample(), name="tiny-clf-cal", note="test sample",
                                      options=CalibrationOptions(n_boot=100))
    assert model.calibration is None  # the original is untouched
    folder = cal_model.save(tmp_path / "cal")
    again = StyleModel.load(folder)
    assert again.card["calibration"] == json.loads(json.dumps(cal_model.card["calibration"]))
    assert again.calibration.identity() == cal_model.calibration.identity()
    assert again.card["calibrated_from"]["name"] == "tiny-clf" and again.name == "tiny-clf-cal"
    probe = CAL_FORMAL + CAL_INFORMAL
    np.testing.assert_allclose(again.decide(probe)[1], cal_model.decide(probe)[1], atol=1e-6)
    res = again.resources()
    assert res["style_calibration"].startswith("platt:probability:") and res["style_model_hash"] != \
        model.resources()["style_model_hash"]
    # the calibrated decision is the threshold on the raw score, by hand
    raw = again.raw_score(probe, again.calibration.positive)
    expected = [again.calibration.positive if r >= again.calibration.threshold else again.calibration.negative
                for r in raw]
    assert again.predict(probe) == expected
    assert again.predict(probe, calibrated=False) == model.predict(probe, calibrated=False)
    assert "calibration" not in json.loads((clf_dir / "model_card.json").read_text(encoding="utf-8"))


def test_metrics_decide_with_the_calibration(tiny_models, tmp_path) -> None:
    clf_dir, reg_dir = tiny_models
    cal_dir = calibrate_style_model(StyleModel.load(clf_dir), _sample(),
                                    options=CalibrationOptions(n_boot=50)).save(tmp_path / "c")
    model = StyleModel.load(cal_dir)
    outs = CAL_FORMAL + CAL_INFORMAL
    b = Batch(ids=[str(i) for i in range(len(outs))], outputs=outs, sources=outs, references=[[] for _ in outs],
              directions=[Direction.parse("informal->formal")] * len(outs), system="s")
    acc = registry.create("style_accuracy", model=str(cal_dir)).score(b)
    label, p = model.decide(outs)
    assert list(acc.segment_scores) == [float(i == 0) for i in label]  # label 0 = formal
    assert acc.signature.resources["style_calibration"] == model.calibration.identity()
    raw_acc = registry.create("style_accuracy", model=str(cal_dir), calibrated=False).score(b)
    assert list(raw_acc.segment_scores) == [float(x == "formal") for x in model.predict(outs, calibrated=False)]
    assert raw_acc.signature.resources["style_calibration"] == "not used"
    prob = registry.create("style_probability", model=str(cal_dir)).score(b)
    np.testing.assert_allclose(prob.segment_scores, p[:, 0])
    # regressor: oriented from the calibrated decision point, both directions on one axis
    reg_cal = calibrate_style_model(StyleModel.load(reg_dir), _sample(),
                                    options=CalibrationOptions(n_boot=50)).save(tmp_path / "r")
    reg = StyleModel.load(reg_cal)
    t = reg.calibration.threshold
    for direction, sign in (("informal->formal", 1.0), ("formal->informal", -1.0)):
        bd = Batch(ids=["0", "1"], outputs=outs[:2], sources=outs[:2], references=[[], []],
                   directions=[Direction.parse(direction)] * 2, system="s")
        got = registry.create("style_regression", model=str(reg_cal)).score(bd)
        np.testing.assert_allclose(got.segment_scores, sign * (reg.regress(outs[:2]) - t))
        plain = registry.create("style_regression", model=str(reg_cal), calibrated=False).score(bd)
        np.testing.assert_allclose(plain.segment_scores, sign * reg.regress(outs[:2]))
        prob = registry.create("style_regression", model=str(reg_cal), scale="probability").score(bd)
        a, b = reg.calibration.platt
        p_formal = 1 / (1 + np.exp(-(a * reg.regress(outs[:2]) + b)))
        np.testing.assert_allclose(prob.segment_scores, p_formal if sign > 0 else 1 - p_formal)
    with pytest.raises(InputError, match="needs a calibrated model"):
        registry.create("style_regression", model=str(reg_dir), scale="probability").score(bd)


def test_calibration_errors(tiny_models) -> None:
    clf_dir, _ = tiny_models
    model = StyleModel.load(clf_dir)
    with pytest.raises(InputError, match="not a style of model"):
        calibrate_style_model(model, LabelledData(["a", "b"], ["formal", "positive"], "x.tsv"))
    with pytest.raises(InputError, match="one style only"):
        calibrate_style_model(model, LabelledData(["a", "b"], ["formal", "formality"], "x.tsv"))
    bad = dict(model.card)
    bad["calibration"] = {"method": "beta", "positive": "formal", "negative": "informal", "threshold": 0}
    model.card = bad
    with pytest.raises(InputError, match="unknown calibration method"):
        _ = model.calibration
    assert Calibration.from_dict({"method": "threshold", "positive": "formal", "negative": "informal",
                                  "threshold": 1.5}).decide(np.array([1.0, 2.0])).tolist() == [False, True]


# -- the verb --------------------------------------------------------------------------------------------------
def test_calibrate_style_cli_end_to_end(tiny_models, tmp_path, capsys) -> None:
    clf_dir, _ = tiny_models
    f, i = tmp_path / "formal.txt", tmp_path / "informal.txt"
    f.write_text("\n".join(CAL_FORMAL) + "\n", encoding="utf-8")
    i.write_text("\n".join(CAL_INFORMAL) + "\n", encoding="utf-8")
    out = tmp_path / "calibrated"
    rc = main(["calibrate-style", str(clf_dir), "--texts", f"formal={f}", "--texts", f"informal={i}", "-o", str(out),
               "--positive", "formal", "--bootstrap", "200", "--no-progress", "--note", "unit test"])
    assert rc == 0
    text = capsys.readouterr().out
    card = json.loads((out / "model_card.json").read_text(encoding="utf-8"))
    cal = card["calibration"]
    assert cal["positive"] == "formal" and cal["data"]["n"] == 16 and cal["data"]["note"] == "unit test"
    assert card["name"] == "calibrated" and "command" in cal and card["command"] == ""
    assert f"before (model's own decision):  {cal['scores']['before']['balanced_accuracy']:.3f}" in text
    assert "5-fold cross-validated" in text and "AUC of the raw score" in text
    assert "## Calibration" in (out / "README.md").read_text(encoding="utf-8")
    # the same sample as a table gives the same calibration
    table = tmp_path / "sample.tsv"
    table.write_text("text\tlabel\n" + "".join(f"{t}\tformal\n" for t in CAL_FORMAL)
                     + "".join(f"{t}\tinformal\n" for t in CAL_INFORMAL), encoding="utf-8")
    rc = main(["calibrate-style", str(clf_dir), "--table", str(table), "-o", str(tmp_path / "c2"), "--positive",
               "formal", "--bootstrap", "200", "--no-progress", "--json"])
    assert rc == 0
    cal2 = json.loads(capsys.readouterr().out)
    assert cal2["threshold"] == pytest.approx(cal["threshold"]) and cal2["data"]["data_hash"] == \
        cal["data"]["data_hash"]


def test_calibrate_style_cli_errors(tiny_models, tmp_path, capsys) -> None:
    clf_dir, _ = tiny_models
    f, i = tmp_path / "formal.txt", tmp_path / "informal.txt"
    f.write_text("Good day.\n\nKind regards.\n", encoding="utf-8")
    i.write_text("lol\n", encoding="utf-8")
    out = str(tmp_path / "o")
    assert main(["calibrate-style", str(clf_dir), "--texts", f"formal={f}", "--texts", f"informal={i}", "-o", out,
                 "--no-progress"]) == 2
    assert f"{f}:2" in capsys.readouterr().err
    assert main(["calibrate-style", str(clf_dir), "-o", out]) == 2
    assert "either as --texts" in capsys.readouterr().err
    assert main(["calibrate-style", str(clf_dir), "--texts", f"formal={i}", "-o", out]) == 2
    assert "a file for each of two styles" in capsys.readouterr().err
    assert main(["calibrate-style", str(clf_dir), "--texts", f"formal:{i}", "-o", out]) == 2
    assert "STYLE=FILE" in capsys.readouterr().err
    i.write_text("lol\nok\n", encoding="utf-8")
    f.write_text("Good day.\nKind regards.\n", encoding="utf-8")
    assert main(["calibrate-style", str(clf_dir), "--texts", f"formal={f}", "--texts", f"informal={i}", "-o",
                 out, "--no-progress"]) == 2
    assert "at least 5 texts of each style" in capsys.readouterr().err


# -- text normalisation ------------------------------------------------------------------------------------------
def test_lower_tokens_makes_cased_and_tokenized_text_alike() -> None:
    pairs = [("I don't know, it's fine!!", "i do n't know , it 's fine ! !"),
             ("He said 'hello' to me.", "he said ' hello ' to me ."),
             ("Can't stop &amp; won't.", "ca n't stop & wo n't .")]
    for cased, tokenized in pairs:
        assert lower_tokens(cased) == lower_tokens(tokenized) == tokenized
        assert lower_tokens(lower_tokens(cased)) == lower_tokens(cased)


def test_lower_tokens_model_and_auc_selection(tmp_path) -> None:
    data = LabelledData(FORMAL + INFORMAL, ["formal"] * 8 + ["informal"] * 8, "tiny")
    sel = _sample()
    model = train_style_model(data, selection=sel,
                              head=HeadOptions(features="tfidf+hand", grid=[0.1, 1.0, 10.0], selection_metric="roc_auc",
                                               text_norm="lower-tokens"),
                              card=CardText(name="tiny-norm"))
    from sklearn.metrics import roc_auc_score

    scores = model.card["selection"]["grid"]["scores"]
    assert model.card["selection"]["metric"] == "roc_auc" and model.card["parameters"]["preprocess"] == "lower-tokens"
    best = model.card["selection"]["chosen"]["C"]
    raw = model.raw_score(sel.texts, "informal")
    assert scores[str(best)] == pytest.approx(roc_auc_score([y == "informal" for y in sel.labels], raw), abs=1e-6)
    again = StyleModel.load(model.save(tmp_path / "norm"))
    assert again.text_norm == "lower-tokens"
    cased = ["I do not know what you mean.", "He's kinda weird, but I like him!!"]
    lowered = ["i do not know what you mean .", "he 's kinda weird , but i like him ! !"]
    np.testing.assert_allclose(again.predict_proba([lower_tokens(t) for t in cased]), again.predict_proba(lowered),
                               atol=1e-9)
    np.testing.assert_allclose(again.predict_proba(cased[:1]), again.predict_proba(["i do not know what you mean ."]),
                               atol=1e-9)
    with pytest.raises(InputError, match="does not apply"):
        train_style_model(data, selection=sel, head=HeadOptions(features="tfidf", selection_metric="spearman"))


# -- the shipped calibrations (shared data; skipped without it) ----------------------------------------------------
def test_shipped_calibrations_name_their_data(shared_data) -> None:
    from styleval.readers.text import read_lines
    from styleval.datasets.paradetox import labelled_splits as load_paradetox
    from styleval.style_models import load_style_model

    folder = shared_data / "lai2022" / "data" / "xformal"
    texts, labels = [], []
    for k in (1, 2, 3):
        lines = read_lines(folder / f"fr.80.ref{k}")
        texts += lines
        labels += ["formal" if i < 40 else "informal" for i in range(80)]
    xformal = LabelledData(texts, labels)
    for name in ("formality-classifier-pt16", "formality-regressor-pt16"):
        cal = load_style_model(name).card["calibration"]
        assert cal["data"]["data_hash"] == xformal.data_hash() and cal["positive"] == "formal"
        assert "never reported as test figures" in cal["data"]["note"]
    tox = load_style_model("toxicity-classifier-paradetox").card["calibration"]
    assert tox["data"]["data_hash"] == load_paradetox(shared_data)["dev"].data_hash()


def test_shipped_formality_classifier_on_gyafc_ignores_case_and_tokens(shared_data) -> None:
    """Lai's REF rewrites (ref0, used by no fit) against the inputs, informal->formal, cased and as a lower-cased
    tokenized release would print them (NLTK's tokenizer, not styleval's)."""
    from nltk.tokenize import TreebankWordTokenizer

    from styleval.datasets import lai2022
    from styleval.style_models import load_style_model

    ref = lai2022.xformal(shared_data, ["fr.80.ref0"]).texts[:40]
    inputs = lai2022.xformal(shared_data, [lai2022.XFORMAL_INPUTS]).texts[:40]
    tok = TreebankWordTokenizer()
    model = load_style_model("formality-classifier-pt16")
    formal = model.style_index("formal")
    for texts in (ref, inputs):
        lowered = [" ".join(tok.tokenize(t)).lower() for t in texts]
        cased_labels, lowered_labels = model.decide(texts)[0], model.decide(lowered)[0]
        assert np.mean(cased_labels != lowered_labels) <= 0.05
    acc_ref = np.mean(model.decide(ref)[0] == formal)
    acc_input = np.mean(model.decide(inputs)[0] == formal)
    assert acc_ref == pytest.approx(0.875) and acc_input == pytest.approx(0.5)  # docs/results.md
    assert acc_ref - acc_input > 0.3
