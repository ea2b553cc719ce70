"""Pair features of a preservation model: what two texts share in meaning, computed from a frozen encoder and a
spaCy parse of each text (every distinct text is encoded and parsed once).

Per text: the encoder's last hidden states (unit-normalised per token), their mean (the sentence embedding, as
sentence-transformers pools MiniLM) and a :class:`~styleval.preservation.lexical.ContentView`. Per pair (``a`` the
source or reference, ``b`` the output), :data:`FEATURES`:

* ``cosine`` — sentence-embedding cosine;
* ``token_p`` / ``token_r`` — greedy token matching of contextual token vectors (BERTScore-like, no idf);
* ``content_r`` / ``content_p`` — share of ``a``'s content lemmas found in ``b`` and of ``b``'s found in ``a``;
* ``soft_r`` / ``soft_p`` — the same with each content word's best cosine in the other text (contextual vectors of
  its word pieces), so synonyms count; ``soft_r_min`` / ``soft_p_min`` — the worst-covered content word;
* ``entity_r`` — share of ``a``'s named entities (dates, amounts, names) found in ``b`` (1 without entities);
* ``number_mismatch`` — numbers present on one side only (capped at 3);
* ``negation_mismatch`` — 1 when the two texts' negation counts differ in parity;
* ``length_ratio`` — |log| of the ratio of content-word counts.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..models import catalog as cat
from ..models.encoder import load_for_backend, mean_pool, run_encoder
from .lexical import ContentView, content_view
from ..progress import Progress, given_or_active

FEATURES = ("cosine", "token_p", "token_r", "content_r", "content_p", "soft_r", "soft_p", "soft_r_min",
            "soft_p_min", "entity_r", "number_mismatch", "negation_mismatch", "length_ratio")
#: Sign of each feature's coefficient in a head: +1 similarity (never lowers the score), -1 mismatch.
FEATURE_SIGNS = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1)
#: The features of a pair of identical texts (with content words and no number or negation mismatch).
IDENTITY = (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0)


@dataclass
class TextRep:
    sentence: np.ndarray  # unit-normalised sentence embedding
    tokens: np.ndarray  # (n_pieces, dim) unit-normalised token vectors (no [CLS]/[SEP])
    view: ContentView
    word_vectors: np.ndarray  # (n_content_words, dim) unit-normalised


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length along the last axis (torch's ``normalize`` with its 1e-12 floor)."""
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


