"""styleval's TER shift search against sacrebleu's own (``lib_ter.translation_edit_rate``), side by side."""
from __future__ import annotations

import random

import pytest

from sacrebleu.metrics.lib_ter import translation_edit_rate

from styleval.metrics.content.ter_edits import encode, ter_edits


def _edited(rng: random.Random, ref: list[str], vocab: list[str]) -> list[str]:
    hyp = list(ref)
    for _ in range(rng.randint(0, 6)):
        op = rng.random()
        if op < 0.3 and hyp:
            hyp.pop(rng.randrange(len(hyp)))
        elif op < 0.6:
            hyp.insert(rng.randint(0, len(hyp)), rng.choice(vocab + ["unseen"]))
        elif hyp:  # move a span: what shifts are for
            a, n = rng.randrange(len(hyp)), rng.randint(1, 4)
            span = hyp[a:a + n]
            del hyp[a:a + n]
            pos = rng.randint(0, len(hyp))
            hyp[pos:pos] = span
    return hyp


@pytest.mark.parametrize("seed", [0, 1])
def test_same_edits_as_sacrebleu_on_random_sentences(seed):
    """Short sentences (plain Levenshtein inside the beam) and long ones (sacrebleu's beam restricts the
    matrix; > 25 words), small vocabularies so that many shifts tie."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(10)]
    for _ in range(150):
        n_ref = rng.choice([0, 1, 2, 4, 7, 12, 20, 27, 33])
        words = vocab[: rng.randint(2, 10)]
        ref = [rng.choice(words) for _ in range(n_ref)]
        if rng.random() < 0.6:
            hyp = _edited(rng, ref, words)
        else:
            hyp = [rng.choice(words + ["x", "y"]) for _ in range(rng.randint(0, 40))]
        assert ter_edits(hyp, ref) == tuple(translation_edit_rate(hyp, ref)), (hyp, ref)


def test_very_different_lengths_widen_the_beam():
    rng = random.Random(7)
    ref = [rng.choice("abcdef") for _ in range(120)]
    for n_hyp in (1, 2, 3, 5):
        hyp = [rng.choice("abcdefg") for _ in range(n_hyp)]
        assert ter_edits(hyp, ref) == tuple(translation_edit_rate(hyp, ref))
        assert ter_edits(ref, hyp) == tuple(translation_edit_rate(ref, hyp))


def test_encoding_keeps_reference_words_apart_and_merges_unknown_hypothesis_words():
    hyp, ref = encode(["a", "zz", "b", "yy"], ["b", "a", "b"])
    assert len(hyp) == 4 and len(ref) == 3
    assert ref[0] == ref[2] != ref[1] and hyp[0] == ref[1] and hyp[2] == ref[0]
    assert hyp[1] == hyp[3] and hyp[1] not in ref
