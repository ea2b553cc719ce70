"""What the two adapter-tuned scorers of a preservation model share: LoRA adapters on the local MiniLM, stored as
plain arrays with a small head, merged into a copy of the encoder at load time, and the training loop.

:class:`~styleval.content.cross_encoder.CrossEncoder` reads comparison and output as one sequence;
:class:`~styleval.content.bi_encoder.BiEncoder` encodes each text alone and compares the two vectors. Both store
``scaling``, ``head_w``, ``head_b`` and one ``A:<layer>`` / ``B:<layer>`` array pair per adapted layer in one
``.npz`` file; their identity is the hash of those arrays. A scorer may use only the encoder's first ``layers``
transformer layers (stored as ``layers``; absent or 0 means all of them): about half the layers run about twice as
fast.
"""
from __future__ import annotations

import copy
import hashlib
import math
import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from ..models.lora import DEFAULT_TARGETS, merge_adapters, target_modules
from ..progress import Progress
from .data import PairData


class AdaptedEncoder:
    """LoRA adapters (layer name -> (A, B)), their scaling and a head, over the named local encoder."""

    #: Prefix of the ONNX export's name; each subclass sets its own.
    kind = "adapted"

    def __init__(self, encoder: str, adapters: dict[str, tuple[np.ndarray, np.ndarray]], scaling: float,
                 head_w: np.ndarray, head_b: float, *, max_length: int = 128, backend: str = "auto",
                 batch_size: int = 64, file_hash: str = "", layers: int = 0) -> None:
        from ..models.onnx_encoder import resolve_backend

        if not adapters:
            raise InputError(f"a {self.kind} needs at least one adapter")
        if layers < 0:
            raise InputError(f"a {self.kind}'s layers must be 0 (all) or more, got {layers}")
        self.encoder = encoder
        self.layers = int(layers)
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
        if self.layers:  # absent for a full-depth scorer, so the hashes of earlier files stay as they were
            h.update(f"layers={self.layers}".encode())
        return h.hexdigest()

    @property
    def rank(self) -> int:
        return int(next(iter(self.adapters.values()))[0].shape[0])

    def rescaled(self, t: float) -> Any:
        """The same scorer with its adapters' contribution multiplied by ``t`` in [0, 1]: merged weights
        ``W + t * scaling * B @ A``, a point on the line from the plain encoder (``t = 0``) to the tuned one
        (``t = 1``), with the head unchanged. A weight-space blend of tuned and pre-trained models (Wortsman et al.
        2022): it costs one encoder pass, where averaging the two models' scores costs two."""
        if not 0.0 <= t <= 1.0:
            raise InputError(f"an adapter scale must be in [0, 1], got {t}")
        return type(self)(self.encoder, self.adapters, self.scaling * t, self.head_w, self.head_b,
                          max_length=self.max_length, backend=self.backend, batch_size=self.batch_size,
                          layers=self.layers)

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {"scaling": np.asarray([self.scaling]), "head_w": self.head_w,
                                         "head_b": np.asarray([self.head_b])}
        if self.layers:
            arrays["layers"] = np.asarray([self.layers])
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
            layers = int(w["layers"][0]) if "layers" in w.files else 0
        except (KeyError, ValueError, OSError) as exc:
            raise InputError(f"not a {cls.kind} weights file ({exc})", path) from None
        return cls(encoder, adapters, scaling, head_w, head_b, max_length=max_length, backend=backend,
                   layers=layers)

    # -- the merged encoder --------------------------------------------------------------------------
    def merged_encoder(self) -> Any:
        """A copy of the local encoder with the adapters merged into its weights (torch, eval mode)."""
        from .features import _load_encoder

        _, base = _load_encoder(self.encoder)
        enc = truncate(copy.deepcopy(base), self.layers)
        return merge_adapters(enc, self.adapters, self.scaling, self.encoder).eval()

    def _load(self) -> tuple[Any, Any]:
        """(tokenizer, merged encoder on the chosen backend), once per process."""
        from ..models.pool import get_pool
        from .features import load_tokenizer

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


