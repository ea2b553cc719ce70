"""Run a local transformers encoder (MiniLM and the like) with ONNX Runtime instead of torch.

The encoder is exported once per machine to ``<cache_dir>/onnx/<name>-<hash16>/model.onnx``, keyed by the content
hash of the model folder, so a changed model is exported again and never confused with the old one. The export is
written to a temporary folder and renamed into place, so a killed export leaves nothing half-written behind.

Outputs equal torch's last hidden states within about 1e-5 on real (non-padding) tokens; the hidden states of
padding positions differ and must be masked out, as every caller does anyway. On CPU the run is about twice as
fast as torch eager for the short texts of style transfer (``benchmarks/bench_preservation.py``).

``backend="auto"`` picks ONNX Runtime when ``onnxruntime`` and ``onnx`` are installed (the ``fast`` extra) and torch
otherwise; the chosen backend is part of a metric's resources, hence of its signature.
"""
from __future__ import annotations

import importlib.util
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import InputError, MissingDependencyError, OutputError
from .hashing import cache_dir

BACKENDS = ("auto", "torch", "onnx")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_OPSET = 17


def onnx_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def resolve_backend(choice: str) -> str:
    """``torch`` or ``onnx`` for a requested backend; ``onnx`` without its packages is an error naming the extra."""
    if choice not in BACKENDS:
        raise InputError(f"encoder backend must be one of {', '.join(BACKENDS)}, got {choice!r}")
    if choice == "auto":
        return "onnx" if onnx_available() else "torch"
    if choice == "onnx" and not onnx_available():
        raise MissingDependencyError("onnxruntime", "fast", "the ONNX encoder backend")
    return choice


class OnnxEncoder:
    """``encoder(batch)`` -> last hidden states (batch, tokens, dim) as float32, for numpy tokenizer output."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        from .pool import thread_count

        options = ort.SessionOptions()
        options.intra_op_num_threads = thread_count()  # the same count torch gets
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # idle worker threads sleep instead of spinning: a spinning thread takes the core from the spaCy parse that
        # preservation runs beside the encoder (500 pairs: 4.97 s instead of 5.41 s), and costs nothing alone
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a corrupted or truncated export
            raise OutputError(f"cannot load the ONNX export ({exc}); delete the folder to export it again",
                              path.parent) from None
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, batch: Mapping[str, Any]) -> np.ndarray:
        feed = {name: np.asarray(batch[name], dtype=np.int64) for name in self.inputs}
        return np.asarray(self.session.run(None, feed)[0], dtype=np.float32)


def export_path(name: str, content_hash: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
    return cache_dir() / "onnx" / f"{safe}-{content_hash[:16]}" / "model.onnx"


def _export(model: Any, tokenizer: Any, target: Path) -> None:
    import torch

    class LastHidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = tokenizer(["an example sentence to trace", "and a second, longer one with padding in the batch ."],
                       padding=True, return_tensors="pt")
    if "token_type_ids" not in sample:
        sample["token_type_ids"] = torch.zeros_like(sample["input_ids"])
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent.parent))
    try:
        axes = {k: {0: "batch", 1: "tokens"} for k in (*_INPUTS, "last_hidden_state")}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(LastHidden(model.eval()), tuple(sample[k] for k in _INPUTS), str(tmp / "model.onnx"),
                              input_names=list(_INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
                              opset_version=_OPSET, dynamo=False)
        try:
            tmp.rename(target.parent)
        except OSError:  # another process exported it first
            if not target.is_file():
                raise
    except OSError as exc:
        raise OutputError(f"cannot write the ONNX export: {exc}", target.parent) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_onnx_encoder(name: str, content_hash: str, load_torch: Any) -> OnnxEncoder:
    """The ONNX Runtime encoder for a model, exporting it first if this machine has no export yet.

    ``load_torch`` returns ``(tokenizer, torch model)``; it is called only when an export is needed.
    """
    if not onnx_available():
        raise MissingDependencyError("onnxruntime", "fast", "the ONNX encoder backend")
    path = export_path(name, content_hash)
    if not path.is_file():
        tokenizer, model = load_torch()
        _export(model, tokenizer, path)
    return OnnxEncoder(path)
