"""The training loop shared by the cross- and bi-encoder (styleval.content.adapted.fit_adapters): batches of whole
source groups and the pairwise term that puts a style rewrite above a meaning change of the same source."""
from __future__ import annotations

import random

import numpy as np
import pytest

from styleval.content import PairData
from styleval.content.adapted import _batches, _ranked_pairs, fit_adapters
from styleval.errors import InputError
from tests.conftest import ADAPTER_PAIRS

torch = pytest.importorskip("torch")

GROUPS = ["style-rewrites", "changed", "style-rewrites", "changed"]


def _data(copies: int = 1) -> PairData:
    return PairData([p[0] for p in ADAPTER_PAIRS] * copies, [p[1] for p in ADAPTER_PAIRS] * copies,
                    [p[2] for p in ADAPTER_PAIRS] * copies, GROUPS * copies)


def test_random_batches_are_the_shuffled_order_cut_in_pieces():
    got = _batches(_data(5), 6, False, random.Random(3))
    order = list(range(20))
    random.Random(3).shuffle(order)
    assert got == [order[i:i + 6] for i in range(0, 20, 6)]


def test_source_batches_keep_each_source_whole_and_cover_every_pair_once():
    data = PairData([f"s{i % 7}" for i in range(40)], ["o"] * 40, [0.5] * 40)
    batches = _batches(data, 8, True, random.Random(0))
    assert sorted(i for b in batches for i in b) == list(range(40))
    where = {data.sources[i]: k for k, b in enumerate(batches) for i in b}
    assert all(where[data.sources[i]] == k for k, b in enumerate(batches) for i in b)
    assert all(len(b) >= 8 for b in batches[:-1])  # a batch closes once a whole group has filled it


def test_ranked_pairs_match_rewrites_and_changes_of_the_same_source():
    data = _data(2)
    above, below = _ranked_pairs(data, [0, 1, 2, 3, 4, 5])
    # source John: rewrites at positions 0 and 4, change at 1 and 5; hotel: rewrite 2, change 3
    assert sorted(zip(above, below)) == [(0, 1), (0, 5), (2, 3), (4, 1), (4, 5)]


def _loss_at_zero_learning_rate(rank_weight: float) -> tuple[float, dict]:
    data = _data()
    z = torch.nn.Parameter(torch.tensor([0.3, 1.2, -0.4, 0.1]))
    summary = fit_adapters(data, [z], lambda idx: z[idx], epochs=1, lr=0.0, batch_size=2, seed=0, what="test",
                           rank_weight=rank_weight)
    return summary["loss_first_10"], summary


def test_the_pairwise_term_is_added_to_the_weighted_cross_entropy():
    """Two batches (one per source), logits fixed (learning rate 0): the logged loss is the mean over batches of the
    group-weighted soft-target cross-entropy plus rank_weight * softplus(z_change - z_rewrite)."""
    z = np.array([0.3, 1.2, -0.4, 0.1])
    y = np.array([p[2] for p in ADAPTER_PAIRS])
    bce = -(y * np.log(1 / (1 + np.exp(-z))) + (1 - y) * np.log(1 - 1 / (1 + np.exp(-z))))
    plain = [bce[[0, 1]].mean(), bce[[2, 3]].mean()]  # equal group weights within each batch
    pairwise = [np.log1p(np.exp(z[1] - z[0])), np.log1p(np.exp(z[3] - z[2]))]
    got0, s0 = _loss_at_zero_learning_rate(0.0)
    got2, s2 = _loss_at_zero_learning_rate(2.0)
    assert got0 == pytest.approx(float(np.mean(plain)), abs=1e-4) and "rank_weight" not in s0
    assert got2 == pytest.approx(float(np.mean(plain) + 2.0 * np.mean(pairwise)), abs=1e-4)
    assert s2["batches"] == "whole source groups" and s2["ranked_pairs_seen"] == 2 and s2["steps"] == 2


def test_a_negative_rank_weight_is_refused():
    with pytest.raises(InputError, match="rank_weight"):
        _loss_at_zero_learning_rate(-1.0)


def test_a_bi_encoder_trained_with_the_pairwise_term_orders_the_pairs():
    from styleval.content.bi_encoder import train_bi_encoder
    from styleval.models import catalog as cat

    pytest.importorskip("transformers")
    data = _data(4)
    # lr 1e-3: at 3e-3 batches of one source each push every score to 1 on this toy set, with or without the term
    bi, summary = train_bi_encoder(data, encoder=cat.DEFAULT_ENCODER, rank=4, epochs=6, lr=1e-3, batch_size=8,
                                   rank_weight=1.0)
    # each source's 8 pairs fill one batch: 4 rewrites x 4 changes = 16 ranked pairs, 2 batches, 6 epochs
    assert summary["steps"] == 12 and summary["ranked_pairs_seen"] == 6 * 2 * 16
    got = bi.score([p[0] for p in ADAPTER_PAIRS], [p[1] for p in ADAPTER_PAIRS])
    assert got[0] > got[1] and got[2] > got[3]


def test_steps_count_every_epochs_own_batches():
    """Whole source groups of uneven size fall into a different number of batches in each epoch; the schedule and
    the progress total count the batches actually run."""
    sizes = [1, 5, 2, 7, 3, 1, 6, 2]
    data = PairData([f"s{k}" for k, n in enumerate(sizes) for _ in range(n)], ["o"] * sum(sizes),
                    [0.5] * sum(sizes))
    rng = random.Random(4)
    counts = [len(_batches(data, 6, True, rng)) for _ in range(5)]
    assert len(set(counts)) > 1  # the case this test is about
    z = torch.nn.Parameter(torch.zeros(len(data)))
    seen: list[tuple[int, int]] = []
    summary = fit_adapters(data, [z], lambda idx: z[idx], epochs=5, lr=0.0, batch_size=6, seed=4, what="test",
                           by_source=True, progress=lambda what, done, total: seen.append((done, total)))
    assert summary["steps"] == sum(counts) == len(seen) and seen[-1] == (sum(counts), sum(counts))


@pytest.mark.parametrize("kind", ["cross", "bi", "late"])
def test_training_lowers_the_loss_and_learns_the_pairs(kind):
    """Each adapted scorer, trained on four pairs for 12 steps, ranks each kept meaning above its change; the late
    encoder's head trains at 20 times the adapters' learning rate."""
    from styleval.content.bi_encoder import train_bi_encoder
    from styleval.content.cross_encoder import train_cross_encoder
    from styleval.content.late_encoder import train_late_encoder
    from styleval.models import catalog as cat

    trainer = {"cross": train_cross_encoder, "bi": train_bi_encoder, "late": train_late_encoder}[kind]
    a, b, y = ([p[i] for p in ADAPTER_PAIRS] for i in range(3))
    data = PairData(a * 4, b * 4, y * 4)
    model, summary = trainer(data, encoder=cat.DEFAULT_ENCODER, rank=4, epochs=6, lr=3e-3, batch_size=8)
    assert summary["steps"] == 12 and summary["loss_last_10"] < summary["loss_first_10"]
    assert summary.get("head_learning_rate") == (pytest.approx(3e-3 * 20) if kind == "late" else None)
    got = model.score(a, b)
    assert got[0] > got[1] and got[2] > got[3]
