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

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..models.causal_lm import CausalLM

Progress = Callable[[str, int, int], None]


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
    if plain_head:
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


def token_nll(lm: CausalLM, texts: Sequence[str], *, batch_tokens: int = 4096, max_batch: int = 64,
              max_tokens: int | None = None, progress: Progress | None = None) -> TokenNLL:
    """Summed token NLL and token counts of ``texts`` under ``lm`` (see the module doc for the conventions)."""
    import torch

    uniq = list(dict.fromkeys(texts))
    ids, cut = encode(lm, uniq, max_tokens)
    if any(cut):
        warnings.warn(f"{sum(cut)} text(s) longer than {min(max_tokens or lm.max_length, lm.max_length)} tokens "
                      "were truncated for perplexity; they are flagged 'truncated'", RuntimeWarning, stacklevel=2)
    order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
    nll = np.zeros(len(uniq))
    count = np.array([max(0, len(r) - 1) for r in ids], dtype=float)
    pad = lm.tokenizer.pad_token_id
    pad = int(pad) if pad is not None else 0
    device = lm.device
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
                nll[i] = -float(lp[pos:pos + lens[r]].sum())
                pos += int(lens[r])
            done += len(b)
            if progress:
                progress("perplexity", done, len(uniq))
    index = {t: k for k, t in enumerate(uniq)}
    rows = [index[t] for t in texts]
    return TokenNLL(nll=nll[rows], n_tokens=count[rows], truncated=np.asarray(cut, dtype=bool)[rows]
                    if uniq else np.zeros(0, dtype=bool))


def corpus_perplexity(nll: np.ndarray, n_tokens: np.ndarray) -> float:
    """``exp(sum nll / sum n)``; NaN when no token was scored."""
    total = float(np.sum(n_tokens))
    return math.exp(float(np.sum(nll)) / total) if total > 0 else float("nan")