def truncate(encoder: Any, layers: int) -> Any:
    """Keep only the first ``layers`` transformer layers of a BERT-like encoder (a private copy), in place; 0 keeps
    all. Returns the encoder."""
    if not layers:
        return encoder
    stack = encoder.encoder.layer
    if not 1 <= layers <= len(stack):
        raise InputError(f"layers must be between 1 and the encoder's {len(stack)}, got {layers}")
    encoder.encoder.layer = stack[:layers]
    encoder.config.num_hidden_layers = layers
    return encoder


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
                 device: str = "cpu", layers: int = 0) -> tuple[Any, Any, dict[str, tuple[Any, Any]], float]:
    """Set up a training run: check the settings, seed torch, and return the tokenizer, a private copy of the
    encoder (its first ``layers`` layers, all for 0) on ``device`` with LoRA adapters attached
    (:func:`attach_adapters`), the adapters and their scaling ``alpha / rank``."""
    import torch

    from ..models.pool import configure_torch
    from .features import _load_encoder, load_tokenizer

    if rank < 1 or epochs < 1:
        raise InputError(f"{what} rank and epochs must be at least 1, got {rank} and {epochs}")
    configure_torch()
    torch.manual_seed(seed)
    tok = load_tokenizer(encoder)
    enc = truncate(copy.deepcopy(_load_encoder(encoder)[1]), layers).to(device)
    scaling = alpha / rank
    return tok, enc, attach_adapters(enc, rank, scaling), scaling


def to_numpy(t: Any) -> np.ndarray:
    """A trained tensor as a private numpy array, from any device."""
    return t.detach().cpu().numpy().copy()


def attach_adapters(encoder: Any, rank: int, scaling: float) -> dict[str, tuple[Any, Any]]:
    """Freeze ``encoder`` (a private copy) and hook a trainable LoRA pair (A random-normal / sqrt(in), B zero) onto
    each of its :data:`~styleval.models.lora.DEFAULT_TARGETS` layers, in module order, on the encoder's device;
    returns them by layer."""
    import torch

    for p in encoder.parameters():
        p.requires_grad_(False)
    device = next(encoder.parameters()).device
    modules = dict(encoder.named_modules())
    lora: dict[str, tuple[Any, Any]] = {}
    for name in target_modules(encoder, DEFAULT_TARGETS):
        layer = modules[name]
        a = torch.nn.Parameter((torch.randn(rank, layer.in_features) / math.sqrt(layer.in_features)).to(device))
        b = torch.nn.Parameter(torch.zeros(layer.out_features, rank, device=device))
        lora[name] = (a, b)

        def hook(mod: Any, inputs: Any, output: Any, a: Any = a, b: Any = b) -> Any:
            return output + scaling * (inputs[0] @ a.T) @ b.T

        layer.register_forward_hook(hook)
    return lora


def hidden_states(tok: Any, enc: Any, texts: list[str], pairs: list[str] | None = None, *,
                  max_length: int) -> tuple[Any, Any]:
    """Training-time forward pass (torch, with gradients) of ``texts`` (with ``pairs`` as second segments, if
    given) on the encoder's device: the last hidden states and the attention mask."""
    x = tok(*((texts,) if pairs is None else (texts, pairs)), padding=True, truncation=True, max_length=max_length,
            return_tensors="pt").to(next(enc.parameters()).device)
    return enc(**x).last_hidden_state, x["attention_mask"]


def pooled(tok: Any, enc: Any, texts: list[str], pairs: list[str] | None = None, *, max_length: int) -> Any:
    """The mean over real tokens of :func:`hidden_states`, as the scorers pool at scoring time."""
    hidden, attention = hidden_states(tok, enc, texts, pairs, max_length=max_length)
    mask = attention.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1)


RANKED_ABOVE, RANKED_BELOW = "style-rewrites", "changed"


def _batches(data: PairData, batch_size: int, by_source: bool, rng: random.Random) -> list[list[int]]:
    """One epoch's batches: pairs in random order, or (``by_source``) whole groups of pairs that share a source text,
    in random order, cut after the group that fills ``batch_size``."""
    if not by_source:
        order = list(range(len(data)))
        rng.shuffle(order)
        return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    groups: dict[str, list[int]] = {}
    for i, text in enumerate(data.sources):
        groups.setdefault(text, []).append(i)
    keys = list(groups)
    rng.shuffle(keys)
    out: list[list[int]] = [[]]
    for key in keys:
        if len(out[-1]) >= batch_size:
            out.append([])
        out[-1].extend(groups[key])
    return [b for b in out if b]


