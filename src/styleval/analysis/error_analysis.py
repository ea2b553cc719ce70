"""Error analysis of a content metric against human scores (after Babakov et al., §4.2).

Segments are ranked twice, by the metric and by the humans (average ranks for ties, as fractions of n so that
both lie in (0, 1]); the gap ``rank_metric − rank_human`` is positive where the metric rates a segment higher than
the humans do (over-rating) and negative where it rates it lower. The segments with the largest gaps (absolute by
default) are then diagnosed for likely causes of content change:

* named entities of the source that are lost, or corrupted (no exact match, but an output n-gram close in
  spelling, difflib ratio >= 0.6), and entities the output adds;
* content words of the source (nouns, proper nouns, verbs, adjectives, adverbs, numerals, pronouns and
  adpositions) whose lemma is absent from the output, by part of speech;
* a change of sentence type (declarative, interrogative, imperative, exclamatory).

Base rates: the same diagnosis is run on every segment (or on a random sample of them), so that each cause's share
among the worst segments can be set against its share overall. ``lift`` = share among the worst / share overall;
``p_over`` is the chance of seeing at least as many worst segments with the cause if they were drawn at random
(hypergeometric over all segments; binomial with the sampled share when the base is a sample). With many causes
and few segments, read small p-values with a multiple-testing correction in mind.
"""
from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy.stats import binom, hypergeom, rankdata

from ..entities import entities_of
from ..entities.numbers import digits_to_words
from ..errors import InputError
from ..models import catalog as cat
from ..nlp import ParsedText, parse_many
from .sentence_type import text_types

CONTENT_POS = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM", "PRON", "ADP")
DIRECTIONS = ("abs", "over", "under")
CORRUPTION_RATIO = 0.6
NO_CAUSE = "no cause found"
#: segments parsed per progress report when diagnosing the base
_BASE_CHUNK = 1000


@dataclass
class Diagnosis:
    """Likely causes of content change between a source and an output."""

    entities_lost: list[str] = field(default_factory=list)
    entities_corrupted: list[tuple[str, str]] = field(default_factory=list)
    entities_added: list[str] = field(default_factory=list)
    words_lost: dict[str, list[str]] = field(default_factory=dict)
    types_source: list[str] = field(default_factory=list)
    types_output: list[str] = field(default_factory=list)

    @property
    def type_changed(self) -> bool:
        return set(self.types_source) != set(self.types_output)

    def causes(self) -> list[str]:
        out = [f"entity lost: {e}" for e in self.entities_lost]
        out += [f"entity corrupted: {a} -> {b}" for a, b in self.entities_corrupted]
        out += [f"entity added: {e}" for e in self.entities_added]
        out += [f"{pos} lost: {', '.join(words)}" for pos, words in self.words_lost.items()]
        if self.type_changed:
            out.append(f"sentence type: {'+'.join(self.types_source) or '-'} -> {'+'.join(self.types_output) or '-'}")
        return out

    def labels(self) -> list[str]:
        """Cause categories present (for counting)."""
        labels = []
        if self.entities_lost:
            labels.append("entity lost")
        if self.entities_corrupted:
            labels.append("entity corrupted")
        if self.entities_added:
            labels.append("entity added")
        labels += [f"{pos} lost" for pos in self.words_lost]
        if self.type_changed:
            labels.append("sentence type changed")
        return labels


def _key(text: str) -> str:
    return digits_to_words(text.lower())


def _closest_ngram(entity: str, n_tokens: int, words: list[str]) -> tuple[str, float]:
    best, ratio = "", 0.0
    target = entity.lower()
    for size in {max(1, n_tokens - 1), n_tokens, n_tokens + 1}:
        for i in range(0, max(0, len(words) - size) + 1):
            cand = " ".join(words[i:i + size])
            r = difflib.SequenceMatcher(None, target, cand.lower()).ratio()
            if r > ratio:
                best, ratio = cand, r
    return best, ratio


