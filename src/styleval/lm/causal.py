"""Token negative log-likelihoods of sentences under a causal LM, batched and length-sorted.

Each text is tokenized without special tokens and scored after one prefix token (the model's BOS token, else its
EOS token), so the first word is predicted too. The NLL (natural log) of every text token is summed; the count of
scored tokens is kept, so segment perplexity ``exp(nll / n)`` and corpus perplexity
``exp(sum nll / sum n)`` both follow from the sums.

Speed: identical texts are scored once, texts are sorted by length and packed into batches under a token budget
(right padding, so the padded positions never influence real ones), and the vocabulary projection is applied only
to real positions, so padding costs no logits.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from ..errors import InputError
from .loading import CausalLM
from ..progress import Progress, given_or_active



@dataclass(frozen=True)
class TokenNLL:
    """Per-text sums: NLL of the scored tokens (nats), number of scored tokens, whether the text was truncated."""

    nll: np.ndarray
    n_tokens: np.ndarray
    truncated: np.ndarray

    def perplexity(self) -> np.ndarray:
        """Segment perplexity ``exp(nll / n)``; NaN for texts with no token."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.n_tokens > 0, np.exp(self.nll / np.maximum(self.n_tokens, 1)), np.nan)


def prefix_token_id(tokenizer: Any) -> int | None:
    """The token put before every text: BOS, else EOS, else none."""
    for attr in ("bos_token_id", "eos_token_id"):
        tid = getattr(tokenizer, attr, None)
        if tid is not None:
            return int(tid)
    return None


def encode(lm: CausalLM, texts: Sequence[str], max_tokens: int | None = None) -> tuple[list[list[int]], list[bool]]:
    """Token ids (prefix token first) and whether each was cut to ``max_tokens`` (default: the model's limit)."""
    limit = min(max_tokens or lm.max_length, lm.max_length)
    prefix = prefix_token_id(lm.tokenizer)
    enc = lm.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    ids, cut = [], []
    for row in enc:
        row = ([prefix] if prefix is not None else []) + list(row)
        cut.append(len(row) > limit)
        ids.append(row[:limit])
    return ids, cut


def _forward_logprobs(model: Any, input_ids: Any, attention: Any, targets_mask: Any) -> Any:
    """Log-probabilities of the next tokens at the masked positions (1-D, in row-major order)."""
    import torch

    head = model.get_output_embeddings()
    base = getattr(model, getattr(model, "base_model_prefix", ""), None)
    plain_head = head is not None and base is not None and not getattr(model.config, "final_logit_softcapping", None) \
        and type(head).__name__ == "Linear"  # torch.nn.Linear or styleval.lm.native.Linear
    nxt = input_ids[:, 1:]
    if plain_head and base is not None:
        hidden = base(input_ids=input_ids, attention_mask=attention).last_hidden_state[:, :-1]
        h = hidden[targets_mask]
        tgt = nxt[targets_mask]
        out = torch.empty(h.shape[0], dtype=torch.float32, device=h.device)
        step = 1024  # bound the (positions x vocabulary) logits held at once
        for i in range(0, h.shape[0], step):
            logits = head(h[i:i + step]).float()
            out[i:i + step] = logits.gather(1, tgt[i:i + step, None])[:, 0] - torch.logsumexp(logits, dim=1)
        return out
    logits = model(input_ids=input_ids, attention_mask=attention).logits[:, :-1].float()
    lp = torch.log_softmax(logits, dim=-1).gather(2, nxt[..., None])[..., 0]
    return lp[targets_mask]


def _pack(ids: Sequence[Sequence[int]], batch_tokens: int, max_batch: int) -> list[list[int]]:
    """Indices of the texts with at least one token to score, longest first, packed into batches whose padded size
    stays under ``batch_tokens`` and whose row count stays under ``max_batch``."""
    order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        if len(ids[i]) < 2:
            continue  # empty text: nothing to score
        width = len(ids[cur[0]]) if cur else len(ids[i])
        if cur and (len(cur) + 1 > max_batch or (len(cur) + 1) * width > batch_tokens):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


def _scored_rows(lm: CausalLM, ids: Sequence[Sequence[int]], batches: list[list[int]], total: int,
                 progress: Progress | None, label: str = "perplexity") -> Iterator[tuple[int, np.ndarray]]:
    """``(text index, log-probabilities of its tokens after the first)`` for every text of ``batches``."""
    import torch

    pad = lm.tokenizer.pad_token_id
    pad = int(pad) if pad is not None else 0
    device = lm.device
    progress = given_or_active(progress)
    done = 0
    with torch.inference_mode():
        for b in batches:
            width = len(ids[b[0]])
            inp = torch.full((len(b), width), pad, dtype=torch.long)
            att = torch.zeros((len(b), width), dtype=torch.long)
            for r, i in enumerate(b):
                inp[r, :len(ids[i])] = torch.tensor(ids[i])
                att[r, :len(ids[i])] = 1
            tmask = att[:, 1:].bool()
            inp, att, tmask = inp.to(device), att.to(device), tmask.to(device)
            lp = _forward_logprobs(lm.model, inp, att, tmask).double().cpu().numpy()
            lens = tmask.sum(dim=1).cpu().numpy()
            pos = 0
            for r, i in enumerate(b):
                yield i, lp[pos:pos + lens[r]]
                pos += int(lens[r])
            done += len(b)
            if progress:
                progress(f"language model {label} [texts]", done, total)


