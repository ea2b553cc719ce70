"""Style masking and style removal (Mir et al. 2019, §4.1) as content-metric modifiers.

``StyleMask(inner=create("bleu"), lexicon="lexicon.json")`` replaces every lexicon word of the output and of
the comparison texts by a placeholder (Mir et al.'s ``customstyle``) before the inner metric compares them;
``StyleRemove`` deletes them. Only lexicon words change, so the corpus score stays the inner metric's own.
"""
from __future__ import annotations

from typing import ClassVar

from ...style_models.lexicon import MIR_PLACEHOLDER, StyleLexicon, load_lexicon, mask_style_words, remove_style_words
from ..base import ContentMetric
from ..modifiers import ContentModifier


class _LexiconModifier(ContentModifier):
    lexicon: str | StyleLexicon

    def _lexicon(self) -> StyleLexicon:
        if isinstance(self.lexicon, StyleLexicon):
            return self.lexicon
        cached = getattr(self, "_loaded", None)
        if cached is None:
            cached = self._loaded = load_lexicon(self.lexicon)
        return cached

    def modifier_params(self) -> dict:
        params = super().modifier_params()
        if isinstance(self.lexicon, StyleLexicon):
            params["lexicon"] = self.lexicon.origin or "in-memory"
        return params

    def resources(self) -> dict[str, str]:
        return {**self.inner.resources(), **self._lexicon().identity()}


class StyleMask(_LexiconModifier):
    """Replace lexicon words by ``placeholder`` in outputs and comparison texts."""

    suffix: ClassVar[str] = "style_mask"

    def __init__(self, *, inner: ContentMetric, lexicon: str | StyleLexicon,
                 placeholder: str = MIR_PLACEHOLDER) -> None:
        super().__init__(inner=inner)
        self.lexicon = lexicon
        self.placeholder = placeholder
        self._lexicon()  # fail early on a bad file

    def transform(self, outputs, comparisons):
        words = self._lexicon().words
        return ([mask_style_words(o, words, self.placeholder) for o in outputs],
                [[mask_style_words(c, words, self.placeholder) for c in comp] for comp in comparisons])


class StyleRemove(_LexiconModifier):
    """Delete lexicon words from outputs and comparison texts."""

    suffix: ClassVar[str] = "style_remove"

    def __init__(self, *, inner: ContentMetric, lexicon: str | StyleLexicon) -> None:
        super().__init__(inner=inner)
        self.lexicon = lexicon
        self._lexicon()

    def transform(self, outputs, comparisons):
        words = self._lexicon().words
        return ([remove_style_words(o, words) for o in outputs],
                [[remove_style_words(c, words) for c in comp] for comp in comparisons])
