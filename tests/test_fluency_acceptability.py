"""The shipped acceptability classifier: loads, equals a hand computation from its arrays, separates held-out human
sentences from corrupted copies near its card's test figure, passes human references, refuses bad input."""
from __future__ import annotations

import json
import math
import random
import sys

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.base import Batch
from tests.conftest import PROJECT_ROOT


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _batch(outputs) -> Batch:
    n = len(outputs)
    return Batch(ids=[str(i) for i in range(n)], outputs=list(outputs), sources=[""] * n,
                 references=[[] for _ in range(n)], directions=[None] * n)


def _by_hand(lm, text: str) -> float:
    """P(acceptable) from the shipped arrays: features from a one-sentence forward pass, then the logistic."""
    import torch

    from styleval.acceptability.model import PRETRAINED_DIR, DEFAULT_ACCEPTABILITY
    from styleval.textnorm.readable import normalize
    from styleval.acceptability.unigram import DATA_DIR, DEFAULT_UNIGRAM

    folder = PRETRAINED_DIR / DEFAULT_ACCEPTABILITY
    cfg = json.loads((folder / "model.json").read_text())
    w = np.load(folder / "weights.npz")
    with np.load(DATA_DIR / f"{DEFAULT_UNIGRAM}.npz") as z:
        counts = dict(zip(z["ids"].tolist(), z["counts"].tolist()))
        vocab = json.loads(str(z["meta"]))["vocab_size"]
    total = sum(counts.values())
    ids = lm.tokenizer(normalize(text, cfg["normalize"]), add_special_tokens=False)["input_ids"]
    eos = lm.tokenizer.eos_token_id
    inp = torch.tensor([[lm.tokenizer.bos_token_id] + list(ids) + [eos]])
    with torch.no_grad():
        lp_all = torch.log_softmax(lm.model(inp).logits[0, :-1].double(), dim=-1).gather(1, inp[0, 1:, None])[:, 0]
    lp, end = lp_all[:-1].numpy(), float(lp_all[-1])
    u = np.array([math.log((counts.get(t, 0) + 1) / (total + vocab)) for t in ids])
    reps = sum(ids[i:i + k] == ids[i + k:i + 2 * k] for k in (1, 2, 3) for i in range(len(ids) - 2 * k + 1))
    d = lp - u
    steps = [b - a for a, b in zip(lp[:-1], lp[1:])] or [0.0]
    x = [lp.mean(), (lp.sum() - u.sum()) / len(lp), lp.min(), np.sort(lp)[:2].mean(), d.min(), lp.std(), end,
         np.mean(lp < -10), math.log(len(lp)), lp[0], reps, np.sort(d)[:2].mean(), np.sort(d)[:3].mean(),
         np.mean(d < -3), np.quantile(lp, 0.25), np.sort(lp)[:3].mean(), max(steps), min(steps), d[-1], lp[-1]]
    x = np.array(x)
    if cfg["degree"] == 2:
        x = np.concatenate([x, [x[i] * x[j] for i in range(len(x)) for j in range(i, len(x))]])
    z = ((x - w["mean"]) / w["scale"]) @ w["coef"] + w["intercept"][0]
    return 1.0 / (1.0 + math.exp(-z))


def test_metric_equals_hand_computation_and_signature(smollm):
    texts = ["The food was great and the staff were friendly.", "the food was was great and the .",
             "i did n't like it at all .", ""]
    res = registry.create("acceptability", normalize="detok+truecase").score(_batch(texts))
    for i, t in enumerate(texts[:3]):
        assert res.segment_scores[i] == pytest.approx(_by_hand(smollm, t), abs=1e-5)
    assert res.segment_scores[3] == 0.0 and res.flags["empty_output"] == ["3"]
    assert res.corpus_score == pytest.approx(np.mean(res.segment_scores >= 0.5))
    assert res.segment_scores[0] >= 0.5 > res.segment_scores[1]
    sig = res.signature.to_dict()["resources"]
    assert sig["acceptability_model"] == "acceptability-smollm2" and len(sig["acceptability_hash"]) == 12
    assert sig["lm"] == "smollm2-135m" and sig["unigram"] == "smollm2-mixed-public"
    assert sig["trained_on"] == "normalize=detok+truecase"
    assert res.signature.to_dict()["params"]["normalize"] == "detok+truecase"


