"""The paper-table options of ``score``, ``evaluate`` and ``report``: ``--latex FILE``, a Markdown table, and
the table's layout (``styleval.report.paper``)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..report.paper import COLUMNS, MARKS, SIGNATURES


def add_arguments(group: argparse._ArgumentGroup, markdown_flag: str = "--markdown-table") -> None:
    """``--latex FILE``, the Markdown table's flag (``markdown_flag``; ``score`` uses ``--markdown``, since it has
    no Markdown report) and ``--table-columns``, ``--table-marks``, ``--table-signatures``, ``--table-caption``."""
    group.add_argument("--latex", metavar="FILE",
                       help="write a paper table in LaTeX (booktabs): score ±half-width of the interval, "
                            "significance marks, the best per metric in bold, ↑/↓, the signatures")
    group.add_argument(markdown_flag, dest="markdown_table", metavar="FILE",
                       help="write the same paper table in Markdown")
    group.add_argument("--table-columns", choices=COLUMNS, default="systems",
                       help="one column per system (metrics as rows, the default) or one per metric")
    group.add_argument("--table-marks", choices=MARKS, default="letters",
                       help="significance marks: letters of the systems a score beats (default; † ‡ against a "
                            "--baseline), daggers († better than every other system or the baseline, ‡ worse), "
                            "or none")
    group.add_argument("--table-signatures", choices=SIGNATURES, default="block",
                       help="the signatures as a block after the table (default), a footnote inside it, or none")
    group.add_argument("--table-caption", metavar="TEXT", help="the caption's first sentence (the legend follows)")


def destinations(args: argparse.Namespace, markdown_flag: str = "--markdown-table") -> list[tuple[str, Any]]:
    """The files the tables go to, as ``outputs.check_destinations`` takes them."""
    return [("--latex", args.latex), (markdown_flag, args.markdown_table)]


def write_tables(args: argparse.Namespace, source: Any) -> list[Path]:
    """Write the tables asked for; returns the paths written."""
    from ..outputs import write_text
    from ..report.paper import latex_paper_table, markdown_paper_table

    layout = {"columns": args.table_columns, "marks": args.table_marks, "signatures": args.table_signatures,
              "caption": args.table_caption}
    written = []
    if args.latex:
        write_text(args.latex, latex_paper_table(source, **layout))
        written.append(Path(args.latex))
    if args.markdown_table:
        write_text(args.markdown_table, markdown_paper_table(source, **layout))
        written.append(Path(args.markdown_table))
    return written
