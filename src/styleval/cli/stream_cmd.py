"""``styleval score --stream`` (and ``--engine ray``): the scale options of ``score`` and the run that uses them.

A thin layer over :func:`styleval.engine.score_stream`; ``score_cmd`` adds these arguments and hands over
when one of them asks for the streaming engine (the options both read are in :mod:`.score_options`).
"""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import InputError
from . import progress
from .score_options import build_modifiers, check_metrics, input_files, statistics_options
from .score_table import format_table, requests_block, table_legend

CHUNK_SIZE = 10_000  # records per chunk unless --chunk-size says
RAY_WORKERS = 2  # Ray actors per metric group unless --ray-workers says


def add_arguments(p: argparse.ArgumentParser) -> None:
    s = p.add_argument_group("scale (streaming, resume, Ray)")
    s.add_argument("--stream", action="store_true",
                   help="read --input tables in chunks and write segment scores as they are computed (flat memory; "
                        "same corpus scores, intervals and tests as the in-memory run)")
    s.add_argument("--chunk-size", type=int, default=None, metavar="N",
                   help=f"with --stream: records per chunk (default {CHUNK_SIZE})")
    s.add_argument("--segments", metavar="FILE",
                   help="with --stream: segment scores as JSON lines, or Parquet for a .parquet name")
    s.add_argument("--cache", metavar="FILE",
                   help="with --stream: SQLite cache of segment statistics and of neural models' outputs "
                        "(embeddings, LM log-probabilities); a run started again after a crash recomputes only what "
                        "is missing, and other metrics over the same model reuse its outputs")
    s.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local (default) or ray: metrics run in Ray actors (implies --stream)")
    s.add_argument("--ray-address", metavar="ADDR",
                   help="with --engine ray: join this Ray cluster (default: start a local one)")
    s.add_argument("--ray-workers", type=int, default=None, metavar="N",
                   help=f"with --engine ray: Ray actors per metric group (default {RAY_WORKERS})")


def wanted(args: argparse.Namespace) -> bool:
    """Whether the arguments ask for the streaming engine."""
    return bool(getattr(args, "stream", False) or getattr(args, "engine", "local") == "ray")


def refuse_stream_options(args: argparse.Namespace) -> None:
    """An option of the streaming engine given to an in-memory run is a one-line :class:`InputError`, never
    ignored: the user would look for a segment file, a cache or a cluster that the run never used."""
    given = [option for option, value in (("--segments", args.segments), ("--cache", args.cache),
                                          ("--chunk-size", args.chunk_size))
             if value is not None]
    if given:
        hint = " (in memory, --segments-csv FILE or --jsonl FILE write segment scores)" if args.segments else ""
        raise InputError(f"{' and '.join(given)} work{'s' if len(given) == 1 else ''} with --stream only: add "
                         f"--stream (it reads --input tables) or leave {'it' if len(given) == 1 else 'them'} out"
                         + hint)
    ray = [option for option, value in (("--ray-address", args.ray_address), ("--ray-workers", args.ray_workers))
           if value is not None]
    if ray:
        raise InputError(f"{' and '.join(ray)} work{'s' if len(ray) == 1 else ''} with --engine ray only")


def _segments_file(path: str | None) -> str | None:
    """Where the engine may put its segment file: it writes ``<name>.partial`` beside it and renames that into
    place, so what is not a regular file (``-``, a device, a pipe) is refused, never replaced, and a symbolic
    link is followed (its target is written, the link stays)."""
    from ..errors import OutputError

    if path is None:
        return None
    if path == "-" or (os.path.exists(path) and not os.path.isfile(path)):
        raise OutputError("--segments (--jsonl with --stream) needs a file name: the segment file is renamed "
                          "into place, so standard output, a device, a pipe or a folder cannot receive it", path)
    return os.path.realpath(path) if os.path.islink(path) else path


def run(args: argparse.Namespace) -> int:
    from ..engine import StreamOptions, TableOptions, score_stream
    from ..outputs import atomic_writer, check_destinations, shown

    if not args.input or args.system or args.systems_dir or args.gyafc or args.example:
        raise InputError("--stream reads tables: give --input TABLE (TSV/CSV/JSONL), repeatable")
    if args.engine != "ray" and (args.ray_address is not None or args.ray_workers is not None):
        raise InputError("--ray-address and --ray-workers work with --engine ray only")
    if args.segments_csv:
        raise InputError("--stream writes segment scores with --segments FILE (.jsonl or .parquet), not --segments-csv")
    if args.jsonl and args.segments:
        raise InputError("give the segment file once: --segments FILE (or --jsonl FILE)")
    segments = _segments_file(args.segments or args.jsonl)
    specs = check_metrics(args.metrics)
    from . import paper_options

    check_destinations(("--json", args.json), ("--csv", args.csv), ("--segments", segments),
                       *paper_options.destinations(args, "--markdown"), inputs=input_files(args))
    with progress.make(not (args.no_progress or args.quiet)) as bar:
        out = score_stream(args.input, specs, against=[a.strip() for a in args.against.split(",")],
                           modifiers=build_modifiers(args), options=statistics_options(args), progress=bar,
                           stream=StreamOptions(segments=segments,
                                                chunk_size=CHUNK_SIZE if args.chunk_size is None else args.chunk_size,
                                                cache=args.cache, table=TableOptions(default_direction=args.direction),
                                                engine=args.engine, ray_address=args.ray_address,
                                                ray_workers=RAY_WORKERS if args.ray_workers is None
                                                else args.ray_workers))
    if args.json:
        out.write_json(args.json)
    if args.csv:
        frame = out.result.to_dataframe("corpus")
        frame["n"] = [out.counts.get(s, 0) for s in frame["system"]]
        with atomic_writer(args.csv) as fh:
            frame.to_csv(fh, index=False)
    paper_options.write_tables(args, out.result)
    if args.quiet and any((args.json, args.csv, segments, args.latex, args.markdown_table)):  # results in files
        return 0
    print(format_table(out.result))
    legend = table_legend(out.result)
    if legend:
        print(f"\n{legend}")
    asked = requests_block(out.result)
    if asked:
        print(f"\n{asked}")
    print(f"\n{out.n_records:,} records in {out.n_chunks} chunk(s)"
          + (f"; statistics cache: {out.cache_hits:,} reused, {out.cache_misses:,} computed" if args.cache else "")
          + (f" ({out.cache_rejected:,} damaged rows among them, recomputed)" if out.cache_rejected else "")
          + (f"; model outputs: {out.model_cache_hits:,} texts reused, {out.model_cache_misses:,} computed"
             if args.cache and out.model_cache_hits + out.model_cache_misses else ""))
    print("\nsignatures:")
    for metric, sig in out.result.signatures().items():
        print(f"  {metric}: {sig}")
    for path in (args.json, args.csv, segments, args.latex, args.markdown_table):
        if path:
            print(f"wrote {shown(path)}", file=sys.stderr)
    return 0
