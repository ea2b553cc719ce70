"""Embedding-based content metrics: Word Mover's Distance, embedding average, vector extrema, greedy
matching (static word vectors, GloVe by default) and sentence-embedding cosine (MiniLM by default).

* ``wmd`` follows gensim's ``KeyedVectors.wmdistance`` (Kusner et al., 2015): normalized bag-of-words
  weights over the distinct in-vocabulary tokens, Euclidean distance between (by default unit-normalized,
  gensim 4's ``norm=True``) word vectors, exact optimal transport with POT's ``ot.emd2``. Stopwords are kept
  unless ``remove_stopwords=True``. Out-of-vocabulary tokens are dropped from the transport problem but
  counted in the statistics and reported in the result's flags and ``extra``. Several comparisons: the
  smallest distance. An output (or all comparisons) with no in-vocabulary token scores NaN and is flagged.
* ``embedding_average``, ``vector_extrema``, ``greedy_matching`` follow nlg-eval (Sharma et al., 2017):
  cosine of summed vectors; cosine of per-dimension extrema (the value of largest magnitude); the mean
  of the two directions of mean best cosine (Rus & Lintean, 2012). Unknown words get the mean vector as in
  nlg-eval (``oov="mean"``) or are dropped (``oov="drop"``). Several comparisons: the largest score.
* ``sentence_cosine``: cosine of sentence-transformers embeddings; several comparisons: the largest.

Statistics (one row per segment): ``[score, output tokens, output OOV tokens, comparison tokens,
comparison OOV tokens]`` for the word-vector metrics; ``[score, truncated texts]`` for sentence cosine.
"""
from __future__ import annotations

import warnings
from collections import Counter
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ...errors import InputError
from ..base import Against, ContentMetric, SegmentStats
from ..registry import register
from ._common import check_bool, check_choice, check_lengths, check_number

TOKENIZERS = ("treebank", "whitespace", "wordpunct", "13a")

#: NLTK's English stopword list (the 179-word version; NLTK's data is not downloaded at run time).
STOPWORDS = frozenset("""
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom
this that that'll these those am is are was were be been being have has had having do does did doing a an the
and but if or because as until while of at by for with about against between into through during before after
above below to from up down in out on off over under again further then once here there when where why how all
any both each few more most other some such no nor not only own same so than too very s t can will just don
don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn
hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
""".split())


def make_tokenizer(metric: str, name: str) -> Callable[[str], list[str]]:
    """``treebank`` (NLTK's word_tokenize tokenizer, without sentence splitting), or one of
    ``whitespace``, ``wordpunct``, ``13a`` (see ``_common.make_word_tokenizer``)."""
    check_choice(metric, "tokenize", name, TOKENIZERS)
    if name == "treebank":
        from nltk.tokenize.destructive import NLTKWordTokenizer

        return NLTKWordTokenizer().tokenize
    from ._common import make_word_tokenizer

    return make_word_tokenizer(metric, name)


# -- static word vectors -------------------------------------------------------------------------
_MAX_CACHED_TEXTS = 200_000


#: the word-vector metrics' case convention, which differs from their reference implementations' (docs/metrics.md)
_VECTOR_CASE = ("lower-case the tokens before the lookup (default true, so the lower-case GloVe vocabulary finds "
                "capitalised words); {reference} looks tokens up as written, so false gives its convention. On cased "
                "text it matters: on Lai 2022's 720 outputs {effect} (studies/embedding_case/case_effect.py)")


