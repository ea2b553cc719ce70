"""The evaluation battery: style, content, fluency and overall scores chosen for a transfer direction.

``evaluate(records)`` picks the metrics, scores them in one call to the engine behind :func:`styleval.score` (so
corpus scores, intervals and paired tests are exactly those of ``styleval score`` with the same metric specs), adds
the overall scores with intervals and paired tests from a joint bootstrap over segments (:mod:`.overall`), and
records why each metric was chosen (``Evaluation.rationale``). Asked to, it adds Mir et al.'s adversarial
naturalness (the ``naturalness`` metric) to the fluency aspect.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..records import Record
from ..results import Comparison, ScoreResult
from .overall import overall_metrics, split_overall
from ..progress import Progress

FORMAT = "styleval-evaluation/1"
CONTENT_MODELS = ("bertscore", "sentence_cosine")
NATURALNESS_CLASSIFIERS = ("unigram", "embedding")  # those of styleval.naturalness
DEFAULT_LM = "smollm2-135m"
DEFAULT_FLUENCY_THRESHOLD = 200.0  # perplexity at or below which an output passes J's fluency test
#: The metric that gives J its fluency factor, and its default pass threshold (see ``evaluate(fluency=...)``).
FLUENCY_METRICS = {"acceptability": 0.5, "perplexity": DEFAULT_FLUENCY_THRESHOLD}
DEFAULT_FLUENCY = "acceptability"



@dataclass
class Evaluation:
    """Result of :func:`evaluate`.

    ``result``: the ScoreResult of every metric; ``aspects``: aspect -> metric names in display order;
    ``roles``: which metric plays style / content / similarity / fluency in the overall scores;
    ``overall``: rows ``system, score, value, ci_low, ci_high, ci_excluded_segments`` (``hm``, ``gm``, ``j``;
    intervals from the joint bootstrap over segments, NaN without one); ``overall_comparisons``: paired tests of
    the overall scores between the systems the metrics' tests compare; ``rationale``: one sentence per choice;
    ``metric_specs``: the specs given to :func:`styleval.score` (re-run them to reproduce every number).
    """

    result: ScoreResult
    overall: pd.DataFrame
    rationale: list[str]
    aspects: dict[str, list[str]]
    roles: dict[str, str]
    metric_specs: list[Any]  # spec strings and metric instances
    settings: dict[str, Any] = field(default_factory=dict)
    overall_comparisons: list[Comparison] = field(default_factory=list)

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
                "metric_specs": [s if isinstance(s, str) else repr(s) for s in self.metric_specs],
                "aspects": {k: list(v) for k, v in self.aspects.items()}, "roles": dict(self.roles),
                "overall": overall, "overall_comparisons": [c.to_dict() for c in self.overall_comparisons],
                "rationale": list(self.rationale), "score": self.result.to_dict()}

    def write_json(self, path: str | Path) -> None:
        """Everything as JSON (``styleval report`` reads it), written atomically."""
        from ..outputs import write_text

        write_text(path, json.dumps(self.to_dict(), indent=1, ensure_ascii=False))


def load_evaluation(path: str | Path) -> dict[str, Any]:
    """Read the JSON written by :meth:`Evaluation.write_json` (``styleval evaluate --json``)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", p) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a JSON file: {exc}", p) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
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


# ------------------------------------------------------------------------------------------ choices
def _styles(records: Sequence[Record]) -> tuple[list[str], set[str]]:
    directions, styles = [], set()
    for r in records:
        if r.direction is None:
            raise InputError(f"record {r.id!r} of system {r.system!r} has no transfer direction; evaluate chooses its "
                             "metrics by direction: give --direction SRC->TGT (e.g. informal->formal)")
        text = f"{r.direction.source_style}->{r.direction.target_style}"
        if text not in directions:
            directions.append(text)
        styles.update({r.direction.source_style, r.direction.target_style})
    return directions, styles


def _style_model(style_model: str, styles: set[str], rationale: list[str], fast: bool = False) -> str:
    from ..metrics.style._model import AUTO, choose_model
    from ..style.model import CLASSIFIER
    from ..style.pretrained import load_style_model

    if style_model != AUTO:
        model = load_style_model(style_model)
        rationale.append(f"style: classifier {style_model!r} as given (labels {', '.join(model.labels)})."
                         + _calibration_note(model))
        return style_model
    name = choose_model(CLASSIFIER, styles)
    model = load_style_model(name)
    blocks = ", ".join(str(getattr(b, "kind", None) or b.config().get("kind", type(b).__name__))
                       for b in getattr(model, "blocks", ())) or "see the model card"
    rationale.append(f"style: shipped classifier {name!r} is the one covering the styles {', '.join(sorted(styles))} "
                     f"(features: {blocks}); style accuracy is the share of outputs it labels as the target style, "
                     "and the direction-corrected EMD (Mir et al. 2019) credits moving the style distribution from "
                     "the source towards the target."
                     + (" In fast mode it is kept because no TF-IDF-only classifier covers these styles; its "
                        "embedding block loads a small sentence encoder." if fast and "embedding" in blocks else "")
                     + _calibration_note(model))
    return name