def diagnose(source: ParsedText, output: ParsedText) -> Diagnosis:
    """Entities lost, corrupted or added, content words lost by POS, sentence types of both texts."""
    d = Diagnosis()
    s_ent, o_ent = entities_of(source), entities_of(output)
    o_norms = set(o_ent.norms)
    out_lower = " " + " ".join(t.text.lower() for t in output.tokens) + " "
    out_words = [t.text for t in output.tokens if t.is_word]
    matched_out: set[str] = set()
    for e in s_ent.entities:
        if e.norm in o_norms:
            matched_out.add(e.norm)
            continue
        src_tokens = " " + " ".join(t.text.lower() for t in source.tokens[e.start:e.end]) + " "
        if src_tokens in out_lower:  # present, only cased or tagged differently
            continue
        cand, ratio = _closest_ngram(e.text, e.end - e.start, out_words)
        if ratio >= CORRUPTION_RATIO:
            d.entities_corrupted.append((e.text, cand))
        else:
            d.entities_lost.append(e.text)
    s_norms = set(s_ent.norms)
    src_lower = " " + " ".join(t.text.lower() for t in source.tokens) + " "
    for e in o_ent.entities:
        if e.norm in s_norms or e.norm in matched_out:
            continue
        if " " + " ".join(t.text.lower() for t in output.tokens[e.start:e.end]) + " " in src_lower:
            continue
        if not any(e.text.lower() in b.lower() or b.lower() in e.text.lower() for _, b in d.entities_corrupted):
            d.entities_added.append(e.text)
    out_keys = {_key(t.lemma or t.text) for t in output.tokens if t.is_word} | {
        _key(t.text) for t in output.tokens if t.is_word}
    lost: dict[str, list[str]] = {}
    for t in source.tokens:
        if t.is_word and t.pos in CONTENT_POS and _key(t.lemma or t.text) not in out_keys \
                and _key(t.text) not in out_keys:
            lost.setdefault(t.pos, []).append(t.text)
    d.words_lost = {pos: lost[pos] for pos in CONTENT_POS if pos in lost}
    d.types_source, d.types_output = text_types(source), text_types(output)
    return d


def cause_label_counts(diagnoses: Sequence[Diagnosis]) -> Counter:
    """Segments per cause category (a segment counts once per category); ``no cause found`` for the rest."""
    c: Counter = Counter()
    for d in diagnoses:
        labels = d.labels()
        c.update(labels or [NO_CAUSE])
    return c


@dataclass(frozen=True)
class CauseRate:
    """One cause: how often it appears among the worst segments and in the base (all, or a sample)."""

    cause: str
    top_count: int
    top_share: float
    base_count: int
    base_share: float
    lift: float | None  # top_share / base_share; None when the base never shows the cause
    p_over: float  # P(>= top_count of the worst segments show it by chance)


def cause_rates(top: Counter | dict[str, int], n_top: int, base: Counter | dict[str, int], n_base: int, *,
                n_population: int | None = None) -> list[CauseRate]:
    """Shares, lift and over-representation p-value per cause, most over-represented first.

    ``n_population`` (the number of segments the worst were drawn from) given and equal to ``n_base``: the base is
    every segment and the p-value is hypergeometric; otherwise (a sampled base) binomial with the base share.
    """
    exact = n_population is not None and n_population == n_base
    rates = []
    for cause in set(top) | set(base):
        k, kb = int(top.get(cause, 0)), int(base.get(cause, 0))
        share_t = k / n_top if n_top else 0.0
        share_b = kb / n_base if n_base else 0.0
        if k == 0:
            p = 1.0
        elif exact:
            p = float(hypergeom.sf(k - 1, n_base, kb, n_top))
        else:
            p = float(binom.sf(k - 1, n_top, share_b))
        rates.append(CauseRate(cause, k, share_t, kb, share_b, share_t / share_b if share_b else None, p))
    rates.sort(key=_rate_order)
    return rates


def _rate_order(r: CauseRate) -> tuple:
    """Causes seen among the worst first, by lift then count; then the others by base share."""
    if r.top_count:
        return (0, -(r.lift if r.lift is not None else float("inf")), -r.top_count, r.cause)
    return (1, -r.base_share, 0, r.cause)


