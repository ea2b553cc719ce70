"""The adapter-tuned scorer's machinery (:class:`~styleval.preservation.cross_encoder.CrossEncoder`): LoRA adapters on
the local MiniLM, stored as plain arrays with a small head, merged into a copy of the encoder at load time, and the
training loop.

A scorer stores ``scaling``, ``head_w``, ``head_b`` and one ``A:<layer>`` / ``B:<layer>`` array pair per adapted
layer in one ``.npz`` file; its identity is the hash of those arrays.
"""
from __future__ import annotations

import copy
import hashlib
import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from ..models.lora import DEFAULT_TARGETS, LoraAdapter, attach_adapters, merge_adapters
from ..progress import Progress
from .data import PairData


class AdaptedEncoder:
    """LoRA adapters (layer name -> (A, B)), their scaling and a head, over the named local encoder."""

    #: Prefix of the ONNX export's name; each subclass sets its own.
    kind = "adapted"

    def __init__(self, encoder: str, adapters: dict[str, tuple[np.ndarray, np.ndarray]], scaling: float,
                 head_w: np.ndarray, head_b: float, *, max_length: int = 128, backend: str = "auto",
                 batch_size: int = 64, file_hash: str = "") -> None:
        from ..models.onnx_encoder import resolve_backend

        if not adapters:
            raise InputError(f"a {self.kind} needs at least one adapter")
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
    def load(cls, path: str | Path, encoder: str, *, max_length: int = 128, backend: str = "auto") -> Any:
        path = Path(path)
        if not path.is_file():
            raise InputError(f"missing {cls.kind} weights", path)
        try:
            w = np.load(path, allow_pickle=False)
            adapters = {k[2:]: (w[k], w["B:" + k[2:]]) for k in w.files if k.startswith("A:")}
            scaling, head_w, head_b = float(w["scaling"][0]), w["head_w"], float(w["head_b"][0])
            if "layers" in w.files:
                raise ValueError("a scorer on part of the encoder's layers; styleval no longer reads those")
        except (KeyError, ValueError, OSError) as exc:
            raise InputError(f"not a {cls.kind} weights file ({exc})", path) from None
        return cls(encoder, adapters, scaling, head_w, head_b, max_length=max_length, backend=backend)

    # -- the merged encoder --------------------------------------------------------------------------
    def merged_encoder(self) -> Any:
        """A copy of the local encoder with the adapters merged into its weights (torch, eval mode)."""
        from ..models.encoder import load_encoder

        _, base = load_encoder(self.encoder)
        return merge_adapters(copy.deepcopy(base), self.adapters, self.scaling, self.encoder).eval()

    def _load(self) -> tuple[Any, Any]:
        """(tokenizer, merged encoder on the chosen backend), once per process."""
        from ..models.pool import get_pool
        from ..models.encoder import load_tokenizer

        def load() -> tuple[Any, Any]:
            tok = load_tokenizer(self.encoder)
            if self.backend == "onnx":
                from ..models.onnx_encoder import load_onnx_encoder
                from ..models.resolve import resolve

                key = hashlib.sha256((resolve(self.encoder).content_hash() + self.file_hash).encode()).hexdigest()
                return tok, load_onnx_encoder(f"preservation-{self.kind}", key, lambda: (tok, self.merged_encoder()))
            return tok, self.merged_encoder()

        if self._runner is None:
            self._runner = get_pool().get(f"preservation-{self.kind}:{self.file_hash}:{self.backend}", load)
        return self._runner


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


def to_numpy(t: Any) -> np.ndarray:
    """A trained tensor as a private numpy array, from any device."""
    return t.detach().cpu().numpy().copy()


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


def fit_adapters(data: PairData, params: Sequence[Any], batch_logits: Callable[[list[int]], Any], *, epochs: int,
                 lr: float, batch_size: int, seed: int, what: str,
                 progress: Progress | None = None) -> dict[str, Any]:
    """The training loop: AdamW with a linear warm-up (10%) and decay, soft-target weighted cross-entropy (every
    group the same total weight), gradient norm clipped at 1. ``batch_logits(index)`` returns the logits of those
    pairs of ``data``. Returns a summary for the model card."""
    import torch

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
