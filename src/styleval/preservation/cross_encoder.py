"""A cross-encoder for content preservation: the encoder reads the comparison text and the output together.

``[CLS] comparison [SEP] output [SEP]`` goes through the local MiniLM; the last hidden states are mean-pooled over
the real tokens and a linear head gives the probability that the output keeps the comparison's meaning. Unlike
the pair features of :mod:`styleval.preservation.features`, every layer sees both texts at once, so it can learn that
"this stupid phone" -> "this phone" keeps meaning while "this phone" -> "this laptop" does not.

Only low-rank adapters (LoRA) on the attention and feed-forward projections and the head are trained; the file
``cross.npz`` of a model folder holds them (a few hundred KB) and nothing of the encoder itself. At load time the
adapters are merged into a copy of the encoder (``W + scaling * B @ A``), so scoring needs neither training code
nor a LoRA library, and the merged encoder runs on torch or, exported once per machine, on ONNX Runtime.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..progress import Progress, given_or_active
from .adapted import AdaptedEncoder


class CrossEncoder(AdaptedEncoder):
    """Scores (comparison, output) pairs; ``adapters`` maps a linear layer's name to its (A, B) matrices."""

    kind = "cross"

    def score(self, comparisons: Sequence[str], outputs: Sequence[str],
              progress: Progress | None = None) -> np.ndarray:
        """Probability (0-1) that each output keeps the meaning of its comparison text."""
        import torch

        from ..models.encoder import mean_pool, run_encoder

        if len(comparisons) != len(outputs):
            raise InputError(f"{len(comparisons)} comparison texts but {len(outputs)} outputs")
        tok, enc = self._load()
        progress = given_or_active(progress)
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
                    progress("cross-encoding [pairs]", min(start + self.batch_size, len(order)), len(order))
        return out