class _WordVectorMetric(ContentMetric):
    libraries: ClassVar[tuple[str, ...]] = ("numpy",)
    parameter_help: ClassVar[dict[str, str]] = {
        "normalize_vectors": "unit-normalise word vectors (gensim 4's wmdistance)",
        "remove_stopwords": "leave English stop words out",
    }
    n_stats: ClassVar[int] = 5

    def _init_common(self, against: str | Against, vectors: str, lowercase: bool, tokenize: str) -> None:
        self.against = Against.parse(against)
        if not isinstance(vectors, str) or not vectors.strip():
            raise InputError(f"metric {self.name!r}: vectors must be a model name or path, got {vectors!r}")
        check_bool(self.name, "lowercase", lowercase)
        self.vectors = vectors
        self.lowercase = lowercase
        self.tokenize = tokenize
        self._tok = make_tokenizer(self.name, tokenize)  # cheap; no model loaded here
        self._wv = None
        # representation of each text seen, so sources and references shared by many systems are tokenized
        # and looked up once; it depends only on this instance's parameters
        self._reps: dict[str, tuple[Any, int, list[str]]] = {}

    # lazy model
    @property
    def word_vectors(self):
        if self._wv is None:
            from ...models.pool import word_vectors

            self._wv = word_vectors(self.vectors)
        return self._wv

    def resources(self) -> dict[str, str]:
        from ...models.spec import model_spec

        return model_spec(self.vectors).facts("vectors")

    def tokens(self, text: str) -> list[str]:
        toks = self._tok(text.strip())
        return [t.lower() for t in toks] if self.lowercase else toks

    def aggregate(self, stats: np.ndarray) -> float:
        scores = self.scores_from_stats(stats)
        ok = scores[~np.isnan(scores)]
        return float(np.mean(ok)) if len(ok) else float("nan")

    # per-text representation -> (representation, n_tokens, oov tokens)
    def _represent(self, text: str) -> tuple[Any, int, list[str]]:
        raise NotImplementedError

    def _pair(self, out_rep: Any, comp_rep: Any) -> float:
        raise NotImplementedError

    def _best(self, values: list[float]) -> float:
        return max(values)

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> SegmentStats:
        check_lengths(self.name, outputs, comparisons)
        reps = self._reps
        if len(reps) > _MAX_CACHED_TEXTS:
            reps.clear()
        for text in {*outputs, *(c for comp in comparisons for c in comp)}:
            if text not in reps:
                reps[text] = self._represent(text)
        stats = np.zeros((len(outputs), self.n_stats))
        oov_counter: Counter[str] = Counter()
        nan_rows, oov_rows = [], []
        for i, (out, comp) in enumerate(zip(outputs, comparisons)):
            o_rep, o_n, o_oov = reps[out]
            values = []
            c_n = c_oov = 0
            for c in comp:
                c_rep, n, oov = reps[c]
                c_n += n
                c_oov += len(oov)
                oov_counter.update(oov)
                if o_rep is not None and c_rep is not None:
                    values.append(self._pair(o_rep, c_rep))
            oov_counter.update(o_oov)
            score = self._best(values) if values else float("nan")
            if np.isnan(score):
                nan_rows.append(i)
            if o_oov:
                oov_rows.append(i)
            stats[i] = (score, o_n, len(o_oov), c_n, c_oov)
        if nan_rows:
            warnings.warn(f"{self.name}: {len(nan_rows)} of {len(outputs)} segments have no in-vocabulary word "
                          f"in the output or in every comparison; their score is NaN", stacklevel=3)
        tok_total = int(stats[:, 1].sum() + stats[:, 3].sum())
        oov_total = int(stats[:, 2].sum() + stats[:, 4].sum())
        return SegmentStats(
            values=stats, flags={"no_vocabulary_word": nan_rows, "oov_output": oov_rows},
            extra={"oov_tokens": oov_total, "tokens": tok_total,
                   "oov_rate": oov_total / tok_total if tok_total else float("nan"),
                   "oov_top": oov_counter.most_common(20), "nan_segments": len(nan_rows)})


@register
class WMD(_WordVectorMetric):
    name = "wmd"
    parameter_help: ClassVar[dict[str, str]] = {
        **_WordVectorMetric.parameter_help,
        "lowercase": _VECTOR_CASE.format(
            reference="gensim's wmdistance",
            effect="630 segment scores differ against the source, corpus -.055 to -.032 (a distance)"),
    }
    reference = "gensim 4's wmdistance (POT emd2 exact transport)"
    version = "1"
    higher_is_better = False
    value_range = (0.0, float("inf"))
    description = ("Word Mover's Distance (Kusner et al. 2015, as gensim's wmdistance): exact optimal transport "
                   "between nBOW weights with Euclidean word-vector distances; GloVe by default; min over "
                   "references; OOV words dropped but counted")
    libraries = ("numpy", "pot")

    def __init__(self, *, against: str | Against = "references", vectors: str = "glove-6b-50d",
                 lowercase: bool = True, tokenize: str = "treebank", normalize_vectors: bool = True,
                 remove_stopwords: bool = False) -> None:
        self._init_common(against, vectors, lowercase, tokenize)
        check_bool(self.name, "normalize_vectors", normalize_vectors)
        check_bool(self.name, "remove_stopwords", remove_stopwords)
        self.normalize_vectors = normalize_vectors
        self.remove_stopwords = remove_stopwords

    def _represent(self, text: str):
        toks = self.tokens(text)
        if self.remove_stopwords:
            toks = [t for t in toks if t.lower() not in STOPWORDS]
        wv = self.word_vectors
        idx, oov = wv.indices(toks)
        if not idx:
            return None, len(toks), oov
        uniq, counts = np.unique(np.asarray(idx, dtype=np.int64), return_counts=True)
        vecs = np.asarray(wv.matrix[uniq], dtype=np.float64)
        if self.normalize_vectors:
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms == 0, 1.0, norms)
        weights = counts / counts.sum()
        return (uniq, weights, vecs), len(toks), oov

    def _pair(self, a, b) -> float:
        return wmd_from_parts(a, b)

    def _best(self, values: list[float]) -> float:
        return min(values)