def test_card_states_data_selection_and_test():
    from styleval.acceptability.model import load_acceptability

    card = load_acceptability().card
    assert card["training"]["n"] > 1000 and card["selection"]["threshold"] > 0
    assert set(card["test"]["human_pass_by_register"]) == {"pt16", "yelp", "paradetox-neutral", "paradetox-toxic"}
    assert card["test"]["roc_auc"] > 0.75


def test_separates_held_out_pairs_near_the_card_figure(smollm, shared_data):
    """A fixed sample of the card's test split (human sentences and their corrupted copies): ROC AUC within
    sampling error of the card's test figure."""
    from sklearn.metrics import roc_auc_score

    from styleval.acceptability.model import load_acceptability

    sys.path.insert(0, str(PROJECT_ROOT / "studies" / "shipped_models"))
    import fluency_data

    from styleval.training.acceptability_examples import make_examples

    test = make_examples(fluency_data.splits()["test"], seed=102)  # the seed the training script gives the test split
    rng = random.Random(0)
    idx = sorted(rng.sample(range(len(test.texts)), 80))
    p = load_acceptability().predict([test.texts[i] for i in idx])
    y = [test.labels[i] for i in idx]
    auc = roc_auc_score(y, p)
    assert auc >= load_acceptability().card["test"]["roc_auc"] - 0.1


def test_j_takes_its_fluency_factor_from_acceptability():
    from styleval.metrics.overall import JointScore

    j = JointScore(style="style_accuracy", similarity="chrf/src", fluency="acceptability", fluency_threshold=0.5)
    np.testing.assert_array_equal(j.fluency_factor(np.array([0.2, 0.5, 0.9])), [0.0, 1.0, 1.0])


def test_bad_models_are_refused(tmp_path):
    from styleval.acceptability.model import load_acceptability

    with pytest.raises(InputError, match="acceptability model folder not found"):
        registry.create("acceptability", model=str(tmp_path / "none"))
    (tmp_path / "model.json").write_text(json.dumps({"format": "styleval-acceptability/1", "features": ["x"]}))
    np.savez(tmp_path / "weights.npz", mean=[0.0], scale=[1.0], coef=[1.0], intercept=[0.0])
    with pytest.raises(InputError, match="over the features"):
        load_acceptability(tmp_path)
    (tmp_path / "weights.npz").write_bytes(b"broken")
    with pytest.raises(InputError, match="unreadable"):
        load_acceptability(tmp_path)


def test_corruptions_change_the_text():
    from styleval.training.corrupt import OPERATIONS, corrupt

    rng = random.Random(1)
    for text in ["the staff was very friendly and the food came fast .", "great place", "ok"]:
        for _ in range(50):
            bad, ops = corrupt(text, rng, ["another sentence here"])
            assert bad != text and ops and set(ops) <= set(OPERATIONS)


def test_evaluate_warning_reads_a_higher_is_better_fluency_metric():
    from types import SimpleNamespace

    from styleval.evaluation.battery import _fluency_warning
    from styleval.evaluation.plan import FLUENCY_METRICS

    scores = {"A": [0.1, 0.2, 0.9, 0.3, 0.1, 0.4], "B": [0.6, 0.1, 0.2, 0.3, 0.1, 0.2]}
    result = SimpleNamespace(systems=list(scores), get=lambda metric, system: SimpleNamespace(
        segment_scores=scores[system], higher_is_better=True))
    lines = _fluency_warning(result, "acceptability", FLUENCY_METRICS["acceptability"])  # 1/6 pass each
    assert len(lines) == 1 and "acceptability ≥ 0.5" in lines[0]
    assert _fluency_warning(result, "acceptability", 0.15) == []


def test_yelp_dualrl_human_references_pass_and_broken_outputs_do_less(smollm, shared_data):
    """Lower-cased tokenized human rewrites pass; a system known for broken grammar passes clearly less often."""
    from styleval.datasets import read_yelp_dualrl

    keep = {f"test.{d}/{i}" for d in (0, 1) for i in range(1, 21)}
    records = [r for r in read_yelp_dualrl(shared_data, include_humans_as_systems=True) if r.id in keep]
    metric = registry.create("acceptability")
    share = {}
    for system in ("Human0", "Human1", "Multidecoder_Fu"):
        recs = [r for r in records if r.system == system]
        assert len(recs) == 40
        res = metric.score(Batch.from_records(recs))
        assert res.signature.to_dict()["resources"]["normalized"] == "per text"
        share[system] = res.corpus_score
    assert min(share["Human0"], share["Human1"]) >= 0.9
    assert share["Multidecoder_Fu"] <= min(share["Human0"], share["Human1"]) - 0.1
