"""``preservation``: a learned content-preservation score (0-1, higher = meaning kept).

A thin layer over :mod:`styleval.preservation`: the shipped ``preservation-minilm`` model (or any folder made by
``styleval train-content``) scores each (source or reference, output) pair as a weighted average of a logistic head
over frozen MiniLM and spaCy pair features (.35), a LoRA-tuned MiniLM cross-encoder (.35) and the plain MiniLM
sentence cosine (.3); ``model=preservation-minilm-fast`` is the head alone (about twice as fast, weaker on
held-out data). Several references: the largest score. The signature names the model folder and its content hash,
the encoder and the spaCy pipeline with their hashes, and the cross-encoder's weights hash.

What the evidence shows (docs/preservation.md): on the held-out parts of the in-repository human sets the default
is above plain MiniLM cosine and chrF on SGDD-TST and Lai 2022 and level with cosine on Mir 2019 (the stored
BLEURT-large is higher on Lai and SGDD-TST, MiniLM BERTScore on Mir); on independent style-shift data it matched
plain MiniLM cosine (pairwise agreement .534 against .550), so it is not shown to be more indifferent to style
than that cosine.

Statistics (one row per segment): ``[score, truncated inputs]``: the texts longer than the encoder's limit, plus,
with a cross-encoder (which reads comparison and output as one sequence), the comparison-output pairs longer than
it.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...errors import InputError
from ..base import Against, ContentMetric
from ..registry import register
from ._common import check_lengths


@register
class Preservation(ContentMetric):
    name = "preservation"
    parameter_help: ClassVar[dict[str, str]] = {
        "model": "the preservation model: shipped name (`styleval models`) or a `train-content` folder",
        "backend": "encoder runtime: auto (ONNX Runtime when installed, else torch), onnx or torch",
    }
    n_stats = 2
    version = "3"  # 2: the default model averages the feature head with a cross-encoder; 3: and the plain cosine
    higher_is_better = True
    value_range = (0.0, 1.0)
    description = ("learned content preservation (MiniLM + spaCy pair features with a logistic head, averaged with "
                   "a LoRA-tuned MiniLM cross-encoder and the plain MiniLM cosine); above plain cosine and chrF on "
                   "the held-out in-repository human sets (Lai 2022, Mir 2019, SGDD-TST), matched plain cosine on "
                   "independent style-shift data; shipped models preservation-minilm and preservation-minilm-fast; "
                   "max over references")
    libraries = ("torch", "transformers", "spacy")

    def __init__(self, *, against: str | Against = "references", model: str = "preservation-minilm",
                 backend: str = "auto") -> None:
        self.against = Against.parse(against)
        if not isinstance(model, str) or not model.strip():
            raise InputError(f"metric {self.name!r}: model must be a shipped model name or a folder, got {model!r}")
        from ...preservation.pretrained import resolve_preservation_model

        self._folder = resolve_preservation_model(model)  # fails now, not at scoring time, on a bad name
        self.model = model
        from ...models.onnx_encoder import resolve_backend

        self.backend = resolve_backend(backend)  # 'auto' resolved now: the signature names what runs
        self._model: Any = None

    @property
    def preservation_model(self) -> Any:
        if self._model is None:
            from ...preservation.pretrained import load_preservation_model

            self._model = load_preservation_model(self._folder, self.backend)
        return self._model

    def resources(self) -> dict[str, str]:
        return self.preservation_model.resources()

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> np.ndarray:
        check_lengths(self.name, outputs, comparisons)
        pm = self.preservation_model
        pairs = list(dict.fromkeys((c, o) for o, comp in zip(outputs, comparisons) for c in comp))
        values = pm.score([c for c, _ in pairs], [o for _, o in pairs]) if pairs else np.zeros(0)
        by_pair = dict(zip(pairs, (float(v) for v in values)))
        limit = pm.max_length
        tok = None
        stats = np.zeros((len(outputs), 2))
        for i, (out, comp) in enumerate(zip(outputs, comparisons)):
            stats[i, 0] = max(by_pair[(c, out)] for c in comp)
            long_text = any(len(t) > 3 * limit for t in (out, *comp))  # cheap pre-checks before tokenizing
            long_pair = pm.cross is not None and any(len(c) + len(out) > 3 * limit for c in comp)
            if long_text or long_pair:
                if tok is None:
                    from ...models.encoder import load_tokenizer

                    tok = load_tokenizer(pm.encoder)
                stats[i, 1] = sum(len(tok(t)["input_ids"]) > limit for t in (out, *comp))
                if pm.cross is not None:
                    stats[i, 1] += sum(len(tok(c, out)["input_ids"]) > limit for c in comp)
        return stats
