"""The terminal table of ``styleval score``: metrics as rows, systems as columns, intervals and significance marks."""
from __future__ import annotations

from ..evaluation.summary import estimate, markers_legend, significance_mark, system_letters
from ..results import ScoreResult, unrated_note


def significance_marks(result: ScoreResult, alpha: float = 0.05) -> dict[tuple[str, str], str]:
    """The mark of each (metric, system) cell, as the evaluation report marks them. Against a baseline: ``▲`` when
    the system is significantly better than it (p < ``alpha``), ``▼`` when significantly worse, the direction taken
    from the metric (a lower PINC or perplexity is better). All pairs: ``^bc`` naming the systems (by their column
    letters) it is significantly better than."""
    letters = system_letters(result.systems)
    comparisons = [c.to_dict() for c in result.comparisons]
    baseline = result.settings.get("baseline")
    marks: dict[tuple[str, str], str] = {}
    for r in result.results:
        mark = significance_mark(comparisons, letters, r.metric, r.system, r.higher_is_better, baseline, alpha)
        if mark:
            marks[(r.metric, r.system)] = mark
    return marks


def format_table(result: ScoreResult) -> str:
    """Metrics as rows, systems as columns; each cell 'score ±CI half-width' in the one number format of every table
    (:func:`~styleval.evaluation.summary.estimate`) and its significance mark (see :func:`significance_marks`)."""
    marks = significance_marks(result)
    systems = result.systems
    letters = system_letters(systems)
    all_pairs = bool(result.comparisons) and not result.settings.get("baseline")
    header = ["metric"] + [f"{s} ({letters[s]})" if all_pairs else s for s in systems]
    rows = []
    for metric in result.metrics:
        first = result.get(metric, systems[0])
        row = [f"{metric} {'↑' if first.higher_is_better else '↓'}"]
        for system in systems:
            try:
                r = result.get(metric, system)
            except KeyError:
                row.append("-")
                continue
            text = estimate(r.corpus_score, r.ci)
            if r.ci is None and r.extra.get("ci_skipped"):
                text += f" [no CI: {r.extra['ci_skipped']}]"
            if unrated_note(r.extra):
                text += f" {unrated_note(r.extra)}"
            mark = marks.get((metric, system))
            row.append(f"{text} {mark}" if mark else text)
        rows.append(row)
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header] + rows)


def table_legend(result: ScoreResult) -> str:
    """The lines printed under the table, as under the evaluation's tables: what ± is and, when the cells can
    carry marks, what the marks mean (one legend for both kinds)."""
    settings = result.settings
    lines = []
    if settings.get("bootstrap"):
        lines.append(f"±: half-width of the {settings['confidence']:.0%} bootstrap CI ({settings['bootstrap']} "
                     f"resamples, seed {settings['seed']})")
    if result.comparisons:
        lines.append(markers_legend(settings["significance"], settings.get("baseline")))
    if any(unrated_note(r.extra) for r in result.results):
        lines.append("[N unrated, P%]: segments the judge gave no rating, left out of the score (unrated=skip)")
    return "\n".join(lines)


def requests_block(result: ScoreResult) -> str:
    """The lines printed under the legend for the metrics that asked a model server, one per (metric, system):
    requests, tokens and, with a price, the cost estimate (the run facts of ``llm_judge`` and ``logprop``; the JSON
    output has them under ``facts``); empty when no metric did."""
    lines = []
    for r in result.results:
        facts = r.extra
        if "requests_sent" not in facts:
            continue
        asked = int(facts["requests_sent"]) + int(facts["requests_cached"])
        line = (f"{r.metric} · {r.system}: {asked:,} requests ({int(facts['requests_sent']):,} sent, "
                f"{int(facts['requests_cached']):,} from the cache, {int(facts['retries']):,} retries); "
                f"{int(facts['prompt_tokens']):,} prompt + {int(facts['completion_tokens']):,} completion tokens "
                f"({int(facts['sent_prompt_tokens']):,} + {int(facts['sent_completion_tokens']):,} sent)")
        if "cost_estimate" in facts:
            line += (f"; cost estimate {_money(facts['cost_estimate'])} ({_money(facts['cost_sent'])} for what was "
                     "sent)")
        lines.append(f"  {line}")
    if not lines:
        return ""
    return "\n".join(["model server requests (costs in the currency of the price given):", *lines])


def _money(value: float) -> str:
    """A cost to six decimals without trailing zeros: 0.000032, 12.5, 0."""
    return f"{value:,.6f}".rstrip("0").rstrip(".")
