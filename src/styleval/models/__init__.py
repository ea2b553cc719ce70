"""Models: a catalog of offline models, resolution of names and paths, content hashes, one pool per process.

The model layer shared by every learned model: :mod:`.registry` (every shipped model and installed asset,
``resolve(kind, name)``, and the one reader of a model folder's ``model.json``), :mod:`.spec` (``model_spec(name)``:
a catalog name, a local path or an allowed hub id as a loadable :class:`~.spec.ModelSpec`), :mod:`.encoder` (local
encoder folders: load, run, mean-pool; torch or ONNX), :mod:`.lora` (low-rank adapters: attach, merge) and
:mod:`.cards` (model cards and their READMEs).

Importing this package is cheap: torch, transformers and pyarrow are imported only when a model loads.
"""
from __future__ import annotations

from .catalog import CATALOG, CatalogEntry, DEFAULT_CAUSAL_LM, DEFAULT_ENCODER, DEFAULT_SPACY, DEFAULT_WORD_VECTORS
from .encoder import sentence_encoder, transformer
from .hashing import content_hash, short_hash
from .pool import EmbeddingCache, ModelPool, configure_torch, embedding_cache, get_pool, spacy_pipeline, word_vectors
from .spec import ModelSpec, model_spec
from .vectors import WordVectors

__all__ = [
    "CATALOG", "CatalogEntry", "DEFAULT_CAUSAL_LM", "DEFAULT_ENCODER", "DEFAULT_SPACY", "DEFAULT_WORD_VECTORS",
    "content_hash", "short_hash", "EmbeddingCache", "ModelPool", "configure_torch", "embedding_cache",
    "get_pool", "sentence_encoder", "spacy_pipeline", "transformer", "word_vectors", "ModelSpec", "model_spec",
    "WordVectors",
]
