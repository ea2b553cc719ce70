"""N-gram LM: the built-in modified Kneser-Ney estimator against KenLM's own scores of the ARPA it writes."""
from __future__ import annotations

import math

import numpy as np
import pytest

kenlm = pytest.importorskip("kenlm", reason="kenlm is not installed (pip install ufal.kenlm)")

from styleval.errors import InputError  # noqa: E402
from styleval.lm.ngram import KneserNey, NgramLM, estimate_arpa, tokenize  # noqa: E402
from styleval.metrics import registry  # noqa: E402
from styleval.metrics.base import Batch  # noqa: E402
from styleval.records import Direction  # noqa: E402

PROBES = ["the food was great .", "zzz qqq the staff !", "i love this place", "worst service ever ."]


@pytest.fixture(scope="module")
def yelp(shared_data):
    from styleval.datasets import yelp_shen
    from styleval.readers.text import read_lines

    path = yelp_shen.path(shared_data, "dev", 1)
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return read_lines(path)[:2000]


@pytest.fixture(scope="module")
def arpa(yelp, tmp_path_factory):
    path = tmp_path_factory.mktemp("ngram") / "pos.arpa"
    return estimate_arpa(yelp, path, order=3, use_lmplz=False)


def test_kenlm_scores_equal_estimator(yelp, arpa):
    kn = KneserNey.fit([tokenize(s) for s in yelp], 3)
    model = kenlm.Model(str(arpa))
    for text in PROBES:
        toks = tokenize(text)
        ctx, mine = ["<s>"], []
        for w in toks + ["</s>"]:
            mine.append(math.log10(kn.prob(w, ctx)))
            ctx.append(w)
        theirs = [s[0] for s in model.full_scores(" ".join(toks))]
        np.testing.assert_allclose(mine, theirs, atol=2e-6)
        assert sum(mine) == pytest.approx(model.score(" ".join(toks)), abs=1e-5)


def test_distributions_normalize(yelp):
    kn = KneserNey.fit([tokenize(s) for s in yelp], 3)
    for ctx in ([], ["<s>"], ["the"], ["the", "food"], ["unseen", "words"]):
        assert sum(kn.prob(w, ctx) for w in kn.vocab) == pytest.approx(1.0, abs=1e-9)


def test_discounts_follow_count_of_counts():
    kn = KneserNey.fit([["a", "b", "a"], ["b", "c"], ["a", "b", "b", "a"]], 3)
    assert kn.discounts[0] == (0.5, 1.0, 1.5)  # too little data: lmplz's fallback discounts
    counts = {1: 10, 2: 5, 3: 3, 4: 2}
    from styleval.lm.ngram import _discounts

    table = {(str(i),): c for i, c in enumerate(c for c, n in counts.items() for _ in range(n))}
    y = 10 / (10 + 2 * 5)
    assert _discounts(table) == pytest.approx((1 - 2 * y * 5 / 10, 2 - 3 * y * 3 / 5, 3 - 4 * y * 2 / 3))


def test_metric_uses_style_lm(arpa, tmp_path):
    other = estimate_arpa(["this is a formal sentence .", "we would like to thank you ."] * 3,
                          tmp_path / "formal.arpa", order=2, use_lmplz=False)
    lm = NgramLM(arpa)
    nll, n = lm.token_nll(PROBES)
    assert n.tolist() == [len(tokenize(t)) + 1 for t in PROBES]
    batch = Batch(ids=["0", "1"], outputs=PROBES[:2], sources=["", ""], references=[[], []],
                  directions=[Direction("negative", "positive"), Direction("positive", "formal")])
    metric = registry.create("ngram-perplexity", style_lms=f"positive={arpa};formal={other}")
    res = metric.score(batch)
    assert res.stats[0, 0] == pytest.approx(nll[0])
    assert res.stats[1, 0] != pytest.approx(nll[1])
    assert res.corpus_score == pytest.approx(math.exp(res.stats[:, 0].sum() / res.stats[:, 1].sum()))
    assert "lm[positive]_hash" in res.signature.resources
    with pytest.raises(InputError):
        registry.create("ngram-perplexity")


def test_train_ngram_lm_writes_card(tmp_path):
    import json

    from styleval.training.lm import train_ngram_lm

    path = train_ngram_lm(["we are grateful .", "thank you very much .", ""], tmp_path / "f.arpa", style="formal",
                          order=2)
    card = json.loads((tmp_path / "f.arpa.json").read_text())
    assert card["style"] == "formal" and card["n_sentences"] == 2 and card["smoothing"] == "modified-kneser-ney"
    assert NgramLM(path).order == 2
    with pytest.raises(InputError):
        train_ngram_lm(["", " "], tmp_path / "g.arpa", style="formal")
