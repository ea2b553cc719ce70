"""Style classifiers and regressors: feature blocks plus one linear head, saved as a versioned folder.

Folder layout (``FORMAT = "styleval-style-model/1"``)::

    model.json        format, kind, labels or poles, aliases, feature block configs, head type, whether it is cased
    weights.npz       head coefficients and intercepts, block arrays (idf, means...) -- plain numbers
    vocab.json        TF-IDF vocabularies (terms in column order)
    model_card.json   data hashes, label set, held-out scores, training parameters, versions, command
    README.md         the card for people

A classifier gives a probability per label (softmax, or a sigmoid for two labels); a regressor gives a
score whose ``high`` and ``low`` poles are named styles (``formal`` / ``informal``). Style names from
directions are matched to labels case-insensitively, through ``aliases`` (``non-toxic`` -> ``neutral``).
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..models.registry import MANIFEST, read_manifest
from .features import BLOCKS, Block

if TYPE_CHECKING:
    from .calibration import Calibration

FORMAT = "styleval-style-model/1"


def preprocess(texts: Sequence[str], text_norm: str = "html.unescape") -> list[str]:
    """What a style model does to a text before its features (``text_norm``, recorded as ``preprocess`` in the
    card): ``html.unescape`` (corpora differ in escaping: &apos; in PT16 test), or ``lower-tokens``
    (:mod:`styleval.textnorm.lower_tokens`), which makes cased and lower-cased tokenized text alike."""
    if text_norm == "html.unescape":
        return [html.unescape(t) for t in texts]
    from ..textnorm.lower_tokens import normalise

    return normalise(texts, text_norm)
CLASSIFIER, REGRESSOR = "classifier", "regressor"


def match_style(style: str, labels: Sequence[str], aliases: Mapping[str, str]) -> int | None:
    """The index of ``style`` among ``labels`` (case-insensitive, through ``aliases``), or None."""
    key = style.strip().lower()
    key = {k.lower(): v.lower() for k, v in aliases.items()}.get(key, key)
    lowered = [lab.lower() for lab in labels]
    return lowered.index(key) if key in lowered else None


def read_style_manifest(folder: str | Path) -> tuple[dict[str, Any], Path]:
    """A style model folder's ``model.json`` (format and kind checked) and its path, without loading the model."""
    meta, path = read_manifest(folder, "style model")
    if meta.get("format") != FORMAT:
        raise InputError(f"unknown model format {meta.get('format')!r} (this styleval reads {FORMAT})", path)
    if meta.get("kind") not in (CLASSIFIER, REGRESSOR):
        raise InputError(f"unknown model kind {meta.get('kind')!r}", path)
    if not isinstance(meta.get("labels"), list) or not isinstance(meta.get("aliases", {}), dict):
        raise InputError("'labels' must be a list and 'aliases' an object", path)
    return meta, path


