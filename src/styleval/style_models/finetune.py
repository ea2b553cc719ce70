"""Fine-tuned transformer style models: low-rank adapters (LoRA) on a local encoder plus a linear head.

The encoder (MiniLM by default, any local transformers folder otherwise) is adapted with rank-``r`` updates
``W + (alpha / r) · B·A`` on its linear layers while the head is trained jointly; only ``A``, ``B`` and the head
are stored (about a megabyte for MiniLM), as plain arrays in the model folder. At load time the updates are
merged into a private copy of the base weights, so scoring is one ordinary forward pass.

The adapted encoder is an ordinary feature block (:class:`AdaptedEncoderBlock`, mean-pooled last hidden state),
so a fine-tuned model is a :class:`~styleval.style_models.model.StyleModel` like the linear ones: same folder format,
same card, same metrics.
"""
from __future__ import annotations

import copy
import datetime as _dt
import math
import random
from typing import Any, Callable, ClassVar, Sequence

import numpy as np
import scipy.sparse as sp

from ..models.encoder import private_encoder, run_torch
from ..models.lora import DEFAULT_TARGETS, attach_adapters, merge_adapters
from ..signature import library_version
from .data import LabelledData
from .features import Block, encoder_identity
from .model import CLASSIFIER, REGRESSOR, StyleModel, preprocess
from ..progress import Progress

def _device(device: str | None) -> Any:
    import torch

    if device:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _batches(texts: Sequence[str], size: int) -> list[list[int]]:
    """Index batches of similar length (longest first), so padding stays small."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    return [order[i:i + size] for i in range(0, len(order), size)]


class AdaptedEncoderBlock(Block):
    """Mean-pooled last hidden state of an encoder with merged low-rank updates."""

    kind: ClassVar[str] = "adapted-encoder"

    def __init__(self, *, model: str = "minilm", rank: int = 8, alpha: float = 16.0,
                 targets: Sequence[str] = DEFAULT_TARGETS, max_length: int = 128, batch_size: int = 64,
                 device: str | None = None) -> None:
        self.model = model
        self.rank = int(rank)
        self.alpha = float(alpha)
        self.targets = tuple(targets)
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.device = device
        self.lora: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # module name -> (A, B)
        self._dim = 0
        self._runtime: tuple[Any, Any] | None = None  # (tokenizer, merged encoder)
        # text -> pooled vector, when a caller turns it on (``memo = {}``) to reuse features across several fits
        self.memo: dict[str, np.ndarray] | None = None

    @property
    def scale(self) -> float:
        return self.alpha / self.rank

    @property
    def dim(self) -> int:
        return self._dim

    def _encoder(self) -> tuple[Any, Any]:
        if self._runtime is None:
            tok, enc = private_encoder(self.model)
            merge_adapters(enc, self.lora, self.scale, self.model)
            enc.eval().to(_device(self.device))
            self._dim = int(enc.config.hidden_size)
            self._runtime = (tok, enc)
        return self._runtime

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        if self.memo is not None:
            todo = list(dict.fromkeys(t for t in texts if t not in self.memo))
            if todo:
                self.memo.update(zip(todo, self._encode(todo)))
            return sp.csr_matrix(np.stack([self.memo[t] for t in texts]) if texts
                                 else np.zeros((0, self._dim), dtype=np.float32))
        return sp.csr_matrix(self._encode(texts))

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        tok, enc = self._encoder()
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        with torch.inference_mode():
            for idx in _batches(texts, self.batch_size):
                pooled = run_torch(tok, enc, [texts[i] for i in idx], max_length=self.max_length)
                out[idx] = pooled.float().cpu().numpy()
        return out

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "rank": self.rank, "alpha": self.alpha,
                "targets": list(self.targets), "max_length": self.max_length, "pooling": "mean", "dim": self._dim,
                "adapted_layers": len(self.lora)}

    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i, (_, (a, b)) in enumerate(sorted(self.lora.items())):
            out[f"lora{i}.A"], out[f"lora{i}.B"] = a.astype(np.float32), b.astype(np.float32)
        return out

    def vocabularies(self) -> dict[str, list[str]]:
        return {"layers": sorted(self.lora)}

    def resources(self) -> dict[str, str]:
        return encoder_identity(self.model)

    @classmethod
    def from_stored(cls, config: dict[str, Any], arrays: dict[str, np.ndarray], vocab: dict[str, list[str]]
                    ) -> "AdaptedEncoderBlock":
        block = cls(model=config.get("model", "minilm"), rank=config["rank"], alpha=config["alpha"],
                    targets=config.get("targets", DEFAULT_TARGETS), max_length=config.get("max_length", 128))
        block._dim = int(config.get("dim", 0))
        for i, name in enumerate(vocab.get("layers", [])):
            block.lora[name] = (np.asarray(arrays[f"lora{i}.A"], dtype=np.float32),
                                np.asarray(arrays[f"lora{i}.B"], dtype=np.float32))
        return block


def finetune_style_model(train: LabelledData, *, kind: str = CLASSIFIER, selection: LabelledData | None = None,
                         held_out: LabelledData | None = None, model: str = "minilm", rank: int = 8,
                         alpha: float = 16.0, targets: Sequence[str] = DEFAULT_TARGETS, epochs: int = 4,
                         lr: float = 5e-4, head_lr: float = 2e-3, batch_size: int = 32, max_length: int = 128,
                         weight_decay: float = 0.01, dropout: float = 0.1, warmup: float = 0.06,
                         poles: tuple[str, str] = ("low", "high"), aliases: dict[str, str] | None = None,
                         name: str = "style-model", version: str = "1", description: str = "", command: str = "",
                         notes: Sequence[str] = (),
                         extra_held_out: Callable[[StyleModel], dict[str, float]] | None = None,
                         device: str | None = None, seed: int = 13, progress: Progress | None = None) -> StyleModel:
    """Fine-tune ``model`` with low-rank adapters and a linear head on labelled text.

    Classifiers minimise cross-entropy (one logit and a sigmoid for two labels); regressors minimise the squared
    error of standardised scores. After each epoch the model is scored on ``selection`` (accuracy or Spearman;
    10% of ``train`` when not given, and then not refitted) and the best epoch is kept. ``held_out`` is scored
    once at the end and recorded in the card.
    """
    import torch

    from ..training.style import prepare_targets

    held_back = selection is None
    fit_part, sel_part, labels, y_fit, _ = prepare_targets(train, selection, kind, poles, seed)
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
    dev = _device(device)
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
            target = y_t[idx].to(dev)
            if kind == REGRESSOR:
                loss = torch.nn.functional.mse_loss(out[:, 0], target)
            elif n_out == 1:
                loss = torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], target)
            else:
                loss = torch.nn.functional.cross_entropy(out, target)
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
        from ..training.style import held_out_entry

        result.card["held_out"] = held_out_entry(result, held_out, extra_held_out)
    return result


def _selection_score(model: StyleModel, data: LabelledData) -> float:
    from ..training.style import evaluate

    scores = evaluate(model, data)
    return float(scores["accuracy"] if model.kind == CLASSIFIER else scores["spearman"])
