"""Training the encoders elsewhere: the device choice, pair files written for another machine, and a preservation
model assembled from an encoder trained there (studies/preservation/train_preservation.py --encoders-from)."""
from __future__ import annotations

import numpy as np
import pytest

from styleval.preservation import PairData, read_pairs, write_pairs
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
    from styleval.training.cross_encoder import training_device

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
    from styleval.training.cross_encoder import train_cross_encoder
    from styleval.training.options import AdapterFit, CrossEncoderOptions
    from styleval.training.preservation import PreservationRecipe, train_preservation_model
    from styleval.models import catalog as cat

    elsewhere = _pairs(3)
    cross, summary = train_cross_encoder(elsewhere, encoder=cat.DEFAULT_ENCODER,
                                         options=CrossEncoderOptions(rank=2, fit=AdapterFit(epochs=1, batch_size=4)))
    assert summary["device"] == "cpu" and summary["steps"] == 3
    recipe = PreservationRecipe(cross_weight=0.5)
    model = train_preservation_model(_pairs(4), recipe, selection=_pairs(1), encoder_train=elsewhere,
                                     given_cross=(cross, {**summary, "note": "trained elsewhere"}))
    assert model.cross is cross and model.weight("cross_encoder") == 0.5
    part = model.card["parameters"]["cross_encoder"]
    assert part["note"] == "trained elsewhere" and part["steps"] == 3
    assert part["trained_on"]["data_hash"] == elsewhere.data_hash() and part["trained_on"]["n"] == 12
    src, out = [p[0] for p in ADAPTER_PAIRS], [p[1] for p in ADAPTER_PAIRS]
    head = model.from_features(model.featurizer.features(src, out))
    np.testing.assert_allclose(model.score(src, out), 0.5 * head + 0.5 * cross.score(src, out), atol=1e-6)
    with pytest.raises(InputError, match=r"cross-encoder's weight must be in \(0, 1\)"):
        train_preservation_model(_pairs(4), PreservationRecipe(cross_weight=1.0), selection=_pairs(1),
                                 given_cross=(cross, summary))
