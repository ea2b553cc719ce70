"""Unigram models over an LM's tokens, for SLOR (Kann et al. 2018).

SLOR subtracts from a sentence's LM log-probability the log-probability its tokens have under a unigram model, so
that rare words are not taken for bad grammar. The unigram model must use the LM's own tokens and be estimated on
a named corpus; it is stored as a ``.npz`` with the token counts (``ids``, ``counts``) and a JSON header
(``meta``): its name, the corpus it was counted on, the tokenizer's vocabulary size and a probe of token strings
that must decode identically under the tokenizer used with it (so counts of one tokenizer are never applied to
another's ids), and the smoothing.

Probabilities are add-``alpha`` smoothed over the vocabulary: ``p(t) = (c(t) + alpha) / (N + alpha * V)``.

Shipped models live in ``styleval/acceptability/data/`` and are built by
``studies/shipped_models/build_unigram_counts.py``;
:func:`load_unigram` takes a shipped name or a path to such a file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..errors import InputError

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_UNIGRAM = "smollm2-mixed-public"
_PROBES = 24  # token ids whose strings are stored to check the tokenizer


@dataclass
class UnigramModel:
    """Token counts with add-``alpha`` smoothing; ``meta`` holds the name, corpus and tokenizer facts."""

    counts: np.ndarray  # one count per token id, length = vocabulary size
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "unigram"))

    @property
    def alpha(self) -> float:
        return float(self.meta.get("alpha", 1.0))

    def logprob_table(self) -> np.ndarray:
        """Natural-log probability of every token id."""
        c = self.counts.astype(float)
        return np.log((c + self.alpha) / (c.sum() + self.alpha * len(c)))

    def logprob(self, ids: np.ndarray) -> float:
        """Summed natural-log unigram probability of a sequence of token ids."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.counts)):
            raise InputError(f"unigram model {self.name!r}: token id {int(ids.max())} outside its vocabulary of "
                             f"{len(self.counts)}; it was counted with another tokenizer")
        return float(self._table()[ids].sum())

    def _table(self) -> np.ndarray:
        if not hasattr(self, "_cache"):
            self._cache = self.logprob_table()
        return self._cache

    def check_tokenizer(self, tokenizer: Any) -> None:
        """Raise :class:`InputError` unless ``tokenizer`` is the one the counts were made with."""
        probes = self.meta.get("probes") or {}
        size = int(self.meta.get("vocab_size", len(self.counts)))
        if len(tokenizer) != size or any(tokenizer.decode([int(i)]) != s for i, s in probes.items()):
            raise InputError(f"unigram model {self.name!r} was counted with another tokenizer (vocabulary "
                             f"{size}); build one for this LM with studies/shipped_models/build_unigram_counts.py",
                             self.path)

    def identity(self) -> dict[str, str]:
        from ..models.hashing import content_hash

        out = {"unigram": self.name}
        if self.path is not None:
            out["unigram_hash"] = content_hash(self.path)[:12]
        return out

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        nz = np.flatnonzero(self.counts)
        np.savez_compressed(path, ids=nz.astype(np.int32), counts=self.counts[nz].astype(np.int64),
                            meta=np.array(json.dumps(self.meta, sort_keys=True)))
        return path


def build_unigram(texts: Iterable[str], tokenizer: Any, *, name: str, corpus: str, alpha: float = 1.0,
                  batch: int = 2048) -> UnigramModel:
    """Count the tokens of ``texts`` (no special tokens) with ``tokenizer``; ``corpus`` says what they are."""
    size = len(tokenizer)
    counts = np.zeros(size, dtype=np.int64)
    buf: list[str] = []
    n_texts = 0

    def flush() -> None:
        for row in tokenizer(buf, add_special_tokens=False)["input_ids"]:
            np.add.at(counts, np.asarray(row, dtype=np.int64), 1)
        buf.clear()

    for t in texts:
        buf.append(t)
        n_texts += 1
        if len(buf) >= batch:
            flush()
    if buf:
        flush()
    if not counts.sum():
        raise InputError(f"unigram model {name!r}: no tokens in the corpus")
    step = max(1, size // _PROBES)
    probes = {str(i): tokenizer.decode([i]) for i in range(0, size, step)}
    meta = {"name": name, "corpus": corpus, "n_texts": n_texts, "n_tokens": int(counts.sum()), "alpha": alpha,
            "vocab_size": size, "probes": probes}
    return UnigramModel(counts=counts, meta=meta)


def shipped_unigrams() -> list[str]:
    return sorted(p.stem for p in DATA_DIR.glob("*.npz"))


def load_unigram(name_or_path: str | Path = DEFAULT_UNIGRAM) -> UnigramModel:
    """A shipped unigram model by name, or a ``.npz`` written by :meth:`UnigramModel.save`."""
    text = str(name_or_path)
    path = DATA_DIR / f"{text}.npz"
    if not path.is_file():
        path = Path(text).expanduser()
    if not path.is_file():
        raise InputError(f"unigram model {text!r} is neither a shipped one ({', '.join(shipped_unigrams()) or 'none'})"
                         " nor a .npz file")
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            counts = np.zeros(int(meta["vocab_size"]), dtype=np.int64)
            counts[z["ids"]] = z["counts"]
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"not a styleval unigram model: {exc}", path) from None
    return UnigramModel(counts=counts, meta=meta, path=path.resolve())
