"""The cross-encoder's training loop (styleval.training.cross_encoder.fit_adapters): batches, the loss it logs, and a
short run that learns its pairs."""
from __future__ import annotations

import random

import numpy as np
import pytest

from styleval.preservation import PairData
from styleval.training.cross_encoder import _batches, fit_adapters
from styleval.training.options import AdapterFit, CrossEncoderOptions
from tests.conftest import ADAPTER_PAIRS

torch = pytest.importorskip("torch")

GROUPS = ["style-rewrites", "changed", "style-rewrites", "changed"]


def _data(copies: int = 1) -> PairData:
    return PairData([p[0] for p in ADAPTER_PAIRS] * copies, [p[1] for p in ADAPTER_PAIRS] * copies,
                    [p[2] for p in ADAPTER_PAIRS] * copies, GROUPS * copies)


def test_random_batches_are_the_shuffled_order_cut_in_pieces():
    got = _batches(_data(5), 6, random.Random(3))
    order = list(range(20))
    random.Random(3).shuffle(order)
    assert got == [order[i:i + 6] for i in range(0, 20, 6)]


def test_the_logged_loss_is_the_group_weighted_soft_target_cross_entropy():
    """Logits fixed (learning rate 0), one batch of all four pairs: the logged loss is the soft-target binary
    cross-entropy weighted by group (two groups of two pairs: equal weights here), computed by hand."""
    z = np.array([0.3, 1.2, -0.4, 0.1])
    y = np.array([p[2] for p in ADAPTER_PAIRS])
    bce = -(y * np.log(1 / (1 + np.exp(-z))) + (1 - y) * np.log(1 - 1 / (1 + np.exp(-z))))
    param = torch.nn.Parameter(torch.tensor(z, dtype=torch.float32))
    seen: list[tuple[int, int]] = []
    summary = fit_adapters(_data(), [param], lambda idx: param[idx],
                           fit=AdapterFit(epochs=3, lr=0.0, batch_size=4, seed=0), what="test",
                           progress=lambda what, done, total: seen.append((done, total)))
    assert summary["loss_first_10"] == pytest.approx(float(bce.mean()), abs=5e-5)  # the summary keeps 4 places
    assert summary["steps"] == 3 and seen == [(1, 3), (2, 3), (3, 3)]


def test_training_lowers_the_loss_and_learns_the_pairs():
    """The cross-encoder, trained on four pairs for 12 steps, ranks each kept meaning above its change."""
    from styleval.training.cross_encoder import train_cross_encoder
    from styleval.models import catalog as cat

    a, b, y = ([p[i] for p in ADAPTER_PAIRS] for i in range(3))
    data = PairData(a * 4, b * 4, y * 4)
    model, summary = train_cross_encoder(data, encoder=cat.DEFAULT_ENCODER,
                                         options=CrossEncoderOptions(rank=4, fit=AdapterFit(epochs=6, lr=3e-3,
                                                                                            batch_size=8)))
    assert summary["steps"] == 12 and summary["loss_last_10"] < summary["loss_first_10"]
    got = model.score(a, b)
    assert got[0] > got[1] and got[2] > got[3]
