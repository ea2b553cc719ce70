"""Adapt language models to one style: a LoRA adapter on the default causal LM, or an n-gram LM.

Lai et al. (2022) score fluency with LMs fine-tuned on the target style's text. :func:`train_style_lm` trains a
LoRA adapter (``peft``) on the causal LM on the CPU with the same token convention the perplexity metric scores
with (prefix token, then the sentence; loss on the sentence tokens), and writes the adapter and a card
(``styleval-lm.json``: style, base model and its content hash, data size and hash, hyper-parameters, losses).
:func:`train_ngram_lm` writes a modified Kneser-Ney ARPA file and a card beside it.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
import time
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError, ResourceUnavailableError
from ..models.lora import peft_targets
from .options import LMAdapterOptions
from ..signature import library_version
from ..progress import Progress



def _data_hash(sentences: Sequence[str]) -> str:
    h = hashlib.sha256()
    for s in sentences:
        h.update(s.encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def _clean(sentences: Sequence[str]) -> list[str]:
    out = [s.strip() for s in sentences if s and s.strip()]
    if not out:
        raise InputError("no non-empty training sentences")
    return out


def train_style_lm(sentences: Sequence[str], out_dir: str | Path, *, style: str,
                   options: LMAdapterOptions | None = None, progress: Progress | None = None) -> Path:
    """Train a LoRA adapter of ``options.base`` on ``sentences`` of one ``style``; return the adapter folder."""
    o = options or LMAdapterOptions()
    base, epochs, max_steps, batch_size, lr = o.base, o.epochs, o.max_steps, o.batch_size, o.lr
    rank, alpha, max_tokens, seed = o.rank, o.alpha, o.max_tokens, o.seed
    try:
        import peft
    except ImportError:
        raise ResourceUnavailableError("training a style LM needs peft: pip install peft") from None
    import torch

    from ..lm.loading import load_transformers, ensure_converted, resolve_causal_lm
    from ..models.pool import configure_torch
    from ..lm.causal import prefix_token_id

    sentences = _clean(sentences)
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise InputError("output folder exists and is not empty", out)
    spec = resolve_causal_lm(base)
    if spec.source == "adapter":
        raise InputError("the base of a style LM must be a plain causal LM, not another adapter", spec.path)
    configure_torch()
    torch.manual_seed(seed)
    rnd = random.Random(seed)
    tok, model = load_transformers(ensure_converted(spec, progress))
    cfg = peft.LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, task_type="CAUSAL_LM",
                          target_modules=peft_targets(model))
    model = peft.get_peft_model(model, cfg)
    model.train()
    prefix = prefix_token_id(tok)
    enc = tok(sentences, add_special_tokens=False)["input_ids"]
    ids = [([prefix] if prefix is not None else []) + list(e)[: max_tokens - 1] for e in enc]
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    steps_per_epoch = math.ceil(len(ids) / batch_size)
    total = max_steps if max_steps is not None else max(1, int(round(epochs * steps_per_epoch)))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, total // 10))
                                              * max(0.0, 1 - s / total))
    order: list[int] = []
    losses: list[float] = []
    start = time.time()
    for step in range(total):
        if not order:
            order = list(range(len(ids)))
            rnd.shuffle(order)
        b = [order.pop() for _ in range(min(batch_size, len(order)))]
        width = max(len(ids[i]) for i in b)
        inp = torch.full((len(b), width), pad, dtype=torch.long)
        att = torch.zeros((len(b), width), dtype=torch.long)
        for r, i in enumerate(b):
            inp[r, :len(ids[i])] = torch.tensor(ids[i])
            att[r, :len(ids[i])] = 1
        labels = inp.masked_fill(att == 0, -100)
        if prefix is not None:
            labels[:, 0] = -100
        loss = model(input_ids=inp, attention_mask=att, labels=labels).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        losses.append(float(loss.detach()))
        if progress:
            progress(f"adapting LM to {style}", step + 1, total)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    card: dict[str, Any] = {
        "name": f"{spec.name}+lora-{style}", "kind": "lora", "style": style, "base_model": spec.name
        if spec.source == "catalog" else str(spec.path), "base_hash": spec.content_hash(),
        "n_sentences": len(sentences), "data_sha256_16": _data_hash(sentences), "steps": total,
        "batch_size": batch_size, "lr": lr, "rank": rank, "alpha": alpha, "max_tokens": max_tokens, "seed": seed,
        "loss_first": losses[0], "loss_last_10": sum(losses[-10:]) / len(losses[-10:]),
        "train_seconds": round(time.time() - start, 1),
        "libraries": {k: library_version(k) for k in ("torch", "transformers", "peft", "styleval")},
    }
    from ..models.cards import LM, write_card

    write_card(out, LM, card)
    return out


def train_ngram_lm(sentences: Sequence[str], out_path: str | Path, *, style: str, order: int = 3,
                   lowercase: bool = True) -> Path:
    """Write a modified Kneser-Ney ARPA model of ``sentences`` and a ``<file>.json`` card beside it."""
    from ..lm.ngram import estimate_arpa

    sentences = _clean(sentences)
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    estimate_arpa(sentences, path, order=order, lowercase=lowercase)
    card = {"name": path.stem, "kind": "ngram", "style": style, "order": order, "smoothing": "modified-kneser-ney",
            "lowercase": lowercase, "n_sentences": len(sentences), "data_sha256_16": _data_hash(sentences),
            "libraries": {k: library_version(k) for k in ("ufal.kenlm", "styleval")}}
    Path(str(path) + ".json").write_text(json.dumps(card, indent=1), encoding="utf-8")
    return path