def rank_gaps(metric: "Sequence[float] | np.ndarray", human: "Sequence[float] | np.ndarray"
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gap, metric rank, human rank): average ranks divided by n; gap = metric rank − human rank."""
    m, h = np.asarray(metric, dtype=float), np.asarray(human, dtype=float)
    if m.shape != h.shape or m.ndim != 1:
        raise InputError(f"metric scores ({m.shape}) and human scores ({h.shape}) must be 1-d of equal length")
    if np.isnan(m).any() or np.isnan(h).any():
        raise InputError("NaN scores: drop those segments first")
    rm, rh = rankdata(m) / len(m), rankdata(h) / len(h)
    return rm - rh, rm, rh


@dataclass
class SegmentError:
    rank: int
    id: str
    source: str
    output: str
    human: float
    metric: float
    rank_human: float
    rank_metric: float
    gap: float
    diagnosis: Diagnosis

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["diagnosis"] = asdict(self.diagnosis)
        d["diagnosis"]["type_changed"] = self.diagnosis.type_changed
        d["causes"] = self.diagnosis.causes()
        return d


@dataclass
class ErrorAnalysis:
    metric: str
    n_segments: int
    direction: str
    higher_is_better: bool
    rows: list[SegmentError]
    spacy_model: str
    base_counts: dict[str, int] | None = None  # segments per cause in the base; None: base rates not computed
    n_base: int = 0  # segments in the base (n_segments, or the sample size)

    def cause_counts(self) -> dict[str, int]:
        """How many of the listed segments show each cause category."""
        return dict(cause_label_counts([r.diagnosis for r in self.rows]).most_common())

    @property
    def base_sampled(self) -> bool:
        return self.base_counts is not None and self.n_base != self.n_segments

    def cause_rates(self) -> list[CauseRate]:
        """Each cause's share among the listed segments against its base rate (empty without base rates)."""
        if self.base_counts is None:
            return []
        return cause_rates(self.cause_counts(), len(self.rows), self.base_counts, self.n_base,
                           n_population=self.n_segments)

    def format_rates(self) -> str:
        """The base-rate table: count and share among the listed segments and in the base, lift, p."""
        if self.base_counts is None:
            return ""
        sampled = self.base_sampled
        lines = [f"cause base rates: lift = share among these {len(self.rows)} / share in "
                 f"{'a random sample of ' + str(self.n_base) if sampled else 'all ' + str(self.n_base)} segments; "
                 f"p = chance of at least as many among {len(self.rows)} random segments "
                 f"({'binomial' if sampled else 'hypergeometric'})",
                 f"{'cause':<22}  {'worst ' + str(len(self.rows)):>12}  {'base':>14}  {'lift':>5}  {'p':>7}"]
        for r in self.cause_rates():
            lift = "-" if r.lift is None else f"{r.lift:.2f}"
            lines.append(f"{r.cause:<22}  {r.top_count:>4} {r.top_share:>7.1%}  {r.base_count:>6} {r.base_share:>7.1%}"
                         f"  {lift:>5}  {r.p_over:>7.2g}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "n_segments": self.n_segments, "direction": self.direction,
                "higher_is_better": self.higher_is_better, "spacy_model": self.spacy_model,
                "ranking": "gap = rank(metric)/n - rank(human)/n, average ranks for ties",
                "cause_counts": self.cause_counts(),
                "base_rates": None if self.base_counts is None else {
                    "n_base": self.n_base, "sampled": self.base_sampled,
                    "p_value": "binomial (sampled base)" if self.base_sampled else "hypergeometric (all segments)",
                    "causes": [asdict(r) for r in self.cause_rates()]},
                "segments": [r.to_dict() for r in self.rows]}

    def format_table(self, width: int = 120) -> str:
        """A terminal table: one block per segment, then the cause counts."""
        lines = [f"{self.metric}: {len(self.rows)} of {self.n_segments} segments with the largest "
                 f"{'|gap|' if self.direction == 'abs' else self.direction + '-rating gap'} "
                 "(gap = metric rank - human rank, as fractions of n)",
                 f"{'#':>3}  {'id':>6}  {'human':>6}  {'metric':>8}  {'gap':>6}  source / output / causes",
                 "-" * min(width, 100)]
        text_w = max(30, width - 40)

        def clip(s: str) -> str:
            return s if len(s) <= text_w else s[:text_w - 1] + "…"

        for r in self.rows:
            lines.append(f"{r.rank:>3}  {r.id:>6}  {r.human:>6.3g}  {r.metric:>8.4g}  {r.gap:>+6.3f}  "
                         f"S: {clip(r.source)}")
            pad = " " * 36
            lines.append(f"{pad}O: {clip(r.output)}")
            for cause in r.diagnosis.causes() or ["(no cause found)"]:
                lines.append(f"{pad}- {clip(cause)}")
        lines.append("-" * min(width, 100))
        lines.append("causes among these segments: " + ", ".join(f"{k} {v}" for k, v in self.cause_counts().items()))
        if self.base_counts is not None:
            lines.append(self.format_rates())
        return "\n".join(lines)