def _calibration_note(model: Any) -> str:
    """Which calibration decides style accuracy (see docs/calibration.md)."""
    cal = getattr(model, "calibration", None)
    if cal is None:
        return " The model has no calibration: each output gets the label of highest probability."
    data = cal.data
    return (f" It decides with its {cal.method} calibration (an output is {cal.positive!r} when its calibrated "
            f"P({cal.positive}) >= {cal.probability_threshold:.2f}), fitted on {data.get('n')} labelled texts "
            f"({data.get('data')}).")


#: Why each fluency metric may give J its fluency factor (figures: docs/results.md, "Fluency that follows human
#: judgments").
FLUENCY_WHY = {
    "acceptability": "fluency in j: acceptability (P(acceptable English) from the shipped classifier on SmolLM2 "
                     "token statistics, detokenized and true-cased when the release lower-cased or tokenized the "
                     "text), because a perplexity threshold fails on released TST outputs: on yelp-dualrl 92-98 % "
                     "of the human references pass acceptability but only a few percent of outputs pass "
                     "perplexity ≤ 200, and acceptability passes fewer outputs of the systems with broken grammar "
                     "(72-82 %); it also follows human fluency at system level on Lai et al. 2022 (Pearson .944 vs "
                     ".611 for corpus perplexity; per input perplexity is better, Kendall .492 vs .374), "
                     "docs/results.md. Perplexity is still reported.",
    "perplexity": "fluency in j: perplexity threshold, as asked (fluency='perplexity'); on lower-cased tokenized "
                  "text it rejects most human-written sentences too.",
}

#: Below this share of outputs passing J's fluency test in every system, the rationale warns that J mostly
#: measures the threshold.
FLUENCY_PASS_WARNING = 0.2


def _fluency_warning(result: Any, metric: str, threshold: float) -> list[str]:
    """A rationale line when J's fluency factor rejects most outputs of every system (J then says little)."""
    shares = {}
    for system in result.systems:
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


