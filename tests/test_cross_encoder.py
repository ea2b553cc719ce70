"""The preservation cross-encoder: LoRA training, merging adapters into the encoder, storage, and its place in a
preservation model (styleval.preservation.cross_encoder)."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.preservation import LogisticHead, PairSetup, PreservationModel, load_preservation_model
from styleval.preservation.cross_encoder import CrossEncoder
from styleval.preservation.model import Part
from styleval.errors import InputError
from styleval.models import catalog as cat
from tests.conftest import ADAPTER_PAIRS, random_adapted

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

PAIRS = ADAPTER_PAIRS


def _random_cross(rank: int = 2, seed: int = 0) -> CrossEncoder:
    head = np.random.default_rng(seed + 100).normal(0, 0.1, 384).astype(np.float32)
    return random_adapted(CrossEncoder, head, 0.3, rank, seed)  # type: ignore[return-value]


def test_merged_weights_equal_the_adapters_run_beside_the_encoder():
    """W + s*B@A in the merged copy gives the hidden states of the base encoder with the adapters added on the side."""
    from styleval.models.encoder import load_encoder, load_tokenizer

    cross = _random_cross()
    tok = load_tokenizer(cat.DEFAULT_ENCODER)
    _, base = load_encoder(cat.DEFAULT_ENCODER)
    x = tok([p[0] for p in PAIRS], [p[1] for p in PAIRS], padding=True, return_tensors="pt")
    handles = []
    modules = dict(base.named_modules())
    for name, (a, b) in cross.adapters.items():
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        handles.append(modules[name].register_forward_hook(
            lambda m, i, o, ta=ta, tb=tb: o + cross.scaling * (i[0] @ ta.T) @ tb.T))
    try:
        with torch.inference_mode():
            side = base(**x).last_hidden_state.numpy()
    finally:
        for h in handles:
            h.remove()
    with torch.inference_mode():
        merged = cross.merged_encoder()(**x).last_hidden_state.numpy()
        plain = base(**x).last_hidden_state.numpy()  # the shared base encoder is left untouched
    mask = x["attention_mask"].numpy().astype(bool)
    np.testing.assert_allclose(merged[mask], side[mask], atol=2e-5)
    assert np.abs(plain[mask] - side[mask]).max() > 1e-3


def test_save_load_and_onnx_give_the_same_scores(tmp_path, monkeypatch):
    """The cross-encoder stores, reloads and runs on ONNX Runtime with the same scores."""
    from styleval.models.onnx_encoder import onnx_available

    model = _random_cross()
    cls = type(model)
    a, b = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    before = model.score(a, b)
    assert np.all((before > 0) & (before < 1))
    model.save(tmp_path / "w.npz")
    again = cls.load(tmp_path / "w.npz", cat.DEFAULT_ENCODER, backend="torch")
    assert again.file_hash == model.file_hash and again.rank == 2
    np.testing.assert_allclose(again.score(a, b), before, atol=1e-6)
    if onnx_available():
        monkeypatch.setenv("STYLEVAL_CACHE", str(tmp_path / "cache"))
        fast = cls.load(tmp_path / "w.npz", cat.DEFAULT_ENCODER, backend="onnx")
        np.testing.assert_allclose(fast.score(a, b), before, atol=1e-5)


def test_a_broken_weights_file_is_named(tmp_path):
    bad = tmp_path / "cross.npz"
    np.savez(bad, head_w=np.zeros(384))
    with pytest.raises(InputError, match="cross.npz"):
        CrossEncoder.load(bad, cat.DEFAULT_ENCODER)
    with pytest.raises(InputError, match="missing"):
        CrossEncoder.load(tmp_path / "none.npz", cat.DEFAULT_ENCODER)


def test_a_model_with_a_cross_encoder_averages_and_round_trips(tmp_path):
    v1 = load_preservation_model()
    cross = _random_cross()
    head = LogisticHead(mean=v1.mean, scale=v1.scale, coef=v1.coef, intercept=v1.intercept, ceiling=v1.ceiling)
    model = PreservationModel(head=head, pairs=PairSetup(v1.encoder, v1.spacy_model, v1.style_words, backend="torch"),
                              card={"name": "with-cross"}, cross=cross,
                              parts=[Part("head", 0.75), Part("cross_encoder", 0.25)])
    a, b = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    head = model.from_features(model.featurizer.features(a, b))
    np.testing.assert_allclose(model.score(a, b), 0.75 * head + 0.25 * cross.score(a, b), atol=1e-9)
    # features computed before (as the results script keeps them on disk) give the same score
    np.testing.assert_array_equal(model.score(a, b, features=model.featurizer.features(a, b)), model.score(a, b))
    folder = model.save(tmp_path / "m")
    again = PreservationModel.load(folder, backend="torch")
    assert again.weight("cross_encoder") == 0.25 and "cross_encoder_hash" in again.resources()
    np.testing.assert_allclose(again.score(a, b), model.score(a, b), atol=1e-6)
    with pytest.raises(InputError, match="needs a cross_encoder part"):
        PreservationModel(head=LogisticHead(mean=v1.mean, scale=v1.scale, coef=v1.coef, intercept=0.0),
                          pairs=PairSetup(v1.encoder), cross=cross)
