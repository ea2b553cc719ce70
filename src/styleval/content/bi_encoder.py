"""A bi-encoder for content preservation: each text is encoded alone by an adapter-tuned MiniLM and the two
mean-pooled, unit-length vectors are compared.

The score is ``sigmoid(s * cos + b) / sigmoid(s + b)`` with a learned scale ``s > 0`` and shift ``b``: a
calibrated probability that the output keeps the comparison's meaning, divided by the probability of an identical
pair (cosine 1), so an identical pair scores exactly 1 and the ranking is the tuned cosine's. The adapters are
trained like the cross-encoder's (:mod:`styleval.content.adapted`) on the same pairs, so the cosine learns that
a style change keeps meaning and a changed noun does not.

Unlike the cross-encoder, each text is encoded once however many pairs it is in (a source shared by eight
systems costs one pass), and no spaCy parse is needed: this is the fastest learned scorer styleval ships.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..progress import Progress
from .adapted import AdaptedEncoder, adapted_copy, fit_adapters, pooled, to_numpy, training_device
from .data import PairData


class BiEncoder(AdaptedEncoder):
    """Scores pairs by the tuned cosine of their texts; ``head_w`` holds the scale ``s``, ``head_b`` the shift."""

    kind = "bi"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.head_w.shape != (1,) or not self.head_w[0] > 0:
            raise InputError(f"a bi-encoder's scale must be one positive number, got {self.head_w.tolist()}")

    @functools.cached_property
    def _namespace(self) -> str:
        """The embedding-cache namespace of this bi-encoder's vectors (hashing the encoder's files once)."""
        from ..models.resolve import resolve

        return (f"preservation-bi:{self.file_hash}:{resolve(self.encoder).content_hash()}:{self.backend}:"
                f"{self.max_length}")

    def embed(self, texts: Sequence[str], progress: Progress | None = None) -> dict[str, np.ndarray]:
        """Unit-length vectors of the distinct ``texts``, kept in styleval's shared embedding cache (under this
        bi-encoder's weights, the encoder, the backend and the length limit) like every other metric's."""
        import torch

        from ..models.pool import embedding_cache
        from .features import _unit, mean_pool, run_encoder

        namespace = self._namespace
        distinct = list(dict.fromkeys(texts))
        cache = embedding_cache()
        found = cache.get_many(namespace, distinct)
        todo = sorted((t for t in distinct if t not in found), key=len, reverse=True)
        if todo:
            tok, enc = self._load()
            with torch.inference_mode():
                for start in range(0, len(todo), self.batch_size):
                    chunk = todo[start:start + self.batch_size]
                    hidden, mask, _ = run_encoder(tok, enc, self.backend, chunk, max_length=self.max_length)
                    new = {t: v.copy() for t, v in zip(chunk, _unit(mean_pool(hidden, mask)))}  # rows, not views
                    cache.put_many(namespace, new)
                    found.update(new)
                    if progress is not None:
                        progress("bi-encoding texts", min(start + self.batch_size, len(todo)), len(todo))
        return found

    def score(self, comparisons: Sequence[str], outputs: Sequence[str],
              progress: Progress | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text; identical texts score 1."""
        if len(comparisons) != len(outputs):
            raise InputError(f"{len(comparisons)} comparison texts but {len(outputs)} outputs")
        vecs = self.embed([*comparisons, *outputs], progress)
        cos = np.asarray([float(np.dot(vecs[c], vecs[o])) for c, o in zip(comparisons, outputs)])
        s, b = float(self.head_w[0]), self.head_b
        return np.minimum(_sigmoid(s * cos + b) / _sigmoid(s + b), 1.0)


def _sigmoid(z: np.ndarray | float) -> Any:
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


def train_bi_encoder(data: PairData, *, encoder: str, rank: int = 16, alpha: float = 32.0, epochs: int = 2,
                     lr: float = 5e-4, batch_size: int = 32, max_length: int = 128, seed: int = 13,
                     by_source: bool = False, rank_weight: float = 0.0, device: str = "cpu", layers: int = 0,
                     progress: Progress | None = None) -> tuple[BiEncoder, dict[str, Any]]:
    """Fit LoRA adapters, the scale and the shift on ``data`` (the cross-encoder's loss and weights) on ``device``
    (:func:`~styleval.content.adapted.training_device`); returns the bi-encoder (torch backend, CPU) and a summary
    of the run for the model card."""
    import torch

    device = training_device(device)
    tok, enc, lora, scaling = adapted_copy(encoder, rank=rank, alpha=alpha, epochs=epochs, seed=seed,
                                           what="bi-encoder", device=device, layers=layers)
    # start where MiniLM's cosines sit: unrelated texts near .1, paraphrases near .8
    scale = torch.nn.Parameter(torch.tensor(10.0, device=device))
    shift = torch.nn.Parameter(torch.tensor(-6.0, device=device))
    params = [p for pair in lora.values() for p in pair] + [scale, shift]

    def embed(texts: list[str]) -> Any:
        return torch.nn.functional.normalize(pooled(tok, enc, texts, max_length=max_length), dim=-1)

    def logits(idx: list[int]) -> Any:
        cos = (embed([data.sources[i] for i in idx]) * embed([data.outputs[i] for i in idx])).sum(-1)
        return scale * cos + shift

    enc.train()
    summary = fit_adapters(data, params, logits, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed,
                           what="bi-encoder", by_source=by_source,
                           rank_weight=rank_weight, progress=progress)
    s_val, b_val = float(scale.detach()), float(shift.detach())
    if not s_val > 0:
        raise InputError(f"bi-encoder training ended with a non-positive scale ({s_val:.3f}); the training pairs do "
                         "not order meaning-keeping pairs above the others")
    adapters = {name: (to_numpy(a), to_numpy(b)) for name, (a, b) in lora.items()}
    model = BiEncoder(encoder, adapters, scaling, np.asarray([s_val]), b_val, max_length=max_length, backend="torch",
                      layers=layers)
    return model, {"rank": rank, "alpha": alpha, "adapted_layers": len(lora), "layers": layers or "all",
                   "scale": round(s_val, 4),
                   "shift": round(b_val, 4), **summary, "device": device}
