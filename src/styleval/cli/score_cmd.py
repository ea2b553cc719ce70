"""``styleval score``: score one or many systems with any metrics; table on the terminal, files on request."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..records import Record
from ..results import ScoreResult
from ..scoring import score
from . import paper_options, progress, stream_cmd
from .direction_help import METAVAR, direction_help
from .encoding import add_encoding_argument
from .score_options import (add_statistics_arguments, build_modifiers, check_metrics, input_files, statistics_options)
from .score_table import format_table, requests_block, table_legend

DEFAULT_METRICS = "bleu,chrf,chrf++,ter,rouge1,rouge2,rougeL,meteor,pinc,levenshtein"
SEGMENT_IDS = ("Segment ids (in --json, --segments-csv, --jsonl): a plain-text file's 1-based line number, as an "
               "editor shows it; a table's id column, else its 1-based data row number (the header is not "
               "counted). `styleval errors` numbers a table's rows the same way.")


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """Where the records come from; shared by ``score`` and ``evaluate``."""
    src = p.add_argument_group("inputs")
    src.add_argument("--input", action="append", default=[], metavar="TABLE",
                     help="TSV/CSV/JSONL with columns source, output, ref*, system, id, direction (repeatable); "
                          "without an id column a row's id is its 1-based data row number")
    src.add_argument("--system", action="append", default=[], metavar="[NAME=]FILE",
                     help="one system's outputs, one sentence per line (repeatable)")
    src.add_argument("--systems-dir", metavar="DIR", help="a directory whose every file is one system's outputs")
    src.add_argument("--source", metavar="FILE", help="source sentences, one per line")
    src.add_argument("--reference", "-r", action="append", default=[], metavar="FILE",
                     help="a reference file, one sentence per line (repeatable, for multi-reference metrics)")
    src.add_argument("--direction", metavar=METAVAR, help=direction_help())
    src.add_argument("--example", metavar="NAME", help="score a bundled example (formality)")
    src.add_argument("--gyafc", metavar="ROOT", help="GYAFC release folder: sources and ref0..ref3 come from it; "
                                                     "give outputs with --system NAME=FILE and pick --direction "
                                                     "and --domain")
    src.add_argument("--domain", help="GYAFC domain (Entertainment_Music or Family_Relationships; default both)")
    src.add_argument("--split", default="test", help="GYAFC split (default: test)")
    add_encoding_argument(src)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score system outputs with chosen metrics (content, style, fluency)",
                       description="Score one or many systems. Give plain-text files (--system/--systems-dir with "
                                   "--source and --reference) or tables with named columns (--input). "
                                   + SEGMENT_IDS)
    add_input_arguments(p)
    m = p.add_argument_group("metrics")
    m.add_argument("--metrics", "-m", default=DEFAULT_METRICS,
                   help=f"comma-separated metric specs, name or name:key=value;... (default: {DEFAULT_METRICS}). "
                        "Parameters inside a spec are separated by ';'; a value holding ';' or ',' goes in double "
                        "quotes (style_emd:ground=\"0 1; 1 0\"); docs/metrics.md, Metric specs")
    m.add_argument("--against", default="source,references",
                   help="compare content metrics with the source, the references or both (default: both)")
    m.add_argument("--style-mask", metavar="LEXICON",
                   help="also score every content metric on texts whose style words are masked (Mir et al. 2019)")
    m.add_argument("--style-remove", metavar="LEXICON",
                   help="also score every content metric on texts whose style words are removed")
    m.add_argument("--mask-placeholder", default="customstyle", help="the token that replaces masked style words")
    m.add_argument("--entity-aware", nargs="?", const="coverage", choices=("coverage", "jaccard"), metavar="NE",
                   help="also score every higher-is-better content metric merged with a named-entity score, "
                        "M(1-p)+NE*p (Babakov et al.); NE: coverage (default) or jaccard")
    m.add_argument("--sentiment-aware", metavar="LEXICON",
                   help="also score every higher-is-better content metric with SAM, C(1-p) (Saadany et al.); "
                        "LEXICON: vader, sentiwordnet:PATH, file:PATH (lemma<TAB>pos<TAB>polarity)")
    add_statistics_arguments(p)
    o = p.add_argument_group("outputs")
    o.add_argument("--json", metavar="FILE", help="write everything (segments, corpus, CIs, signatures) as JSON")
    o.add_argument("--csv", metavar="FILE", help="write corpus scores as CSV")
    o.add_argument("--segments-csv", metavar="FILE", help="write segment scores as CSV")
    o.add_argument("--jsonl", metavar="FILE", help="write segment scores as JSON lines")
    paper_options.add_arguments(o, markdown_flag="--markdown")
    o.add_argument("--no-progress", action="store_true", help="no progress bar")
    o.add_argument("--quiet", "-q", action="store_true",
                   help="no progress, notes or warnings: the results table and signatures on stdout (nothing when "
                        "--json, --csv, --segments-csv or --jsonl hold the results) and errors")
    stream_cmd.add_arguments(p)  # --stream, --cache, --engine ray: the scale engine
    p.set_defaults(run=run)


def load_records(args: argparse.Namespace) -> list[Record]:
    from ..readers import read_parallel, read_system_dir, read_table

    if args.example:
        from ..examples import get

        ex = get(args.example)
        args.systems_dir, args.source = str(ex.systems_dir), str(ex.source)
        args.reference = [str(r) for r in ex.references]
        args.direction = args.direction or ex.direction
    records: list[Record] = []
    for table in args.input:
        records += read_table(table, default_direction=args.direction)
    if args.gyafc:
        from ..datasets import read_gyafc

        outputs = {}
        for item in args.system:
            name, sep, path = item.partition("=")
            if not sep:
                raise InputError(f"with --gyafc, name each system: --system NAME=FILE (got {item!r})")
            outputs[system_name(name, item)] = path
        if not outputs:
            raise InputError("--gyafc needs the systems' outputs: --system NAME=FILE (repeatable)")
        return records + read_gyafc(args.gyafc, args.domain, args.direction, args.split, outputs=outputs)
    if args.system or args.systems_dir:
        if not args.source:
            raise InputError("--system/--systems-dir need --source (the inputs the systems transferred)")
        named: dict[str, str] = {}
        for item in args.system:
            name, sep, path = item.partition("=")
            if not sep:
                name, path = None, item
            else:
                name = system_name(name, item)
            key = name or Path(path).stem
            if key in named:
                raise InputError(f"two --system inputs are named {key!r} ({named[key]} and {path}); "
                                 "name each system differently: --system NAME=FILE")
            named[key] = path
            records += read_parallel(path, args.source, args.reference, system=name, direction=args.direction)
        if args.systems_dir:
            records += read_system_dir(args.systems_dir, args.source, args.reference, direction=args.direction)
    if not records:
        raise InputError("nothing to score: give --input TABLE, or --system/--systems-dir with --source")
    return records


def system_name(name: str, item: str) -> str:
    """The NAME of ``--system NAME=FILE``; a one-line :class:`InputError` when it is blank or holds a tab, a line
    break or another control character."""
    from ..records import name_problem

    problem = name_problem(name)
    if problem:
        raise InputError(f"--system {item!r}: {problem}; give --system NAME=FILE, or FILE alone to name the system "
                         "after the file")
    return name


def run(args: argparse.Namespace) -> int:
    from ..outputs import check_destinations, shown

    if stream_cmd.wanted(args):
        return stream_cmd.run(args)
    stream_cmd.refuse_stream_options(args)
    specs = check_metrics(args.metrics)
    check_destinations(("--json", args.json), ("--csv", args.csv), ("--segments-csv", args.segments_csv),
                       ("--jsonl", args.jsonl), *paper_options.destinations(args, "--markdown"),
                       inputs=input_files(args))
    records = load_records(args)
    with progress.make(not (args.no_progress or args.quiet)) as bar:
        result = score(records, specs, against=[a.strip() for a in args.against.split(",")],
                       modifiers=build_modifiers(args), options=statistics_options(args), progress=bar)
    if args.json:
        write_json(args, result, records)
    paper_options.write_tables(args, result)
    if args.csv:
        result.write_csv(args.csv, level="corpus")
    if args.segments_csv:
        result.write_csv(args.segments_csv, level="segment")
    if args.jsonl:
        result.write_jsonl(args.jsonl)
    written = [path for path in (args.json, args.csv, args.segments_csv, args.jsonl, args.latex,
                                 args.markdown_table) if path]
    if args.quiet and written:  # --quiet: the results are in the files asked for
        return 0
    print_result(result, notes=not args.quiet)
    for path in written:
        print(f"wrote {shown(path)}", file=sys.stderr)
    return 0


def print_result(result: ScoreResult, *, notes: bool = True) -> None:
    """The corpus table, notes on empty outputs, the legend of its marks, judge requests and the signatures."""
    print(format_table(result))
    flagged = {r.system: len(r.flags.get("empty_output", [])) for r in result.results if r.flags.get("empty_output")}
    for system, n in flagged.items() if notes else ():
        print(f"note: {system}: {n} empty output(s) scored as they are (flagged in the segment files)")
    legend = table_legend(result)
    if legend:
        print(f"\n{legend}")
    asked = requests_block(result)
    if asked:
        print(f"\n{asked}")
    print("\nsignatures:")
    for metric, sig in result.signatures().items():
        print(f"  {metric}: {sig}")


def write_json(args: argparse.Namespace, result, records: list[Record]) -> None:
    """``--json``: the result's JSON form with the run (command, input files and their hashes) and the texts
    scored, so ``styleval report`` can show the run and every output beside its scores."""
    import json

    from ..evaluation.texts import segment_texts
    from ..outputs import write_text
    from ..report.provenance import run_facts

    data = {**result.to_dict(), "run": run_facts(getattr(args, "argv", []), input_files(args)),
            "texts": segment_texts(records)}
    write_text(args.json, json.dumps(data, indent=1, ensure_ascii=False))
