"""Local transformers encoders (MiniLM and the like) for learned models: load, tokenize, run, mean-pool.

Every learned model that reads a local encoder folder goes through here: the preservation features and
cross-encoder (shared, frozen copies from the model pool; torch or ONNX Runtime via :mod:`.onnx_encoder`) and the
fine-tuned style models and adapter training (private copies whose weights are adapted). Pooling is one function,
:func:`mean_pool`, for torch tensors (training, with gradients) and numpy arrays (scoring) alike.

The checkpoint metrics load here too: :func:`sentence_encoder` (a ``SentenceTransformer``, whose own pooling
``sentence_cosine``, the style embedding blocks and the naturalness classifier keep, so their figures stay those of
sentence-transformers) and :func:`transformer` (tokenizer and model as bert_score loads them). Every model is
loaded once per process through the model pool (:mod:`.pool`).
"""
from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..errors import InputError
from . import catalog as cat
from .pool import _need, configure_torch, get_pool
from .spec import ModelSpec, model_spec

# -- sentence-transformers and transformers models (checkpoint metrics) ------------------------------------
def sentence_encoder(name: str = cat.DEFAULT_ENCODER, *, allow_hub: bool | None = None):
    """A ``SentenceTransformer`` (a plain transformers folder gets mean pooling), on CPU unless CUDA is there."""
    spec = model_spec(name, expect=cat.SENTENCE_TRANSFORMERS, allow_hub=allow_hub)
    _need("sentence_transformers", "neural")

    def load():
        configure_torch()
        from sentence_transformers import SentenceTransformer

        with quiet_transformers():
            try:
                return SentenceTransformer(str(spec.path), local_files_only=True)
            except TypeError:  # older sentence-transformers without local_files_only
                return SentenceTransformer(str(spec.path))

    return get_pool().get("st:" + spec.key, load, f"sentence encoder {spec.display}")


def encode_sentences(encoder: Any, texts: list[str], batch_size: int) -> np.ndarray:
    """``encoder.encode`` (a ``SentenceTransformer``: unit-normalised float vectors) in chunks of 16 batches, each
    reported as ``encoding texts [texts]`` (:func:`styleval.progress.report`). Give the texts sorted longest first,
    as the encoder sorts them, so the batches are those of one call."""
    from ..progress import report

    step = 16 * batch_size
    parts = []
    for start in range(0, len(texts), step):
        parts.append(encoder.encode(texts[start:start + step], batch_size=batch_size, convert_to_numpy=True,
                                    normalize_embeddings=True, show_progress_bar=False))
        report("encoding texts [texts]", min(start + step, len(texts)), len(texts))
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


def transformer(name: str = cat.DEFAULT_ENCODER, *, allow_hub: bool | None = None):
    """``(tokenizer, model)`` from transformers' Auto classes, on the GPU when torch sees one; a sentence-transformers
    folder works too.

    The tokenizer is loaded as bert_score loads it (``use_fast=False``) so token ids match.
    """
    spec = model_spec(name, expect=cat.TRANSFORMERS, allow_hub=allow_hub)
    _need("transformers", "neural")

    def load():
        configure_torch()
        from transformers import AutoModel, AutoTokenizer

        target = str(transformers_dir(spec))
        with quiet_transformers():  # its "Loading weights" bar would print from library code
            tok = AutoTokenizer.from_pretrained(target, use_fast=False, local_files_only=True)
            model = AutoModel.from_pretrained(target, local_files_only=True)
        model.eval()
        if hasattr(model, "decoder") and hasattr(model, "encoder"):  # encoder-decoder: use the encoder
            model = model.encoder
        import torch

        if torch.cuda.is_available():  # as the LM and sentence-transformers do; callers move inputs to its device
            model.to("cuda")
        return tok, model

    return get_pool().get("hf:" + spec.key, load, f"encoder {spec.display}")


@contextlib.contextmanager
def plain_tqdm_silenced(module: Any) -> Iterator[None]:
    """No bar from ``module``'s own ``tqdm`` name inside the block (a library that calls tqdm directly, bypassing
    transformers' switch), unless library output is allowed (``--verbose``). tqdm reads ``TQDM_DISABLE`` once, at
    import, so the name is swapped for a disabled bar while the block runs, and put back after."""
    from ..progress import library_output_allowed

    bar = getattr(module, "tqdm", None)
    if library_output_allowed() or bar is None:
        yield
        return
    module.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        module.tqdm = bar


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No transformers or huggingface_hub progress bars ("Loading weights") while loading: library code does not
    print (callers get a progress callback instead)."""
    from huggingface_hub import utils as hub_utils
    from transformers.utils import logging as hf_logging

    from ..progress import library_output_allowed

    if library_output_allowed():  # styleval --verbose
        yield
        return
    bars = hf_logging.is_progress_bar_enabled()
    hub_bars = not hub_utils.are_progress_bars_disabled()
    hf_logging.disable_progress_bar()
    hub_utils.disable_progress_bars()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()
        if hub_bars:
            hub_utils.enable_progress_bars()


def transformers_dir(spec: ModelSpec) -> Path:
    """The folder with ``config.json``: the folder itself, or a sentence-transformers module's path."""
    if (spec.path / "config.json").is_file():
        return spec.path
    modules = spec.path / "modules.json"
    if modules.is_file():
        import json

        for m in json.loads(modules.read_text(encoding="utf-8")):
            if m.get("type", "").endswith("Transformer") and (spec.path / m.get("path", "") / "config.json").is_file():
                return spec.path / m.get("path", "")
    raise InputError("no transformers model (config.json) in this folder", spec.path)


