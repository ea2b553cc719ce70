"""The adapter-tuned scorer's machinery (:class:`~styleval.preservation.cross_encoder.CrossEncoder`): LoRA adapters on
the local MiniLM, stored as plain arrays with a small head, merged into a copy of the encoder at load time (the
training loop is in :mod:`styleval.training.cross_encoder`).

A scorer stores ``scaling``, ``head_w``, ``head_b`` and one ``A:<layer>`` / ``B:<layer>`` array pair per adapted
layer in one ``.npz`` file; its identity is the hash of those arrays.
"""
from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..models.lora import merge_adapters


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
                from ..models.spec import model_spec

                key = hashlib.sha256((model_spec(self.encoder).content_hash() + self.file_hash).encode()).hexdigest()
                return tok, load_onnx_encoder(f"preservation-{self.kind}", key, lambda: (tok, self.merged_encoder()))
            return tok, self.merged_encoder()

        if self._runner is None:
            self._runner = get_pool().get(f"preservation-{self.kind}:{self.file_hash}:{self.backend}", load,
                                          "cross-encoder" if self.kind == "cross" else f"adapted encoder ({self.kind})")
        return self._runner


def to_numpy(t: Any) -> np.ndarray:
    """A trained tensor as a private numpy array, from any device."""
    return t.detach().cpu().numpy().copy()
