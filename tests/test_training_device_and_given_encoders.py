"""Training the encoders elsewhere: the device choice, pair files written for another machine, and a preservation
model assembled from an encoder trained there (scripts/train_preservation.py --encoders-from)."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.content import PairData, read_pairs, write_pairs
from styleval.errors import InputError
from tests.conftest import ADAPTER_PAIRS

torch = pytest.importorskip("torch")


def test_written_pair_files_read_back_unchanged(tmp_path):
    data = PairData(["A \"quoted\"\tsource", "Zoë's café"], ["out one", "out\ntwo"], [0.15, 1 / 3],
                    ["changed", "human-lai"], [1.0, 2.5], origin="test")
    back = read_pairs(write_pairs(data, tmp_path / "pairs.jsonl"))
    assert back.data_hash() == data.data_hash()
    assert back.groups == data.groups and back.weights == data.weights and back.scores == data.scores


def test_training_device_names():
    from styleval.content.adapted import training_device

    assert training_device("cpu") == "cpu"
    assert training_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(InputError, match="'auto', 'cpu' or 'cuda"):
        training_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="sees no GPU"):
            training_device("cuda:0")


def _pairs(copies: int) -> PairData:
    return PairData([p[0] for p in ADAPTER_PAIRS] * copies, [p[1] for p in ADAPTER_PAIRS] * copies,
                    [p[2] for p in ADAPTER_PAIRS] * copies, ["style-rewrites", "changed"] * 2 * copies)


def test_a_given_cross_encoder_is_used_as_is_and_its_run_goes_on_the_card():
    pytest.importorskip("spacy")
    from styleval.content.cross_encoder import train_cross_encoder
    from styleval.content.train import train_preservation_model
    from styleval.models import catalog as cat

    elsewhere = _pairs(3)
    cross, summary = train_cross_encoder(elsewhere, encoder=cat.DEFAULT_ENCODER, rank=2, epochs=1, batch_size=4)
    assert summary["device"] == "cpu" and summary["steps"] == 3
    model = train_preservation_model(_pairs(4), selection=_pairs(1), encoder_train=elsewhere,
                                     given_encoders={"cross": (cross, {**summary, "note": "trained elsewhere"})},
                                     cross_weight=0.5)
    assert model.cross is cross and model.cross_weight == 0.5
    part = model.card["parameters"]["cross_encoder"]
    assert part["note"] == "trained elsewhere" and part["steps"] == 3
    assert part["trained_on"]["data_hash"] == elsewhere.data_hash() and part["trained_on"]["n"] == 12
    src, out = [p[0] for p in ADAPTER_PAIRS], [p[1] for p in ADAPTER_PAIRS]
    head = model.from_features(model.featurizer.features(src, out))
    np.testing.assert_allclose(model.score(src, out), 0.5 * head + 0.5 * cross.score(src, out), atol=1e-6)
    with pytest.raises(InputError, match="'cross' and/or 'bi'"):
        train_preservation_model(_pairs(4), selection=_pairs(1), given_encoders={"head": (cross, {})})
    with pytest.raises(InputError, match="add up to more than 1"):
        train_preservation_model(_pairs(4), selection=_pairs(1), given_encoders={"cross": (cross, summary)},
                                 cross_weight=0.5, bi_epochs=1, bi_weight=0.75)


def test_a_shallow_cross_encoder_keeps_its_depth_through_save_and_load(tmp_path):
    """A cross-encoder on MiniLM's first two layers: 12 adapted projections, the depth stored with the adapters, and
    the score equal to one computed from transformers' own two-layer model (``num_hidden_layers=2``)."""
    from transformers import AutoModel

    from styleval.content.adapted import truncate
    from styleval.content.cross_encoder import CrossEncoder, train_cross_encoder
    from styleval.content.features import _local_spec, load_tokenizer
    from styleval.models import catalog as cat
    from styleval.models.lora import merge_adapters
    from styleval.models.pool import transformers_dir

    cross, summary = train_cross_encoder(_pairs(2), encoder=cat.DEFAULT_ENCODER, rank=2, epochs=1, batch_size=4,
                                         layers=2)
    assert summary["layers"] == 2 and summary["adapted_layers"] == 12
    assert all(".layer.0." in name or ".layer.1." in name for name in cross.adapters)
    cross.save(tmp_path / "cross.npz")
    back = CrossEncoder.load(tmp_path / "cross.npz", cat.DEFAULT_ENCODER, backend="torch")
    assert back.layers == 2 and back.file_hash == cross.file_hash
    full_depth = CrossEncoder(cat.DEFAULT_ENCODER, cross.adapters, cross.scaling, cross.head_w, cross.head_b,
                              backend="torch")
    assert full_depth.file_hash != cross.file_hash  # the depth is part of the identity
    src, out = [p[0] for p in ADAPTER_PAIRS], [p[1] for p in ADAPTER_PAIRS]
    got = back.score(src, out)

    reference = AutoModel.from_pretrained(str(transformers_dir(_local_spec(cat.DEFAULT_ENCODER))),
                                          local_files_only=True, num_hidden_layers=2, dtype=torch.float32)
    assert len(reference.encoder.layer) == 2
    merge_adapters(reference, cross.adapters, cross.scaling, cat.DEFAULT_ENCODER).eval()
    tok = load_tokenizer(cat.DEFAULT_ENCODER)
    with torch.inference_mode():
        x = tok(src, out, padding=True, truncation=True, max_length=128, return_tensors="pt")
        hidden = reference(**x).last_hidden_state
        mask = x["attention_mask"].unsqueeze(-1).float()
        pooled = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
    want = 1.0 / (1.0 + np.exp(-(pooled @ cross.head_w + cross.head_b)))
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert not np.allclose(full_depth.score(src, out), got, atol=1e-3)
    with pytest.raises(InputError, match="between 1 and the encoder's 6"):
        truncate(AutoModel.from_pretrained(str(transformers_dir(_local_spec(cat.DEFAULT_ENCODER))),
                                           local_files_only=True), 7)
    with pytest.raises(InputError, match="0 \\(all\\) or more"):
        CrossEncoder(cat.DEFAULT_ENCODER, cross.adapters, cross.scaling, cross.head_w, cross.head_b, layers=-1)
