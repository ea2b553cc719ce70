"""Fine-tuning an encoder for a style model: LoRA adapters and a linear head trained together, the epoch chosen on
selection data, the result stored as an :class:`~styleval.style_models.adapted_block.AdaptedEncoderBlock` of an
ordinary style model folder."""
from __future__ import annotations

import copy
import datetime as _dt
import math
import random
from typing import Any, Callable

import numpy as np

from ..models.encoder import private_encoder, run_torch
from ..models.lora import attach_adapters
from ..signature import library_version
from ..style_models.data import LabelledData
from ..style_models.model import CLASSIFIER, REGRESSOR, StyleModel, preprocess
from ..progress import Progress

from ..style_models.adapted_block import AdaptedEncoderBlock, torch_device
from .options import CardText, FinetuneOptions, StyleTarget


def finetune_style_model(train: LabelledData, *, selection: LabelledData | None = None,
                         held_out: LabelledData | None = None, target: StyleTarget | None = None,
                         tuning: FinetuneOptions | None = None, card: CardText | None = None,
                         extra_held_out: Callable[[StyleModel], dict[str, float]] | None = None,
                         progress: Progress | None = None) -> StyleModel:
    """Fine-tune ``tuning.model`` with low-rank adapters and a linear head on labelled text.

    Classifiers minimise cross-entropy (one logit and a sigmoid for two labels); regressors minimise the squared
    error of standardised scores. After each epoch the model is scored on ``selection`` (accuracy or Spearman;
    10% of ``train`` when not given, and then not refitted) and the best epoch is kept. ``held_out`` is scored
    once at the end and recorded in the card (with ``extra_held_out``'s figures).
    """
    import torch

    from .style import check_aliases, prepare_targets

    target, card = target or StyleTarget(), card or CardText()
    kind, poles, aliases = target.kind, target.poles, dict(target.aliases)
    t = tuning or FinetuneOptions()
    model, rank, alpha, targets, epochs, lr, head_lr = t.model, t.rank, t.alpha, t.targets, t.epochs, t.lr, t.head_lr
    batch_size, max_length, weight_decay, dropout = t.batch_size, t.max_length, t.weight_decay, t.dropout
    warmup, device, seed = t.warmup, t.device, t.seed
    name, version, description, command, notes = card.name, card.version, card.description, card.command, card.notes
    held_back = selection is None
    fit_part, sel_part, labels, y_fit, _ = prepare_targets(train, selection, kind, poles, seed)
    check_aliases(dict(aliases or {}), labels, train.origin)
    texts = preprocess(fit_part.texts)  # as StyleModel.features does at prediction time
    if kind == CLASSIFIER:
        y = np.asarray([labels.index(v) for v in y_fit])
        n_out = 1 if len(labels) == 2 else len(labels)
        mean, std = 0.0, 1.0
    else:
        y = np.asarray(y_fit, dtype=np.float64)
        n_out = 1
        mean, std = float(y.mean()), float(y.std() or 1.0)
        y = (y - mean) / std

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    dev = torch_device(device)
    tok, enc = private_encoder(model)
    enc.to(dev).train()
    adapters = attach_adapters(enc, targets, rank, alpha / rank, dropout)
    head = torch.nn.Linear(int(enc.config.hidden_size), n_out).to(dev)
    lora_params = [t for a in adapters.values() for t in (a.A, a.B)]
    opt = torch.optim.AdamW([{"params": lora_params, "lr": lr}, {"params": head.parameters(), "lr": head_lr}],
                            weight_decay=weight_decay)
    steps_per_epoch = math.ceil(len(texts) / batch_size)
    total = steps_per_epoch * epochs
    warm = max(1, int(warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)))
    y_t = torch.tensor(y, dtype=torch.float32 if kind == REGRESSOR or n_out == 1 else torch.long)

    block = AdaptedEncoderBlock(model=model, rank=rank, alpha=alpha, targets=targets, max_length=max_length,
                                device=device)
    block._dim = int(enc.config.hidden_size)

    def snapshot() -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
        lora = {n: a.arrays() for n, a in adapters.items()}
        w = head.weight.detach().double().cpu().numpy() * std
        b = head.bias.detach().double().cpu().numpy() * std + (mean if kind == REGRESSOR else 0.0)
        return lora, w.astype(np.float32).astype(np.float64), b

    def as_model(state: tuple[dict, np.ndarray, np.ndarray]) -> StyleModel:
        blk = copy.copy(block)
        blk.lora, blk._runtime = state[0], None
        return StyleModel(kind, labels, [blk], state[1], state[2], dict(aliases or {}))

    def live_model() -> StyleModel:
        """The model as it stands, scored with the hooks in place (no merge, no reload)."""
        lora, w, b = snapshot()
        blk = copy.copy(block)
        blk.lora, blk._runtime = lora, (tok, enc)
        return StyleModel(kind, labels, [blk], w, b, dict(aliases or {}))

    history: list[dict[str, float]] = []
    best: tuple[float, int, Any] = (-math.inf, 0, None)
    rng = np.random.default_rng(seed)
    step = 0
    for epoch in range(1, epochs + 1):
        enc.train()
        for a in adapters.values():
            a.train()
        order = rng.permutation(len(texts))
        losses = []
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            out = head(run_torch(tok, enc, [texts[i] for i in idx], max_length=max_length))
            truth = y_t[idx].to(dev)
            if kind == REGRESSOR:
                loss = torch.nn.functional.mse_loss(out[:, 0], truth)
            elif n_out == 1:
                loss = torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], truth)
            else:
                loss = torch.nn.functional.cross_entropy(out, truth)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(lora_params + list(head.parameters()), 1.0)
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
            step += 1
            if progress is not None:
                progress(f"fine-tuning, epoch {epoch}/{epochs}", step, total)
        enc.eval()
        for a in adapters.values():
            a.train(False)
        live = live_model()
        score = _selection_score(live, sel_part)
        history.append({"epoch": epoch, "train_loss": float(np.mean(losses)), "selection": score})
        if score > best[0]:
            best = (score, epoch, snapshot())
    for a in adapters.values():
        a.remove()
    enc = None  # release the training copy of the encoder
    if dev.type == "cuda":
        torch.cuda.empty_cache()

    result = as_model(best[2])
    result.blocks[0].device = device  # type: ignore[attr-defined]  # the fine-tuned block built just above
    param_note = {"rank": rank, "alpha": alpha, "targets": list(targets), "epochs": epochs, "lr": lr,
                  "head_lr": head_lr, "batch_size": batch_size, "max_length": max_length,
                  "weight_decay": weight_decay, "dropout": dropout, "warmup": warmup, "seed": seed,
                  "device": dev.type}
    result.card = {
        "name": name, "version": version, "description": description, "kind": kind, "labels": labels,
        "aliases": dict(aliases or {}), "styleval_version": library_version("styleval"),
        "torch_version": library_version("torch"), "transformers_version": library_version("transformers"),
        "created": _dt.date.today().isoformat(),
        "training": {"data": train.origin, "n": len(fit_part), "data_hash": fit_part.data_hash(),
                     "label_counts": ({k: int(v) for k, v in zip(*np.unique([str(v) for v in fit_part.labels],
                                                                             return_counts=True))}
                                      if kind == CLASSIFIER else None),
                     "skipped_lines": len(train.skipped)},
        "selection": {"data": sel_part.origin if not held_back else f"10% of training data (seed {seed})",
                      "n": len(sel_part), "data_hash": sel_part.data_hash(),
                      "metric": "accuracy" if kind == CLASSIFIER else "spearman",
                      "epochs": history, "chosen": {"epoch": best[1]}, "refit_on_all_training_data": False},
        "parameters": {"preprocess": "html.unescape", "features": [result.blocks[0].config()],
                       "head": {"type": "linear, trained jointly with low-rank adapters",
                                "loss": "squared error of standardised scores" if kind == REGRESSOR
                                else "cross-entropy"},
                       "fine_tuning": param_note},
        "command": command, "notes": list(notes),
    }
    if held_out is not None:
        from .style import held_out_entry

        result.card["held_out"] = held_out_entry(result, held_out, extra_held_out)
    return result


def _selection_score(model: StyleModel, data: LabelledData) -> float:
    from .style import evaluate

    scores = evaluate(model, data)
    return float(scores["accuracy"] if model.kind == CLASSIFIER else scores["spearman"])
