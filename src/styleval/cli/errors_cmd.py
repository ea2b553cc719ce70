"""``styleval errors``: the segments where a metric disagrees most with humans, with likely causes."""
from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

from ..errors import InputError
from ..readers.text import read_text
from .encoding import add_encoding_argument

TEXT_COLUMNS = {"source": ("source", "text1", "src", "original"), "output": ("output", "text2", "hyp", "rewrite")}
#: the id column used when the table has one and --id-col is not given (as `styleval score --input` reads tables)
ID_COLUMN = "id"
SEGMENT_IDS = ("Segment ids are the table's id column (--id-col; default: 'id' when present), else the 1-based "
               "data row number (the header is not counted), the numbers `styleval score` gives the same table's "
               "rows and a plain-text file's lines, so --scores from `styleval score --json` match.")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("errors", help="segments where a metric disagrees most with human scores, with likely causes",
                       description="Rank segments by the gap between their metric rank and their human rank "
                                   "(Babakov et al. 4.2) and diagnose the worst: entities lost or corrupted, "
                                   "content words lost by part of speech, sentence type changed; and each cause's "
                                   "share among the worst against its share among all segments (base rate, lift). "
                                   + SEGMENT_IDS)
    p.add_argument("table", help="CSV/TSV/JSONL with source, output, human score (and metric columns)")
    p.add_argument("--metric", "-m", action="append", required=True,
                   help="metric column of TABLE, or metric name in --scores (repeatable)")
    p.add_argument("--scores", metavar="JSON", help="a `styleval score --json` file to take metric scores from "
                                                      "(matched to TABLE by segment id, see --id-col)")
    p.add_argument("--system", help="system to take from --scores (default: the only one)")
    p.add_argument("--human-col", default="human", help="human score column (default: human)")
    p.add_argument("--source-col", help="source column (default: source or text1)")
    p.add_argument("--output-col", help="output column (default: output or text2)")
    p.add_argument("--id-col", help="segment id column (default: 'id' when present, else the 1-based data row "
                                    "number, as `styleval score` numbers rows and lines)")
    p.add_argument("--top", "-n", type=int, default=20, help="segments to show (default: 20)")
    p.add_argument("--direction", choices=("abs", "over", "under"), default="abs",
                   help="abs: largest |gap|; over: metric rates higher than humans; under: lower")
    p.add_argument("--lower-is-better", action="store_true", help="the metric is a distance")
    p.add_argument("--no-base-rates", action="store_true",
                   help="skip the base rates (they diagnose every segment: about 100 texts a second on one core)")
    p.add_argument("--base-sample", type=int, metavar="N",
                   help="base rates from a random sample of N segments instead of all")
    p.add_argument("--seed", type=int, default=0, help="seed of --base-sample (default: 0)")
    p.add_argument("--json", metavar="FILE", help="write the analysis as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing")
    add_encoding_argument(p)
    p.set_defaults(run=run)


def _read_table(path: str, id_col: str):
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", p)
    suffix = p.suffix.lower()
    text = io.StringIO(read_text(p))  # strict decoding, --encoding's; an undecodable byte names its line
    try:
        if suffix in (".jsonl", ".json"):
            return pd.read_json(text, lines=True, dtype={id_col: str})
        return pd.read_csv(text, sep="\t" if suffix in (".tsv", ".tab") else ",", dtype={id_col: str})
    except ValueError as exc:
        raise InputError(f"cannot read table: {exc}", p) from None


def _column(frame, given: str | None, kind: str, path: str) -> str:
    names = (given,) if given else TEXT_COLUMNS[kind]
    for name in names:
        if name in frame.columns:
            return name
    raise InputError(f"no {kind} column ({' or '.join(names)}); columns present: {', '.join(map(str, frame.columns))}",
                     path)


def _scores_from_json(path: str, metric: str, system: str | None) -> dict[str, float]:
    data = json.loads(read_text(path, "utf-8"))
    blocks = [b for b in data.get("segments", [])
              if b["metric"] == metric and (system is None or b["system"] == system)]
    if not blocks:
        names = sorted({b["metric"] for b in data.get("segments", [])})
        raise InputError(f"metric {metric!r} not in the file; metrics: {', '.join(names)}", path)
    if len(blocks) > 1:
        raise InputError(f"{len(blocks)} systems have {metric!r}; choose one with --system", path)
    return {k: (float("nan") if v is None else float(v)) for k, v in blocks[0]["scores"].items()}


def _segment_ids(frame, id_col: str | None, path: str) -> list[str]:
    """The id of every row (see :data:`SEGMENT_IDS`): the id column's text, a blank cell or no id column giving
    the 1-based data row number."""
    if id_col and id_col not in frame.columns:
        raise InputError(f"no id column {id_col!r}; columns present: {', '.join(map(str, frame.columns))}", path)
    column = id_col or (ID_COLUMN if ID_COLUMN in frame.columns else None)
    if column is None:
        return [str(row) for row in range(1, len(frame) + 1)]
    cells = [("" if v is None or v != v else str(v).strip()) for v in frame[column]]  # v != v: NaN
    return [cell or str(row) for row, cell in enumerate(cells, start=1)]


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..outputs import check_destinations, write_text

    check_destinations(("--json", args.json), inputs=[("table", args.table), ("--scores", args.scores)])
    from ..analysis import ErrorAnalysisOptions, analyze_errors
    from .progress import make as make_progress

    frame = _read_table(args.table, args.id_col or ID_COLUMN)
    src_col = _column(frame, args.source_col, "source", args.table)
    out_col = _column(frame, args.output_col, "output", args.table)
    if args.human_col not in frame.columns:
        raise InputError(f"no human column {args.human_col!r}; columns present: {', '.join(map(str, frame.columns))}",
                         args.table)
    ids = _segment_ids(frame, args.id_col, args.table)
    results = []
    for metric in args.metric:
        if args.scores:
            by_id = _scores_from_json(args.scores, metric, args.system)
            missing = [i for i in ids if i not in by_id]
            if missing:
                raise InputError(f"{len(missing)} of {len(ids)} segment ids of the table have no {metric!r} score "
                                 f"(first: {missing[0]!r})", args.scores)
            values = np.array([by_id[i] for i in ids])
        else:
            if metric not in frame.columns:
                raise InputError(f"no metric column {metric!r}", args.table)
            values = frame[metric].to_numpy(dtype=float)
        human = frame[args.human_col].to_numpy(dtype=float)
        keep = ~(np.isnan(values) | np.isnan(human))
        idx = np.flatnonzero(keep)
        options = ErrorAnalysisOptions(top=args.top, direction=args.direction,
                                       higher_is_better=not args.lower_is_better, base_rates=not args.no_base_rates,
                                       base_sample=args.base_sample, seed=args.seed)
        with make_progress(not args.quiet) as bar:
            analysis = analyze_errors([str(frame[src_col].iloc[i]) for i in idx],
                                      [str(frame[out_col].iloc[i]) for i in idx], human[idx], values[idx],
                                      metric_name=metric, ids=[ids[i] for i in idx], options=options,
                                      progress=bar)
        results.append(analysis)
        if not args.quiet:
            dropped = len(frame) - len(idx)
            print(analysis.format_table() + (f"\n({dropped} segments without a score left out)" if dropped else ""))
            print()
    if args.json:
        payload = [a.to_dict() for a in results]
        write_text(args.json, json.dumps(payload[0] if len(payload) == 1 else payload, indent=1,
                                         ensure_ascii=False))
    return 0
