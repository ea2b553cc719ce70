"""The terminal form of an evaluation (``styleval evaluate`` without ``--quiet``)."""
from __future__ import annotations

from typing import Any, Mapping

from ..evaluation.summary import ASPECTS, aspect_rows, legend, overall_rows, system_headings, systems_of
from .tables import text_table


def text_report(data: Mapping[str, Any]) -> str:
    """The terminal form: one table per aspect, the overall table, the legend and the rationale."""
    systems = systems_of(data)
    headings = system_headings(data)
    header = ["metric"] + [headings[s] for s in systems]
    parts = []
    for aspect in ASPECTS:
        rows = aspect_rows(data, aspect)
        if rows:
            parts.append(f"{aspect}\n" + text_table(header, [[f"{r['metric']} {'↑' if r['higher_is_better'] else '↓'}"]
                                                             + [r["cells"][s]["text"] for s in systems]
                                                             for r in rows]))
    overall = aspect_rows(data, "overall") + overall_rows(data)
    if overall:
        parts.append("overall\n" + text_table(header, [[f"{r['metric']} {'↑' if r['higher_is_better'] else '↓'}"]
                                                       + [r["cells"][s]["text"] for s in systems] for r in overall]))
    parts.append(legend(data))
    parts.append("why these metrics:\n" + "\n".join(f"  - {line}" for line in data["rationale"]))
    return "\n\n".join(parts)
