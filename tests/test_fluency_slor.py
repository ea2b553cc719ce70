"""slor and mean_logprob against an independent computation: a one-sentence forward pass with full logits and the
unigram probabilities recomputed from the shipped count file by hand."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from styleval.errors import InputError
from styleval.metrics import registry
from styleval.metrics.base import Batch
from styleval.records import Direction

SENTENCES = ["The food was great and the staff were friendly.", "the food was was great and the .",
             "i did n't like it at all .", "gonna b there at 5"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _batch(outputs, directions=None) -> Batch:
    n = len(outputs)
    return Batch(ids=[str(i) for i in range(n)], outputs=list(outputs), sources=[""] * n,
                 references=[[] for _ in range(n)], directions=list(directions or [None] * n))


def _direct(lm, text: str) -> tuple[list[int], np.ndarray]:
    """Token ids and log-probs the textbook way: BOS + tokens, one sentence, full logits, log-softmax."""
    import torch

    ids = lm.tokenizer(text, add_special_tokens=False)["input_ids"]
    inp = torch.tensor([[lm.tokenizer.bos_token_id] + list(ids)])
    with torch.no_grad():
        logits = lm.model(inp).logits[0, :-1].double()
    lp = torch.log_softmax(logits, dim=-1).gather(1, inp[0, 1:, None])[:, 0]
    return list(ids), lp.numpy()


def _unigram_by_hand() -> tuple[dict[int, int], int, int, float]:
    from styleval.acceptability.unigram import DATA_DIR, DEFAULT_UNIGRAM

    with np.load(DATA_DIR / f"{DEFAULT_UNIGRAM}.npz") as z:
        meta = json.loads(str(z["meta"]))
        counts = dict(zip(z["ids"].tolist(), z["counts"].tolist()))
    return counts, sum(counts.values()), int(meta["vocab_size"]), float(meta["alpha"])


def test_slor_and_mean_logprob_equal_hand_computation(smollm):
    counts, total, vocab, alpha = _unigram_by_hand()
    slor = registry.create("slor", normalize="none").score(_batch(SENTENCES))
    mean = registry.create("mean_logprob", normalize="none").score(_batch(SENTENCES))
    for i, text in enumerate(SENTENCES):
        ids, lp = _direct(smollm, text)
        uni = sum(math.log((counts.get(t, 0) + alpha) / (total + alpha * vocab)) for t in ids)
        assert slor.segment_scores[i] == pytest.approx((lp.sum() - uni) / len(ids), rel=1e-4, abs=1e-4)
        assert mean.segment_scores[i] == pytest.approx(lp.mean(), rel=1e-4)
    assert slor.corpus_score == pytest.approx(np.mean(slor.segment_scores))
    # the broken sentence scores below the well-formed one on both
    assert slor.segment_scores[1] < slor.segment_scores[0] and mean.segment_scores[1] < mean.segment_scores[0]


def test_signature_names_unigram_corpus_and_normalisation(smollm):
    res = registry.create("slor", normalize="detok+truecase").score(_batch(SENTENCES[:3] + [""]))
    sig = res.signature.to_dict()
    assert sig["params"]["normalize"] == "detok+truecase" and sig["params"]["unigram"] == "smollm2-mixed-public"
    assert sig["resources"]["unigram_corpus"] == "mixed-public" and len(sig["resources"]["unigram_hash"]) == 12
    assert sig["resources"]["lm_backend"] == "native" and "lm_hash" in sig["resources"]
    assert math.isnan(res.segment_scores[3]) and res.flags["empty_output"] == ["3"]
    # normalisation is applied before scoring: the tokenized sentence scores as its detokenized, true-cased form
    direct = registry.create("slor", normalize="none").score(_batch(["I didn't like it at all."]))
    assert res.segment_scores[2] == pytest.approx(direct.segment_scores[0], rel=1e-6)


def test_style_lms_work_and_fall_back(smollm):
    from styleval.lm.loading import ensure_converted

    folder = ensure_converted(smollm.spec)  # any causal-LM folder serves as the "formal" LM here
    dirs = [Direction("informal", "formal"), Direction("formal", "informal")]
    res = registry.create("slor", style_lms=f"formal={folder}", normalize="none").score(_batch(SENTENCES[:2], dirs))
    sig = res.signature.to_dict()
    assert sig["resources"]["lm_fallback"] == "informal->generic" and "lm[formal]_hash" in sig["resources"]
    generic = registry.create("slor", normalize="none").score(_batch(SENTENCES[:2]))
    np.testing.assert_allclose(res.segment_scores, generic.segment_scores, rtol=1e-4)


def test_style_lms_score_each_row_by_its_target_style_adapter(smollm, tmp_path):
    """With a LoRA adapter that changes the scores as the "positive" LM, rows whose direction targets positive get
    exactly the adapter's scores and the others the generic LM's, for slor and mean_logprob alike."""
    import importlib.util

    if importlib.util.find_spec("peft") is None:
        pytest.skip("peft is not installed")
    import peft
    import torch

    from styleval.lm.loading import ADAPTER_CARD, load_transformers, ensure_converted

    folder = ensure_converted(smollm.spec)
    _, base = load_transformers(folder)
    torch.manual_seed(0)
    cfg = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    peft.get_peft_model(base, cfg).save_pretrained(str(tmp_path / "pos"))
    (tmp_path / "pos" / ADAPTER_CARD).write_text(json.dumps({"name": "test-positive", "base_model": str(folder)}))
    dirs = [Direction("negative", "positive"), Direction("positive", "negative")] * 2
    for name in ("slor", "mean_logprob"):
        styled = registry.create(name, style_lms={"positive": str(tmp_path / "pos")}, normalize="none")
        res = styled.score(_batch(SENTENCES, dirs))
        adapter = registry.create(name, model=str(tmp_path / "pos"), normalize="none").score(_batch(SENTENCES))
        generic = registry.create(name, normalize="none").score(_batch(SENTENCES))
        to_pos, to_neg = [0, 2], [1, 3]
        got, want_pos, want_neg = (np.asarray(r.segment_scores) for r in (res, adapter, generic))
        np.testing.assert_allclose(got[to_pos], want_pos[to_pos], rtol=1e-6)
        np.testing.assert_allclose(got[to_neg], want_neg[to_neg], rtol=1e-6)
        assert not np.allclose(adapter.segment_scores, generic.segment_scores, rtol=1e-3)  # the adapter matters
        sig = res.signature.to_dict()["resources"]
        assert sig["lm_fallback"] == "negative->generic" and sig["lm[positive]"] == "test-positive"


def test_bad_parameters_are_refused():
    with pytest.raises(InputError, match="normalize must be one of"):
        registry.create("slor", normalize="lowercase")
    with pytest.raises(InputError, match="neither a shipped one"):
        registry.create("slor", unigram="/no/such/file.npz")
    with pytest.raises(InputError, match="batch_tokens"):
        registry.create("mean_logprob", batch_tokens=0)


def test_unigram_refuses_another_tokenizer(tmp_path):
    from styleval.acceptability.unigram import build_unigram, load_unigram

    class Chars:  # a toy tokenizer: one id per character
        def __call__(self, texts, add_special_tokens=False):
            return {"input_ids": [[ord(c) % 50 for c in t] for t in texts]}

        def decode(self, ids):
            return "".join(chr(i + 97) for i in ids)

        def __len__(self):
            return 50

    model = build_unigram(["abc", "aab"], Chars(), name="toy", corpus="two strings")
    path = model.save(tmp_path / "toy.npz")
    back = load_unigram(path)
    assert back.meta["n_tokens"] == 6 and back.counts[ord("a") % 50] == 3
    assert back.logprob(np.array([ord("a") % 50])) == pytest.approx(math.log((3 + 1) / (6 + 50)))
    back.check_tokenizer(Chars())

    class Other(Chars):
        def __len__(self):
            return 60

    with pytest.raises(InputError, match="another tokenizer"):
        back.check_tokenizer(Other())
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a styleval unigram model"):
        load_unigram(tmp_path / "bad.npz")


def test_normalisation():
    from styleval.textnorm.readable import normalize, tokenize_lower

    assert normalize("i did n't like it , i think . it 's ok !") == "I didn't like it, I think. It's ok!"
    assert normalize("The iPhone is fine", "detok+truecase") == "The iPhone is fine"
    assert normalize("a ( b )", "detok") == "a (b)"
    assert tokenize_lower("I don't know, it's OK.") == "i do n't know , it 's ok ."
    with pytest.raises(InputError):
        normalize("x", "upper")


def test_perplexity_normalisation_option(smollm):
    tokenized = registry.create("perplexity", normalize="detok+truecase").score(_batch(["i did n't like it , ok ."]))
    plain = registry.create("perplexity").score(_batch(["I didn't like it, ok."]))
    assert tokenized.segment_scores[0] == pytest.approx(plain.segment_scores[0], rel=1e-6)
    assert tokenized.signature.to_dict()["params"]["normalize"] == "detok+truecase"
    assert "normalize" not in plain.signature.to_dict()["params"]  # signatures from before the option unchanged
    # and mean_logprob is minus the log of the segment perplexity, from the same LM pass
    mean = registry.create("mean_logprob", normalize="none").score(_batch(["I didn't like it, ok."]))
    assert math.exp(-mean.segment_scores[0]) == pytest.approx(plain.segment_scores[0], rel=1e-5)


def test_auto_normalisation_follows_the_release(smollm):
    """A lower-cased tokenized text is detokenized and true-cased; a cased, detokenized one is left alone; ``auto``
    decides per text, ``auto-corpus`` once per system (and names what it applied)."""
    from styleval.textnorm.readable import resolve_auto

    released = ["i did n't like it at all .", "the staff is great !"]
    auto = registry.create("slor").score(_batch(released))
    fixed = registry.create("slor", normalize="detok+truecase").score(_batch(released))
    np.testing.assert_allclose(auto.segment_scores, fixed.segment_scores, rtol=1e-9)
    assert auto.signature.to_dict()["resources"]["normalized"] == "per text"
    assert "normalized_as" not in auto.signature.to_dict()["resources"]
    mixed = ["I didn't like it at all.", "the staff is great"]  # one cased row: a corpus decision reads both as is
    per_text = registry.create("slor").score(_batch(mixed)).segment_scores
    corpus = registry.create("slor", normalize="auto-corpus").score(_batch(mixed))
    as_is = registry.create("slor", normalize="none").score(_batch(mixed)).segment_scores
    cased = registry.create("slor", normalize="truecase").score(_batch(mixed)).segment_scores
    assert per_text[0] == pytest.approx(as_is[0], rel=1e-9) and per_text[1] == pytest.approx(cased[1], rel=1e-9)
    np.testing.assert_allclose(corpus.segment_scores, as_is, rtol=1e-9)
    assert corpus.signature.to_dict()["resources"]["normalized_as"] == "none"
    assert per_text[1] != pytest.approx(as_is[1], rel=1e-6)  # true-casing the lower-cased row moves its score
    assert resolve_auto(["It depends.", "i dont know lol"]) == "none"
    assert resolve_auto(["i dont know lol", "me too"]) == "truecase"
    assert resolve_auto(["It 's fine .", "Yes ."]) == "detok"