@dataclass(frozen=True)
class ErrorAnalysisOptions:
    """What :func:`analyze_errors` ranks and diagnoses.

    ``top``: how many segments to diagnose; ``direction``: ``abs`` (largest |gap|, Babakov et al.), ``over`` (metric
    rates higher than humans) or ``under`` (metric rates lower); ``higher_is_better``: False negates the metric before
    ranking; ``spacy_model``: the parser of the diagnoses; ``base_rates``: also diagnose every segment (every one is
    parsed: about 100 texts a second on one core), or a random sample of ``base_sample`` segments (``seed``), to set
    each cause's share among the worst against its base rate."""

    top: int = 20
    direction: str = "abs"
    higher_is_better: bool = True
    spacy_model: str = cat.DEFAULT_SPACY
    base_rates: bool = True
    base_sample: int | None = None
    seed: int = 0


def analyze_errors(sources: Sequence[str], outputs: Sequence[str], human: "Sequence[float] | np.ndarray",
                   metric: "Sequence[float] | np.ndarray", *, metric_name: str = "metric",
                   ids: Sequence[str] | None = None, options: ErrorAnalysisOptions | None = None,
                   progress: Callable[[str, int, int], None] | None = None) -> ErrorAnalysis:
    """Rank segments by the gap between metric and human ranks and diagnose the ``options.top`` worst
    (:class:`ErrorAnalysisOptions`). ``ids`` default to the 1-based positions ``"1"``..``"n"``, as the readers
    number lines and rows. ``progress(description, done, total)`` is called while the base is diagnosed.
    """
    o = options or ErrorAnalysisOptions()
    top, direction, higher_is_better, spacy_model = o.top, o.direction, o.higher_is_better, o.spacy_model
    base_rates, base_sample, seed = o.base_rates, o.base_sample, o.seed
    n = len(sources)
    if not (len(outputs) == len(human) == len(metric) == n):
        raise InputError(f"lengths differ: {n} sources, {len(outputs)} outputs, {len(human)} human scores, "
                         f"{len(metric)} metric scores")
    if direction not in DIRECTIONS:
        raise InputError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    if top < 1:
        raise InputError(f"top must be >= 1, got {top}")
    if base_sample is not None and base_sample < 1:
        raise InputError(f"base_sample must be >= 1, got {base_sample}")
    ids = [str(i) for i in range(1, n + 1)] if ids is None else [str(i) for i in ids]
    m = np.asarray(metric, dtype=float)
    gap, rm, rh = rank_gaps(m if higher_is_better else -m, human)
    key = {"abs": -np.abs(gap), "over": -gap, "under": gap}[direction]
    order = np.lexsort((np.arange(n), key))[:top]
    parsed = parse_many([sources[i] for i in order] + [outputs[i] for i in order], spacy_model)
    k = len(order)
    rows = [SegmentError(rank=j + 1, id=ids[i], source=sources[i], output=outputs[i], human=float(human[i]),
                         metric=float(m[i]), rank_human=float(rh[i]), rank_metric=float(rm[i]), gap=float(gap[i]),
                         diagnosis=diagnose(parsed[j], parsed[k + j]))
            for j, i in enumerate(order)]
    analysis = ErrorAnalysis(metric_name, n, direction, higher_is_better, rows, spacy_model)
    if base_rates:
        if base_sample is None or base_sample >= n:
            base = np.arange(n)
        else:
            base = np.sort(np.random.default_rng(seed).choice(n, size=base_sample, replace=False))
        analysis.base_counts = dict(_base_counts(sources, outputs, base, spacy_model, progress))
        analysis.n_base = len(base)
    return analysis


def _base_counts(sources: Sequence[str], outputs: Sequence[str], base: np.ndarray, spacy_model: str,
                 progress: Callable[[str, int, int], None] | None) -> Counter:
    """Cause counts over the base segments, parsed in chunks (progress reported per chunk)."""
    counts: Counter = Counter()
    total = len(base)
    for start in range(0, total, _BASE_CHUNK):
        chunk = base[start:start + _BASE_CHUNK]
        parsed = parse_many([sources[i] for i in chunk] + [outputs[i] for i in chunk], spacy_model)
        k = len(chunk)
        counts += cause_label_counts([diagnose(parsed[j], parsed[k + j]) for j in range(k)])
        if progress is not None:
            progress("diagnosing segments for base rates", min(start + k, total), total)
    return counts
