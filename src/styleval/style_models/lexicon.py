"""Style lexicons (Mir et al. 2019, §4.1): the words a linear style classifier weighs most, and the masking or
removal of those words before content metrics compare texts.

Building: a logistic regression on binary bag-of-words features of labelled text (L1 penalty, ``C=3`` as Mir
et al.); among the features with a non-zero weight, those beyond ``n_std`` standard deviations from the mean
weight are kept (Mir et al. use 2: few, strongly weighted words, so that content words are rarely masked).
``top_k`` keeps the k largest absolute weights instead.

Files: JSON, either Mir et al.'s layout ``{"<style set>": [[word, weight], ...]}`` or styleval's
``{"format": "styleval-lexicon/1", "meta": {...}, "styles": {...}}``; or plain text, one word per line
(optionally ``word<TAB>weight``). Words are matched case-insensitively against the tokens of a text.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..readers.text import StrPath, read_lines, read_text

FORMAT = "styleval-lexicon/1"
#: Mir et al.'s placeholder for a masked style word (``CUSTOM_STYLE`` in their content_preservation.py).
MIR_PLACEHOLDER = "customstyle"
# word tokens: letters/digits with inner hyphens or apostrophes, and clitics such as n't
TOKEN = re.compile(r"n't|'\w+|\w+(?:[-']\w+)*")


@dataclass
class StyleLexicon:
    """Style words with weights, grouped by style set (``"binary sentiment"`` in Mir et al.'s file)."""

    styles: dict[str, list[tuple[str, float]]]
    meta: dict[str, Any] = field(default_factory=dict)
    origin: str = ""

    @property
    def words(self) -> frozenset[str]:
        return frozenset(w.lower() for items in self.styles.values() for w, _ in items)

    def __len__(self) -> int:
        return len(self.words)

    def content_hash(self) -> str:
        """sha256 of the sorted words: identifies the lexicon in signatures."""
        return hashlib.sha256("\n".join(sorted(self.words)).encode("utf-8")).hexdigest()

    def identity(self) -> dict[str, str]:
        return {"lexicon": self.origin or self.meta.get("name", "lexicon"), "lexicon_hash": self.content_hash()[:12],
                "lexicon_words": str(len(self))}


def load_lexicon(path: StrPath) -> StyleLexicon:
    """Read a lexicon file (JSON in either layout, or one word per line)."""
    p = Path(path)
    if p.suffix.lower() == ".json":
        try:
            obj = json.loads(read_text(p))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", p, exc.lineno) from None
        meta: dict[str, Any] = {}
        if isinstance(obj, dict) and obj.get("format") == FORMAT:
            meta, obj = obj.get("meta", {}), obj.get("styles", {})
        if not isinstance(obj, dict) or not obj:
            raise InputError("expected an object mapping style names to [word, weight] lists", p)
        styles: dict[str, list[tuple[str, float]]] = {}
        for style, items in obj.items():
            try:
                styles[str(style)] = [(str(w), float(v)) for w, v in items]
            except (TypeError, ValueError):
                raise InputError(f"style {style!r}: expected a list of [word, weight] pairs", p) from None
        return StyleLexicon(styles, meta, str(p))
    items = []
    for n, line in enumerate(read_lines(p), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        word, _, weight = line.strip().partition("\t")
        try:
            items.append((word, float(weight) if weight else 0.0))
        except ValueError:
            raise InputError(f"weight {weight!r} is not a number", p, n) from None
    if not items:
        raise InputError("no words in lexicon", p)
    return StyleLexicon({"style": items}, {}, str(p))


def write_lexicon(lexicon: StyleLexicon, path: StrPath, *, layout: str = "styleval") -> Path:
    """Write JSON: ``layout="styleval"`` (with meta) or ``"mir"`` (Mir et al.'s plain mapping)."""
    p = Path(path)
    styles = {k: [[w, float(v)] for w, v in items] for k, items in lexicon.styles.items()}
    obj: Any = styles if layout == "mir" else {"format": FORMAT, "meta": lexicon.meta, "styles": styles}
    p.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return p


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def build_lexicon(texts: Sequence[str], labels: Sequence[Any], *, C: float = 3.0, penalty: str = "l1",
                  n_std: float | None = 2.0, top_k: int | None = None, min_df: int = 1,
                  style_name: str | None = None, origin: str = "") -> StyleLexicon:
    """A lexicon from labelled text (binary or multi-class; multi-class keeps a word set per class).

    ``n_std``: keep non-zero weights beyond mean +- n_std standard deviations (Mir et al.); ``top_k``: keep the
    k largest absolute weights (overrides ``n_std``).
    """
    from sklearn.feature_extraction.text import CountVectorizer

    if len(texts) != len(labels):
        raise InputError(f"{len(texts)} texts but {len(labels)} labels")
    y = np.asarray([str(v) for v in labels])
    classes = sorted(set(y))
    if len(classes) < 2:
        raise InputError(f"a style lexicon needs at least two labels, found {classes}")
    vec = CountVectorizer(binary=True, tokenizer=tokenize, lowercase=False, token_pattern=None, min_df=min_df)
    x = vec.fit_transform(texts)
    lr = _logistic(penalty, C).fit(x, y)
    vocab = vec.get_feature_names_out()
    coef = np.atleast_2d(lr.coef_)
    names = [style_name or f"{classes[0]} vs {classes[1]}"] if coef.shape[0] == 1 else [str(c) for c in lr.classes_]
    styles: dict[str, list[tuple[str, float]]] = {}
    for name, w in zip(names, coef):
        nz = np.flatnonzero(w)
        if top_k is not None:
            keep = nz[np.argsort(-np.abs(w[nz]))[:top_k]]
        elif n_std is not None and len(nz):
            mu, sd = w[nz].mean(), w[nz].std()
            keep = nz[(w[nz] < mu - n_std * sd) | (w[nz] > mu + n_std * sd)]
        else:
            keep = nz
        styles[name] = sorted(((str(vocab[i]), float(w[i])) for i in keep), key=lambda item: item[1])
    meta = {"C": C, "penalty": penalty, "n_std": None if top_k is not None else n_std, "top_k": top_k,
            "min_df": min_df, "labels": classes, "n_texts": len(texts), "data": origin}
    return StyleLexicon(styles, meta, origin)


def _logistic(penalty: str, C: float):
    """L1 or L2 logistic regression across scikit-learn versions (1.8 replaced ``penalty`` by ``l1_ratio``)."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    if penalty not in ("l1", "l2"):
        raise InputError(f"penalty must be 'l1' or 'l2', not {penalty!r}")
    solver = "liblinear" if penalty == "l1" else "lbfgs"
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return LogisticRegression(l1_ratio=1.0 if penalty == "l1" else 0.0, C=C, solver=solver, max_iter=3000)
    return LogisticRegression(penalty=penalty, C=C, solver=solver, max_iter=3000)


def _edit(text: str, words: frozenset[str], replacement: str | None) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(0).lower() not in words:
            return m.group(0)
        return replacement if replacement is not None else ""

    out = TOKEN.sub(sub, text)
    if replacement is None:
        out = re.sub(r"\s{2,}", " ", out).strip()
    return out


def mask_style_words(text: str, lexicon: StyleLexicon | frozenset[str], placeholder: str = MIR_PLACEHOLDER) -> str:
    """Replace every lexicon word in ``text`` by ``placeholder``; everything else is left as it is."""
    words = lexicon.words if isinstance(lexicon, StyleLexicon) else lexicon
    return _edit(text, words, placeholder)


def remove_style_words(text: str, lexicon: StyleLexicon | frozenset[str]) -> str:
    """Delete every lexicon word in ``text`` (runs of spaces left behind become one)."""
    words = lexicon.words if isinstance(lexicon, StyleLexicon) else lexicon
    return _edit(text, words, None)
