"""A style-model feature block of a fine-tuned encoder: LoRA adapters stored as arrays and merged into a private
copy of the encoder when the model loads, then mean-pooled sentence vectors (the training is in
:mod:`styleval.training.style_finetune`)."""
from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np
import scipy.sparse as sp

from ..models.encoder import private_encoder, run_torch
from ..models.lora import DEFAULT_TARGETS, merge_adapters
from .features import Block, encoder_identity



def torch_device(device: str | None) -> Any:
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
            enc.eval().to(torch_device(self.device))
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
        from ..models.passes import timed
        from ..progress import report, stage

        if self._runtime is None:  # a load (torch and transformers imports included), not part of a pass
            with stage(f"loading adapted encoder {self.model}"), timed("load", f"adapted encoder {self.model}"):
                self._encoder()
        import torch

        tok, enc = self._encoder()
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        done = 0
        with torch.inference_mode():
            for idx in _batches(texts, self.batch_size):
                pooled = run_torch(tok, enc, [texts[i] for i in idx], max_length=self.max_length)
                out[idx] = pooled.float().cpu().numpy()
                done += len(idx)
                report("style model encoding texts [texts]", done, len(texts))
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