def evaluate(records: Sequence[Record], *, style_model: str = "auto", content_model: str = "bertscore",
             lm: str = DEFAULT_LM, style_lms: "str | Mapping[str, str] | None" = None,
             fluency: str = DEFAULT_FLUENCY, fluency_threshold: float | None = None, fast: bool = False,
             bootstrap: int = 1000,
             confidence: float = 0.95, significance: str = "paired-bootstrap", baseline: str | None = None,
             seed: int = 12345, naturalness: "str | bool | None" = None,
             progress: Progress | None = None) -> Evaluation:
    """Score ``records`` with the battery recommended for their transfer direction(s).

    * style: ``style_accuracy`` and ``style_emd`` with the best style classifier for the direction
      (``style_model="auto"``: the shipped classifier whose labels cover the direction's styles);
    * content: ``content_model`` (``bertscore`` or ``sentence_cosine``) against the source, and ``bleu``,
      ``chrf``, ``meteor`` against the source and, when records have references, against all references;
    * fluency: ``acceptability`` (the shipped classifier's P(acceptable English)) and ``perplexity`` under
      ``lm``, or under a target-style LM per style in ``style_lms``;
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
    """
    from ..scoring import ResamplingOptions, build_metrics, score_records

    records = list(records)
    if not records:
        raise InputError("no records to evaluate")
    if content_model not in CONTENT_MODELS:
        raise InputError(f"content_model must be one of {', '.join(CONTENT_MODELS)}, got {content_model!r}")
    if fluency not in FLUENCY_METRICS:
        raise InputError(f"fluency must be one of {', '.join(FLUENCY_METRICS)}, got {fluency!r}")
    if fluency_threshold is None:
        fluency_threshold = FLUENCY_METRICS[fluency]
    if not fluency_threshold > 0:
        raise InputError(f"fluency_threshold must be positive, got {fluency_threshold!r}")
    natural = "unigram" if naturalness is True else (naturalness or None)
    if natural is not None and natural not in NATURALNESS_CLASSIFIERS:
        raise InputError(f"naturalness must be one of {', '.join(NATURALNESS_CLASSIFIERS)}, got {naturalness!r}")
    directions, styles = _styles(records)
    has_refs = any(r.references for r in records)
    n_refs = max((len(r.references) for r in records), default=0)
    rationale = [f"direction{'s' if len(directions) > 1 else ''}: {', '.join(directions)}; "
                 f"{len(set(r.system for r in records))} system(s), {len(records)} records"
                 + (f", up to {n_refs} reference(s) per segment." if has_refs else ", no references.")]

    model = _style_model(style_model, styles, rationale, fast)
    specs: list[Any] = [f"style_accuracy:model={model}", f"style_emd:model={model}"]
    aspects: dict[str, list[str]] = {"style": ["style_accuracy", "style_emd"], "content": [], "fluency": []}
    roles = {"style": "style_accuracy"}

    if fast:
        rationale.append("fast: neural content and fluency models left out (no BERTScore/embeddings, no perplexity); "
                         "content is lexical only.")
    else:
        specs.append(f"{content_model}:against=source")
        aspects["content"].append(f"{content_model}/src")
        what = "BERTScore F1 (contextual token embeddings)" if content_model == "bertscore" else \
            "cosine of sentence embeddings"
        rationale.append(f"content: {what} against the source measures meaning preservation without rewarding the "
                         "source's style words as lexical overlap does.")
    lexical = ["bleu", "chrf", "meteor"]
    for name in lexical:
        specs.append(f"{name}:against=source")
        aspects["content"].append(f"{name}/src")
    if has_refs:
        for name in lexical:
            specs.append(f"{name}:against=references")
            aspects["content"].append(f"{name}/ref")
        rationale.append(f"content: BLEU, chrF and METEOR against the source and against all {n_refs} references "
                         "(multi-reference), since copying the input scores high against the source only.")
    else:
        rationale.append("content: BLEU, chrF and METEOR against the source only (no references given); high values "
                         "can mean the system copied its input, read them with style accuracy.")

    lm_map: dict[str, str] = {}
    if not fast:
        from ..metrics.fluency.perplexity import parse_style_lms

        lm_map = parse_style_lms(dict(style_lms) if isinstance(style_lms, Mapping) else style_lms)
        from ..metrics import registry

        # an instance, not a spec string: several style LMs need ';' inside one parameter value
        spec = registry.create("perplexity", model=lm, style_lms=lm_map or None)
        if lm_map:
            targets = sorted({d.split("->")[1].lower() for d in directions})
            missing = [t for t in targets if t not in lm_map]
            rationale.append(f"fluency: perplexity under the target-style LM(s) given ({', '.join(sorted(lm_map))})"
                             + (f"; segments with target {', '.join(missing)} fall back to {lm!r}" if missing else "")
                             + " (Lai et al. 2022).")
        else:
            rationale.append(f"fluency: perplexity under the generic LM {lm!r}: no target-style LM was given "
                             "(pass style_lms / --style-lm STYLE=DIR for one, which measures fluency in the target "
                             "style); lower is better.")
        specs.append(spec)
        aspects["fluency"].append("perplexity")
        specs.append("acceptability")
        aspects["fluency"].insert(0, "acceptability")
        roles["fluency"] = fluency
        rationale.append(FLUENCY_WHY[fluency])
    if natural is not None:
        specs.append(f"naturalness:classifier={natural},seed={seed}")
        aspects["fluency"].append("naturalness")
        rationale.append(f"naturalness: share of outputs that a {natural} classifier, trained per system to tell "
                         "the inputs from that system's outputs (5-fold cross-fitting), finds more human-like than "
                         "their input (Mir et al. 2019); near 0.5 the classifier cannot tell the outputs from human "
                         "text, and an output identical to its input never counts as more natural.")

    if has_refs:
        roles["content"] = "bleu/ref"
        content_note = "BLEU/ref ÷ 100"
    elif fast:
        roles["content"] = "chrf/src"
        content_note = "chrF/src ÷ 100"
    else:
        roles["content"] = f"{content_model}/src"
        content_note = f"{content_model}/src clipped to [0, 1]"
    roles["similarity"] = "chrf/src" if fast else f"{content_model}/src"

    built = build_metrics(specs, ("source", "references"), has_refs)
    built += overall_metrics(built, roles, fluency_threshold)
    options = ResamplingOptions(bootstrap=bootstrap, confidence=confidence, significance=significance,
                                baseline=baseline, seed=seed)
    scored = score_records(records, built, options=options, progress=progress)
    result, overall, overall_comparisons = split_overall(scored)
    rationale.append(f"overall: hm and gm of corpus style accuracy and {content_note} (Lai et al. 2022); "
                     f"j = mean over segments of STA·SIM·FL (ParaDetox, Logacheva et al. 2022) with STA the "
                     f"classifier's 0/1 decision, SIM = {roles['similarity']}"
                     + (" ÷ 100" if fast else " clipped to [0, 1]")
                     + (f", FL = 1[{fluency} {'≥' if fluency == 'acceptability' else '≤'} {fluency_threshold:g}]."
                        if "fluency" in roles
                        else ", no fluency factor (fast)."))
    if "fluency" in roles:
        rationale.extend(_fluency_warning(result, roles["fluency"], fluency_threshold))
    if bootstrap > 0:
        rationale.append(f"intervals: {confidence:.0%} bootstrap CIs ({bootstrap} resamples, seed {seed}); "
                         f"significance: {significance}"
                         + (f" against baseline {baseline!r}." if baseline else " between every pair of systems.")
                         + " For hm, gm and j the segments are resampled jointly: each resample recomputes the "
                           "style and content corpus scores and the J products of the same segments, then the "
                           "overall score.")
    settings = {"fast": fast, "style_model": model, "content_model": None if fast else content_model,
                "lm": None if fast else lm, "style_lms": lm_map or None, "fluency": None if fast else fluency,
                "fluency_threshold": fluency_threshold,
                "directions": directions, "has_references": has_refs, "naturalness": natural, **result.settings}
    return Evaluation(result=result, overall=overall, rationale=rationale, aspects=aspects, roles=roles,
                      metric_specs=specs, settings=settings, overall_comparisons=overall_comparisons)
