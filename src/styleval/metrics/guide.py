"""What ``styleval metrics NAME`` says about a metric beyond its class facts: what each parameter means and the
reference implementation its scores equal (and the test that checks it).

Both are read from the class: ``parameter_help`` (parameter -> meaning, inherited along the class hierarchy) and
``reference``; :data:`COMMON` holds the meanings of parameters many metrics share, used where a class does not
give its own. ``tests/test_metrics_cli.py`` checks that every parameter of every registered metric has a meaning.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

#: Meanings of parameters many metrics share.
COMMON: dict[str, str] = {
    "against": "what the output is compared with: references (every reference of the segment) or source",
    "model": "the model: a shipped or catalog name (`styleval models`) or a model folder",
    "lowercase": "lower-case both texts first",
    "tokenize": "tokenizer applied before matching: treebank, whitespace, wordpunct or 13a (where offered)",
    "batch_size": "texts per forward pass (speed and memory only, not the scores)",
    "cache_dir": "folder for an on-disk embedding cache (none: in memory only)",
    "checkpoint": "the local checkpoint folder of the optional library's model (required)",
    "vectors": "word vectors: a catalog name (`styleval models`) or a word2vec/GloVe file",
    "oov": "words without a vector: 'mean' uses the mean vector (nlg-eval), 'drop' leaves them out",
    "style_lms": "target-style LMs, 'formal=DIR;informal=DIR': each output is scored under its target style's LM, "
                 "else under `model`",
    "normalize": "text normalisation before the LM: auto (each text alone: true-cased when it has no capital letter, "
                 "detokenized when it shows tokenization spaces), auto-corpus (decided once per system from all its "
                 "outputs, named per system in the signature as normalized_as), none, detok, truecase or "
                 "detok+truecase",
    "batch_tokens": "tokens per LM batch (speed and memory only)",
    "max_tokens": "truncate each text to this many tokens (0: no limit)",
    "calibrated": "decide with the model card's calibration (threshold and probability map) when it has one",
    "case": "auto: decide once per corpus from its sources and references (lower-cased or tokenized release -> "
            "blind, else sensitive); sensitive: a cased model reads the outputs as written (the cased slot of a "
            "shipped pair); blind: the model reads them lower-cased and tokenized",
}

def parameter_help(cls: Any, name: str) -> str:
    """What parameter ``name`` of metric class ``cls`` means: the nearest class in its hierarchy whose own
    ``parameter_help`` names it, else the shared meaning in :data:`COMMON` ('' when nobody wrote it down)."""
    for klass in getattr(cls, "__mro__", (cls,)):
        own = vars(klass).get("parameter_help") or {}
        if name in own:
            return str(own[name])
    return COMMON.get(name, "")


def reference(cls: Any) -> str:
    """The implementation the metric's scores equal, as its class states it ('' when none is named)."""
    return str(getattr(cls, "reference", "") or "")


@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    required: bool
    meaning: str


def parameters(cls: Any) -> list[Parameter]:
    """Every constructor parameter of ``cls`` with its default and meaning."""
    signature = inspect.signature(cls.__init__)
    out = []
    for name in cls.param_names():
        default = signature.parameters[name].default
        required = default is inspect.Parameter.empty
        out.append(Parameter(name, None if required else default, required, parameter_help(cls, name)))
    return out


def model_parameter_default(cls: Any) -> str | None:
    """The default of the class's ``model`` parameter, when it has one that is a string."""
    signature = inspect.signature(cls.__init__)
    param = signature.parameters.get("model")
    if param is None or not isinstance(param.default, str) or not param.default:
        return None
    return param.default