def _ranked_pairs(data: PairData, idx: list[int]) -> tuple[list[int], list[int]]:
    """Positions in ``idx`` of (style rewrite, automatic change) pairs of the same source text."""
    at: dict[tuple[str, str], list[int]] = {}
    for j, i in enumerate(idx):
        at.setdefault((data.sources[i], data.groups[i]), []).append(j)
    pairs = [(a, b) for (text, group), js in at.items() if group == RANKED_ABOVE
             for a in js for b in at.get((text, RANKED_BELOW), [])]
    return [a for a, _ in pairs], [b for _, b in pairs]


def fit_adapters(data: PairData, params: Sequence[Any], batch_logits: Callable[[list[int]], Any], *, epochs: int,
                 lr: float, batch_size: int, seed: int, what: str, by_source: bool = False,
                 rank_weight: float = 0.0, head: Sequence[Any] = (), head_lr: float | None = None,
                 progress: Progress | None = None) -> dict[str, Any]:
    """The training loop of both scorers: AdamW with a linear warm-up (10%) and decay, soft-target weighted
    cross-entropy (every group the same total weight), gradient norm clipped at 1. ``batch_logits(index)`` returns
    the logits of those pairs of ``data``. Returns a summary for the model card.

    ``rank_weight > 0`` adds a pairwise term, ``rank_weight`` times the mean of ``softplus(z_change - z_rewrite)``
    over the (style rewrite, automatic change) pairs of one source in a batch, so a rewrite is pushed above a
    meaning change of the same text; it implies ``by_source`` batches (whole source groups in one batch), which
    are also available alone. Neither is used by the shipped models (``scripts/select_cross_encoder.py``).

    ``head``: more parameters (a scorer's small head), trained at ``head_lr`` instead of ``lr`` on the same
    schedule; a few numbers that start far from their end need more than the adapters' small steps."""
    import torch

    if rank_weight < 0:
        raise InputError(f"rank_weight must be 0 or more, got {rank_weight}")
    by_source = by_source or rank_weight > 0
    weights = data.group_weights()
    rng = random.Random(seed)
    # every epoch's batches up front: with whole source groups the count differs from epoch to epoch
    plan = [_batches(data, batch_size, by_source, rng) for _ in range(epochs)]
    steps = sum(len(batches) for batches in plan)
    warm = max(1, steps // 10)
    groups: list[dict[str, Any]] = [{"params": list(params), "lr": lr}]
    if head:
        groups.append({"params": list(head), "lr": head_lr if head_lr is not None else lr})
    every = [p for g in groups for p in g["params"]]
    opt = torch.optim.AdamW(groups, lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    step, losses, started, ranked = 0, [], time.time(), 0
    for batches in plan:
        for idx in batches:
            z = batch_logits(idx)
            y = torch.tensor([float(data.scores[i]) for i in idx], device=z.device)
            w = torch.tensor(weights[idx], dtype=torch.float32, device=z.device)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none") * w).sum() / w.sum()
            above, below = _ranked_pairs(data, idx) if rank_weight > 0 else ([], [])
            if above:
                loss = loss + rank_weight * torch.nn.functional.softplus(z[below] - z[above]).mean()
                ranked += len(above)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(every, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if progress is not None:
                progress(f"training the {what}", step, steps)
    extra = {"batches": "whole source groups", "rank_weight": rank_weight, "ranked_pairs_seen": ranked} \
        if by_source else {}
    extra.update({"head_learning_rate": head_lr} if head and head_lr is not None else {})
    return {"epochs": epochs, "steps": steps, "batch_size": batch_size, "learning_rate": lr,
            "schedule": "linear warm-up (10%) and decay, AdamW", "seed": seed, **extra,
            "loss_first_10": round(float(np.mean(losses[:10])), 4),
            "loss_last_10": round(float(np.mean(losses[-10:])), 4),
            "train_seconds": round(time.time() - started, 1)}
