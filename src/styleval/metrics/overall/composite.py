"""Overall scores as metrics over other metrics' statistics: ``hm``, ``gm``, ``j`` and ``rt_combined``.

A composite metric names its components (metric instances, or specs such as ``bleu/ref``); its per-segment
statistics are the components' statistics side by side, so the engine's bootstrap intervals and paired tests
resample every component on the same segments (a joint bootstrap) and recompute the overall score from the
components' own aggregates. When the run also scores a component on its own, the engine hands the composite
those statistics instead of computing them twice (:meth:`CompositeMetric.combine`).

Scales come from the components' declarations (:meth:`styleval.metrics.base.Metric.to_unit`), never from names:
BLEU and chrF (0-100) are divided by 100, cosine-like scores are clipped to [0, 1], an accuracy stays as it is.

* ``hm`` / ``gm``: harmonic / geometric mean of the style and content corpus scores, each mapped to [0, 1]
  (Lai et al. 2022, Fig. 1); segment scores are the same mean of the two segment scores.
* ``j``: mean over segments of STA·SIM·FL (ParaDetox, Logacheva et al. 2022): STA the style metric's segment score
  in [0, 1] (a classifier's 0/1 decision), SIM the similarity metric mapped to [0, 1], FL the fluency metric mapped
  to [0, 1] or, with ``fluency_threshold``, its pass/fail decision (``≤`` for a lower-is-better metric such as
  perplexity); without a fluency metric FL = 1.
* ``rt_combined``: Rao & Tetreault's (2018) combined score ``f/(r_f/2) + g/(r_g/2) + m/(r_m/2) + 1.5`` of corpus
  formality, fluency and meaning scores given on the paper's human scales
  (:func:`~styleval.metrics.overall.combine.rao_tetreault_combined`).
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np

from ...errors import InputError
from ..base import Aspect, Batch, Metric, SegmentStats
from ..content._common import check_number
from ..registry import register
from .combine import RT_SCALES, geometric_mean, harmonic_mean, rao_tetreault_combined

Aggregate = Callable[[np.ndarray], float]


def component(value: "Metric | str") -> Metric:
    """A component from an instance or a spec: ``name``, ``name/src``, ``name/ref`` or ``name:key=value;…`` (inside
    a composite's own spec, quoted: ``hm:style=style_accuracy;content="bleu:lowercase=true/ref"``)."""
    if isinstance(value, Metric):
        return value
    from ..registry import create, parse_spec

    text = str(value).strip()
    against = None
    for suffix, side in (("/src", "source"), ("/ref", "references")):
        if text.endswith(suffix):
            text, against = text[: -len(suffix)], side
    name, params = parse_spec(text)
    if against is not None:
        params["against"] = against
    return create(name, **params)


def mean_sum_function(metric: Metric) -> "Callable[[np.ndarray, float], float] | None":
    """The metric's corpus score from its summed statistics and the segment count, or None where it is not one."""
    fn = metric.sum_aggregate()
    if fn is not None:
        return lambda sums, n: fn(sums)
    cls = type(metric)
    if cls.aggregate is Metric.aggregate and cls.scores_from_stats is Metric.scores_from_stats:
        return lambda sums, n: float(sums[0]) / n if n else float("nan")  # the default: mean of the first column
    return None


class CompositeMetric(Metric):
    """Base class of overall scores. Subclasses list their ``roles`` (constructor parameters holding metrics) and
    implement :meth:`combine_corpus` (corpus scores of the components -> overall) and :meth:`combine_segments`.

    Statistics: ``[role 1 stats | role 2 stats | … | 1]``, a layout known before any statistics exist (each
    component declares its ``n_stats``, :meth:`layout`); the final column of ones counts the segments of a
    resample, so means over segments have a summed form (the fast bootstrap path).
    """

    aspect = Aspect.OVERALL
    roles: ClassVar[tuple[str, ...]]
    optional_roles: ClassVar[tuple[str, ...]] = ()

    @property
    def batch_independent(self) -> bool:  # type: ignore[override]
        return all(m.batch_independent for m in self.components().values())

    @property
    def batch_dependence(self) -> str:  # type: ignore[override]
        return "; ".join(f"{role} {m.name}: {m.batch_dependence}" for role, m in self.components().items()
                         if not m.batch_independent)

    # -- components ------------------------------------------------------------------------------
    def components(self) -> dict[str, Metric]:
        """Role -> component metric, for the roles that are set."""
        return {role: getattr(self, role) for role in self.roles if getattr(self, role, None) is not None}

    def resources(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for role, metric in self.components().items():
            out.update({f"{role}.{k}": v for k, v in metric.resources().items()})
        return out

    def check_batch(self, batch: Batch) -> None:
        for metric in self.components().values():
            metric.check_batch(batch)

    def segment_stats(self, batch: Batch) -> SegmentStats:
        """Computes every component (used when the composite is scored without its components in the run)."""
        return self.combine({role: m.compute(batch) for role, m in self.components().items()})

    def combine(self, parts: dict[str, SegmentStats]) -> SegmentStats:
        """The composite's statistics from its components' statistics (keys: roles)."""
        missing = [r for r in self.components() if r not in parts]
        if missing:
            raise InputError(f"{self.name}: statistics of component(s) {', '.join(missing)} missing")
        blocks = [np.asarray(parts[r].values, dtype=float) for r in self.components()]
        n = blocks[0].shape[0]
        if any(b.shape[0] != n for b in blocks):
            raise InputError(f"{self.name}: components cover different numbers of segments")
        widths = {r: b.shape[1] for r, b in zip(self.components(), blocks)}
        if widths != self.layout():
            raise InputError(f"{self.name}: components returned {widths} statistics columns, {self.layout()} declared")
        flags: dict[str, list[int]] = {}
        resources: dict[str, str] = {}
        for role, part in parts.items():
            flags.update({f"{role}.{k}": list(v) for k, v in part.flags.items()})
            resources.update({f"{role}.{k}": v for k, v in part.resources.items()})
        return SegmentStats(values=np.column_stack([*blocks, np.ones(n)]), flags=flags, resources=resources)

    def layout(self) -> dict[str, int]:
        """Statistics columns per role, in column order: each component's declared ``n_stats``."""
        return {role: metric.n_stats for role, metric in self.components().items()}

    @property
    def n_stats(self) -> int:
        """The components' columns side by side, then the count column."""
        return sum(self.layout().values()) + 1

    def split(self, stats: np.ndarray) -> dict[str, np.ndarray]:
        """Rows of composite statistics cut back into each component's columns."""
        stats = np.asarray(stats, dtype=float)
        out, start = {}, 0
        for role, k in self.layout().items():
            out[role] = stats[:, start:start + k]
            start += k
        return out

    # -- the two stages --------------------------------------------------------------------------
    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        parts = self.split(stats)
        seg = {role: self.components()[role].scores_from_stats(block) for role, block in parts.items()}
        return self.combine_segments(seg)

    def aggregate(self, stats: np.ndarray) -> float:
        stats = np.asarray(stats, dtype=float)
        if not len(stats):
            return float("nan")
        parts = self.split(stats)
        corpus = {role: self.components()[role].aggregate(block) for role, block in parts.items()}
        return self.combine_corpus(corpus, parts)

    def combine_corpus(self, corpus: dict[str, float], parts: dict[str, np.ndarray]) -> float:
        raise NotImplementedError

    def combine_segments(self, scores: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError


def _unit(metric: Metric, value: float) -> float:
    return float(metric.to_unit(np.array([value]))[0]) if np.isfinite(value) else float("nan")


class _StyleContentMean(CompositeMetric):
    """A mean of the style and the content corpus scores, both mapped to [0, 1]."""

    roles = ("style", "content")
    mean: ClassVar[Callable[[Any, Any], "np.ndarray | float"]]

    def __init__(self, *, style: "Metric | str" = "style_accuracy", content: "Metric | str" = "bleu/ref") -> None:
        self.style = component(style)
        self.content = component(content)

    def combine_corpus(self, corpus: dict[str, float], parts: dict[str, np.ndarray]) -> float:
        s, c = _unit(self.style, corpus["style"]), _unit(self.content, corpus["content"])
        if not (np.isfinite(s) and np.isfinite(c)):
            return float("nan")
        return float(type(self).mean(s, c))

    def combine_segments(self, scores: dict[str, np.ndarray]) -> np.ndarray:
        s = np.nan_to_num(self.style.to_unit(scores["style"]))
        c = np.nan_to_num(self.content.to_unit(scores["content"]))
        return np.asarray(type(self).mean(s, c), dtype=float)

    def sum_aggregate(self) -> "Aggregate | None":
        s_sum, c_sum = mean_sum_function(self.style), mean_sum_function(self.content)
        if s_sum is None or c_sum is None:
            return None
        ks, kc = self.style.n_stats, self.content.n_stats

        def from_sums(sums: np.ndarray) -> float:
            n = float(sums[-1])
            s = _unit(self.style, s_sum(sums[:ks], n))
            c = _unit(self.content, c_sum(sums[ks:ks + kc], n))
            if not (np.isfinite(s) and np.isfinite(c)):
                return float("nan")
            return float(type(self).mean(s, c))

        return from_sums


@register
class HarmonicMean(_StyleContentMean):
    """Harmonic mean of style and content (Lai et al. 2022)."""

    name = "hm"
    parameter_help: ClassVar[dict[str, str]] = {
        "style": "the column (metric label) giving the style score",
        "content": "the column giving the content score (÷ 100 when on 0-100)",
    }
    reference = "Lai et al. 2022's harmonic mean of style accuracy and content"
    description = "harmonic mean of corpus style and content scores mapped to [0, 1] (Lai et al. 2022)"
    mean = staticmethod(harmonic_mean)  # type: ignore[assignment]


@register
class GeometricMean(_StyleContentMean):
    """Geometric mean of style and content (Lai et al. 2022)."""

    name = "gm"
    parameter_help: ClassVar[dict[str, str]] = {
        "style": "the column (metric label) giving the style score",
        "content": "the column giving the content score (÷ 100 when on 0-100)",
    }
    reference = "geometric mean of style accuracy and content (Lai et al. 2022)"
    description = "geometric mean of corpus style and content scores mapped to [0, 1] (Lai et al. 2022)"
    mean = staticmethod(geometric_mean)  # type: ignore[assignment]


@register
class JointScore(CompositeMetric):
    """J = mean over segments of STA·SIM·FL (Logacheva et al. 2022). Its defaults are ``styleval evaluate``'s J:
    STA the shipped style classifier's decision, SIM MiniLM sentence cosine against the source, FL acceptability
    >= 0.5 (``tests/test_j_defaults.py`` holds the two together)."""

    name = "j"
    parameter_help: ClassVar[dict[str, str]] = {
        "style": "the column giving each segment's style decision (0/1)",
        "similarity": "the column giving each segment's content similarity (clipped to 0-1)",
        "fluency": "the column giving each segment's fluency (none: no fluency factor)",
        "fluency_threshold": "a segment is fluent when its fluency is at or past this (>=, or <= for a "
                             "lower-is-better metric); auto: the fluency metric's own pass value (acceptability "
                             ">= 0.5, perplexity <= 200), none: the fluency score itself mapped to 0-1",
    }
    reference = "ParaDetox's J (Logacheva et al. 2022): mean over segments of STA x SIM x FL"
    description = ("mean over segments of style x similarity x fluency, each in [0, 1] (ParaDetox J); by default "
                   "evaluate's J: style_accuracy x sentence cosine to the source x (acceptability >= 0.5)")
    roles = ("style", "similarity", "fluency")

    def __init__(self, *, style: "Metric | str" = "style_accuracy",
                 similarity: "Metric | str" = "sentence_cosine/src", fluency: "Metric | str | None" = "acceptability",
                 fluency_threshold: "float | str | None" = "auto") -> None:
        self.style = component(style)
        self.similarity = component(similarity)
        self.fluency = None if fluency in (None, "", "none") else component(fluency)  # type: ignore[arg-type]
        self.fluency_threshold = self._threshold(fluency_threshold)

    def get_params(self) -> dict[str, Any]:
        """No fluency factor and a continuous one are written ``none``: a parameter left at None is dropped from
        specs, which would bring back the defaults (acceptability, its pass value)."""
        params = super().get_params()
        for key in ("fluency", "fluency_threshold"):
            if params[key] is None:
                params[key] = "none"
        return params

    def _threshold(self, value: "float | str | None") -> float | None:
        """The pass value FL uses (None: FL is the fluency score mapped to [0, 1]): ``auto`` resolves to the
        fluency metric's ``pass_threshold``, so the signature names the number used."""
        if isinstance(value, str) and value.strip().lower() in ("auto", "none", ""):
            if value.strip().lower() != "auto" or self.fluency is None:
                return None
            return self.fluency.pass_threshold
        if value is None:
            return None
        check_number(self.name, "fluency_threshold", value)
        return float(value)

    def fluency_factor(self, scores: np.ndarray) -> np.ndarray:
        """FL per segment: the pass/fail decision at ``fluency_threshold``, else the fluency score in [0, 1]."""
        if self.fluency is None:
            raise InputError("j: no fluency metric to take a fluency factor from")
        values = np.asarray(scores, dtype=float)
        if self.fluency_threshold is not None:
            t = self.fluency_threshold
            passed = values >= t if self.fluency.higher_is_better else values <= t
            return passed.astype(float)
        return np.nan_to_num(self.fluency.to_unit(values))

    def combine_segments(self, scores: dict[str, np.ndarray]) -> np.ndarray:
        sta = np.nan_to_num(self.style.to_unit(scores["style"]))
        sim = np.nan_to_num(self.similarity.to_unit(scores["similarity"]))
        fl = self.fluency_factor(scores["fluency"]) if "fluency" in scores else np.ones_like(sta)
        return sta * sim * fl

    def combine(self, parts: dict[str, SegmentStats]) -> SegmentStats:
        """``[style | similarity | fluency | J product | 1]``: the product column makes J a summed statistic."""
        out = super().combine(parts)
        seg = {role: m.scores_from_stats(np.asarray(parts[role].values, dtype=float))
               for role, m in self.components().items()}
        product = self.combine_segments(seg)
        out.values = np.column_stack([out.values[:, :-1], product, out.values[:, -1]])
        return out

    @property
    def n_stats(self) -> int:
        return super().n_stats + 1

    def split(self, stats: np.ndarray) -> dict[str, np.ndarray]:
        return super().split(np.asarray(stats, dtype=float)[:, :-2])

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.asarray(stats, dtype=float)[:, -2]

    def aggregate(self, stats: np.ndarray) -> float:
        stats = np.asarray(stats, dtype=float)
        return float(np.mean(stats[:, -2])) if len(stats) else float("nan")

    def sum_aggregate(self) -> Aggregate:
        return lambda sums: float(sums[-2]) / float(sums[-1]) if sums[-1] else float("nan")


@register
class RaoTetreaultCombined(CompositeMetric):
    """Rao & Tetreault's (2018) combined score over corpus formality, fluency and meaning scores."""

    name = "rt_combined"
    parameter_help: ClassVar[dict[str, str]] = {
        "formality": "the column giving formality on Rao & Tetreault's scale (required)",
        "fluency": "the column giving fluency on their scale (required)",
        "meaning": "the column giving meaning preservation on their scale (required)",
    }
    reference = ("Rao & Tetreault 2018, Table 4: all twelve combined values within 0.05 "
                 "(tests/test_overall.py)")
    description = ("Rao & Tetreault 2018 combined score f/3 + g/2 + 2m/5 + 1.5 of formality (-3..3), fluency (1..5) "
                   "and meaning (1..6) scores (reconstructed from their Table 4)")
    roles = ("formality", "fluency", "meaning")
    value_range = (-1.5, 4.5)

    def __init__(self, *, formality: "Metric | str", fluency: "Metric | str", meaning: "Metric | str") -> None:
        self.formality = component(formality)
        self.fluency = component(fluency)
        self.meaning = component(meaning)

    def combine_corpus(self, corpus: dict[str, float], parts: dict[str, np.ndarray]) -> float:
        return float(rao_tetreault_combined(corpus["formality"], corpus["fluency"], corpus["meaning"]))

    def combine_segments(self, scores: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(rao_tetreault_combined(scores["formality"], scores["fluency"], scores["meaning"]))

    def combine(self, parts: dict[str, SegmentStats]) -> SegmentStats:
        for role in self.roles:
            lo, hi = RT_SCALES[role]
            got = self.components()[role].value_range
            if tuple(got) != (lo, hi):
                raise InputError(f"rt_combined: the {role} metric {self.components()[role].display_name!r} scores on "
                                 f"{got}, not on the paper's {role} scale [{lo:g}, {hi:g}]")
        return super().combine(parts)
