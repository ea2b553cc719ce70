"""Low-rank adapters (LoRA) on the linear layers of a local transformers encoder: which layers, attaching
trainable adapters, and merging stored ones.

Stored adapters are plain arrays per layer, ``A`` (rank x in) and ``B`` (out x rank); the adapted weight is
``W + scale · B·A``. Style models (:mod:`styleval.training.style_finetune`) and the preservation cross-encoder
(:mod:`styleval.training.cross_encoder`) train such adapters (:func:`attach_adapters`); the models merge them into a
private copy of the encoder at load time (:func:`merge_adapters`), so scoring is one ordinary forward pass. The
peft-based trainers (language models, transfer models) pick their layers with :func:`target_modules` too.

One initialisation for every adapter trained here, the one peft uses: ``A`` Kaiming-uniform (``a = sqrt(5)``, i.e.
uniform in ±1/sqrt(in)), ``B`` zero, so training starts from the unchanged encoder. ``A`` is drawn on the CPU and
then moved, so a seed gives the same start on every device.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError

#: The linear layers of BERT-like encoders (MiniLM, BERT, RoBERTa...), by the last part of their module name.
DEFAULT_TARGETS = ("query", "key", "value", "attention.output.dense", "intermediate.dense", "output.dense")
#: The attention projections of Llama-like causal LMs (SmolLM2), adapted through peft.
CAUSAL_LM_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")


def target_modules(model: Any, targets: Sequence[str]) -> list[str]:
    """Names of the model's linear layers whose name is, or ends with, one of ``targets`` (module order)."""
    import torch

    names = [n for n, m in model.named_modules()
             if isinstance(m, torch.nn.Linear) and any(n == t or n.endswith("." + t) for t in targets)]
    if not names:
        raise InputError(f"none of the layers {', '.join(targets)} is a linear layer of this encoder")
    return names


def peft_targets(model: Any, targets: Sequence[str] = CAUSAL_LM_TARGETS) -> list[str]:
    """``target_modules`` for a peft ``LoraConfig``: ``targets`` as given (peft matches a layer by its name or name
    suffix, as :func:`target_modules` does), once checked to name linear layers of ``model``."""
    target_modules(model, targets)
    return list(targets)


class LoraAdapter:
    """A trainable adapter hooked onto one linear layer: its output becomes ``y + scale · (dropout(x) A^T) B^T``."""

    def __init__(self, layer: Any, rank: int, scale: float, dropout: float = 0.0) -> None:
        import torch

        device = layer.weight.device
        a = torch.empty(rank, layer.in_features)
        torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))
        self.A = torch.nn.Parameter(a.to(device))
        self.B = torch.nn.Parameter(torch.zeros(layer.out_features, rank, device=device))
        self.scale = float(scale)
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0 else None
        self.handle = layer.register_forward_hook(self._hook)

    def _hook(self, module: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        x = inputs[0] if self.dropout is None else self.dropout(inputs[0])
        return output + self.scale * (x @ self.A.T) @ self.B.T

    def train(self, mode: bool = True) -> None:
        if self.dropout is not None:
            self.dropout.train(mode)

    def parameters(self) -> list[Any]:
        return [self.A, self.B]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) as private float32 numpy arrays, from any device."""
        return (self.A.detach().float().cpu().numpy().copy(), self.B.detach().float().cpu().numpy().copy())

    def remove(self) -> None:
        self.handle.remove()


def attach_adapters(encoder: Any, targets: Sequence[str], rank: int, scale: float,
                    dropout: float = 0.0) -> dict[str, LoraAdapter]:
    """Freeze ``encoder`` (a private copy) and hook a trainable :class:`LoraAdapter` onto each of its linear layers
    named by ``targets`` (:func:`target_modules`), in module order, on the layer's device; returns them by layer."""
    for p in encoder.parameters():
        p.requires_grad_(False)
    modules = dict(encoder.named_modules())
    return {name: LoraAdapter(modules[name], rank, scale, dropout) for name in target_modules(encoder, targets)}


def merge_adapters(encoder: Any, adapters: Mapping[str, tuple[np.ndarray, np.ndarray]], scale: float,
                   encoder_name: str) -> Any:
    """Add ``scale · B·A`` to each adapted layer's weight, in place (pass a private copy); returns the encoder."""
    import torch

    modules = dict(encoder.named_modules())
    with torch.no_grad():
        for name, (a, b) in adapters.items():
            if name not in modules:
                raise InputError(f"the adapter names layer {name!r}, which encoder {encoder_name!r} lacks")
            w = modules[name].weight
            w += scale * (torch.from_numpy(np.asarray(b)).to(w.dtype) @ torch.from_numpy(np.asarray(a)).to(w.dtype))
    return encoder
