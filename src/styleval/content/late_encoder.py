"""A late-interaction encoder for content preservation: each text is encoded alone (one pass per distinct text,
like the bi-encoder), and the two texts' *token* vectors are matched against each other.

A mean-pooled sentence vector lets a single swapped name or a deleted clause move the cosine little. Here every
token of one text looks for its most similar token in the other (cosine of the tuned, unit-length token vectors),
and a learned importance ``softplus(v . h + c)`` of each token decides how much its match counts, so the adapters
can learn that a politeness marker or an intensifier need not be matched and a name must. Five pair features, all
exactly 1 for identical texts:

* ``cos``: cosine of the mean-pooled vectors (the bi-encoder's);
* ``recall`` / ``precision``: importance-weighted mean of the best match of each token of the comparison text /
  of the output;
* ``worst_recall`` / ``worst_precision``: an importance-weighted soft minimum of the same matches
  (``-tau * log(sum(w * exp(-m / tau)) / sum(w))``, ``tau`` = :data:`TAU`), so one unmatched content word in a long
  sentence is not averaged away.

The logit is ``s . features + b`` and the score ``sigmoid(logit) / sigmoid(logit of an identical pair)`` (clipped at
1), so an identical pair scores exactly 1. The file holds the adapters like the other scorers
(:mod:`styleval.content.adapted`); ``head_w`` packs the five feature weights ``s``, the importance bias ``c`` and
vector ``v``, ``head_b`` the logit's shift ``b``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..progress import Progress
from .adapted import AdaptedEncoder, adapted_copy, fit_adapters, hidden_states, to_numpy, training_device
from .bi_encoder import _sigmoid
from .data import PairData

#: Temperature of the soft minimum over token matches (cosines): small enough that the worst match dominates.
TAU = 0.05
#: The pair features, in the order of their weights in ``head_w``.
LATE_FEATURES = ("cos", "recall", "precision", "worst_recall", "worst_precision")
N_FEATURES = len(LATE_FEATURES)
#: Pairs scored per chunk: the token vectors of one chunk's distinct texts are held in memory at a time.
CHUNK = 4096
#: The head (feature weights, shift, token importance) trains at this multiple of the adapters' learning rate:
#: AdamW moves each number by about the learning rate per step, which would leave them near their start.
HEAD_LR_FACTOR = 20.0


class LateEncoder(AdaptedEncoder):
    """Scores pairs by matching their texts' tuned token vectors; see the module's documentation for ``head_w``."""

    kind = "late"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.head_w.shape[0] <= N_FEATURES + 1:
            raise InputError(f"a late-interaction encoder's head needs {N_FEATURES} feature weights, an importance "
                             f"bias and an importance vector, got {self.head_w.shape[0]} numbers")

    @property
    def feature_weights(self) -> np.ndarray:
        return self.head_w[:N_FEATURES].astype(np.float64)

    @property
    def importance(self) -> tuple[np.ndarray, float]:
        """(v, c) of the token importance ``softplus(v . h + c)``."""
        return self.head_w[N_FEATURES + 1:], float(self.head_w[N_FEATURES])

    def encode(self, texts: Sequence[str], progress: Progress | None = None
               ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each distinct text: (unit token vectors, token importances, unit mean-pooled vector)."""
        import torch

        from .features import _unit, mean_pool, run_encoder

        v, c = self.importance
        todo = sorted(dict.fromkeys(texts), key=len, reverse=True)
        tok, enc = self._load()
        out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        with torch.inference_mode():
            for start in range(0, len(todo), self.batch_size):
                chunk = todo[start:start + self.batch_size]
                hidden, mask, _ = run_encoder(tok, enc, self.backend, chunk, max_length=self.max_length)
                if hidden.shape[-1] != v.shape[0]:
                    raise InputError(f"this late-interaction encoder's importance vector has {v.shape[0]} numbers, "
                                     f"the encoder's vectors {hidden.shape[-1]}")
                pooled = _unit(mean_pool(hidden, mask))
                weights = np.logaddexp(0.0, hidden @ v + c)  # softplus
                units = _unit(hidden)
                for row, text in enumerate(chunk):
                    n = int(mask[row].sum())
                    out[text] = (units[row, :n].copy(), weights[row, :n].copy(), pooled[row].copy())
                if progress is not None:
                    progress("late-interaction encoding", min(start + self.batch_size, len(todo)), len(todo))
        return out

    def features(self, comparisons: Sequence[str], outputs: Sequence[str],
                 progress: Progress | None = None) -> np.ndarray:
        """The five pair features (rows of :data:`LATE_FEATURES`) of each pair."""
        if len(comparisons) != len(outputs):
            raise InputError(f"{len(comparisons)} comparison texts but {len(outputs)} outputs")
        feats = np.zeros((len(outputs), N_FEATURES))
        # pairs in comparison-text order, so a source shared by several systems is encoded once per chunk
        order = sorted(range(len(outputs)), key=lambda i: comparisons[i])
        for start in range(0, len(order), CHUNK):
            idx = order[start:start + CHUNK]
            part = _part_progress(progress, start // CHUNK + 1, -(-len(order) // CHUNK))
            vecs = self.encode([t for i in idx for t in (comparisons[i], outputs[i])], part)
            for i in idx:
                feats[i] = pair_features(vecs[comparisons[i]], vecs[outputs[i]])
        return feats

    def score(self, comparisons: Sequence[str], outputs: Sequence[str],
              progress: Progress | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text; identical texts score 1."""
        return self.from_features(self.features(comparisons, outputs, progress))

    def from_features(self, feats: np.ndarray) -> np.ndarray:
        s = self.feature_weights
        z = np.asarray(feats, dtype=np.float64) @ s + self.head_b
        return np.minimum(_sigmoid(z) / _sigmoid(s.sum() + self.head_b), 1.0)


def _part_progress(progress: Progress | None, part: int, parts: int) -> Progress | None:
    """``progress`` with the stage named by its part (``part`` of ``parts``) when the pairs come in several parts,
    so a progress bar that restarts for each part says which one it is on."""
    if progress is None or parts == 1:
        return progress
    return lambda stage, done, total: progress(f"{stage} (part {part} of {parts})", done, total)


def pair_features(a: tuple[np.ndarray, np.ndarray, np.ndarray],
                  b: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """The five features of one pair from :meth:`LateEncoder.encode`'s entries of its two texts."""
    (ta, wa, pa), (tb, wb, pb) = a, b
    sim = (ta @ tb.T).astype(np.float64)
    best_a, best_b = sim.max(1), sim.max(0)
    return np.asarray([float(pa @ pb), _wmean(best_a, wa), _wmean(best_b, wb), _softmin(best_a, wa),
                       _softmin(best_b, wb)])


def _wmean(m: np.ndarray, w: np.ndarray) -> float:
    return float((m * w).sum() / max(float(w.sum()), 1e-12))


def _softmin(m: np.ndarray, w: np.ndarray) -> float:
    w = w.astype(np.float64) / max(float(w.sum()), 1e-12)
    z = -m / TAU
    top = z.max()
    return float(-TAU * (top + np.log(max(float((w * np.exp(z - top)).sum()), 1e-300))))


def torch_pair_features(ha: Any, ma: Any, hb: Any, mb: Any, v: Any, c: Any) -> Any:
    """Training-time (torch, with gradients) form of :func:`pair_features` for a batch: hidden states ``ha``
    (B x Ta x d) with attention mask ``ma`` (B x Ta), likewise ``hb`` / ``mb``; returns B x 5."""
    import torch

    fa, fb = ma.to(ha.dtype), mb.to(hb.dtype)
    pa = torch.nn.functional.normalize((ha * fa[..., None]).sum(1) / fa.sum(1, keepdim=True), dim=-1)
    pb = torch.nn.functional.normalize((hb * fb[..., None]).sum(1) / fb.sum(1, keepdim=True), dim=-1)
    ta, tb = torch.nn.functional.normalize(ha, dim=-1), torch.nn.functional.normalize(hb, dim=-1)
    sim = torch.einsum("bid,bjd->bij", ta, tb)
    big = 4.0  # cosines lie in [-1, 1]: a padded position never wins a max
    best_a = (sim - big * (1 - fb)[:, None, :]).max(2).values
    best_b = (sim - big * (1 - fa)[:, :, None]).max(1).values
    wa = torch.nn.functional.softplus(ha @ v + c) * fa
    wb = torch.nn.functional.softplus(hb @ v + c) * fb

    def wmean(m: Any, w: Any) -> Any:
        return (m * w).sum(1) / w.sum(1).clamp_min(1e-12)

    def softmin(m: Any, w: Any) -> Any:
        wn = w / w.sum(1, keepdim=True).clamp_min(1e-12)
        return -TAU * torch.logsumexp(-m / TAU + torch.log(wn.clamp_min(1e-30)), dim=1)

    return torch.stack([(pa * pb).sum(-1), wmean(best_a, wa), wmean(best_b, wb), softmin(best_a, wa),
                        softmin(best_b, wb)], dim=1)


def train_late_encoder(data: PairData, *, encoder: str, rank: int = 16, alpha: float = 32.0, epochs: int = 2,
                       lr: float = 5e-4, batch_size: int = 32, max_length: int = 128, seed: int = 13,
                       by_source: bool = False, rank_weight: float = 0.0, device: str = "cpu", layers: int = 0,
                       progress: Progress | None = None) -> tuple[LateEncoder, dict[str, Any]]:
    """Fit LoRA adapters, the token importance and the feature weights on ``data`` (the other scorers' loss, pair
    weights and schedule) on ``device``; returns the encoder (torch backend, CPU) and a summary for the model card."""
    import torch

    device = training_device(device)
    tok, enc, lora, scaling = adapted_copy(encoder, rank=rank, alpha=alpha, epochs=epochs, seed=seed,
                                           what="late-interaction encoder", device=device, layers=layers)
    hidden = enc.config.hidden_size
    # start near the bi-encoder (cosine weight 5) with the token matches counted from the beginning
    s = torch.nn.Parameter(torch.tensor([5.0, 2.5, 2.5, 0.0, 0.0], device=device))
    shift = torch.nn.Parameter(torch.tensor(-6.0, device=device))
    v = torch.nn.Parameter(torch.zeros(hidden, device=device))
    c = torch.nn.Parameter(torch.tensor(0.0, device=device))
    params = [p for pair in lora.values() for p in pair]

    def logits(idx: list[int]) -> Any:
        ha, ma = hidden_states(tok, enc, [data.sources[i] for i in idx], max_length=max_length)
        hb, mb = hidden_states(tok, enc, [data.outputs[i] for i in idx], max_length=max_length)
        return torch_pair_features(ha, ma, hb, mb, v, c) @ s + shift

    enc.train()
    summary = fit_adapters(data, params, logits, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed,
                           what="late-interaction encoder", by_source=by_source, rank_weight=rank_weight,
                           head=[s, shift, v, c], head_lr=lr * HEAD_LR_FACTOR, progress=progress)
    s_val, b_val = to_numpy(s), float(shift.detach())
    head_w = np.concatenate([s_val, [float(c.detach())], to_numpy(v)]).astype(np.float32)
    adapters = {name: (to_numpy(a), to_numpy(b)) for name, (a, b) in lora.items()}
    model = LateEncoder(encoder, adapters, scaling, head_w, b_val, max_length=max_length,
                        backend="torch", layers=layers)
    return model, {"rank": rank, "alpha": alpha, "adapted_layers": len(lora), "layers": layers or "all",
                   "feature_weights": dict(zip(LATE_FEATURES, [round(float(x), 4) for x in s_val])),
                   "importance_bias": round(float(c.detach()), 4), "shift": round(b_val, 4),
                   "tau": TAU, **summary, "device": device}
