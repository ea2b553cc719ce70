"""N-gram language models with interpolated modified Kneser-Ney smoothing, written as ARPA and queried by KenLM.

Estimation: KenLM's estimator ``lmplz`` is a separate binary that no PyPI wheel ships (the ``ufal.kenlm`` wheel
has the query library only), so :func:`estimate_arpa` uses ``lmplz`` when it is on ``PATH`` and otherwise its own
estimator of the same model (Chen & Goodman 1998; Heafield et al. 2013, without pruning):

* counts: raw counts at the highest order; continuation counts (number of distinct left words) at lower
  orders, except n-grams starting with ``<s>``, which keep raw counts;
* three discounts per order from the count-of-counts t1..t4 of those counts: ``Y = t1/(t1+2 t2)``,
  ``D1 = 1-2Y t2/t1``, ``D2 = 2-3Y t3/t2``, ``D3+ = 3-4Y t4/t3``;
* ``p(w|h) = (a(hw) - D(a(hw))) / a(h·) + γ(h) p(w|h')`` with ``γ(h) = (D1 N1(h·) + D2 N2(h·) + D3+ N3+(h·)) / a(h·)``,
  unigrams interpolated with the uniform distribution over the vocabulary (``<unk>`` included, ``<s>`` not).

Querying: :class:`NgramLM` wraps ``kenlm.Model`` (fast, C++), which reads the ARPA (or a KenLM binary).
Tokenization is the caller's choice; :func:`tokenize` (lowercased words and punctuation) is the default here.
"""
from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..errors import InputError, ResourceUnavailableError

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]", re.UNICODE)
LN10 = math.log(10.0)
FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)


def tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Words (with inner apostrophes) and single punctuation marks."""
    return _TOKEN.findall(text.lower() if lowercase else text)


@dataclass
class KneserNey:
    """Counts and discounts of an interpolated modified Kneser-Ney model (the estimator behind the ARPA)."""

    order: int
    counts: list[dict[tuple[str, ...], int]]  # counts[k] for (k+1)-grams: adjusted counts
    discounts: list[tuple[float, float, float]]
    vocab: list[str]  # includes </s> and <unk>, not <s>

    @classmethod
    def fit(cls, sentences: Iterable[Sequence[str]], order: int = 3) -> "KneserNey":
        if order < 1:
            raise InputError("n-gram order must be at least 1")
        counts: list[Counter[tuple[str, ...]]] = [Counter() for _ in range(order)]
        for toks in sentences:
            seq = [BOS] + [t for t in toks if t not in (BOS, EOS, UNK)] + [EOS]
            for i in range(1, len(seq)):
                for k in range(1, order + 1):
                    first = i - k + 1
                    if first < 0:
                        break
                    if k == order or first == 0:  # raw counts: highest order, and n-grams starting with <s>
                        counts[k - 1][tuple(seq[first:i + 1])] += 1
        for k in range(order - 1, 0, -1):  # continuation counts: distinct left extensions
            for g in counts[k]:
                counts[k - 1][g[1:]] += 1
        plain: list[dict[tuple[str, ...], int]] = [dict(c) for c in counts]
        vocab = sorted({g[0] for g in plain[0]} | {EOS, UNK})
        discounts = [_discounts(c) for c in plain]
        return cls(order, plain, discounts, vocab)

    def prob(self, word: str, context: Sequence[str]) -> float:
        """Interpolated p(word | context) computed from the counts (independent of the ARPA)."""
        ctx = tuple(context)[-(self.order - 1):] if self.order > 1 else ()
        if (word,) not in self.counts[0] and word != UNK:
            word = UNK
        return self._p(word, ctx)

    def _p(self, word: str, ctx: tuple[str, ...]) -> float:
        k = len(ctx)
        lower = 1.0 / len(self.vocab) if k == 0 else self._p(word, ctx[1:])
        table = self.counts[k]
        tot, n1, n2, n3 = self._context_stats(k, ctx)
        if tot == 0:
            return lower
        d1, d2, d3 = self.discounts[k]
        a = table.get(ctx + (word,), 0)
        d = 0.0 if a == 0 else d1 if a == 1 else d2 if a == 2 else d3
        gamma = (d1 * n1 + d2 * n2 + d3 * n3) / tot
        return (a - d) / tot + gamma * lower

    def _context_stats(self, k: int, ctx: tuple[str, ...]) -> tuple[int, int, int, int]:
        if not hasattr(self, "_ctx_cache"):
            self._ctx_cache: list[dict[tuple[str, ...], list[int]]] = []
            for table in self.counts:
                acc: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
                for g, c in table.items():
                    s = acc[g[:-1]]
                    s[0] += c
                    s[min(c, 3)] += 1
                self._ctx_cache.append(dict(acc))
        return tuple(self._ctx_cache[k].get(ctx, (0, 0, 0, 0)))  # type: ignore[return-value]

    def write_arpa(self, path: str | Path) -> Path:
        """Write the model as ARPA (log10 probabilities and back-off weights)."""
        path = Path(path)
        grams: list[list[tuple[tuple[str, ...], float, float | None]]] = []
        for k in range(self.order):
            rows = []
            keys = set(self.counts[k])
            if k == 0:
                keys |= {(UNK,), (BOS,)}
            for g in sorted(keys):
                if g == (BOS,):
                    lp = -99.0
                else:
                    lp = math.log10(self._p(g[-1], g[:-1]))
                bo = None
                if k < self.order - 1:
                    tot, n1, n2, n3 = self._context_stats(k + 1, g)
                    if tot:
                        d1, d2, d3 = self.discounts[k + 1]
                        bo = math.log10((d1 * n1 + d2 * n2 + d3 * n3) / tot)
                rows.append((g, lp, bo))
            grams.append(rows)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n\\data\\\n")
            for k, rows in enumerate(grams):
                fh.write(f"ngram {k + 1}={len(rows)}\n")
            for k, rows in enumerate(grams):
                fh.write(f"\n\\{k + 1}-grams:\n")
                for g, lp, bo in rows:
                    line = f"{lp:.7f}\t{' '.join(g)}"
                    if bo is not None and k < self.order - 1:
                        line += f"\t{bo:.7f}"
                    fh.write(line + "\n")
            fh.write("\n\\end\\\n")
        return path


def _discounts(table: dict[tuple[str, ...], int]) -> tuple[float, float, float]:
    t = Counter(min(c, 5) for c in table.values())
    t1, t2, t3, t4 = (t.get(i, 0) for i in (1, 2, 3, 4))
    if min(t1, t2, t3, t4) > 0:
        y = t1 / (t1 + 2 * t2)
        d = (1 - 2 * y * t2 / t1, 2 - 3 * y * t3 / t2, 3 - 4 * y * t4 / t3)
        if all(0 < x < i + 1 for i, x in enumerate(d)):
            return d
    return FALLBACK_DISCOUNTS  # too little data at this order (lmplz's --discount_fallback values)


def estimate_arpa(sentences: Iterable[str], path: str | Path, *, order: int = 3, lowercase: bool = True,
                  use_lmplz: bool | None = None) -> Path:
    """Estimate an order-``order`` modified-KN model on ``sentences`` (raw text) and write ARPA to ``path``.

    ``use_lmplz``: None = use KenLM's ``lmplz`` if it is on PATH; True = require it; False = built-in estimator.
    """
    path = Path(path)
    toks = [tokenize(s, lowercase) for s in sentences]
    lmplz = shutil.which("lmplz")
    if use_lmplz and lmplz is None:
        raise ResourceUnavailableError("KenLM's lmplz binary is not on PATH (build KenLM from source)")
    if lmplz is not None and use_lmplz is not False:
        text = "\n".join(" ".join(t) for t in toks) + "\n"
        proc = subprocess.run([lmplz, "-o", str(order), "--discount_fallback", "--arpa", str(path)],
                              input=text.encode("utf-8"), capture_output=True, check=False)
        if proc.returncode != 0:
            raise InputError(f"lmplz failed: {proc.stderr.decode(errors='replace')[-500:]}")
        return path
    return KneserNey.fit(toks, order).write_arpa(path)


class NgramLM:
    """A KenLM model (ARPA or binary) scoring raw sentences tokenized with :func:`tokenize`."""

    def __init__(self, path: str | Path, lowercase: bool = True) -> None:
        try:
            import kenlm
        except ImportError:
            raise ResourceUnavailableError("n-gram LMs need the kenlm module: pip install ufal.kenlm") from None
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError("n-gram LM file does not exist", self.path)
        self.lowercase = lowercase
        config = kenlm.Config()
        config.show_progress = False
        self.model = kenlm.Model(str(self.path), config)
        self.order = int(self.model.order)

    def token_nll(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Summed NLL in nats (including ``</s>``) and the number of scored tokens (words + ``</s>``)."""
        nll = np.zeros(len(texts))
        n = np.zeros(len(texts))
        for i, t in enumerate(texts):
            toks = tokenize(t, self.lowercase)
            if not toks:
                continue
            nll[i] = -self.model.score(" ".join(toks), bos=True, eos=True) * LN10
            n[i] = len(toks) + 1
        return nll, n
