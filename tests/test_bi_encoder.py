"""The preservation bi-encoder: LoRA training, scoring by tuned cosine, storage, and a preservation model that is the
bi-encoder alone (styleval.content.bi_encoder)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from styleval.content import PreservationModel, load_preservation_model
from styleval.content.bi_encoder import BiEncoder
from styleval.content.pretrained import BI_MODEL, FAST_MODEL
from styleval.errors import InputError
from styleval.models import catalog as cat
from tests.conftest import ADAPTER_PAIRS, one_pass_model, random_adapted

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

PAIRS = ADAPTER_PAIRS
A, B = [p[0] for p in PAIRS], [p[1] for p in PAIRS]


def _random_bi(scale: float = 8.0, seed: int = 0) -> BiEncoder:
    return random_adapted(BiEncoder, np.asarray([scale]), -5.0, seed=seed)  # type: ignore[return-value]


def test_scores_are_the_rescaled_sigmoid_of_the_tuned_cosine():
    """score = sigmoid(s*cos + b) / sigmoid(s + b), with cos the cosine of the merged encoder's mean-pooled vectors."""
    from styleval.content.features import load_tokenizer

    bi = _random_bi()
    tok = load_tokenizer(cat.DEFAULT_ENCODER)
    enc = bi.merged_encoder()

    def vec(text: str) -> np.ndarray:
        x = tok([text], return_tensors="pt")
        with torch.inference_mode():
            h = enc(**x).last_hidden_state[0].numpy()
        v = h.mean(0)
        return v / np.linalg.norm(v)

    cos = np.asarray([float(vec(a) @ vec(b)) for a, b in zip(A, B)])
    expected = (1 / (1 + np.exp(-(8 * cos - 5)))) / (1 / (1 + np.exp(-3.0)))
    np.testing.assert_allclose(bi.score(A, B), expected, atol=1e-5)
    np.testing.assert_allclose(bi.score(A, A), 1.0, atol=1e-6)  # identical texts: cosine 1, score 1


def test_each_text_is_encoded_once():
    bi = _random_bi()
    first = bi.score(A, B)

    def fail() -> None:
        raise AssertionError("the encoder ran again for texts already encoded")

    bi._load = fail  # type: ignore[method-assign]
    np.testing.assert_array_equal(bi.score(A[::-1], B[::-1]), first[::-1])


def test_a_rescaled_encoder_lies_on_the_line_from_the_plain_to_the_tuned_weights():
    """rescaled(t) merges W + t * (tuned delta): every merged weight is the linear interpolation, and the file hash
    changes with t (a different model), while rescaled(1) is the same model."""
    bi = _random_bi()
    tuned = dict(bi.merged_encoder().named_parameters())
    plain = dict(bi.rescaled(0.0).merged_encoder().named_parameters())
    half = dict(bi.rescaled(0.3).merged_encoder().named_parameters())
    moved = [n for n in tuned if not torch.equal(tuned[n], plain[n])]
    assert len(moved) == 4  # the four adapted layers' weights
    for name in tuned:
        expected = plain[name] + 0.3 * (tuned[name] - plain[name])
        torch.testing.assert_close(half[name], expected, atol=1e-6, rtol=0)
    assert bi.rescaled(1.0).file_hash == bi.file_hash != bi.rescaled(0.3).file_hash
    with pytest.raises(InputError, match="adapter scale"):
        bi.rescaled(1.5)


def test_a_bi_encoder_at_scale_zero_ranks_pairs_by_the_plain_sentence_cosine():
    """At t = 0 the tuned cosine is the frozen MiniLM's: the score, inverted through its sigmoid, gives back the
    sentence cosine that the feature head computes with the plain encoder."""
    from styleval.content.features import PairFeaturizer

    bi = load_preservation_model(BI_MODEL, backend="torch").bi.rescaled(0.0)
    s, b = float(bi.head_w[0]), bi.head_b
    p = bi.score(A, B) / (1 + np.exp(-(s + b)))
    cos = (np.log(p / (1 - p)) - b) / s
    plain = PairFeaturizer(backend="torch").sentence_cosines(A, B)
    np.testing.assert_allclose(cos, plain, atol=1e-4)


def test_bad_weights_are_named(tmp_path):
    with pytest.raises(InputError, match="scale must be one positive number"):
        _random_bi(scale=-1.0)
    bad = tmp_path / "bi.npz"
    np.savez(bad, head_w=np.ones(1))
    with pytest.raises(InputError, match="bi.npz"):
        BiEncoder.load(bad, cat.DEFAULT_ENCODER)


def test_a_bi_encoder_model_runs_no_features_and_round_trips(tmp_path):
    head = load_preservation_model(FAST_MODEL)
    bi = _random_bi()
    model = one_pass_model(bi, "bi-only")
    assert not model.uses_features and model.head_weight == 0.0

    def no_features(*args: object, **kwargs: object) -> None:
        raise AssertionError("the feature head (and spaCy) ran although its weight is 0")

    model.featurizer.features = no_features  # type: ignore[method-assign]
    np.testing.assert_allclose(model.score(A, B), bi.score(A, B), atol=1e-12)
    assert "bi_encoder_hash" in model.resources() and "spacy_model" not in model.resources()
    folder = model.save(tmp_path / "m")
    assert json.loads((folder / "model.json").read_text())["format"] == "styleval-preservation/3"
    again = PreservationModel.load(folder, backend="torch")
    assert again.bi_weight == 1.0 and again.bi is not None and again.bi.file_hash == bi.file_hash
    np.testing.assert_allclose(again.score(A, B), model.score(A, B), atol=1e-6)
    with pytest.raises(InputError, match="at most 1"):
        PreservationModel(encoder=head.encoder, mean=head.mean, scale=head.scale, coef=head.coef, intercept=0.0,
                          bi=bi, bi_weight=0.75, cross=load_preservation_model().cross, cross_weight=0.5)


def test_the_shipped_bi_model_is_the_bi_encoder_alone(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_preservation_model(BI_MODEL)
    assert model.card["name"] == BI_MODEL and model.bi is not None and model.cross is None
    assert model.bi_weight == 1.0 and not model.uses_features
    assert "scripts/select_cross_encoder.py" in " ".join(model.card["notes"])
    assert sum(p.stat().st_size for p in model.folder.iterdir()) < 4_000_000


def test_the_metric_with_the_bi_model_signs_it_and_counts_long_texts_only():
    from styleval.metrics.base import Batch
    from styleval.metrics.registry import create
    from styleval.models.hashing import content_hash
    from styleval.content.pretrained import resolve_preservation_model

    m = create("preservation", against="source", model=BI_MODEL)
    words = "the committee met again on tuesday to discuss the budget of the new library and its opening hours"
    source = " ".join([words] * 4)  # about 80 tokens: fits alone; the pair would not, but no pair is encoded
    long = " ".join([words] * 9)  # over 128 tokens alone
    srcs, outs = [source, long, A[0]], [source.replace("tuesday", "monday"), B[0], A[0]]
    batch = Batch([str(i) for i in range(3)], outs, srcs, [[] for _ in range(3)], [None] * 3)
    stats = np.asarray(m.segment_stats(batch))
    np.testing.assert_array_equal(stats[:, 1], [0, 1, 0])
    assert stats[2, 0] == pytest.approx(1.0)
    res = m.score(batch)
    r = res.signature.resources
    assert r["preservation_model"] == BI_MODEL and r["bi_encoder_hash"] and "spacy_model" not in r
    assert r["preservation_model_hash"] == content_hash(resolve_preservation_model(BI_MODEL))[:12]
