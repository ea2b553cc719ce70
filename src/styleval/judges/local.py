"""The local backend: a causal LM folder (default SmolLM2-135M-Instruct) run in this process, batched, on the GPU
when there is one.

Three computations, each over prompts already rendered with the model's chat template (:mod:`.chat`):

* :func:`first_token_top` -- the ``k`` most likely first answer tokens and their log-probabilities (a judge's
  rating distribution, :mod:`.rating`);
* :func:`greedy_answers` -- the greedy answer of at most ``max_tokens`` tokens (the parsed rating);
* :func:`continuation_logprobs` -- the log-probability of every token of a given continuation after a prompt
  (LogProp). Prompt and continuation are tokenized apart and joined, as the LogProp authors' script does.

Prompts are sorted by length and packed into right-padded batches under a token budget; only the positions that
are needed go through the output head. While a model-output store is active (:mod:`styleval.models.outputs`, the
streaming engine's ``--cache``), results are read from and written to it under a namespace naming the model's
content hash, the code that ran it and the computation, so a rerun computes nothing twice.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..errors import InputError
from ..lm.causal import pack_by_length
from ..lm.loading import CausalLM, ensure_converted, load_causal_lm
from ..models.catalog import DEFAULT_CAUSAL_LM
from ..models.outputs import active_store
from .chat import ChatFormat, chat_format

DEFAULT_MODEL = DEFAULT_CAUSAL_LM
BATCH_TOKENS = 8192
MAX_BATCH = 32


@dataclass
class LocalModel:
    """A loaded causal LM with its chat format."""

    lm: CausalLM
    chat: ChatFormat

    def identity(self) -> dict[str, str]:
        """For signatures: the model's name and content hash (an adapter adds its base's), the forward-pass code."""
        ident = self.lm.spec.identity()
        out = {"judge_model": ident["lm"], "judge_model_hash": ident["lm_hash"], "judge_backend": self.lm.backend}
        if "lm_base" in ident:
            out["judge_model_base"], out["judge_model_base_hash"] = ident["lm_base"], ident["lm_base_hash"]
        return out

    def namespace(self, computation: str) -> str:
        spec = self.lm.spec
        model = spec.content_hash() + (f"+{spec.base.content_hash()}" if spec.base is not None else "")
        return f"judge-{computation}:{model}:{self.lm.backend}"

    def token_text(self, token_id: int) -> str:
        return str(self.lm.tokenizer.decode([int(token_id)]))


def load_local(name: str | os.PathLike[str] = DEFAULT_MODEL) -> LocalModel:
    """Load a causal LM (once per process) and its chat template (an adapter uses its base model's)."""
    lm = load_causal_lm(name or DEFAULT_MODEL)
    spec = lm.spec
    folder = ensure_converted(spec) if spec.source == "catalog" else spec.path
    if spec.source == "adapter" and spec.base is not None and not _has_template(folder):
        folder = ensure_converted(spec.base) if spec.base.source == "catalog" else spec.base.path
    return LocalModel(lm=lm, chat=chat_format(folder))


def _has_template(folder: Any) -> bool:
    try:
        chat_format(folder)
    except InputError:
        return False
    return True


def encode(model: LocalModel, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of texts whose special tokens are written out (a rendered chat prompt), none added."""
    if not texts:
        return []
    return [list(map(int, ids)) for ids in model.lm.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def _check_length(model: LocalModel, lengths: Sequence[int], labels: Sequence[str]) -> None:
    for n, label in zip(lengths, labels):
        if n > model.lm.max_length:
            raise InputError(f"{label}: the prompt is {n} tokens long; {model.lm.spec.name} takes at most "
                             f"{model.lm.max_length}")


def _through_store(namespace: str, keys: Sequence[str], compute: Callable[[list[int]], list[tuple[np.ndarray, ...]]]
                   ) -> list[tuple[np.ndarray, ...]]:
    """``compute(indices)`` for the keys the active model-output store lacks (all of them without a store), the
    stored rows for the others; distinct keys are computed once."""
    store = active_store()
    distinct = list(dict.fromkeys(keys))
    found = store.get_many(namespace, distinct) if store is not None else {}
    todo = [k for k in distinct if k not in found]
    if todo:
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        rows = compute([first[k] for k in todo])
        new = dict(zip(todo, rows))
        if store is not None:
            store.put_many(namespace, new)
        found.update(new)
    return [found[k] for k in keys]


def _batches(lengths: Sequence[int], indices: Iterable[int], batch_tokens: int) -> list[list[int]]:
    return pack_by_length(lengths, indices, batch_tokens, MAX_BATCH)


def _hidden_and_head(model: LocalModel, rows: Sequence[Sequence[int]]) -> tuple[Any, Any, Any]:
    """Last hidden states of right-padded ``rows``, the function from hidden states to logits, and the lengths."""
    import torch

    lm = model.lm
    pad = lm.tokenizer.pad_token_id
    pad = int(pad) if pad is not None else 0
    width = max(len(r) for r in rows)
    inp = torch.full((len(rows), width), pad, dtype=torch.long)
    att = torch.zeros((len(rows), width), dtype=torch.long)
    for k, r in enumerate(rows):
        inp[k, :len(r)] = torch.tensor(r, dtype=torch.long)
        att[k, :len(r)] = 1
    inp, att = inp.to(lm.device), att.to(lm.device)
    net: Any = lm.model
    head: Any = net.get_output_embeddings()
    base = getattr(net, getattr(net, "base_model_prefix", ""), None)
    plain = (head is not None and base is not None and type(head).__name__ == "Linear"
             and not getattr(net.config, "final_logit_softcapping", None))
    if plain and base is not None:
        hidden = base(input_ids=inp, attention_mask=att).last_hidden_state
        return hidden, lambda h: head(h).float(), [len(r) for r in rows]
    logits = net(input_ids=inp, attention_mask=att).logits.float()  # the head applied to every position
    return logits, lambda h: h, [len(r) for r in rows]


def first_token_top(model: LocalModel, prompts: Sequence[str], k: int, labels: Sequence[str], *,
                    batch_tokens: int = BATCH_TOKENS) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per prompt: the ids and log-probabilities of the ``k`` most likely next tokens, most likely first."""
    import torch

    def compute(indices: list[int]) -> list[tuple[np.ndarray, ...]]:
        ids = encode(model, [prompts[i] for i in indices])
        _check_length(model, [len(r) for r in ids], [labels[i] for i in indices])
        out: list[tuple[np.ndarray, ...]] = [() for _ in indices]
        with torch.inference_mode():
            for batch in _batches([len(r) for r in ids], range(len(ids)), batch_tokens):
                hidden, head, lengths = _hidden_and_head(model, [ids[j] for j in batch])
                last = hidden[torch.arange(len(batch)), torch.tensor(lengths) - 1]
                logp = torch.log_softmax(head(last), dim=-1)
                values, top = torch.topk(logp, k, dim=-1)
                for row, j in enumerate(batch):
                    out[j] = (top[row].cpu().numpy().astype(np.int64), values[row].double().cpu().numpy())
        return out

    rows = _through_store(model.namespace(f"top{k}"), list(prompts), compute)
    return [(r[0], r[1]) for r in rows]


def greedy_answers(model: LocalModel, prompts: Sequence[str], max_tokens: int, labels: Sequence[str], *,
                   batch_tokens: int = BATCH_TOKENS) -> list[str]:
    """Per prompt: the greedy answer of at most ``max_tokens`` tokens (stopping at the end-of-text token)."""
    import torch

    stop = {t for t in (model.lm.tokenizer.eos_token_id,) if t is not None}

    def compute(indices: list[int]) -> list[tuple[np.ndarray, ...]]:
        seqs = encode(model, [prompts[i] for i in indices])
        _check_length(model, [len(r) + max_tokens for r in seqs], [labels[i] for i in indices])
        start = [len(s) for s in seqs]
        active = list(range(len(seqs)))
        with torch.inference_mode():
            for _ in range(max_tokens):
                if not active:
                    break
                for batch in _batches([len(s) for s in seqs], active, batch_tokens):
                    hidden, head, lens = _hidden_and_head(model, [seqs[j] for j in batch])
                    last = hidden[torch.arange(len(batch)), torch.tensor(lens) - 1]
                    for row, j in enumerate(batch):
                        seqs[j].append(int(torch.argmax(head(last[row:row + 1]), dim=-1)[0]))
                active = [j for j in active if seqs[j][-1] not in stop]
        return [(np.asarray([t for t in s[n:] if t not in stop], dtype=np.int64),) for s, n in zip(seqs, start)]

    rows = _through_store(model.namespace(f"greedy{max_tokens}"), list(prompts), compute)
    return [str(model.lm.tokenizer.decode([int(t) for t in r[0]])) for r in rows]


def continuation_logprobs(model: LocalModel, prompts: Sequence[str], continuations: Sequence[str],
                          labels: Sequence[str], *, batch_tokens: int = BATCH_TOKENS) -> list[np.ndarray]:
    """Per (prompt, continuation): the log-probability (nats) of each continuation token after the prompt."""
    import torch

    def compute(indices: list[int]) -> list[tuple[np.ndarray, ...]]:
        heads = encode(model, [prompts[i] for i in indices])
        tails = encode(model, [continuations[i] for i in indices])
        rows = [h + t for h, t in zip(heads, tails)]
        _check_length(model, [len(r) for r in rows], [labels[i] for i in indices])
        out: list[tuple[np.ndarray, ...]] = [(np.zeros(0),) for _ in indices]
        with torch.inference_mode():
            for batch in _batches([len(r) for r in rows], range(len(rows)), batch_tokens):
                hidden, head, _ = _hidden_and_head(model, [rows[j] for j in batch])
                for row, j in enumerate(batch):
                    n, m = len(heads[j]), len(tails[j])
                    if m == 0:
                        continue
                    logp = torch.log_softmax(head(hidden[row, n - 1:n + m - 1]), dim=-1)
                    target = torch.tensor(tails[j], device=logp.device)
                    out[j] = (logp.gather(1, target[:, None])[:, 0].double().cpu().numpy(),)
        return out

    keys = [f"{p}\x00{c}" for p, c in zip(prompts, continuations)]
    return [r[0] for r in _through_store(model.namespace("continuation"), keys, compute)]
