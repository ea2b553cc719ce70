"""A cross-encoder for content preservation: the encoder reads the comparison text and the output together.

``[CLS] comparison [SEP] output [SEP]`` goes through the local MiniLM; the last hidden states are mean-pooled over
the real tokens and a linear head gives the probability that the output keeps the comparison's meaning. Unlike
the pair features of :mod:`styleval.content.features`, every layer sees both texts at once, so it can learn that
"this stupid phone" -> "this phone" keeps meaning while "this phone" -> "this laptop" does not.

Only low-rank adapters (LoRA) on the attention and feed-forward projections and the head are trained; the file
``cross.npz`` of a model folder holds them (a few hundred KB) and nothing of the encoder itself. At load time the
adapters are merged into a copy of the encoder (``W + scaling * B @ A``), so scoring needs neither training code
nor a LoRA library, and the merged encoder runs on torch or, exported once per machine, on ONNX Runtime.
"""
from __future__ import annotations

import copy
import hashlib
import math
import random
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..models.lora import DEFAULT_TARGETS, merge_adapters, target_modules
from ..progress import Progress
from .data import PairData

class CrossEncoder:
    """Scores (comparison, output) pairs; ``adapters`` maps a linear layer's name to its (A, B) matrices."""

    def __init__(self, encoder: str, adapters: dict[str, tuple[np.ndarray, np.ndarray]], scaling: float,
                 head_w: np.ndarray, head_b: float, *, max_length: int = 128, backend: str = "auto",
                 batch_size: int = 64, file_hash: str = "") -> None:
        from ..models.onnx_encoder import resolve_backend

        if not adapters:
            raise InputError("a cross-encoder needs at least one adapter")
        self.encoder = encoder
        self.adapters = adapters
        self.scaling = float(scaling)
        self.head_w = np.asarray(head_w, dtype=np.float32).reshape(-1)
        self.head_b = float(head_b)
        self.max_length = int(max_length)
        self.backend = resolve_backend(backend)
        self.batch_size = int(batch_size)
        self.file_hash = file_hash or self._hash()
        self._runner: tuple[Any, Any] | None = None

    # -- identity and storage --------------------------------------------------------------------
    def _hash(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.adapters):
            a, b = self.adapters[name]
            h.update(name.encode() + np.ascontiguousarray(a).tobytes() + np.ascontiguousarray(b).tobytes())
        h.update(self.head_w.tobytes() + np.float64(self.head_b).tobytes() + np.float64(self.scaling).tobytes())
        return h.hexdigest()

    @property
    def rank(self) -> int:
        return int(next(iter(self.adapters.values()))[0].shape[0])

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {"scaling": np.asarray([self.scaling]), "head_w": self.head_w,
                                         "head_b": np.asarray([self.head_b])}
        for name, (a, b) in self.adapters.items():
            arrays[f"A:{name}"], arrays[f"B:{name}"] = a, b
        np.savez(path, **arrays)  # type: ignore[arg-type]  # numpy stubs read ** as its allow_pickle flag

    @classmethod
    def load(cls, path: str | Path, encoder: str, *, max_length: int = 128, backend: str = "auto") -> "CrossEncoder":
        path = Path(path)
        if not path.is_file():
            raise InputError("missing cross-encoder weights", path)
        try:
            w = np.load(path, allow_pickle=False)
            adapters = {k[2:]: (w[k], w["B:" + k[2:]]) for k in w.files if k.startswith("A:")}
            scaling, head_w, head_b = float(w["scaling"][0]), w["head_w"], float(w["head_b"][0])
        except (KeyError, ValueError, OSError) as exc:
            raise InputError(f"not a cross-encoder weights file ({exc})", path) from None
        return cls(encoder, adapters, scaling, head_w, head_b, max_length=max_length, backend=backend)

    # -- scoring ----------------------------------------------------------------------------------
    def merged_encoder(self) -> Any:
        """A copy of the local encoder with the adapters merged into its weights (torch, eval mode)."""
        from .features import _load_encoder

        _, base = _load_encoder(self.encoder)
        return merge_adapters(copy.deepcopy(base), self.adapters, self.scaling, self.encoder).eval()

    def _load(self) -> tuple[Any, Any]:
        from ..models.pool import get_pool
        from .features import load_tokenizer

        def load() -> tuple[Any, Any]:
            tok = load_tokenizer(self.encoder)
            if self.backend == "onnx":
                from ..models.onnx_encoder import load_onnx_encoder
                from ..models.resolve import resolve

                key = hashlib.sha256((resolve(self.encoder).content_hash() + self.file_hash).encode()).hexdigest()
                return tok, load_onnx_encoder("preservation-cross", key, lambda: (tok, self.merged_encoder()))
            return tok, self.merged_encoder()

        if self._runner is None:
            self._runner = get_pool().get(f"preservation-cross:{self.file_hash}:{self.backend}", load)
        return self._runner

    def score(self, comparisons: Sequence[str], outputs: Sequence[str],
              progress: Progress | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text."""
        import torch

        from .features import mean_pool, run_encoder

        if len(comparisons) != len(outputs):
            raise InputError(f"{len(comparisons)} comparison texts but {len(outputs)} outputs")
        tok, enc = self._load()
        order = sorted(range(len(outputs)), key=lambda i: len(comparisons[i]) + len(outputs[i]), reverse=True)
        out = np.zeros(len(outputs))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                hidden, mask, _ = run_encoder(tok, enc, self.backend, [comparisons[i] for i in idx],
                                              [outputs[i] for i in idx], max_length=self.max_length)
                pooled = mean_pool(hidden, mask)
                out[idx] = 1.0 / (1.0 + np.exp(-(pooled @ self.head_w + self.head_b)))
                if progress is not None:
                    progress("cross-encoding pairs", min(start + self.batch_size, len(order)), len(order))
        return out


def train_cross_encoder(data: PairData, *, encoder: str, rank: int = 16, alpha: float = 32.0, epochs: int = 2,
                        lr: float = 5e-4, batch_size: int = 32, max_length: int = 128, seed: int = 13,
                        progress: Progress | None = None) -> tuple[CrossEncoder, dict[str, Any]]:
    """Fit LoRA adapters and a head on ``data`` (soft targets, weighted cross-entropy, every group the same total
    weight); returns the cross-encoder (torch backend) and a summary of the run for the model card."""
    import torch

    from ..models.pool import configure_torch
    from .features import _load_encoder, load_tokenizer

    if rank < 1 or epochs < 1:
        raise InputError(f"cross-encoder rank and epochs must be at least 1, got {rank} and {epochs}")
    configure_torch()
    torch.manual_seed(seed)
    tok = load_tokenizer(encoder)
    _, base = _load_encoder(encoder)
    enc = copy.deepcopy(base)
    for p in enc.parameters():
        p.requires_grad_(False)
    names = target_modules(enc, DEFAULT_TARGETS)
    modules = dict(enc.named_modules())
    lora: dict[str, tuple[torch.nn.Parameter, torch.nn.Parameter]] = {}
    scaling = alpha / rank
    for name in names:
        layer = modules[name]
        a = torch.nn.Parameter(torch.randn(rank, layer.in_features) / math.sqrt(layer.in_features))
        b = torch.nn.Parameter(torch.zeros(layer.out_features, rank))
        lora[name] = (a, b)

        def hook(mod: Any, inputs: Any, output: Any, a: Any = a, b: Any = b) -> Any:
            return output + scaling * (inputs[0] @ a.T) @ b.T

        layer.register_forward_hook(hook)
    head = torch.nn.Linear(enc.config.hidden_size, 1)
    params = [p for pair in lora.values() for p in pair] + list(head.parameters())
    weights = data.group_weights()
    n = len(data)
    steps = epochs * math.ceil(n / batch_size)
    warm = max(1, steps // 10)
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    rng = random.Random(seed)
    enc.train()
    step, losses, started = 0, [], time.time()
    for _ in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            x = tok([data.sources[i] for i in idx], [data.outputs[i] for i in idx], padding=True, truncation=True,
                    max_length=max_length, return_tensors="pt")
            hidden = enc(**x).last_hidden_state
            mask = x["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            z = head((hidden * mask).sum(1) / mask.sum(1)).squeeze(-1)
            y = torch.tensor([float(data.scores[i]) for i in idx])
            w = torch.tensor(weights[idx], dtype=torch.float32)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none") * w).sum() / w.sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if progress is not None:
                progress("training the cross-encoder", step, steps)
    adapters = {name: (a.detach().numpy().copy(), b.detach().numpy().copy()) for name, (a, b) in lora.items()}
    model = CrossEncoder(encoder, adapters, scaling, head.weight.detach().numpy()[0].copy(),
                         float(head.bias.detach()[0]), max_length=max_length, backend="torch")
    summary = {"rank": rank, "alpha": alpha, "adapted_layers": len(names), "epochs": epochs, "steps": steps,
               "batch_size": batch_size, "learning_rate": lr, "schedule": "linear warm-up (10%) and decay, AdamW",
               "seed": seed, "loss_first_10": round(float(np.mean(losses[:10])), 4),
               "loss_last_10": round(float(np.mean(losses[-10:])), 4),
               "train_seconds": round(time.time() - started, 1)}
    return model, summary
