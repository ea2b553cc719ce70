"""Training the preservation cross-encoder: LoRA adapters and a head fitted on (comparison, output) pairs with soft
targets, every source group the same total weight, on the CPU or a GPU. The result is a
:class:`~styleval.preservation.cross_encoder.CrossEncoder` that the core loads and scores with.
"""
from __future__ import annotations

import copy
import random
import time
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from ..models.lora import DEFAULT_TARGETS, LoraAdapter, attach_adapters
from ..preservation.adapted import to_numpy
from ..preservation.cross_encoder import CrossEncoder
from .options import AdapterFit, CrossEncoderOptions
from ..preservation.data import PairData
from ..progress import Progress


def training_device(device: str) -> str:
    """The torch device a training run uses: ``"cpu"``, ``"cuda"`` (or ``"cuda:N"``), or ``"auto"`` (the first GPU
    if torch sees one, else the CPU). Initial values are always drawn on the CPU, so a seed gives the same start on
    every device; results still differ in the last bits between devices (kernels sum in other orders)."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return device
    if device.split(":")[0] != "cuda":
        raise InputError(f"training device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")
    if not torch.cuda.is_available():
        raise InputError(f"training device {device!r} asked for, but torch {torch.__version__} sees no GPU")
    return device


def adapted_copy(encoder: str, *, rank: int, alpha: float, epochs: int, seed: int, what: str,
                 device: str = "cpu") -> tuple[Any, Any, dict[str, LoraAdapter], float]:
    """Set up a training run: check the settings, seed torch, and return the tokenizer, a private copy of the
    encoder on ``device`` with LoRA adapters attached to its :data:`~styleval.models.lora.DEFAULT_TARGETS` layers
    (:func:`~styleval.models.lora.attach_adapters`), the adapters and their scaling ``alpha / rank``."""
    import torch

    from ..models.pool import configure_torch
    from ..models.encoder import load_encoder, load_tokenizer

    if rank < 1 or epochs < 1:
        raise InputError(f"{what} rank and epochs must be at least 1, got {rank} and {epochs}")
    configure_torch()
    torch.manual_seed(seed)
    tok = load_tokenizer(encoder)
    enc = copy.deepcopy(load_encoder(encoder)[1]).to(device)
    scaling = alpha / rank
    return tok, enc, attach_adapters(enc, DEFAULT_TARGETS, rank, scaling), scaling


def pooled(tok: Any, enc: Any, texts: list[str], pairs: list[str], *, max_length: int) -> Any:
    """Training-time forward pass (torch, with gradients) of the (text, pair) sequences on the encoder's device,
    mean-pooled over real tokens as the scorer pools at scoring time."""
    from ..models.encoder import run_torch

    return run_torch(tok, enc, texts, pairs, max_length=max_length)


def _batches(data: PairData, batch_size: int, rng: random.Random) -> list[list[int]]:
    """One epoch's batches: pairs in random order."""
    order = list(range(len(data)))
    rng.shuffle(order)
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def fit_adapters(data: PairData, params: Sequence[Any], batch_logits: Callable[[list[int]], Any], *, fit: AdapterFit,
                 what: str, progress: Progress | None = None) -> dict[str, Any]:
    """The training loop (``fit``): AdamW with a linear warm-up (10%) and decay, soft-target weighted cross-entropy
    (every group the same total weight), gradient norm clipped at 1. ``batch_logits(index)`` returns the logits of
    those pairs of ``data``. Returns a summary for the model card."""
    import torch

    epochs, lr, batch_size, seed = fit.epochs, fit.lr, fit.batch_size, fit.seed

    weights = data.group_weights()
    rng = random.Random(seed)
    plan = [_batches(data, batch_size, rng) for _ in range(epochs)]
    steps = sum(len(batches) for batches in plan)
    warm = max(1, steps // 10)
    every = list(params)
    opt = torch.optim.AdamW([{"params": every, "lr": lr}], lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    step, losses, started = 0, [], time.time()
    for batches in plan:
        for idx in batches:
            z = batch_logits(idx)
            y = torch.tensor([float(data.scores[i]) for i in idx], device=z.device)
            w = torch.tensor(weights[idx], dtype=torch.float32, device=z.device)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none") * w).sum() / w.sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(every, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if progress is not None:
                progress(f"training the {what}", step, steps)
    return {"epochs": epochs, "steps": steps, "batch_size": batch_size, "learning_rate": lr,
            "schedule": "linear warm-up (10%) and decay, AdamW", "seed": seed,
            "loss_first_10": round(float(np.mean(losses[:10])), 4),
            "loss_last_10": round(float(np.mean(losses[-10:])), 4),
            "train_seconds": round(time.time() - started, 1)}


def train_cross_encoder(data: PairData, *, encoder: str, options: CrossEncoderOptions | None = None,
                        progress: Progress | None = None) -> tuple[CrossEncoder, dict[str, Any]]:
    """Fit LoRA adapters and a head on ``data`` (soft targets, weighted cross-entropy, every group the same total
    weight) on ``options.device`` (:func:`training_device`); returns the cross-encoder (torch backend, CPU) and a
    summary of the run for the model card."""
    import torch

    o = options or CrossEncoderOptions()
    rank, alpha, max_length, epochs, seed = o.rank, o.alpha, o.max_length, o.fit.epochs, o.fit.seed
    device = training_device(o.device)
    tok, enc, lora, scaling = adapted_copy(encoder, rank=rank, alpha=alpha, epochs=epochs, seed=seed,
                                           what="cross-encoder", device=device)
    head = torch.nn.Linear(enc.config.hidden_size, 1).to(device)
    params = [p for adapter in lora.values() for p in adapter.parameters()] + list(head.parameters())

    def logits(idx: list[int]) -> Any:
        return head(pooled(tok, enc, [data.sources[i] for i in idx], [data.outputs[i] for i in idx],
                           max_length=max_length)).squeeze(-1)

    enc.train()
    summary = fit_adapters(data, params, logits, fit=o.fit, what="cross-encoder", progress=progress)
    adapters = {name: adapter.arrays() for name, adapter in lora.items()}
    model = CrossEncoder(encoder, adapters, scaling, to_numpy(head.weight)[0], float(head.bias.detach()[0]),
                         max_length=max_length, backend="torch")
    return model, {"rank": rank, "alpha": alpha, "adapted_layers": len(lora), **summary,
                   "device": device}
