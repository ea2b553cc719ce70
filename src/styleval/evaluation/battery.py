"""The evaluation battery: style, content, fluency and overall scores chosen for a transfer direction.

``evaluate(records)`` picks the metrics, scores them in one call to the engine behind :func:`styleval.score` (so
corpus scores, intervals and paired tests are exactly those of ``styleval score`` with the same metric specs), adds
the overall scores with intervals and paired tests from a joint bootstrap over segments (:mod:`.overall`), and
records why each metric was chosen (``Evaluation.rationale``). Asked to, it adds Mir et al.'s adversarial
naturalness (the ``naturalness`` metric) to the fluency aspect.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..records import Record
from ..engine.options import StatisticsOptions
from ..results import Comparison, ScoreResult, read_json
from .overall import OVERALL_COLUMNS, overall_metrics, split_overall
from .anchor import anchor_line, anchor_records, anchor_settings, wants_anchor
from .texts import segment_texts
from .plan import (DEFAULT_CONTENT_MODEL, DEFAULT_FLUENCY, DEFAULT_LM, BatteryChoices, CorpusFacts,
                   FluencyModelFacts, ModelCardFacts, StyleModelFacts, plan_evaluation)
from ..progress import Progress, reporting

FORMAT = "styleval-evaluation/1"
#: evaluate's statistics defaults: those of score, with paired bootstrap tests between the systems.
EVALUATE_STATISTICS = StatisticsOptions(significance="paired-bootstrap")


@dataclass
class Evaluation:
    """Result of :func:`evaluate`.

    ``result``: the ScoreResult of every metric; ``aspects``: aspect -> metric names in display order;
    ``roles``: which metric plays style / content / similarity / fluency in the overall scores;
    ``overall``: rows ``system, score, value, ci_low, ci_high, ci_excluded_segments`` (``hm``, ``gm``, ``j``;
    intervals from the joint bootstrap over segments, NaN without one); ``overall_comparisons``: paired tests of
    the overall scores between the systems the metrics' tests compare; ``rationale``: one sentence per choice;
    ``metric_specs``: the specs given to :func:`styleval.score` (re-run them to reproduce every number; the JSON
    writes an instance as its ``metric_id.spec()``, which ``parse_spec`` builds again); ``settings``: the plan's
    and the statistics' settings, with ``anchor`` (the anchor row's system name), ``anchor_references`` (fewest and
    most references it was scored against) and ``anchor_auto`` (added by default) when the human references' anchor
    row was added (:mod:`.anchor`).
    """

    result: ScoreResult
    overall: pd.DataFrame
    rationale: list[str]
    aspects: dict[str, list[str]]
    roles: dict[str, str]
    metric_specs: list[Any]  # spec strings and metric instances
    settings: dict[str, Any] = field(default_factory=dict)
    overall_comparisons: list[Comparison] = field(default_factory=list)
    timing: dict[str, Any] = field(default_factory=dict)  # where the time went (``battery.timing_facts``)
    #: the inputs and outputs scored (:func:`.texts.segment_texts`), for the report's segment explorer; None
    #: when not kept
    texts: dict[str, Any] | None = None
    #: per-segment values of the overall scores that have them (``j``: STA·SIM·FL per segment), as
    #: ``{score: {system: {segment id: value}}}``
    overall_segments: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)

    @property
    def systems(self) -> list[str]:
        return self.result.systems

    def _overall_row(self, system: str, name: str) -> Any:
        rows = self.overall[(self.overall["system"] == system) & (self.overall["score"] == name)]
        if rows.empty:
            raise KeyError(f"no overall score {name!r} for system {system!r}")
        return rows.iloc[0]

    def overall_score(self, system: str, name: str) -> float:
        return float(self._overall_row(system, name)["value"])

    def overall_ci(self, system: str, name: str) -> tuple[float, float] | None:
        """The joint-bootstrap interval of an overall score, or None when none was computed."""
        row = self._overall_row(system, name)
        low, high = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
        return (float(low), float(high)) if np.isfinite(low) and np.isfinite(high) else None

    def to_dict(self) -> dict[str, Any]:
        def clean(x: Any) -> float | None:
            return None if x is None or not np.isfinite(x) else float(x)

        overall = []
        for r in self.overall.to_dict("records"):
            ci = (clean(r.get("ci_low")), clean(r.get("ci_high")))
            entry = {"system": r["system"], "score": r["score"], "value": clean(r["value"]),
                     "ci": list(ci) if None not in ci else None}
            if r.get("ci_excluded_segments"):
                entry["ci_excluded_segments"] = int(r["ci_excluded_segments"])
            overall.append(entry)
        return {"format": FORMAT, "settings": self.settings,
                "metric_specs": [s if isinstance(s, str) else s.metric_id.spec() for s in self.metric_specs],
                "aspects": {k: list(v) for k, v in self.aspects.items()}, "roles": dict(self.roles),
                "overall": overall, "overall_comparisons": [c.to_dict() for c in self.overall_comparisons],
                "rationale": list(self.rationale), "score": self.result.to_dict(),
                **({"timing": self.timing} if self.timing else {}),
                "overall_segments": [{"score": name, "system": system, "scores": scores}
                                     for name, per_system in self.overall_segments.items()
                                     for system, scores in per_system.items()],
                **({"texts": self.texts} if self.texts is not None else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: Any = None) -> "Evaluation":
        """The evaluation :meth:`to_dict` wrote (``evaluate --json``): every score, interval, test, signature,
        segment score, rationale and text as saved; metric specs come back as their spec strings, and the
        statistics are not saved (no new intervals or tests)."""
        def nan(x: Any) -> float:
            return np.nan if x is None else float(x)

        try:
            overall = pd.DataFrame([{"system": r["system"], "score": r["score"], "value": nan(r["value"]),
                                     "ci_low": nan(r["ci"][0]) if r.get("ci") else np.nan,
                                     "ci_high": nan(r["ci"][1]) if r.get("ci") else np.nan,
                                     "ci_excluded_segments": int(r.get("ci_excluded_segments", 0))}
                                    for r in data["overall"]], columns=OVERALL_COLUMNS)
            segments: dict[str, dict[str, dict[str, float | None]]] = {}
            for entry in data.get("overall_segments", []):
                segments.setdefault(entry["score"], {})[entry["system"]] = dict(entry["scores"])
            return cls(result=ScoreResult.from_dict(data["score"], where), overall=overall,
                       rationale=list(data["rationale"]), aspects={k: list(v) for k, v in data["aspects"].items()},
                       roles=dict(data["roles"]), metric_specs=list(data["metric_specs"]),
                       settings=dict(data.get("settings") or {}),
                       overall_comparisons=[Comparison.from_dict(c) for c in data.get("overall_comparisons", [])],
                       timing=dict(data.get("timing") or {}), texts=data.get("texts"), overall_segments=segments)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"not a styleval evaluation: {type(exc).__name__} {exc}", where) from None

    @classmethod
    def from_json(cls, path: str | Path) -> "Evaluation":
        """The evaluation ``styleval evaluate --json`` saved at ``path``."""
        return cls.from_dict(load_evaluation(path), path)

    def write_json(self, path: str | Path) -> None:
        """Everything as JSON (``styleval report`` reads it), written atomically."""
        from ..outputs import write_text

        write_text(path, json.dumps(self.to_dict(), indent=1, ensure_ascii=False))


def load_evaluation(path: str | Path) -> dict[str, Any]:
    """Read the JSON written by :meth:`Evaluation.write_json` (``styleval evaluate --json``)."""
    p = Path(path)
    data = read_json(p)
    if data.get("format") != FORMAT:
        raise InputError(f"not a styleval evaluation (expected format {FORMAT!r}; write one with "
                         "`styleval evaluate --json FILE`)", p)
    return data


def as_dict(evaluation: "Evaluation | Mapping[str, Any]") -> dict[str, Any]:
    """The JSON form of an evaluation, from an Evaluation or an already-loaded dict."""
    if isinstance(evaluation, Evaluation):
        return evaluation.to_dict()
    if isinstance(evaluation, Mapping) and evaluation.get("format") == FORMAT:
        return dict(evaluation)
    raise InputError(f"expected an Evaluation or its JSON form (format {FORMAT!r})")


# ------------------------------------------------------------------------------------------ facts for the plan
def style_model_facts(style_model: str, styles: frozenset[str], labels: str | None = None,
                      threshold: float | None = None) -> StyleModelFacts:
    """The style classifier the battery will use (the one named, or the shipped one covering ``styles`` for
    ``auto``), described from its card for the plan; ``labels`` and ``threshold`` read a transformers classifier
    (:mod:`styleval.style_models.transformers_model`)."""
    from ..metrics.spec import render_token
    from ..models import registry
    from ..style_models.model import CLASSIFIER
    from ..style_models.pretrained import AUTO, choose_shipped, load_style_model
    from ..style_models.transformers_model import TransformersStyleModel

    chosen = style_model == AUTO
    name = choose_shipped(CLASSIFIER, styles) if chosen else style_model
    model = load_style_model(name, labels=labels, threshold=threshold)
    if isinstance(model, TransformersStyleModel):
        params = "".join(f";{key}={render_token(value)}" for key, value in (("labels", labels),
                                                                            ("threshold", threshold))
                         if value is not None)
        ident = model.classifier.identity()
        decides = (" An output counts for the target when P(target) beats P(source) (softmax over its labels)."
                   if threshold is None else f" An output counts for {model.labels[1]!r} when its score is at least "
                   f"{threshold:g}, with P = sigmoid(score - {threshold:g}).")
        return StyleModelFacts(name=name, chosen=False, labels=tuple(model.labels), feature_blocks="transformers",
                               calibration_note=decides + " It has no styleval calibration.", card=None,
                               cased=model.cased, params=params,
                               what=f"a transformers sequence classifier ({ident['model_hash']})")
    blocks = ", ".join(str(getattr(b, "kind", None) or b.config().get("kind", type(b).__name__))
                       for b in getattr(model, "blocks", ())) or "see the model card"
    return StyleModelFacts(name=name, chosen=chosen, labels=tuple(model.labels), feature_blocks=blocks,
                           calibration_note=_calibration_note(model), card=card_facts(getattr(model, "card", None)),
                           cased=model.cased, cased_slot=registry.cased_slot(registry.STYLE, name))


def fluency_model_facts(fluency_model: str, acceptable_label: str | None = None) -> FluencyModelFacts:
    """The acceptability classifier the user gave, for the plan: a transformers classifier (checked now: its
    acceptable label must be known) or a styleval acceptability folder (with its card's figures)."""
    from ..acceptability.transformers_model import acceptable_index
    from ..metrics.spec import render_token
    from ..models import catalog as cat
    from ..models import registry
    from ..models.spec import model_spec

    spec = model_spec(fluency_model, shipped=registry.ACCEPTABILITY, expect=(cat.STYLEVAL, cat.TRANSFORMERS))
    if spec.kind != cat.TRANSFORMERS:
        from ..acceptability.model import load_acceptability

        if acceptable_label is not None:
            raise InputError(f"--acceptable-label reads a transformers classifier; {fluency_model!r} is a styleval "
                             "acceptability model")
        return FluencyModelFacts(name=fluency_model, what="a styleval acceptability model",
                                 card=card_facts(load_acceptability(fluency_model).card))
    from ..models.classifier import load_classifier

    clf = load_classifier(spec)
    index = acceptable_index(clf, acceptable_label)
    params = f";acceptable_label={render_token(acceptable_label)}" if acceptable_label is not None else ""
    return FluencyModelFacts(name=fluency_model, params=params,
                             what=f"a transformers sequence classifier ({clf.identity()['model_hash']}; acceptable "
                                  f"label {clf.labels[index]!r})")


def card_facts(card: Mapping[str, Any] | None) -> ModelCardFacts | None:
    """A model card's version and figures on human judgments, as the plan quotes them (None without a card)."""
    from ..models.cards import human_figure_lines

    if not card:
        return None
    return ModelCardFacts(version=str(card.get("version", "?")), figures=tuple(human_figure_lines(card)))


def shipped_model_cards() -> dict[str, ModelCardFacts]:
    """Every shipped model's card facts (version, figures on human judgments), read from the cards."""
    from ..models import cards, registry

    out = {}
    for kind in registry.SHIPPED:
        for name, folder in registry.shipped(kind).items():
            facts = card_facts(cards.read_card(folder, kind))
            if facts is not None:
                out[name] = facts
    return out


def _calibration_note(model: Any) -> str:
    """Which calibration decides style accuracy (see docs/calibration.md)."""
    cal = getattr(model, "calibration", None)
    if cal is None:
        return (" Style accuracy asks for the card's calibration (calibrated=yes in the signature), but this model's "
                "card holds none (style_calibration:none), so each output gets the label of highest probability "
                "(`styleval calibrate-style` fits one).")
    data = cal.data
    return (f" It decides with its {cal.method} calibration (an output is {cal.positive!r} when its calibrated "
            f"P({cal.positive}) >= {cal.probability_threshold:.2f}), fitted on {data.get('n')} labelled texts "
            f"({data.get('data')}).")


#: Below this share of outputs passing J's fluency test in every system, the rationale warns that J mostly
#: measures the threshold.
FLUENCY_PASS_WARNING = 0.2


def _fluency_warning(result: Any, metric: str, threshold: float, systems: Sequence[str] | None = None) -> list[str]:
    """A rationale line when J's fluency factor rejects most outputs of every system in ``systems`` (default: every
    system of ``result``; ``evaluate`` gives the real systems, without the anchor row) (J then says little)."""
    shares = {}
    for system in result.systems if systems is None else systems:
        r = result.get(metric, system)
        seg = np.asarray(r.segment_scores, dtype=float)
        passed = seg >= threshold if getattr(r, "higher_is_better", False) else seg <= threshold
        shares[system] = float(np.mean(passed)) if seg.size else float("nan")
    if shares and all(v < FLUENCY_PASS_WARNING for v in shares.values()):
        top = max(shares.values())
        if metric != "perplexity":
            return [f"warning: at most {top:.0%} of any system's outputs have {metric} ≥ {threshold:g}, so j is "
                    "close to 0 for every system; compare systems on hm/gm."]
        return [f"warning: at most {top:.0%} of any system's outputs have perplexity ≤ {threshold:g}, so j is "
                "close to 0 for every system and mostly reflects the threshold (lower-cased or tokenized text "
                "reads as unlikely to the LM); set --fluency-threshold from the references' perplexities, or "
                "compare systems on hm/gm."]
    return []


def evaluate(records: Sequence[Record], *, style_model: str = "auto", content_model: str = DEFAULT_CONTENT_MODEL,
             fluency_model: str | None = None, style_labels: str | None = None, style_threshold: float | None = None,
             acceptable_label: str | None = None, lm: str = DEFAULT_LM,
             style_lms: "str | Mapping[str, str] | None" = None,
             fluency: str = DEFAULT_FLUENCY, fluency_threshold: float | None = None, fast: bool = False,
             naturalness: "str | bool | None" = None, options: StatisticsOptions | None = None,
             progress: Progress | None = None, anchor: bool | None = None, **statistics: Any) -> Evaluation:
    """Score ``records`` with the battery recommended for their transfer direction(s).

    * style: ``style_accuracy`` and ``style_emd`` with the best style classifier for the direction
      (``style_model="auto"``: the shipped classifier whose labels cover the direction's styles), or the one given:
      a shipped name, a ``train-style`` folder, a transformers classifier folder or an allowed hub id, read with
      ``style_labels`` and ``style_threshold`` (the style metrics' ``labels`` and ``threshold``);
    * content: ``content_model`` (a name of ``plan.CONTENT_MODELS``; the default is the similarity rule's choice,
      docs/results.md) against the source, J's SIM, and ``bleu``,
      ``chrf``, ``meteor`` against the source and, when records have references, against all references;
    * fluency: ``acceptability`` (the shipped classifier's P(acceptable English), or that of ``fluency_model``:
      a CoLA-style transformers classifier or an acceptability folder, with ``acceptable_label``) and
      ``perplexity`` under ``lm``, or under a target-style LM per style in ``style_lms``;
    * overall: ``hm``/``gm`` of corpus style accuracy and content (BLEU/ref ÷ 100 when references exist, else the
      source-side similarity) and ``j`` = mean over segments of STA·SIM·FL (ParaDetox), FL from the ``fluency``
      metric: 1[acceptability ≥ ``fluency_threshold``] (default 0.5) or, with ``fluency="perplexity"``,
      1[perplexity ≤ ``fluency_threshold``] (default 200); each with a percentile interval from one bootstrap over
      segments (the style and content aggregates and the overall score recomputed on every resample, same seed and
      resample count as the metrics' intervals) and the same paired tests between systems as the metrics;
    * naturalness (``naturalness="unigram"`` or ``"embedding"``, ``True`` = unigram): the ``naturalness`` metric,
      Mir et al.'s adversarial naturalness (the share of outputs a classifier trained to tell the inputs from the
      system's outputs finds more human-like than their input), fitted with ``seed``.

    ``fast=True`` leaves out the neural content and fluency models (lexical metrics and the style classifier only);
    SIM in J is then chrF/src ÷ 100 and J has no fluency factor.

    ``anchor``: the human references as an anchor row (:mod:`.anchor`), the system ``human-reference``: each
    input's first reference scored as an output against the other references. ``None`` (the default) adds it when
    every input has two references or more, ``True`` requires it (an :class:`InputError` when an input has fewer),
    ``False`` leaves it out. The real systems' scores are the same with or without it; the rationale says so in
    one line (:func:`.anchor.anchor_line`), and the report leaves it out of the leads.

    ``options``: intervals and paired tests (:class:`StatisticsOptions`; here the default test is the paired
    bootstrap); its fields may also be given as keywords (``bootstrap=0``, ``seed=7``). ``naturalness`` is fitted
    with its seed.

    The choices are made by :func:`styleval.evaluation.plan.plan_evaluation` (pure); this function gathers the
    facts it needs, scores the plan in one engine call and summarises; ``Evaluation.timing`` says where the time
    went (each model's passes, each metric, the intervals and tests).
    """
    from ..models.passes import time_log

    with time_log() as log:
        started, cpu_started = time.perf_counter(), time.process_time()
        from ..metrics.fluency.perplexity import parse_style_lms

        opts = StatisticsOptions.given(options if options is not None else EVALUATE_STATISTICS, **statistics)
        choices = BatteryChoices(content_model=content_model, lm=lm,
                                 style_lms=parse_style_lms(dict(style_lms) if isinstance(style_lms, Mapping)
                                                           else style_lms),
                                 fluency=fluency, fluency_threshold=fluency_threshold, fast=fast,
                                 naturalness="unigram" if naturalness is True else (naturalness or None),
                                 seed=opts.seed)
        if fast and fluency_model is not None:
            raise InputError("fast mode leaves the fluency models out: drop fast or the fluency model")
        models = _Models(style_model, style_labels, style_threshold, fluency_model, acceptable_label)
        evaluation = _evaluate(list(records), models, choices, opts, progress, anchor)
        evaluation.timing = timing_facts(log, time.perf_counter() - started, time.process_time() - cpu_started)
    return evaluation


def timing_facts(log: Any, total: float, total_cpu: float) -> dict[str, Any]:
    """Where a run's time went, as the JSON keeps it: the whole run, each model's forward passes over the texts
    it had to read (its own time: a pass inside another is not counted twice), the loads of models and resources
    (the imports they trigger included; not counted in the passes), each metric's statistics (its passes and
    loads included, so metrics that share a pass show it once, in the first) and the intervals and tests; each in
    wall-clock and process CPU seconds."""
    return {"total_seconds": round(total, 3), "total_cpu_seconds": round(total_cpu, 3),
            "model_passes": {k: t.to_dict() for k, t in log.of_kind("model").items()},
            "loads": {k: t.to_dict() for k, t in log.of_kind("load").items()},
            "metrics": {k: t.to_dict() for k, t in log.of_kind("metric").items()},
            "statistics": {k: t.to_dict() for k, t in log.of_kind("statistics").items()}}


@dataclass(frozen=True)
class _Models:
    """The style and fluency models ``evaluate`` was given, with their classifier parameters."""

    style: str = "auto"
    style_labels: str | None = None
    style_threshold: float | None = None
    fluency: str | None = None
    acceptable_label: str | None = None


def _evaluate(records: list[Record], models: _Models, choices: BatteryChoices, opts: StatisticsOptions,
              progress: Progress | None, anchor: bool | None) -> Evaluation:
    from ..scoring import build_metrics, score_records

    corpus = CorpusFacts.of(records)  # the real systems: the anchor adds no input, style or reference
    systems = list(dict.fromkeys(r.system for r in records))
    anchor_facts: dict[str, Any] = {}
    if wants_anchor(records, anchor):
        anchored = anchor_records(records)
        anchor_facts = anchor_settings(anchored, auto=anchor is None)
        records = records + anchored
    texts = segment_texts(records)
    with reporting(progress):  # a model loaded while planning is reported too
        style = style_model_facts(models.style, corpus.styles, models.style_labels, models.style_threshold)
        fluency = (fluency_model_facts(models.fluency, models.acceptable_label)
                   if models.fluency is not None and not choices.fast else None)
        plan = plan_evaluation(corpus, choices, style, shipped_model_cards(), fluency)
        built = build_metrics(plan.specs, ("source", "references"), corpus.has_references)
    by_id = {m.metric_id: m for m in built}
    threshold = choices.threshold
    built += overall_metrics({role: by_id[mid] for role, mid in plan.roles.items()}, threshold)
    scored = score_records(records, built, options=opts, progress=progress)
    result, overall, overall_comparisons = split_overall(scored)
    j_segments = {system: {i: (float(v) if np.isfinite(v) else None)
                           for i, v in zip(scored.get("j", system).ids, scored.get("j", system).segment_scores)}
                  for system in scored.systems}

    roles = {role: mid.label for role, mid in plan.roles.items()}
    rationale = list(plan.rationale)
    rationale.append(f"overall: hm and gm of corpus style accuracy and {plan.content_note} (Lai et al. 2022); "
                     f"j = mean over segments of STA·SIM·FL (ParaDetox, Logacheva et al. 2022) with STA the "
                     f"classifier's 0/1 decision, SIM = {roles['similarity']}"
                     + (" ÷ 100" if choices.fast else " clipped to [0, 1]")
                     + (f", FL = 1[{choices.fluency} {'≥' if choices.fluency == 'acceptability' else '≤'} "
                        f"{threshold:g}]."
                        if "fluency" in roles
                        else ", no fluency factor (fast)."))
    if "fluency" in roles:
        rationale.extend(_fluency_warning(result, roles["fluency"], threshold, systems))
    if anchor_facts:
        rationale.append(anchor_line(anchor_facts))
    if opts.bootstrap > 0:
        rationale.append(f"intervals: {opts.confidence:.0%} bootstrap CIs ({opts.bootstrap} resamples, seed "
                         f"{opts.seed}); significance: {opts.significance}"
                         + (f" against baseline {opts.baseline!r}." if opts.baseline
                            else " between every pair of systems.")
                         + " For hm, gm and j the segments are resampled jointly: each resample recomputes the "
                           "style and content corpus scores and the J products of the same segments, then the "
                           "overall score.")
    return Evaluation(result=result, overall=overall, rationale=rationale,
                      aspects={aspect: [mid.label for mid in ids] for aspect, ids in plan.aspects.items()},
                      roles=roles, metric_specs=plan.specs,
                      settings={**plan.settings, **result.settings, **anchor_facts},
                      overall_comparisons=overall_comparisons, texts=texts,
                      overall_segments={"j": j_segments})
