"""The late-interaction preservation encoder (styleval.content.late_encoder): its five token-matching features against
a direct computation, identical pairs at 1, the torch training form against the numpy scoring form, storage, and a
preservation model that holds it in the bi-encoder's place (its training: tests/test_adapter_training.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from styleval.content import PreservationModel
from styleval.content.late_encoder import TAU, LateEncoder, torch_pair_features
from styleval.errors import InputError
from styleval.models import catalog as cat
from tests.conftest import ADAPTER_PAIRS, one_pass_model, random_adapted

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

A, B = [p[0] for p in ADAPTER_PAIRS], [p[1] for p in ADAPTER_PAIRS]
WEIGHTS = np.asarray([3.0, 2.0, 1.5, 1.0, 0.5])


def _random_late(weights: np.ndarray = WEIGHTS, seed: int = 0) -> LateEncoder:
    v = np.random.default_rng(seed + 1).normal(0, 0.05, 384)
    head_w = np.concatenate([weights, [0.2], v]).astype(np.float32)
    return random_adapted(LateEncoder, head_w, -5.0, seed=seed)  # type: ignore[return-value]


def _hidden(model: LateEncoder, text: str) -> np.ndarray:
    from styleval.content.features import load_tokenizer

    tok = load_tokenizer(cat.DEFAULT_ENCODER)
    with torch.inference_mode():
        return model.merged_encoder()(**tok([text], return_tensors="pt")).last_hidden_state[0].numpy()


def test_features_are_weighted_best_token_matches_and_the_pooled_cosine():
    """Each feature recomputed by hand from the merged encoder's hidden states, with plain loops."""
    late = _random_late()
    v, c = late.importance
    got = late.features(A, B)
    for k, (a, b) in enumerate(zip(A, B)):
        ha, hb = _hidden(late, a), _hidden(late, b)
        wa, wb = np.log1p(np.exp(ha @ v + c)), np.log1p(np.exp(hb @ v + c))
        ua = ha / np.linalg.norm(ha, axis=1, keepdims=True)
        ub = hb / np.linalg.norm(hb, axis=1, keepdims=True)
        best_a = np.asarray([max(float(x @ y) for y in ub) for x in ua])
        best_b = np.asarray([max(float(x @ y) for y in ua) for x in ub])
        pa, pb = ha.mean(0), hb.mean(0)
        cos = float(pa @ pb / np.linalg.norm(pa) / np.linalg.norm(pb))
        expected = [cos, (best_a * wa).sum() / wa.sum(), (best_b * wb).sum() / wb.sum(),
                    -TAU * np.log((wa / wa.sum() * np.exp(-best_a / TAU)).sum()),
                    -TAU * np.log((wb / wb.sum() * np.exp(-best_b / TAU)).sum())]
        np.testing.assert_allclose(got[k], expected, atol=2e-5)
    # the soft minimum lies below the weighted mean and above the worst match
    assert np.all(got[:, 3] <= got[:, 1] + 1e-9) and np.all(got[:, 4] <= got[:, 2] + 1e-9)


def test_scores_are_the_rescaled_sigmoid_and_identical_pairs_score_one():
    late = _random_late()
    feats = late.features(A, B)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    np.testing.assert_allclose(late.score(A, B), sig(feats @ WEIGHTS - 5) / sig(WEIGHTS.sum() - 5), atol=1e-9)
    np.testing.assert_allclose(late.features(A, A), 1.0, atol=1e-5)
    np.testing.assert_allclose(late.score(A, A), 1.0, atol=1e-5)


def test_the_training_form_equals_the_scoring_form():
    """torch_pair_features over a padded batch (the training loss's input) equals the per-pair numpy features."""
    from styleval.content.features import load_tokenizer

    late = _random_late()
    tok, enc = load_tokenizer(cat.DEFAULT_ENCODER), late.merged_encoder()
    v, c = late.importance
    with torch.inference_mode():
        xa, xb = (tok(t, padding=True, return_tensors="pt") for t in (A, B))
        got = torch_pair_features(enc(**xa).last_hidden_state, xa["attention_mask"], enc(**xb).last_hidden_state,
                                  xb["attention_mask"], torch.tensor(v), torch.tensor(c)).numpy()
    np.testing.assert_allclose(got, late.features(A, B), atol=2e-5)


def test_shared_texts_are_encoded_once_per_call():
    late = _random_late()
    calls: list[int] = []
    encode = late.encode

    def counting(texts, progress=None):  # type: ignore[no-untyped-def]
        calls.append(len(set(texts)))
        return encode(texts, progress)

    late.encode = counting  # type: ignore[method-assign]
    late.score(A, B)
    assert calls == [len(set(A + B))]


def test_bad_weights_are_named(tmp_path):
    with pytest.raises(InputError, match="feature weights"):
        random_adapted(LateEncoder, np.ones(6), 0.0)
    with pytest.raises(InputError, match="importance vector has 100 numbers, the encoder's vectors 384"):
        random_adapted(LateEncoder, np.ones(106), 0.0).score(A, B)  # type: ignore[attr-defined]
    bad = tmp_path / "late.npz"
    np.savez(bad, head_w=np.ones(400))
    with pytest.raises(InputError, match="late.npz"):
        LateEncoder.load(bad, cat.DEFAULT_ENCODER)


def test_a_late_model_runs_no_features_and_round_trips(tmp_path):
    late = _random_late()
    model = one_pass_model(late, "late-only", cosine_weight=0.25)

    def no_features(*args: object, **kwargs: object) -> None:
        raise AssertionError("the feature head (and spaCy) ran although its weight is 0")

    model.featurizer.features = no_features  # type: ignore[method-assign]
    cosine = np.clip(model.featurizer.sentence_cosines(A, B), 0, 1)
    np.testing.assert_allclose(model.score(A, B), 0.75 * late.score(A, B) + 0.25 * cosine, atol=1e-12)
    assert "late_encoder_hash" in model.resources() and "spacy_model" not in model.resources()
    folder = model.save(tmp_path / "m")
    config = json.loads((folder / "model.json").read_text())
    assert config["format"] == "styleval-preservation/5" and config["bi_encoder"]["kind"] == "late"
    assert (folder / "late.npz").is_file() and not (folder / "bi.npz").exists()
    again = PreservationModel.load(folder, backend="torch")
    assert isinstance(again.bi, LateEncoder) and again.bi.file_hash == late.file_hash
    np.testing.assert_allclose(again.score(A, B), model.score(A, B), atol=1e-6)
    config["bi_encoder"]["kind"] = "colbert"
    (folder / "model.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(InputError, match="kind must be one of bi, late"):
        PreservationModel.load(folder, backend="torch")


def test_progress_names_the_part_when_pairs_come_in_several(monkeypatch):
    import styleval.content.late_encoder as module

    monkeypatch.setattr(module, "CHUNK", 2)
    seen: list[str] = []
    late = _random_late()
    late.features(A, B, progress=lambda stage, done, total: seen.append(stage))
    assert {"late-interaction encoding (part 1 of 2)", "late-interaction encoding (part 2 of 2)"} == set(seen)
    seen.clear()
    late.features(A[:2], B[:2], progress=lambda stage, done, total: seen.append(stage))
    assert set(seen) == {"late-interaction encoding"}
