"""``styleval report``: an HTML (self-contained, figures embedded) and/or Markdown report, and paper tables, from
the JSON written by ``styleval evaluate --json`` or ``styleval score --json``."""
from __future__ import annotations

import argparse
import sys

from . import paper_options
from .encoding import add_encoding_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write an HTML/Markdown report of an evaluation",
                       description="Render `styleval evaluate --json FILE` or `styleval score --json FILE` output as a "
                                   "self-contained HTML page "
                                   "(tables with intervals and significance marks, trade-off and distribution "
                                   "plots) and/or Markdown. Trade-off plots follow Mir et al. 2019, Fig. 2: systems "
                                   "named MODEL@SETTING are drawn as one line per model through its settings "
                                   "(numeric settings in numeric order); with naturalness scores (`evaluate "
                                   "--naturalness`, or a metric whose name contains 'natural') a naturalness vs "
                                   "style intensity plot is added.")
    p.add_argument("evaluation", metavar="EVALUATION_JSON",
                   help="the file written by `styleval evaluate --json` or `styleval score --json`")
    p.add_argument("--html", "-o", metavar="FILE", help="write the HTML report here")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown report here")
    p.add_argument("--title", help="the page's title (default: styleval evaluation, or styleval scores for a "
                                   "`styleval score --json` file)")
    p.add_argument("--human", metavar="FILE",
                   help="human judgments (CSV/TSV/JSONL: system, segment, annotator, aspect, score[, direction]); "
                        "adds the correlation of every metric with every human aspect (system Pearson, segment "
                        "Kendall tau-like per input) and top-N/last-N curves")
    p.add_argument("--exclude-system", action="append", default=[], metavar="SYSTEM",
                   help="leave SYSTEM out of the correlations with --human (repeatable), e.g. the human references "
                        "as Lai et al. 2022 do (--exclude-system ref); the report names the systems left out")
    paper_options.add_arguments(p.add_argument_group("paper tables"))
    add_encoding_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..outputs import check_destinations
    from ..report.html import write_report
    from ..report.score_view import is_score_run, load_report_data

    if not (args.html or args.markdown or args.latex or args.markdown_table):
        raise InputError("nothing to write: give --html FILE, --markdown FILE, --latex FILE and/or "
                         "--markdown-table FILE")
    check_destinations(("--html", args.html), ("--markdown", args.markdown), *paper_options.destinations(args),
                       inputs=[("evaluation", args.evaluation), ("--human", args.human)])
    human = None
    if args.exclude_system and not args.human:
        raise InputError("--exclude-system leaves systems out of the correlations with human judgments: give --human")
    if args.human:
        from ..meta.judgments import Judgments

        human = Judgments.read(args.human)
    data = load_report_data(args.evaluation)
    title = args.title or ("styleval scores" if is_score_run(data) else "styleval evaluation")
    written = write_report(data, html=args.html, markdown=args.markdown, title=title, human=human,
                           exclude_systems=args.exclude_system) if args.html or args.markdown else []
    for path in written + paper_options.write_tables(args, data):
        print(f"wrote {path}", file=sys.stderr)
    return 0