def wmd_from_parts(a: tuple[np.ndarray, np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
    """Exact WMD between two (word ids, nBOW weights, vectors) triples."""
    import ot
    from scipy.spatial.distance import cdist

    ids_a, wa, va = a
    ids_b, wb, vb = b
    if len(ids_a) == len(ids_b) and np.array_equal(ids_a, ids_b) and np.allclose(wa, wb):
        return 0.0
    cost = cdist(va, vb, metric="euclidean")
    return float(ot.emd2(wa, wb, cost))


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 0.0  # as sklearn's cosine_similarity (used by nlg-eval)
    return float(np.dot(a, b) / (na * nb))


class _NlgEvalMetric(_WordVectorMetric):
    value_range = (-1.0, 1.0)
    unit_range = (0.0, 1.0)  # cosine-like: negative similarity counts as none in overall scores

    def __init__(self, *, against: str | Against = "references", vectors: str = "glove-6b-50d",
                 lowercase: bool = True, tokenize: str = "treebank", oov: str = "mean") -> None:
        self._init_common(against, vectors, lowercase, tokenize)
        check_choice(self.name, "oov", oov, ("mean", "drop"))
        self.oov = oov

    def _token_vectors(self, text: str) -> tuple[np.ndarray | None, int, list[str]]:
        toks = self.tokens(text)
        wv = self.word_vectors
        idx, oov = wv.indices(toks)
        if self.oov == "mean":
            rows = [wv.vocab.get(t, -1) for t in toks]
            if not rows:
                return None, 0, oov
            mean = wv.mean_vector()
            vecs = np.stack([np.asarray(wv.matrix[r], dtype=np.float64) if r >= 0 else mean for r in rows])
            return vecs, len(toks), oov
        if not idx:
            return None, len(toks), oov
        return np.asarray(wv.matrix[np.asarray(idx)], dtype=np.float64), len(toks), oov


@register
class EmbeddingAverage(_NlgEvalMetric):
    name = "embedding_average"
    parameter_help: ClassVar[dict[str, str]] = {
        **_WordVectorMetric.parameter_help,
        "lowercase": _VECTOR_CASE.format(
            reference="nlg-eval",
            effect="630 segment scores differ against the source, corpus +.022 to +.037"),
    }
    reference = "nlg-eval's embedding average (Sharma et al. 2017)"
    version = "1"
    description = "cosine of the averaged word vectors (nlg-eval); GloVe by default; max over references"

    def _represent(self, text: str):
        vecs, n, oov = self._token_vectors(text)
        return (None if vecs is None else vecs.sum(axis=0)), n, oov

    def _pair(self, a, b) -> float:
        return _cos(a, b)


def extrema(vecs: np.ndarray) -> np.ndarray:
    """Per dimension, the value of largest magnitude (the maximum when the magnitudes tie... as nlg-eval, the
    minimum when ``max == -min``)."""
    mx, mn = vecs.max(axis=0), vecs.min(axis=0)
    return np.where(mx > -mn, mx, mn)


@register
class VectorExtrema(_NlgEvalMetric):
    name = "vector_extrema"
    parameter_help: ClassVar[dict[str, str]] = {
        **_WordVectorMetric.parameter_help,
        "lowercase": _VECTOR_CASE.format(
            reference="nlg-eval",
            effect="551 segment scores differ against the source, corpus +.013 to +.020"),
    }
    reference = "nlg-eval's vector extrema"
    version = "1"
    description = ("cosine of vector extrema (Forgues et al. 2014; per dimension the value of largest magnitude, "
                   "nlg-eval); GloVe by default; max over references")

    def _represent(self, text: str):
        vecs, n, oov = self._token_vectors(text)
        return (None if vecs is None else extrema(vecs)), n, oov

    def _pair(self, a, b) -> float:
        return _cos(a, b)


@register
class GreedyMatching(_NlgEvalMetric):
    name = "greedy_matching"
    parameter_help: ClassVar[dict[str, str]] = {
        **_WordVectorMetric.parameter_help,
        "lowercase": _VECTOR_CASE.format(
            reference="nlg-eval",
            effect="582 segment scores differ against the source, corpus +.010 to +.073"),
    }
    reference = "nlg-eval's greedy matching (Rus & Lintean 2012)"
    version = "1"
    description = ("greedy matching (Rus & Lintean 2012, nlg-eval): mean of the two directions' average best "
                   "word cosine; GloVe by default; max over references")

    def _represent(self, text: str):
        vecs, n, oov = self._token_vectors(text)
        if vecs is None:
            return None, n, oov
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0, 1.0, norms), n, oov

    def _pair(self, a, b) -> float:
        sim = a @ b.T  # output words x comparison words
        return float((sim.max(axis=1).mean() + sim.max(axis=0).mean()) / 2)


# -- sentence embeddings -------------------------------------------------------------------------
@register
class SentenceCosine(ContentMetric):
    name = "sentence_cosine"
    reference = "sentence-transformers embeddings, cosine"
    n_stats = 2
    version = "1"
    higher_is_better = True
    value_range = (-1.0, 1.0)
    unit_range = (0.0, 1.0)  # cosine-like: negative similarity counts as none in overall scores
    description = ("cosine of sentence embeddings (sentence-transformers; MiniLM all-MiniLM-L6-v2 by default); "
                   "max over references")
    libraries = ("sentence-transformers", "torch", "transformers")

    def __init__(self, *, against: str | Against = "references", model: str = "minilm", batch_size: int = 64,
                 cache_dir: str | None = None) -> None:
        self.against = Against.parse(against)
        if not isinstance(model, str) or not model.strip():
            raise InputError(f"metric {self.name!r}: model must be a name or path, got {model!r}")
        check_number(self.name, "batch_size", batch_size, low=1, integer=True)
        self.model = model
        self.batch_size = batch_size
        self.cache_dir = cache_dir

    def get_params(self) -> dict[str, Any]:  # batch size and cache do not change scores
        params = super().get_params()
        params.pop("batch_size", None)
        params.pop("cache_dir", None)
        return params

    def resources(self) -> dict[str, str]:
        from ...models.spec import model_spec

        return model_spec(self.model).facts()

    def embed(self, texts: Sequence[str]) -> tuple[dict[str, np.ndarray], set[str]]:
        """Unit-normalized sentence embeddings of the distinct texts, and the texts longer than the model's
        maximum length (truncated by the encoder)."""
        from ...models.encoder import encode_sentences, sentence_encoder
        from ...models.passes import timed
        from ...models.pool import embedding_cache
        from ...models.spec import model_spec

        spec = model_spec(self.model)
        encoder = sentence_encoder(self.model)
        max_len = int(getattr(encoder, "max_seq_length", 0) or 0)
        ns = f"st:{spec.content_hash()}:{max_len}"
        distinct = list(dict.fromkeys(texts))
        cache = embedding_cache()
        found = cache.get_many(ns, distinct, self.cache_dir)
        todo = [t for t in distinct if t not in found]
        if todo:
            order = sorted(range(len(todo)), key=lambda i: len(todo[i]), reverse=True)
            sorted_texts = [todo[i] for i in order]
            with timed("model", f"sentence encoder {self.model}", len(todo)):
                vecs = encode_sentences(encoder, sorted_texts, self.batch_size)
            new = {t: np.asarray(v, dtype=np.float32) for t, v in zip(sorted_texts, vecs)}
            cache.put_many(ns, new, self.cache_dir)
            found.update(new)
        truncated: set[str] = set()
        tok = getattr(encoder, "tokenizer", None)
        if max_len and tok is not None:
            lengths = tok(distinct, add_special_tokens=True, truncation=False)["input_ids"]
            truncated = {t for t, ids in zip(distinct, lengths) if len(ids) > max_len}
            if truncated:
                warnings.warn(f"{self.name}: {len(truncated)} texts are longer than the model's maximum of {max_len} "
                              "tokens and were truncated by the encoder (flag 'truncated')", stacklevel=3)
        return found, truncated

    def pair_stats(self, outputs: list[str], comparisons: list[list[str]]) -> SegmentStats:
        check_lengths(self.name, outputs, comparisons)
        emb, truncated = self.embed([*outputs, *(c for comp in comparisons for c in comp)])
        stats = np.zeros((len(outputs), 2))
        trunc_rows = []
        for i, (out, comp) in enumerate(zip(outputs, comparisons)):
            o = emb[out].astype(np.float64)
            stats[i, 0] = max(float(np.dot(o, emb[c].astype(np.float64))) for c in comp)
            n_trunc = (out in truncated) + sum(c in truncated for c in comp)
            stats[i, 1] = n_trunc
            if n_trunc:
                trunc_rows.append(i)
        return SegmentStats(values=stats, flags={"truncated": trunc_rows},
                            extra={"truncated_segments": len(trunc_rows)})