def token_nll(lm: CausalLM, texts: Sequence[str], *, batch_tokens: int = 4096, max_batch: int = 64,
              max_tokens: int | None = None, progress: Progress | None = None) -> TokenNLL:
    """Summed token NLL and token counts of ``texts`` under ``lm`` (see the module doc for the conventions)."""
    uniq = list(dict.fromkeys(texts))
    ids, cut = encode(lm, uniq, max_tokens)
    if any(cut):
        warnings.warn(f"{sum(cut)} text(s) longer than {min(max_tokens or lm.max_length, lm.max_length)} tokens "
                      "were truncated for perplexity; they are flagged 'truncated'", RuntimeWarning, stacklevel=2)
    nll = np.zeros(len(uniq))
    count = np.array([max(0, len(r) - 1) for r in ids], dtype=float)
    for i, lp in _scored_rows(lm, ids, _pack(ids, batch_tokens, max_batch), len(uniq), progress):
        nll[i] = -float(lp.sum())
    index = {t: k for k, t in enumerate(uniq)}
    rows = [index[t] for t in texts]
    return TokenNLL(nll=nll[rows], n_tokens=count[rows], truncated=np.asarray(cut, dtype=bool)[rows]
                    if uniq else np.zeros(0, dtype=bool))


@dataclass(frozen=True)
class TokenLogprobs:
    """Per text: the scored token ids (the prefix token left out), their log-probabilities (nats) under the LM,
    the log-probability of the end-of-text token after the last one (NaN unless asked for, or for an empty text),
    and whether the text was truncated."""

    token_ids: list[np.ndarray]
    logprobs: list[np.ndarray]
    end_logprob: np.ndarray
    truncated: np.ndarray


def end_token_id(tokenizer: Any) -> int | None:
    """The token that ends a text: EOS, else BOS (SmolLM2's ``<|endoftext|>`` is both)."""
    for attr in ("eos_token_id", "bos_token_id"):
        tid = getattr(tokenizer, attr, None)
        if tid is not None:
            return int(tid)
    return None


def token_logprobs(lm: CausalLM, texts: Sequence[str], *, with_end: bool = False, batch_tokens: int = 4096,
                   max_batch: int = 64, max_tokens: int | None = None, progress: Progress | None = None
                   ) -> TokenLogprobs:
    """Log-probability of every token of ``texts`` under ``lm``, with the conventions of :func:`token_nll` (so
    ``-sum(logprobs[i])`` is ``token_nll(...).nll[i]``); ``with_end`` also scores the end-of-text token after each
    text (how likely the text is to stop there: low for a truncated sentence)."""
    uniq = list(dict.fromkeys(texts))
    ids, cut = encode(lm, uniq, max_tokens)
    if any(cut):
        warnings.warn(f"{sum(cut)} text(s) longer than {min(max_tokens or lm.max_length, lm.max_length)} tokens "
                      "were truncated; they are flagged 'truncated'", RuntimeWarning, stacklevel=2)
    end = end_token_id(lm.tokenizer) if with_end else None
    if with_end and end is None:
        raise InputError(f"language model {lm.spec.name!r} has no end-of-text token to score")
    skip = 1 if prefix_token_id(lm.tokenizer) is not None else 0
    ends = [end is not None and len(r) > skip and not c for r, c in zip(ids, cut)]  # a cut text has no end
    scored = [list(r) + [end] if e and end is not None else list(r) for r, e in zip(ids, ends)]
    lps: list[np.ndarray] = [np.zeros(0) for _ in uniq]
    for i, lp in _scored_rows(lm, scored, _pack(scored, batch_tokens, max_batch), len(uniq), progress, "log-probs"):
        lps[i] = lp
    end_lp = np.full(len(uniq), np.nan)
    if end is not None:
        for i, lp in enumerate(lps):
            if ends[i] and len(lp):
                end_lp[i], lps[i] = lp[-1], lp[:-1]
    tok = [np.asarray(r[1:], dtype=np.int64) for r in ids]  # the first id (prefix or first token) is not scored
    index = {t: k for k, t in enumerate(uniq)}
    rows = [index[t] for t in texts]
    return TokenLogprobs(token_ids=[tok[r] for r in rows], logprobs=[lps[r] for r in rows],
                         end_logprob=end_lp[rows] if uniq else np.zeros(0),
                         truncated=np.asarray(cut, dtype=bool)[rows] if uniq else np.zeros(0, dtype=bool))


