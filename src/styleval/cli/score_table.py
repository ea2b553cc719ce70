"""The terminal table of ``styleval score``: metrics as rows, systems as columns, intervals and significance marks."""
from __future__ import annotations

import math

from ..results import ScoreResult


def significance_marks(result: ScoreResult, alpha: float = 0.05) -> dict[tuple[str, str], str]:
    """The mark of each (metric, system) cell. Against a baseline: ``*`` when the system differs from it with
    p < ``alpha``. All pairs: `` ^bc`` naming the systems (by their column letters) it is significantly better
    than, the direction taken from the metric (a lower perplexity is better), as the evaluation report marks them."""
    from ..evaluation.summary import beaten_letters, system_letters

    marks: dict[tuple[str, str], str] = {}
    if result.settings.get("baseline"):
        for c in result.comparisons:
            if c.p_value < alpha:
                marks[(c.metric, c.system)] = "*"
        return marks
    letters = system_letters(result.systems)
    comparisons = [c.to_dict() for c in result.comparisons]
    for r in result.results:
        beaten = beaten_letters(comparisons, letters, r.metric, r.system, r.higher_is_better, alpha)
        if beaten:
            marks[(r.metric, r.system)] = f" ^{beaten}"
    return marks


def format_table(result: ScoreResult) -> str:
    """Metrics as rows, systems as columns; each cell 'score ±CI half-width' and its significance mark (see
    :func:`significance_marks`)."""
    marks = significance_marks(result)
    systems = result.systems
    from ..evaluation.summary import system_letters

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
            text = "nan" if math.isnan(r.corpus_score) else f"{r.corpus_score:.4g}"
            if r.ci is not None:
                text += f" ±{(r.ci[1] - r.ci[0]) / 2:.2g}"
            text += marks.get((metric, system), "")
            row.append(text)
        rows.append(row)
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header] + rows)