@dataclass
class StyleModel:
    """A trained style model. ``labels``: class names in column order (classifier) or ``[low, high]`` pole
    styles (regressor)."""

    kind: str
    labels: list[str]
    blocks: list[Block]
    coef: np.ndarray  # (k, d) classifier (k = 1 for two labels), (1, d) regressor
    intercept: np.ndarray  # (k,)
    aliases: dict[str, str] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    text_norm: str = "html.unescape"
    declared_cased: bool | None = None  # model.json's ``cased``; None: follows from text_norm (see ``cased``)

    @property
    def cased(self) -> bool:
        """Whether the model reads case: as model.json declares it, else False for a model that lower-cases before
        its features (``lower-tokens``) and True for any other."""
        if self.declared_cased is not None:
            return self.declared_cased
        from ..textnorm.lower_tokens import CASE_BLIND

        return self.text_norm not in CASE_BLIND

    # -- prediction ----------------------------------------------------------------------------------
    def features(self, texts: Sequence[str]) -> sp.csr_matrix:
        texts = preprocess(texts, self.text_norm)
        return sp.hstack([b.transform(texts) for b in self.blocks], format="csr")

    def decision(self, texts: Sequence[str]) -> np.ndarray:
        """The head's scores, shape (n, k): once per distinct text within a run (see
        :func:`styleval.models.outputs.memoized`), since every row depends on its own text only."""
        if self.path is None:  # a model being trained has no stable identity to memoise under
            return self._decision(texts)
        from ..models.outputs import memoized

        return memoized(self._memo_namespace(self.path), texts, self._decision)

    def _decision(self, texts: Sequence[str]) -> np.ndarray:
        from ..models.passes import timed

        with timed("model", f"style classifier {self.name}", len(texts)):
            x = self.features(texts)
            return np.asarray(x @ self.coef.T, dtype=np.float64) + self.intercept

    def _memo_namespace(self, path: Path) -> str:
        key = getattr(self, "_namespace", None)
        if key is None:
            from ..models.hashing import content_hash

            key = self._namespace = f"style-decision:{content_hash(path)}:{self.text_norm}"
        return str(key)

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Probabilities, shape (n, len(labels)); classifiers only."""
        if self.kind != CLASSIFIER:
            raise InputError(f"model {self.name!r} is a regressor: it gives scores, not probabilities")
        z = self.decision(texts)
        if z.shape[1] == 1:
            p1 = 1.0 / (1.0 + np.exp(-z[:, 0]))
            return np.column_stack([1.0 - p1, p1])
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, texts: Sequence[str], *, calibrated: bool = True) -> list[str]:
        """Labels: decided by the card's calibration when there is one (and ``calibrated``), else the argmax."""
        return [self.labels[i] for i in self.decide(texts, calibrated=calibrated)[0]]

    # -- calibration (see styleval.style_models.calibration) ---------------------------------------------------
    @property
    def calibration(self) -> "Calibration | None":
        """The calibration recorded in the card, or None."""
        from .calibration import Calibration

        entry = self.card.get("calibration")
        if not entry:
            return None
        cached = getattr(self, "_calibration", None)
        if cached is None or cached[0] is not entry:
            cal = Calibration.from_dict(entry, self.path)
            for style in (cal.positive, cal.negative):
                self.style_index(style)
            self._calibration = cached = (entry, cal)
        return cached[1]

    def set_calibration(self, calibration: "Calibration | None") -> None:
        """Record (or, with None, remove) a calibration in the card."""
        if calibration is None:
            self.card.pop("calibration", None)
            return
        if len(self.labels) != 2:
            raise InputError(f"model {self.name!r} has {len(self.labels)} labels; calibration needs two")
        self.card["calibration"] = calibration.to_dict()

    def raw_score(self, texts: Sequence[str], positive: str | None = None) -> np.ndarray:
        """One number per text that grows with style ``positive`` (default ``labels[1]``): the logit of a
        classifier's probability of it, or the regressor's score (negated for its low pole)."""
        if len(self.labels) != 2:
            raise InputError(f"model {self.name!r} has {len(self.labels)} labels; a raw score needs two")
        pos = 1 if positive is None else self.style_index(positive)
        z = self.decision(texts)
        if z.shape[1] == 1:
            raw = z[:, 0]
        else:
            raw = z[:, 1] - z[:, 0]  # softmax over two labels: the logit of labels[1]
        return raw if pos == 1 else -raw

    def decide(self, texts: Sequence[str], *, calibrated: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(label index, probabilities (n, 2) in label order)`` of each text: with the card's calibration when
        ``calibrated`` and there is one; else the classifier's argmax and its own probabilities."""
        cal = self.calibration if calibrated else None
        if cal is None:
            p = self.predict_proba(texts)
            return np.argmax(p, axis=1), p
        pos, neg = self.style_index(cal.positive), self.style_index(cal.negative)
        raw = self.raw_score(texts, cal.positive)
        p_pos = cal.probability(raw)
        p = np.empty((len(raw), 2))
        p[:, pos], p[:, neg] = p_pos, 1.0 - p_pos
        return np.where(cal.decide(raw), pos, neg), p

    def regress(self, texts: Sequence[str]) -> np.ndarray:
        """Scores, shape (n,); regressors only (higher = more of ``labels[1]``)."""
        if self.kind != REGRESSOR:
            raise InputError(f"model {self.name!r} is a classifier: use predict_proba")
        return self.decision(texts)[:, 0]

    # -- styles ---------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return str(self.card.get("name") or (self.path.name if self.path else "style-model"))

    def style_index(self, style: str) -> int:
        """Column (classifier) or pole (regressor: 0 low, 1 high) of a style name; a clear error otherwise."""
        index = match_style(style, self.labels, self.aliases)
        if index is not None:
            return index
        known = sorted(set(self.labels) | set(self.aliases))
        raise InputError(f"style {style!r} is not among the styles of model {self.name!r} "
                         f"({', '.join(known)}); pick a model trained on these styles or check the direction")

    # -- storage --------------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        from ..models.cards import STYLE, write_card

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {"head.coef": self.coef.astype(np.float32),
                                         "head.intercept": self.intercept.astype(np.float64)}
        vocab: dict[str, list[str]] = {}
        for i, b in enumerate(self.blocks):
            arrays.update({f"block{i}.{k}": v for k, v in b.arrays().items()})
            vocab.update({f"block{i}.{k}": v for k, v in b.vocabularies().items()})
        meta: dict[str, Any] = {"format": FORMAT, "kind": self.kind, "labels": self.labels, "aliases": self.aliases,
                                "blocks": [b.config() for b in self.blocks]}
        if self.text_norm != "html.unescape":
            meta["preprocess"] = self.text_norm
        if self.declared_cased is not None:
            meta["cased"] = self.declared_cased
        (folder / MANIFEST).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        np.savez_compressed(folder / "weights.npz", **arrays)  # type: ignore[arg-type]  # numpy stubs: kwargs are arrays
        (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        write_card(folder, STYLE, self.card)
        self.path = folder
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "StyleModel":
        folder = Path(folder)
        meta, meta_path = read_style_manifest(folder)
        with np.load(folder / "weights.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        vocab_path = folder / "vocab.json"
        vocab = json.loads(vocab_path.read_text(encoding="utf-8")) if vocab_path.is_file() else {}
        blocks: list[Block] = []
        for i, cfg in enumerate(meta["blocks"]):
            kind = cfg.get("kind")
            if kind not in BLOCKS:
                raise InputError(f"unknown feature block {kind!r}", meta_path)
            prefix = f"block{i}."
            blocks.append(BLOCKS[kind].from_stored(  # type: ignore[attr-defined]
                cfg, {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)},
                {k[len(prefix):]: v for k, v in vocab.items() if k.startswith(prefix)}))
        from ..textnorm.lower_tokens import normaliser

        normaliser(str(meta.get("preprocess", "html.unescape")))  # an unknown one is an error here, not later
        from ..models.cards import STYLE, read_card

        card = read_card(folder, STYLE)
        cased = meta.get("cased")
        if cased is not None and not isinstance(cased, bool):
            raise InputError(f"'cased' must be true or false, not {cased!r}", meta_path)
        return cls(kind=meta["kind"], labels=list(meta["labels"]), blocks=blocks,
                   coef=np.asarray(arrays["head.coef"], dtype=np.float64),
                   intercept=np.asarray(arrays["head.intercept"], dtype=np.float64),
                   aliases=dict(meta.get("aliases", {})), card=card, path=folder,
                   text_norm=str(meta.get("preprocess", "html.unescape")), declared_cased=cased)

    def resources(self) -> dict[str, str]:
        """Identity for signatures: name, content hash of the folder, and the encoder's when one is used."""
        out = {"style_model": self.name}
        if self.path is not None:
            from ..models.hashing import content_hash

            out["style_model_hash"] = content_hash(self.path)[:12]
        for b in self.blocks:
            out.update(b.resources())
        cal = self.calibration
        out["style_calibration"] = cal.identity() if cal is not None else "none"
        return out
