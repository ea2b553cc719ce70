"""Sentence features from a causal LM's token log-probabilities, for the acceptability classifier and SLOR.

Every feature derives from one forward pass over the (normalised) text plus the end-of-text token
(:func:`styleval.lm.causal.token_logprobs`) and a unigram model over the same tokens
(:mod:`styleval.acceptability.unigram`). With ``lp`` the token log-probabilities, ``u`` their unigram log-probabilities
and ``n`` their number:

* ``mean_logprob`` = mean(lp); ``slor`` = (sum(lp) - sum(u)) / n (Kann et al. 2018);
* ``min_logprob``, ``low2_logprob`` (mean of the two lowest lp), ``min_slor`` = min(lp - u), ``std_logprob``;
* ``end_logprob``: log-probability of the end-of-text token after the last one (a sentence cut short ends
  improbably);
* ``share_surprising``: share of tokens with lp < -10; ``log_tokens`` = log(n);
* ``first_logprob``: lp of the first token (a sentence that starts mid-phrase);
* ``repeats``: number of places where a run of 1-3 tokens is immediately repeated (looping decoders);
* with ``d = lp - u`` (each token's SLOR term): ``low2_slor`` and ``low3_slor`` (mean of the 2 and 3 lowest d),
  ``share_low_slor`` (share of d < -3), ``last_slor`` and ``last_logprob`` (the last token);
* ``q25_logprob`` (lower quartile of lp), ``low3_logprob`` (mean of the 3 lowest lp), ``max_rise`` and
  ``max_fall`` (largest step up and down of lp between neighbouring tokens; 0 for one token).

An empty text has no features (NaN row).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..lm.causal import TokenLogprobs
from .unigram import UnigramModel

FEATURES = ("mean_logprob", "slor", "min_logprob", "low2_logprob", "min_slor", "std_logprob", "end_logprob",
            "share_surprising", "log_tokens", "first_logprob", "repeats", "low2_slor", "low3_slor",
            "share_low_slor", "q25_logprob", "low3_logprob", "max_rise", "max_fall", "last_slor", "last_logprob")
SURPRISING = -10.0


def repeats(ids: "Sequence[int] | np.ndarray") -> int:
    """Places where a run of k = 1..3 tokens is immediately followed by the same run."""
    ids = list(ids)
    return sum(ids[i:i + k] == ids[i + k:i + 2 * k] for k in (1, 2, 3) for i in range(len(ids) - 2 * k + 1))


def token_features(lp: np.ndarray, uni: np.ndarray, end: float, ids: "Sequence[int] | np.ndarray" = ()
                   ) -> np.ndarray:
    """The :data:`FEATURES` of one text from its token log-probs, their unigram log-probs, the end log-prob and
    the token ids."""
    n = len(lp)
    if n == 0:
        return np.full(len(FEATURES), np.nan)
    low = np.sort(lp)
    d = lp - uni
    low_d = np.sort(d)
    step = np.diff(lp) if n > 1 else np.zeros(1)
    return np.array([lp.mean(), (lp.sum() - uni.sum()) / n, lp.min(), low[:2].mean(), d.min(), lp.std(),
                     end if np.isfinite(end) else 0.0, float(np.mean(lp < SURPRISING)), np.log(n), lp[0],
                     float(repeats(ids)), low_d[:2].mean(), low_d[:3].mean(), float(np.mean(d < -3.0)),
                     float(np.quantile(lp, 0.25)), low[:3].mean(), step.max(), step.min(), d[-1], lp[-1]])


def features(scored: TokenLogprobs, unigram: UnigramModel) -> np.ndarray:
    """(n_texts, len(FEATURES)) matrix from the LM's token log-probabilities."""
    table = unigram._table()
    rows = [token_features(np.asarray(lp, dtype=float), table[np.asarray(ids, dtype=np.int64)], float(end), ids)
            for ids, lp, end in zip(scored.token_ids, scored.logprobs, scored.end_logprob)]
    return np.vstack(rows) if rows else np.zeros((0, len(FEATURES)))


def slor_parts(scored: TokenLogprobs, unigram: UnigramModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: summed LM log-prob, summed unigram log-prob, number of tokens."""
    lm = np.array([float(np.sum(lp)) for lp in scored.logprobs])
    uni = np.array([unigram.logprob(ids) for ids in scored.token_ids])
    n = np.array([len(lp) for lp in scored.logprobs], dtype=float)
    return lm, uni, n


def stack(parts: Sequence[np.ndarray]) -> np.ndarray:
    return np.vstack(parts) if parts else np.zeros((0, len(FEATURES)))