# -- local encoder folders (learned models) ----------------------------------------------------------------
def load_tokenizer(model: str) -> Any:
    """The fast tokenizer of a local encoder folder, loaded once per process (without the encoder's weights)."""
    spec = model_spec(model)

    def load() -> Any:
        from transformers import AutoTokenizer

        with quiet_transformers():
            return AutoTokenizer.from_pretrained(str(transformers_dir(spec)), local_files_only=True, use_fast=True)

    return get_pool().get("preservation-tokenizer:" + spec.key, load, f"tokenizer {spec.display}")


def _from_folder(spec: ModelSpec) -> Any:
    """A freshly loaded float32 torch encoder (train mode, as transformers returns it)."""
    configure_torch()
    import torch
    from transformers import AutoModel

    with quiet_transformers():  # library code stays quiet; callers get a progress callback
        return AutoModel.from_pretrained(str(transformers_dir(spec)), local_files_only=True, dtype=torch.float32)


def load_encoder(model: str) -> tuple[Any, Any]:
    """(fast tokenizer, torch encoder in eval mode) for a local encoder folder, loaded once per process and shared:
    callers that change weights take a copy (or :func:`private_encoder`)."""
    spec = model_spec(model)
    return get_pool().get("preservation-encoder:" + spec.key,
                          lambda: (load_tokenizer(model), _from_folder(spec).eval()), f"encoder {spec.display}")


def load_onnx(model: str) -> tuple[Any, Any]:
    """(fast tokenizer, ONNX Runtime encoder) for a local encoder folder, exported once per machine."""
    from .onnx_encoder import load_onnx_encoder
    spec = model_spec(model)

    def load() -> tuple[Any, Any]:  # the torch encoder is loaded only to export it, once per machine
        return load_tokenizer(model), load_onnx_encoder(spec.name, spec.content_hash(), lambda: load_encoder(model))

    return get_pool().get("preservation-encoder-onnx:" + spec.key, load, f"ONNX encoder {spec.display}")


def load_for_backend(model: str, backend: str) -> tuple[Any, Any]:
    """(tokenizer, encoder) on a resolved backend (``torch`` or ``onnx``), for :func:`run_encoder`."""
    return load_onnx(model) if backend == "onnx" else load_encoder(model)


def private_encoder(model: str) -> tuple[Any, Any]:
    """A fresh (tokenizer, torch encoder) loaded from the folder, private to the caller (its weights get adapted),
    so the model pool's shared copy is not touched."""
    spec = model_spec(model)
    enc = _from_folder(spec)
    from transformers import AutoTokenizer

    with quiet_transformers():
        tok = AutoTokenizer.from_pretrained(str(transformers_dir(spec)), local_files_only=True)
    return tok, enc


def run_encoder(tok: Any, enc: Any, backend: str, texts: list[str], pairs: list[str] | None = None, *,
                max_length: int, offsets: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Tokenize ``texts`` (with ``pairs`` as second segments, if given) and run the encoder on torch (call inside
    ``torch.inference_mode``) or ONNX Runtime: last hidden states, attention mask and, if asked, character
    offsets, all as numpy arrays."""
    args = (texts,) if pairs is None else (texts, pairs)
    x = tok(*args, padding=True, truncation=True, max_length=max_length, return_offsets_mapping=offsets,
            return_tensors="np" if backend == "onnx" else "pt")
    offs = x.pop("offset_mapping") if offsets else None
    if backend == "onnx":
        return enc(x), np.asarray(x["attention_mask"]), offs
    hidden = enc(**x).last_hidden_state.numpy()
    return hidden, x["attention_mask"].numpy(), None if offs is None else offs.numpy()


def run_torch(tok: Any, enc: Any, texts: list[str], pairs: list[str] | None = None, *, max_length: int) -> Any:
    """Tokenize and run a torch encoder on its own device, keeping gradients: the mean-pooled last hidden state
    (a torch tensor), as training needs it."""
    args = (texts,) if pairs is None else (texts, pairs)
    x = tok(*args, padding=True, truncation=True, max_length=max_length,
            return_tensors="pt").to(next(enc.parameters()).device)
    return mean_pool(enc(**x).last_hidden_state, x["attention_mask"])


def mean_pool(hidden: Any, mask: Any) -> Any:
    """Mean of the hidden states over real (unmasked) tokens, as sentence-transformers pools MiniLM; numpy arrays
    give a numpy array, torch tensors a torch tensor (computed by torch, so gradients flow)."""
    if isinstance(hidden, np.ndarray):
        m = mask[..., None].astype(np.float32)
        return (hidden * m).sum(1) / np.maximum(m.sum(1), 1.0)
    tm = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * tm).sum(1) / tm.sum(1).clamp(min=1.0)
