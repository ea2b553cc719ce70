"""Naturalness by adversarial classification (Mir et al. 2019, §4.3).

Per system, a classifier learns to tell human-written texts (the inputs) from the system's outputs. An output
is judged *more natural than its input* when the classifier gives it a higher probability of being human-written
than it gives the input. Mir et al. trained on the outputs for the training set; with only test outputs at hand,
this module uses K-fold cross-fitting: each (input, output) pair stays in one fold, and every text is scored by
the classifier trained on the other folds, so no text is scored by a model that saw it.

Classifiers: ``unigram`` (bag of words, logistic regression) and ``embedding`` (sentence embeddings from a
sentence encoder, default MiniLM through :func:`styleval.models.encoder.sentence_encoder`, logistic regression).

Relative human judgments compare two texts; :func:`agreement` measures how often the classifier's preference
matches them. In ``mir2019`` choice ``A`` is the input and ``B`` the output (checked on the data: where raters
chose A, the input's absolute naturalness exceeds the output's by +1.07 on average, -0.32 where they chose B).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import InputError

CLASSIFIERS = ("unigram", "embedding")


@dataclass(frozen=True)
class AdversarialResult:
    """Out-of-fold probabilities of being human-written, for each input and its output."""

    p_input: np.ndarray
    p_output: np.ndarray
    classifier: str
    accuracy: float  # out-of-fold accuracy of telling inputs from outputs (0.5 = indistinguishable)

    @property
    def more_natural(self) -> np.ndarray:
        """1.0 where the output looks more human than its input, 0.5 on an exact tie, else 0.0."""
        return np.where(self.p_output > self.p_input, 1.0, np.where(self.p_output == self.p_input, 0.5, 0.0))

    @property
    def share_more_natural(self) -> float:
        return float(np.mean(self.p_output > self.p_input)) if len(self.p_output) else float("nan")


def _features(texts: list[str], classifier: str, encoder: str) -> Any:
    if classifier == "embedding":
        from ..models.encoder import sentence_encoder

        enc = sentence_encoder(encoder)
        uniq = list(dict.fromkeys(texts))
        vecs = enc.encode(uniq, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
                          show_progress_bar=False)
        index = {t: i for i, t in enumerate(uniq)}
        return np.asarray(vecs, dtype=np.float64)[[index[t] for t in texts]]
    return None  # unigram features are fitted per fold


def adversarial_scores(inputs: Sequence[str], outputs: Sequence[str], *, classifier: str = "unigram",
                       folds: int = 5, seed: int = 0, encoder: str = "minilm", C: float = 1.0) -> AdversarialResult:
    """Cross-fitted P(human-written) of every input and output (see the module doc)."""
    if classifier not in CLASSIFIERS:
        raise InputError(f"classifier must be one of {', '.join(CLASSIFIERS)}, not {classifier!r}")
    n = len(inputs)
    if len(outputs) != n:
        raise InputError(f"{n} inputs but {len(outputs)} outputs")
    if n < max(2, folds):
        raise InputError(f"adversarial naturalness needs at least {max(2, folds)} pairs, got {n}")
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    texts = [str(t) for t in inputs] + [str(t) for t in outputs]
    y = np.r_[np.ones(n), np.zeros(n)]
    dense = _features(texts, classifier, encoder)
    rng = np.random.default_rng(seed)
    fold_of = rng.permutation(np.arange(n) % folds)
    pair_fold = np.r_[fold_of, fold_of]
    prob = np.zeros(2 * n)
    for k in range(folds):
        train, test = pair_fold != k, pair_fold == k
        if dense is None:
            vec = CountVectorizer(lowercase=True, token_pattern=r"(?u)\b\w+\b|[^\w\s]", binary=True)
            x_train = vec.fit_transform([texts[i] for i in np.flatnonzero(train)])
            x_test = vec.transform([texts[i] for i in np.flatnonzero(test)])
        else:
            x_train, x_test = dense[train], dense[test]
        clf = LogisticRegression(C=C, max_iter=2000)
        clf.fit(x_train, y[train])
        prob[test] = clf.predict_proba(x_test)[:, list(clf.classes_).index(1.0)]
    acc = float(np.mean((prob >= 0.5) == (y == 1)))
    return AdversarialResult(p_input=prob[:n], p_output=prob[n:], classifier=classifier, accuracy=acc)


def agreement(result: AdversarialResult, choices: Sequence[str | None], *, input_label: str = "A",
              output_label: str = "B") -> tuple[float, int]:
    """Share of relative human judgments (input vs output) that the classifier's preference matches, and how many
    judgments were compared. Judgments other than the two labels ("no preference") are left out; a classifier tie
    counts as a disagreement."""
    if len(choices) != len(result.p_output):
        raise InputError(f"{len(choices)} choices for {len(result.p_output)} segments")
    hits = total = 0
    for c, pi, po in zip(choices, result.p_input, result.p_output):
        if c == input_label:
            hits += pi > po
        elif c == output_label:
            hits += po > pi
        else:
            continue
        total += 1
    return (hits / total if total else float("nan")), total
