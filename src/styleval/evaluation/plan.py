"""The evaluation plan: which metrics ``evaluate`` runs for a corpus, which role each plays, and why.

Planning is pure. :func:`plan_evaluation` takes facts about the corpus (:class:`CorpusFacts`: directions, styles,
references), the user's choices (:class:`BatteryChoices`) and a description of the chosen style classifier
(:class:`StyleModelFacts`, read from its card beforehand) and returns an :class:`EvaluationPlan`: metric instances,
the aspect each belongs to, the metric that plays each overall role (by :class:`MetricId`, never by a label string)
and one rationale sentence per choice. Nothing here reads files, loads a model or scores; ``battery.evaluate``
gathers the facts, plans, scores and summarises.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..models.catalog import DEFAULT_CAUSAL_LM
from ..metrics.base import Metric
from ..metrics.identity import MetricId
from ..records import Record
from ..textnorm.casing import BLIND, CaseEvidence, case_evidence, release_case

#: The content models ``evaluate`` may use for the similarity role (J's SIM, the content-vs-source headline): name ->
#: metric spec (against the source is added). The default is the one the rule of
#: ``studies/similarity_default/README.md`` picks, with its outside gate (figures: docs/results.md, "Which similarity
#: `evaluate` uses").
CONTENT_MODELS: dict[str, str] = {
    "sentence_cosine": "sentence_cosine",
    "bertscore": "bertscore",
    "bertscore-recall": "bertscore:component=recall",
    "preservation": "preservation",
    "preservation-fast": "preservation:model=preservation-minilm-fast",
}
DEFAULT_CONTENT_MODEL = "sentence_cosine"
#: What each content model measures, as the rationale says it.
CONTENT_WHAT = {
    "sentence_cosine": "cosine of MiniLM sentence embeddings",
    "bertscore": "BERTScore F1 (MiniLM token embeddings)",
    "bertscore-recall": "BERTScore recall (MiniLM token embeddings)",
    "preservation": "the learned `preservation` metric with its default model, the shipped preservation-minilm",
    "preservation-fast": "the learned `preservation` metric with the shipped preservation-minilm-fast (the default "
                         "model's feature head alone)",
}
#: A content model reported next to the default as a second view (no role), or None; and why.
SECOND_VIEW: str | None = "bertscore"
SECOND_VIEW_WHY = ("content: BERTScore F1 (MiniLM) against the source is kept as a second view with no role: "
                   "the similarity rule's figures show it highest on Mir 2019 (Pearson .534 against .519 for the "
                   "default), docs/results.md.")
#: Why the default is the default: the rule, its outside gate and its figures (docs/results.md).
SIMILARITY_RULE = ('the similarity rule (studies/similarity_default/README.md) admits only candidates that outside '
                   'human content sets show at least as good as plain cosine (style-shift agreement .550, '
                   'detoxification Spearman .354; the learned preservation model reached .534 / .352), then takes '
                   'the mean of four in-repository human content figures against the source (Lai 2022 per-input '
                   'Kendall / per-system Pearson on held-out inputs, Mir 2019 Pearson, SGDD-TST Spearman): sentence '
                   'cosine .442 / .969 / .519 / .418, mean .587; in the repository preservation is higher, .629 '
                   '(SGDD-TST .552), but two of those sets were not blind for it; docs/results.md. '
                   '`--content-model preservation` uses it.')
NATURALNESS_CLASSIFIERS = ("unigram", "embedding")  # those of styleval.naturalness
DEFAULT_LM = DEFAULT_CAUSAL_LM
DEFAULT_FLUENCY_THRESHOLD = 200.0  # perplexity at or below which an output passes J's fluency test
#: The metric that gives J its fluency factor, and its default pass threshold (see ``evaluate(fluency=...)``).
FLUENCY_METRICS = {"acceptability": 0.5, "perplexity": DEFAULT_FLUENCY_THRESHOLD}
DEFAULT_FLUENCY = "acceptability"
LEXICAL_CONTENT = ("bleu", "chrf", "meteor")
#: The metric ``evaluate`` relies on for each aspect, which ``styleval metrics`` marks as the recommended default
#: and the README's "Which metric?" recommends, with what it does in ``evaluate``.
RECOMMENDED: dict[str, tuple[str, str]] = {
    "style": ("style_accuracy", "evaluate's style score (hm, gm and J's STA), with the shipped classifier covering "
                                "the direction"),
    "content": (CONTENT_MODELS[DEFAULT_CONTENT_MODEL].partition(":")[0],
                "evaluate's content score against the source (J's SIM; hm and gm without references), the "
                "similarity rule's choice; on its human content sets (docs/results.md): Lai 2022 per-input "
                "Kendall .442, system Pearson .969, Mir 2019 Pearson .519, SGDD-TST Spearman .418"),
    "fluency": (DEFAULT_FLUENCY, "evaluate's fluency score (J's FL: acceptable when >= 0.5)"),
    "overall": ("j", "evaluate's joint score: mean over segments of STA x SIM x FL, with STA style_accuracy, SIM "
                     "sentence cosine against the source and FL acceptability >= 0.5 (hm and gm are also reported)"),
}

#: Why each fluency metric may give J its fluency factor (figures: docs/results.md, "Fluency that follows human
#: judgments").
FLUENCY_WHY = {
    "acceptability": "fluency in j: acceptability (P(acceptable English) from the shipped classifier on SmolLM2 token "
                     "statistics, each output detokenized when tokenized and true-cased when it has no capital "
                     "letter), because a perplexity threshold fails on released TST outputs: on yelp-dualrl 92-98 % of"
                     " the human references pass acceptability but only a few percent of outputs pass perplexity ≤ 200"
                     " (on the text as released), and acceptability passes fewer outputs of the systems with broken "
                     "grammar (72-82 %); it also follows human fluency at system level on Lai et al. 2022 (Pearson "
                     ".944 vs .611 for corpus perplexity; per input perplexity is better, Kendall .492 vs .355), "
                     "docs/results.md. Perplexity is still reported.",
    "perplexity": "fluency in j: perplexity threshold, as asked (fluency='perplexity'); on lower-cased tokenized "
                  "text it rejects most human-written sentences too.",
}

#: Why evaluate's perplexity reads the outputs normalised (issue #46).
PERPLEXITY_NORMALIZE_WHY = (
    "fluency: perplexity reads each system's outputs normalised as acceptability reads them (normalize=auto: "
    "each output detokenized when it shows tokenization spaces and true-cased when it has no capital letter, "
    "decided per text; the signature says normalized: per text), so that the LM runs once per distinct output "
    "for both metrics instead of twice, and so that perplexity measures the system rather than the release's "
    "tokenization; `styleval score -m perplexity` keeps its default, normalize=none.")


#: Why a lower-cased output counts against formality in a cased release (docs/results.md, Lai et al. 2022).
LOWERCASE_WHY = ("humans rate lower-cased formal text as less formal: Lai et al. 2022's judges gave the three systems "
                 "whose informal→formal outputs are lower-cased a mean style of 28-31 against 69-84 for the cased "
                 "systems")


@dataclass(frozen=True)
class CorpusFacts:
    """What planning needs to know about the records: directions in order of appearance, styles, sizes; how the
    release treated case (``case``: the detector's evidence on the sources and references of each segment, which
    decides the style metrics' ``case=auto``) and the systems whose outputs are lower-cased although the release and
    their sources are cased."""

    directions: tuple[str, ...]
    styles: frozenset[str]
    n_systems: int
    n_records: int
    n_references: int  # the most references any segment has
    case: CaseEvidence = CaseEvidence(0, 0.0, 0.0)
    lowercased_systems: tuple[str, ...] = ()
    segments_per_system: tuple[int, ...] = ()  # in system order

    @property
    def has_references(self) -> bool:
        return self.n_references > 0

    @property
    def size(self) -> str:
        """The corpus as a reader counts it: ``3 systems × 500 segments`` (each system is scored on its own
        segments), or each system's count when they differ."""
        sizes = self.segments_per_system or (self.n_records,)
        systems = f"{self.n_systems} system{'s' if self.n_systems != 1 else ''}"
        if len(set(sizes)) == 1:
            return f"{systems} × {sizes[0]:,} segments"
        return f"{systems} ({', '.join(f'{n:,}' for n in sizes)} segments)"

    @classmethod
    def of(cls, records: Sequence[Record]) -> "CorpusFacts":
        if not records:
            raise InputError("no records to evaluate")
        directions: list[str] = []
        styles: set[str] = set()
        texts: dict[str, tuple[list[str], list[str]]] = {}  # system -> (sources, outputs)
        inputs: dict[str, Record] = {}  # one record per segment id: the inputs all systems share
        for r in records:
            mine = texts.setdefault(r.system, ([], []))
            mine[0].append(r.source)
            mine[1].append(r.output)
            inputs.setdefault(r.id, r)
            if r.direction is None:
                raise InputError(f"record {r.id!r} of system {r.system!r} has no transfer direction; evaluate "
                                 "chooses its metrics by direction: give --direction SRC:TGT (e.g. informal:formal)")
            text = f"{r.direction.source_style}->{r.direction.target_style}"
            if text not in directions:
                directions.append(text)
            styles.update({r.direction.source_style, r.direction.target_style})
        case = release_case([r.source for r in inputs.values()], [r.references for r in inputs.values()])
        lowered = () if case.decision == BLIND else tuple(
            s for s, (src, out) in texts.items() if case_evidence(out).lowercased and not case_evidence(src).lowercased)
        return cls(directions=tuple(directions), styles=frozenset(styles), n_systems=len(texts),
                   n_records=len(records), n_references=max((len(r.references) for r in records), default=0),
                   case=case, lowercased_systems=lowered,
                   segments_per_system=tuple(len(src) for src, _ in texts.values()))


@dataclass(frozen=True)
class ModelCardFacts:
    """What the rationale quotes from a shipped model's card: its version and its figures on human judgments (one
    line per data set, ``styleval.models.cards.human_figure_lines``)."""

    version: str
    figures: tuple[str, ...]


#: What the rationale says of a model the user gave that has no styleval model card.
NO_FIGURES = "no human figures known for this model"


@dataclass(frozen=True)
class StyleModelFacts:
    """The style classifier the battery uses, as its card describes it (``params``: the transformers classifier
    parameters, ``labels``/``threshold``, its style metrics are built with, as spec text; ``what``: what kind of
    model it is, for the rationale)."""

    name: str
    chosen: bool  # True when picked automatically for the corpus's styles, False when the user named it
    labels: tuple[str, ...]
    feature_blocks: str  # e.g. "tfidf, embedding"
    calibration_note: str  # one sentence on how it decides (see docs/calibration.md)
    card: ModelCardFacts | None = None  # read from its card (None: not read)
    cased: bool = False  # whether the model itself reads case
    cased_slot: str | None = None  # the cased model shipped under its name (a pair), used when case counts
    params: str = ""  # e.g. ';labels="LABEL_0=informal,LABEL_1=formal"' for a transformers classifier
    what: str = ""  # e.g. "a transformers sequence classifier"


@dataclass(frozen=True)
class FluencyModelFacts:
    """The acceptability classifier the user gave for J's fluency factor (None in the plan: the shipped one)."""

    name: str
    params: str = ""  # e.g. ";acceptable_label=LABEL_1"
    what: str = "a transformers sequence classifier"
    card: ModelCardFacts | None = None


@dataclass(frozen=True)
class BatteryChoices:
    """The user's choices for ``evaluate`` (defaults are the recommended battery)."""

    content_model: str = DEFAULT_CONTENT_MODEL
    lm: str = DEFAULT_LM
    style_lms: Mapping[str, str] = field(default_factory=dict)
    fluency: str = DEFAULT_FLUENCY
    fluency_threshold: float | None = None  # None: FLUENCY_METRICS[fluency]
    fast: bool = False
    naturalness: str | None = None  # None, or one of NATURALNESS_CLASSIFIERS
    seed: int = 12345

    def __post_init__(self) -> None:
        if self.content_model not in CONTENT_MODELS:
            raise InputError(f"content_model must be one of {', '.join(CONTENT_MODELS)}, got {self.content_model!r}")
        if self.fluency not in FLUENCY_METRICS:
            raise InputError(f"fluency must be one of {', '.join(FLUENCY_METRICS)}, got {self.fluency!r}")
        if self.fluency_threshold is not None and not self.fluency_threshold > 0:
            raise InputError(f"fluency_threshold must be positive, got {self.fluency_threshold!r}")
        if self.naturalness is not None and self.naturalness not in NATURALNESS_CLASSIFIERS:
            raise InputError(f"naturalness must be one of {', '.join(NATURALNESS_CLASSIFIERS)}, "
                             f"got {self.naturalness!r}")

    @property
    def threshold(self) -> float:
        """J's fluency pass threshold: the one given, else the fluency metric's default."""
        return self.fluency_threshold if self.fluency_threshold is not None else FLUENCY_METRICS[self.fluency]


@dataclass
class EvaluationPlan:
    """Metrics to score, in order, with the aspect of each, the overall roles and the reasons.

    ``metrics``: instances (content metrics with their side fixed); ``aspects``: aspect -> metrics in display order;
    ``roles``: role (style, content, similarity, fluency) -> the metric playing it; ``content_note``: how the
    content role enters hm/gm; ``rationale``: one sentence per choice made before scoring.
    """

    metrics: list[Metric]
    specs: list[str | Metric]  # what each metric was built from: spec strings, or instances where a value holds ';'
    aspects: dict[str, list[MetricId]]
    roles: dict[str, MetricId]
    content_note: str
    rationale: list[str]
    settings: dict[str, Any]


def _against_source(spec: str) -> str:
    """``spec`` (``name`` or ``name:k=v;...``) scored against the source."""
    name, _, params = spec.partition(":")
    return f"{name}:against=source" + (f";{params}" if params else "")


class _Built:
    """Metric instances built from spec strings, remembering each one's spec (the plan's reproducible form)."""

    def __init__(self) -> None:
        self.specs: dict[MetricId, str | Metric] = {}

    def __call__(self, spec: str) -> Metric:
        from ..metrics import registry

        name, params = registry.parse_spec(spec)
        return self.keep(registry.create(name, **params), spec)

    def keep(self, metric: Metric, spec: "str | Metric | None" = None) -> Metric:
        self.specs[metric.metric_id] = metric if spec is None else spec
        return metric


def _style_reason(style: StyleModelFacts, styles: frozenset[str], fast: bool) -> str:
    if not style.chosen:
        return (f"style: classifier {style.name!r} as given{f', {style.what}' if style.what else ''} (labels "
                f"{', '.join(style.labels)})." + style.calibration_note)
    return (f"style: shipped classifier {style.name!r} is the one covering the styles {', '.join(sorted(styles))} "
            f"(features: {style.feature_blocks}); style accuracy is the share of outputs it labels as the target "
            "style, and the direction-corrected EMD (Mir et al. 2019) credits moving the style distribution from "
            "the source towards the target."
            + (" In fast mode it is kept because no TF-IDF-only classifier covers these styles; its "
               "embedding block loads a small sentence encoder." if fast and "embedding" in style.feature_blocks
               else "")
            + style.calibration_note)


def model_of(spec: str) -> str | None:
    """The model a metric spec uses: its ``model=`` parameter, else the class's default (None: no model)."""
    from ..metrics import registry
    from ..metrics.guide import model_parameter_default

    name, params = registry.parse_spec(spec)
    model = params.get("model")
    return str(model) if model else model_parameter_default(registry.metric_class(name))


def figures_reason(aspect: str, model: str | None, card: ModelCardFacts | None, given: bool = False) -> list[str]:
    """A rationale sentence quoting ``model``'s figures on human judgments from its card, good or bad; when the
    model has no card (``card`` None), :data:`NO_FIGURES` for a model the user gave (``given``), else nothing."""
    if model is not None and card is None and given:
        return [f"{aspect}: {model!r} has no styleval model card: {NO_FIGURES}."]
    if model is None or card is None:
        return []
    name = f"{model!r} (model version {card.version})"
    if not card.figures:
        return [f"{aspect}: {name} has no figures on human judgments in its model card (no public judgments of its "
                "kind in the repository's data); its held-out figures are in the card."]
    return [f"{aspect}: {name} against human judgments, from its model card (docs/results.md): "
            + "; ".join(card.figures) + "."]


def _case_reason(style: StyleModelFacts, case: CaseEvidence) -> str:
    """Which style model reads the outputs, and whether it sees case (the style metrics' ``case=auto``)."""
    text = f"style, case=auto: {case.reason()}"
    if case.decision == BLIND:
        return text + f"; {style.name!r} reads the outputs lower-cased and tokenized."
    if style.cased_slot:
        return text + f"; the cased model of the pair, {style.cased_slot!r}, reads the outputs as written."
    if style.cased:
        return text + f"; {style.name!r} reads the outputs as written."
    return (text + f"; but {style.name!r} is case-blind and no cased model is shipped under its name, so it reads "
            "them lower-cased and tokenized.")


def plan_evaluation(corpus: CorpusFacts, choices: BatteryChoices, style: StyleModelFacts,
                    model_cards: Mapping[str, ModelCardFacts] | None = None,
                    fluency_model: FluencyModelFacts | None = None) -> EvaluationPlan:
    """The battery for ``corpus``: style, content, fluency and (optionally) naturalness metrics, their roles in the
    overall scores and a rationale sentence for each choice. ``model_cards``: shipped model name -> its card's
    version and figures on human judgments, quoted in the rationale of the metric that uses the model;
    ``fluency_model``: the acceptability classifier the user gave (None: the shipped one)."""
    from ..metrics.spec import render_token

    from ..metrics import registry
    from ..metrics.fluency.perplexity import parse_style_lms

    cards = dict(model_cards or {})

    n_refs, fast = corpus.n_references, choices.fast
    _create = _Built()
    rationale = [f"direction{'s' if len(corpus.directions) > 1 else ''}: {', '.join(corpus.directions)}; "
                 f"{corpus.size}"
                 + (f", up to {n_refs} reference(s) per segment." if n_refs else ", no references.")]
    rationale.append(_style_reason(style, corpus.styles, fast))
    rationale.append(_case_reason(style, corpus.case))
    used = style.cased_slot if style.cased_slot and corpus.case.decision != BLIND else style.name
    card = style.card if used == style.name else (model_cards or {}).get(used)
    rationale += figures_reason("style", used, card, given=not style.chosen)
    if corpus.lowercased_systems:
        sees = style.cased or bool(style.cased_slot)
        rationale.append(f"warning: the outputs of {', '.join(corpus.lowercased_systems)} are lower-cased while their "
                         f"sources are cased, and {LOWERCASE_WHY}"
                         + ("; the cased style model counts it against them." if sees
                            else "; the case-blind style model cannot see it."))
    style_model = f"model={render_token(style.name)}{style.params}"
    style_metrics = [_create(f"style_accuracy:{style_model}"), _create(f"style_emd:{style_model}")]
    metrics: list[Metric] = list(style_metrics)
    aspects: dict[str, list[Metric]] = {"style": list(style_metrics), "content": [], "fluency": []}
    roles: dict[str, Metric] = {"style": style_metrics[0]}

    similarity: Metric | None = None
    if fast:
        rationale.append("fast: neural content and fluency models left out (no BERTScore/embeddings, no perplexity); "
                         "content is lexical only.")
    else:
        similarity = _create(_against_source(CONTENT_MODELS[choices.content_model]))
        metrics.append(similarity)
        aspects["content"].append(similarity)
        what = CONTENT_WHAT[choices.content_model]
        if choices.content_model == DEFAULT_CONTENT_MODEL:
            rationale.append(f"content: {what} against the source is J's SIM and, without references, the content "
                             f"score: {SIMILARITY_RULE}")
        else:
            rationale.append(f"content: {what} against the source is J's SIM and, without references, the content "
                             f"score, as asked (content_model={choices.content_model!r}; the default, "
                             f"{DEFAULT_CONTENT_MODEL!r}, is the similarity rule's choice, docs/results.md).")
        content_model = model_of(CONTENT_MODELS[choices.content_model])
        rationale += figures_reason("content", content_model, cards.get(content_model or ""))
        if SECOND_VIEW and SECOND_VIEW != choices.content_model:
            second = _create(_against_source(CONTENT_MODELS[SECOND_VIEW]))
            metrics.append(second)
            aspects["content"].append(second)
            rationale.append(SECOND_VIEW_WHY)
    lexical_src = {name: _create(f"{name}:against=source") for name in LEXICAL_CONTENT}
    metrics += lexical_src.values()
    aspects["content"] += lexical_src.values()
    lexical_ref: dict[str, Metric] = {}
    if corpus.has_references:
        lexical_ref = {name: _create(f"{name}:against=references") for name in LEXICAL_CONTENT}
        metrics += lexical_ref.values()
        aspects["content"] += lexical_ref.values()
        rationale.append(f"content: BLEU, chrF and METEOR against the source and against all {n_refs} references "
                         "(multi-reference), since copying the input scores high against the source only.")
    else:
        rationale.append("content: BLEU, chrF and METEOR against the source only (no references given); high values "
                         "can mean the system copied its input, read them with style accuracy.")

    lm_map: dict[str, str] = {}
    if not fast:
        lm_map = parse_style_lms(dict(choices.style_lms) or None)
        # an instance, not a spec string: several style LMs need ';' inside one parameter value
        # normalize=auto: the texts acceptability reads, so that with one LM the two share one pass per text
        perplexity = _create.keep(registry.create("perplexity", model=choices.lm, style_lms=lm_map or None,
                                                  normalize="auto"))
        if lm_map:
            targets = sorted({d.split("->")[1].lower() for d in corpus.directions})
            missing = [t for t in targets if t not in lm_map]
            rationale.append(f"fluency: perplexity under the target-style LM(s) given ({', '.join(sorted(lm_map))})"
                             + (f"; segments with target {', '.join(missing)} fall back to {choices.lm!r}"
                                if missing else "")
                             + " (Lai et al. 2022).")
        else:
            rationale.append(f"fluency: perplexity under the generic LM {choices.lm!r}: no target-style LM was given "
                             "(pass style_lms / --style-lm STYLE=DIR for one, which measures fluency in the target "
                             "style); lower is better.")
        rationale.append(PERPLEXITY_NORMALIZE_WHY)
        if fluency_model is None:
            acceptability = _create("acceptability")
        else:
            acceptability = _create(f"acceptability:model={render_token(fluency_model.name)}{fluency_model.params}")
        metrics += [perplexity, acceptability]
        aspects["fluency"] += [acceptability, perplexity]
        roles["fluency"] = acceptability if choices.fluency == "acceptability" else perplexity
        if fluency_model is None or choices.fluency != "acceptability":
            rationale.append(FLUENCY_WHY[choices.fluency])
        if fluency_model is None:
            shipped_fluency = model_of("acceptability")
            rationale += figures_reason("fluency", shipped_fluency, cards.get(shipped_fluency or ""))
        else:
            rationale.append(f"fluency{' in j' if choices.fluency == 'acceptability' else ''}: acceptability from "
                             f"the classifier {fluency_model.name!r} as given, {fluency_model.what} (P(acceptable) "
                             "of each output; acceptable when at or above the threshold).")
            rationale += figures_reason("fluency", fluency_model.name, fluency_model.card, given=True)
    if choices.naturalness is not None:
        naturalness = _create(f"naturalness:classifier={choices.naturalness},seed={choices.seed}")
        metrics.append(naturalness)
        aspects["fluency"].append(naturalness)
        rationale.append(f"naturalness: share of outputs that a {choices.naturalness} classifier, trained per system "
                         "to tell the inputs from that system's outputs (5-fold cross-fitting), finds more human-like "
                         "than their input (Mir et al. 2019); near 0.5 the classifier cannot tell the outputs from "
                         "human text, and an output identical to its input never counts as more natural.")

    if corpus.has_references:
        roles["content"], content_note = lexical_ref["bleu"], "BLEU/ref ÷ 100"
    elif similarity is None:
        roles["content"], content_note = lexical_src["chrf"], "chrF/src ÷ 100"
    else:
        roles["content"], content_note = similarity, f"{similarity.metric_id.label} clipped to [0, 1]"
    roles["similarity"] = similarity if similarity is not None else lexical_src["chrf"]

    settings = {"fast": fast, "style_model": style.name,
                **({"fluency_model": fluency_model.name} if fluency_model is not None and not fast else {}),
                "content_model": None if fast else choices.content_model,
                "lm": None if fast else choices.lm, "style_lms": lm_map or None,
                "fluency": None if fast else choices.fluency, "fluency_threshold": choices.threshold,
                "directions": list(corpus.directions), "has_references": corpus.has_references,
                "naturalness": choices.naturalness, "size": corpus.size}
    return EvaluationPlan(metrics=metrics, specs=[_create.specs[m.metric_id] for m in metrics],
                          aspects={k: [m.metric_id for m in v] for k, v in aspects.items()},
                          roles={k: m.metric_id for k, m in roles.items()}, content_note=content_note,
                          rationale=rationale, settings=settings)
