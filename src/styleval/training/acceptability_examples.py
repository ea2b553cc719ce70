"""Training examples for the acceptability classifier: human-written sentences (label 1) in the forms TST outputs
take, and automatically corrupted copies of them (label 0, :mod:`styleval.training.corrupt`)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .corrupt import corrupt
from ..textnorm.readable import normalize, tokenize_lower

FORMS = ("as-is", "lower-tokenized", "normalized")


@dataclass
class Examples:
    texts: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    registers: list[str] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    operations: list[str] = field(default_factory=list)  # "" for human-written, else e.g. "drop+swap"

    def add(self, text: str, label: int, register: str, form: str, ops: str = "") -> None:
        self.texts.append(text)
        self.labels.append(label)
        self.registers.append(register)
        self.forms.append(form)
        self.operations.append(ops)

    def __len__(self) -> int:
        return len(self.texts)


def in_form(text: str, form: str) -> str:
    if form == "lower-tokenized":
        return tokenize_lower(text)
    if form == "normalized":
        return normalize(text)
    return text


def make_examples(real: Mapping[str, Sequence[str]], seed: int = 0) -> Examples:
    """Each human sentence in one randomly chosen form, and one corrupted copy of that form per sentence
    (replacement words come from the other sentences of the same register)."""
    rng = random.Random(seed)
    out = Examples()
    for register, texts in real.items():
        pool = list(texts)
        for text in texts:
            form = rng.choice(FORMS)
            shown = in_form(text, form)
            bad, ops = corrupt(shown, rng, pool)
            out.add(shown, 1, register, form)
            out.add(bad, 0, register, form, "+".join(ops))
    return out
