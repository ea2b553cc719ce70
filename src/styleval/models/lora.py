"""Low-rank adapters (LoRA) on the linear layers of a local transformers encoder: which layers, and merging.

Stored adapters are plain arrays per layer, ``A`` (rank x in) and ``B`` (out x rank); the adapted weight is
``W + scale · B·A``. Style models (:mod:`styleval.style_models.finetune`) and the preservation cross-encoder
(:mod:`styleval.preservation.adapted`) train such adapters and merge them into a private copy of the encoder
at load time, so scoring is one ordinary forward pass.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError

#: The linear layers of BERT-like encoders (MiniLM, BERT, RoBERTa...), by the last part of their module name.
DEFAULT_TARGETS = ("query", "key", "value", "attention.output.dense", "intermediate.dense", "output.dense")


def target_modules(model: Any, targets: Sequence[str]) -> list[str]:
    """Names of the model's linear layers whose name is, or ends with, one of ``targets`` (module order)."""
    import torch

    names = [n for n, m in model.named_modules()
             if isinstance(m, torch.nn.Linear) and any(n == t or n.endswith("." + t) for t in targets)]
    if not names:
        raise InputError(f"none of the layers {', '.join(targets)} is a linear layer of this encoder")
    return names


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
