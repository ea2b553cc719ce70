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
    p.add_argument("table", help="CSV/TSV/JSONL with source, output, human score (and metric columns); or human "
                                 "judgments in the long format (system, segment, annotator, aspect, score) that "
                                 "`styleval campaign export` and `styleval data export --human` write, with "
                                 "--outputs for the texts")
    p.add_argument("--outputs", metavar="TABLE",
                   help="with long-format judgments: the outputs table `styleval score --input` reads (id, system, "
                        "source, output), matched to the judgments by system and segment id")
    p.add_argument("--aspect", help="with long-format judgments: the human aspect to use (default: the only one)")
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


#: the columns of styleval's long judgment format (``styleval.meta.judgments``)
LONG_COLUMNS = ("system", "segment", "annotator", "aspect", "score")
#: the key of a row of long-format judgments: system and segment id
KEY = "_system_segment"


def _is_long(frame) -> bool:
    return all(c in frame.columns for c in LONG_COLUMNS) and not any(
        c in frame.columns for names in TEXT_COLUMNS.values() for c in names)


def _from_long(frame, args: argparse.Namespace):
    """One row per judged (system, segment) of ``args.aspect``: the mean human score over annotators, with the
    source and output of that segment from ``--outputs`` (matched by system and segment id)."""
    if not args.outputs:
        raise InputError("long-format judgments (system, segment, annotator, aspect, score) hold no texts: give "
                         "--outputs TABLE, the outputs table `styleval score --input` reads (id, system, source, "
                         "output)", args.table)
    aspects = sorted({str(a) for a in frame["aspect"]})
    aspect = args.aspect or (aspects[0] if len(aspects) == 1 else None)
    if aspect is None:
        raise InputError(f"the judgments hold several aspects ({', '.join(aspects)}): choose one with --aspect",
                         args.table)
    if aspect not in aspects:
        raise InputError(f"no judgments of aspect {aspect!r}; aspects present: {', '.join(aspects)}", args.table)
    judged = frame[frame["aspect"].astype(str) == aspect]
    if args.system:
        judged = judged[judged["system"].astype(str) == args.system]
    human = judged.groupby([judged["system"].astype(str), judged["segment"].astype(str)], sort=False)["score"].mean()
    outputs = _read_table(args.outputs, ID_COLUMN)
    src_col, out_col = _column(outputs, None, "source", args.outputs), _column(outputs, None, "output", args.outputs)
    if "system" not in outputs.columns:
        raise InputError("no system column; columns present: " + ", ".join(map(str, outputs.columns)), args.outputs)
    ids = _segment_ids(outputs, None, args.outputs)
    texts = {(str(system), i): (source, output)
             for system, i, source, output in zip(outputs["system"], ids, outputs[src_col], outputs[out_col])}
    missing = [key for key in human.index if key not in texts]
    if missing:
        raise InputError(f"{len(missing)} of {len(human)} judged (system, segment) pairs have no row in the outputs "
                         f"table (first: system {missing[0][0]!r}, segment {missing[0][1]!r})", args.outputs)
    import pandas as pd

    return pd.DataFrame({KEY: [f"{system}:{segment}" for system, segment in human.index],
                         "source": [texts[key][0] for key in human.index],
                         "output": [texts[key][1] for key in human.index],
                         "human": human.to_numpy(dtype=float)})


def _segment_blocks(path: str, metric: str, system: str | None) -> list[dict]:
    """The segment-score blocks of ``metric`` (of ``system``, when given) in a ``score --json`` file; none is an
    error listing the file's metrics."""
    data = json.loads(read_text(path, "utf-8"))
    blocks = [b for b in data.get("segments", [])
              if b["metric"] == metric and (system is None or b["system"] == system)]
    if not blocks:
        names = sorted({b["metric"] for b in data.get("segments", [])})
        raise InputError(f"metric {metric!r} not in the file; metrics: {', '.join(names)}", path)
    return blocks


def _scores_by_system(path: str, metric: str, system: str | None) -> dict[str, float]:
    """``system:segment`` -> score of ``metric`` for every system of a ``score --json`` file (or ``system``)."""
    return {f"{b['system']}:{k}": (float("nan") if v is None else float(v))
            for b in _segment_blocks(path, metric, system) for k, v in b["scores"].items()}


def _scores_from_json(path: str, metric: str, system: str | None) -> dict[str, float]:
    blocks = _segment_blocks(path, metric, system)
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
    long = _is_long(frame)
    if long:  # campaign export / data export --human: texts from --outputs, one row per judged output
        frame = _from_long(frame, args)
        args.human_col, args.id_col = "human", KEY
    elif args.outputs or args.aspect:
        raise InputError("--outputs and --aspect go with long-format judgments (system, segment, annotator, aspect, "
                         "score); this table has the texts and a human column itself", args.table)
    src_col = _column(frame, args.source_col, "source", args.table)
    out_col = _column(frame, args.output_col, "output", args.table)
    if args.human_col not in frame.columns:
        raise InputError(f"no human column {args.human_col!r}; columns present: {', '.join(map(str, frame.columns))}",
                         args.table)
    ids = _segment_ids(frame, args.id_col, args.table)
    results = []
    for metric in args.metric:
        if args.scores:
            by_id = (_scores_by_system if long else _scores_from_json)(args.scores, metric, args.system)
            missing = [i for i in ids if i not in by_id]
            if missing:
                raise InputError(f"{len(missing)} of {len(ids)} segment ids of the table have no {metric!r} score "
                                 f"(first: {missing[0]!r})", args.scores)
            values = np.array([by_id[i] for i in ids])
        else:
            if metric not in frame.columns:
                raise InputError(f"no metric column {metric!r}" + (
                    "; with long-format judgments the scores come from --scores (a `styleval score --json` file of "
                    "the --outputs table)" if long else ""), args.table)
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
