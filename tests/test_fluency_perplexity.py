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


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="session")
def smollm_hf(smollm):
    """The same folder loaded by transformers (the reference the native loader must reproduce)."""
    from styleval.lm.loading import load_causal_lm

    return load_causal_lm(backend="transformers")


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


def test_equals_direct_transformers(smollm, smollm_hf):
    """The batched scorer on the native model equals the textbook loop on transformers' own model and tokenizer."""
    from styleval.lm.causal import token_nll

    assert smollm.backend == "native" and smollm_hf.backend == "transformers"
    res = token_nll(smollm, SENTENCES, batch_tokens=64)  # several batches
    for i, text in enumerate(SENTENCES):
        nll, n = _direct_nll(smollm_hf, text)
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
    assert result.signature.to_dict()["resources"]["lm_backend"] == "native"  # SmolLM2 runs on the native path
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
    from styleval.lm.loading import ensure_converted

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


TRICKY = ["  leading and   inner spaces", "tabs\tand\nnewlines", "ünïcödé, emoji 😀 and CJK 漢字", "",
          "<|im_start|> looks special", "I'M   gonna b there @5pm :)", "trailing space "]


def test_native_tokenizer_and_logits_equal_transformers(smollm, smollm_hf):
    import torch

    ids = smollm.tokenizer(SENTENCES + TRICKY, add_special_tokens=False)["input_ids"]
    assert ids == smollm_hf.tokenizer(SENTENCES + TRICKY, add_special_tokens=False)["input_ids"]
    for attr in ("bos_token_id", "eos_token_id", "pad_token_id"):
        assert getattr(smollm.tokenizer, attr) == getattr(smollm_hf.tokenizer, attr)
    # a right-padded batch: real positions equal transformers' with its attention mask
    rows = [[smollm.tokenizer.bos_token_id] + r for r in ids[:4]]
    width = max(map(len, rows))
    inp = torch.full((len(rows), width), smollm.tokenizer.pad_token_id)
    att = torch.zeros_like(inp)
    for r, row in enumerate(rows):
        inp[r, :len(row)] = torch.tensor(row)
        att[r, :len(row)] = 1
    with torch.inference_mode():
        ours = smollm.model(inp, att).logits[att.bool()]
        theirs = smollm_hf.model(input_ids=inp, attention_mask=att).logits[att.bool()]
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="right-padded"):
        smollm.model(inp, att.flip(1))  # left padding would need a padding mask, which the native model refuses


def test_default_lm_loads_without_transformers(smollm):
    """A fresh process loads the default LM without importing transformers (the ~3 s part of a load)."""
    import subprocess
    import sys

    code = ("import sys, torch; from styleval.lm.loading import load_causal_lm; lm = load_causal_lm(); "
            "print(lm.backend, sorted(m for m in sys.modules if m.split('.')[0] in ('transformers', 'peft')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["native", "[]"]
    assert "Loading weights" not in out.stderr


def test_lora_adapter_merged_natively_equals_peft(smollm, smollm_hf, tmp_path):
    """A plain LoRA adapter (random, non-zero B) merged into the native weights equals peft's merge."""
    if importlib.util.find_spec("peft") is None:
        pytest.skip("peft is not installed")
    import json

    import peft
    import torch

    from styleval.lm.causal import token_nll
    from styleval.lm.native import merge_lora
    from styleval.lm.loading import ADAPTER_CARD, load_transformers, ensure_converted, load_causal_lm

    folder = ensure_converted(smollm.spec)
    _, base = load_transformers(folder)
    torch.manual_seed(0)
    cfg = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"],
                          init_lora_weights=False)  # random A and B, so the adapter changes the scores
    peft.get_peft_model(base, cfg).save_pretrained(str(tmp_path / "lora"))
    (tmp_path / "lora" / ADAPTER_CARD).write_text(json.dumps({"name": "test-lora", "base_model": str(folder)}))
    native = load_causal_lm(tmp_path / "lora")
    via_peft = load_causal_lm(tmp_path / "lora", backend="transformers")
    assert native.backend == "native" and via_peft.backend == "transformers"
    a, b = token_nll(native, SENTENCES), token_nll(via_peft, SENTENCES)
    np.testing.assert_allclose(a.nll, b.nll, rtol=1e-4)
    assert not np.allclose(a.nll, token_nll(smollm, SENTENCES).nll, rtol=1e-3)  # the adapter did change them
    # anything beyond plain LoRA is left to peft
    cfg_path = tmp_path / "lora" / "adapter_config.json"
    data = json.loads(cfg_path.read_text())
    cfg_path.write_text(json.dumps({**data, "use_dora": True}))
    assert merge_lora(smollm.model.state_dict(), tmp_path / "lora") is None
