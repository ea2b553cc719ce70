"""evaluate counts as a reader does: the report's header and the rationale give systems × segments per system,
and each scoring stage counts that system's segments."""
from __future__ import annotations

from styleval.evaluation import evaluate
from styleval.examples import get
from styleval.readers import read_system_dir
from styleval.report.html import write_report


def test_fast_evaluate_counts_segments_per_system(tmp_path) -> None:
    ex = get("formality")
    records = read_system_dir(str(ex.systems_dir), str(ex.source), [str(r) for r in ex.references],
                              direction=ex.direction)
    assert len(records) == 90  # 3 systems x 30 segments
    heard: list[tuple[str, int, int]] = []
    ev = evaluate(records, fast=True, bootstrap=0, significance="none",
                  progress=lambda *call: heard.append(call))
    assert ev.rationale[0].startswith("direction: informal->formal; 3 systems × 30 segments, up to 2 reference")
    stages = [(d, total) for d, done, total in heard if d.startswith("scoring ") and d.endswith("[segments]")]
    assert stages and all(total == 30 for _, total in stages), stages
    write_report(ev, html=tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    header = page[page.index("<p>Direction(s)"):].split("</p>")[0]
    assert header.endswith("systems: copy, rewrite, tidy and the anchor row human-reference; 3 systems × 30 segments; "
                           "fast mode."), header  # two references per input: the anchor row, not a fourth system
    assert "90 records" not in page