class PairFeaturizer:
    """Computes :data:`FEATURES` for (comparison, output) pairs; caches each text's representation."""

    def __init__(self, *, model: str = cat.DEFAULT_ENCODER, spacy_model: str = cat.DEFAULT_SPACY,
                 style_words: Sequence[str] = (), max_length: int = 128, batch_size: int = 64,
                 backend: str = "auto") -> None:
        from ..models.onnx_encoder import resolve_backend

        self.model = model
        self.backend = resolve_backend(backend)
        self.spacy_model = spacy_model
        self.style_words = frozenset(w.lower() for w in style_words)
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self._reps: dict[str, TextRep] = {}

    def _represent(self, texts: list[str], progress: Progress | None) -> None:

        from ..nlp import parse_many

        todo = [t for t in dict.fromkeys(texts) if t not in self._reps]
        if not todo:
            return
        if len(self._reps) > 200_000:
            self._reps.clear()
        # the parse runs in a second thread while the encoder runs here: spaCy keeps one core busy, the encoder
        # releases the GIL, so on a small machine the two overlap instead of adding up
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="styleval-parse") as pool:
            parsed = pool.submit(parse_many, todo, self.spacy_model)
            encoded = self._encode(todo, progress)
            views = [content_view(p, self.style_words) for p in parsed.result()]
        for i, (sent, vecs, offs) in enumerate(encoded):
            word_vecs = []
            for w in views[i].words:
                inside = (offs[:, 0] < w.end) & (offs[:, 1] > w.start)
                if inside.any():
                    v = vecs[inside].mean(0)
                else:  # past the truncation point: the sentence embedding stands in
                    v = sent
                word_vecs.append(v / max(float(np.linalg.norm(v)), 1e-9))
            wv = np.stack(word_vecs) if word_vecs else np.zeros((0, vecs.shape[1]), dtype=np.float32)
            if vecs.shape[0] == 0:
                vecs = sent[None, :]
            self._reps[todo[i]] = TextRep(sent, vecs, views[i], wv.astype(np.float32))

    def _encode(self, todo: list[str], progress: Progress | None) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per text: unit sentence embedding, unit token vectors and character offsets (no [CLS]/[SEP])."""
        import torch

        tok, enc = load_for_backend(self.model, self.backend)
        progress = given_or_active(progress)
        order = sorted(range(len(todo)), key=lambda i: len(todo[i]), reverse=True)
        encoded: list[Any] = [None] * len(todo)
        done = 0
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                hidden, mask, offsets = run_encoder(tok, enc, self.backend, [todo[i] for i in idx],
                                                    max_length=self.max_length, offsets=True)
                assert offsets is not None  # noqa: S101  (asked for)
                sent, tokn, lengths = _unit(mean_pool(hidden, mask)), _unit(hidden), mask.sum(1)
                for row, i in enumerate(idx):
                    n = int(lengths[row])
                    encoded[i] = (sent[row].copy(), tokn[row, 1:n - 1].copy(), offsets[row, 1:n - 1].copy())
                done += len(idx)
                if progress is not None:
                    progress("encoding texts [texts]", done, len(todo))
        return encoded

    def features(self, comparisons: Sequence[str], outputs: Sequence[str],
                 progress: Progress | None = None) -> np.ndarray:
        """One row of :data:`FEATURES` per (comparison, output) pair."""
        if len(comparisons) != len(outputs):
            raise InputError(f"{len(comparisons)} comparison texts but {len(outputs)} outputs")
        self._represent([*comparisons, *outputs], progress)
        out = np.zeros((len(outputs), len(FEATURES)), dtype=np.float64)
        for i, (a, b) in enumerate(zip(comparisons, outputs)):
            out[i] = pair_features(self._reps[a], self._reps[b])
        return out


def _share(items: Sequence[str], other: set[str]) -> float:
    return sum(1 for w in items if w in other) / len(items) if items else 1.0


def pair_features(a: TextRep, b: TextRep) -> list[float]:
    cosine = float(np.dot(a.sentence, b.sentence))
    sim = a.tokens @ b.tokens.T
    token_r = float(sim.max(axis=1).mean())
    token_p = float(sim.max(axis=0).mean())
    ka = [w.key for w in a.view.words]
    kb = [w.key for w in b.view.words]
    content_r = _share(ka, set(kb))
    content_p = _share(kb, set(ka))
    if len(ka) and len(kb):
        ws = a.word_vectors @ b.word_vectors.T
        # an exact lemma match counts as a perfect match whatever the context
        exact = np.asarray([[x == y for y in kb] for x in ka])
        ws = np.where(exact, 1.0, ws)
        best_r, best_p = ws.max(axis=1), ws.max(axis=0)
        soft_r, soft_p = float(best_r.mean()), float(best_p.mean())
        soft_r_min, soft_p_min = float(best_r.min()), float(best_p.min())
    else:  # nothing to keep counts as kept; nothing kept of something counts as lost
        soft_r = soft_r_min = 1.0 if not ka else 0.0
        soft_p = soft_p_min = 1.0 if not kb else 0.0
    b_text = b.view.text.lower()
    b_keys = set(kb)
    ents = a.view.entities
    entity_r = (sum(1 for e in ents if e in b_text or all(part in b_keys for part in e.split())) / len(ents)
                if ents else 1.0)
    nums_a, nums_b = set(a.view.numbers), set(b.view.numbers)
    number_mismatch = float(min(3, len(nums_a ^ nums_b)))
    negation_mismatch = float((a.view.negations % 2) != (b.view.negations % 2))
    length_ratio = abs(math.log((len(kb) + 1) / (len(ka) + 1)))
    return [cosine, token_p, token_r, content_r, content_p, soft_r, soft_p, soft_r_min, soft_p_min, entity_r,
            number_mismatch, negation_mismatch, length_ratio]
