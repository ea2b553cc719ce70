"""``styleval data``: the shipped dataset readers from the command line.

``styleval data export NAME`` writes a public dataset's human judgments in the long format ``styleval meta`` reads
(system, segment, annotator, aspect, score, direction), its system outputs as a table ``styleval score --input``
reads (id, system, direction, source, output, ref0..), and, on request, the metric scores stored with it (system,
segment, metric, score, higher_is_better). Ids and system names agree across the three files, so
``score --input OUTPUTS --json S`` then ``meta --human HUMAN --scores S`` needs no conversion.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

from ..errors import InputError

#: Dataset -> (what it holds, the loader of its judgments and stored scores in styleval.meta.datasets, or None).
DATASETS: dict[str, tuple[str, str | None]] = {
    "lai2022": ("Lai et al. 2022, GYAFC formality: 80 inputs x 8 systems + ref; content, style, fluency (2 raters)",
                "load_lai2022"),
    "mir2019": ("Mir et al. 2019, Yelp sentiment: 244 inputs x 12 settings; style_transfer_intensity, "
                "content_preservation, naturalness (means of 3 raters)", "load_mir2019"),
    "sgdd-tst": ("Babakov et al., SGDD-TST: 10,287 formality rewrites; content (mean crowd vote)", "load_sgdd_tst"),
    "yelp-dualrl": ("DualRL's Yelp test set: 1,000 inputs x 11 systems + 4 human rewrites; outputs only", None),
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="export a public dataset's human judgments and system outputs",
                       description="Read the public datasets styleval knows (in ../shared/data by default, or "
                                   "$STYLEVAL_SHARED_DATA, or --root) and write them in the formats the other verbs "
                                   "read.")
    verbs = p.add_subparsers(dest="data_verb", metavar="ACTION")
    verbs.required = True
    ls = verbs.add_parser("list", help="the datasets and what each holds")
    ls.set_defaults(run=run_list)
    ex = verbs.add_parser(
        "export", help="write human judgments (for meta), system outputs (for score) and stored scores",
        description="Write a dataset's human judgments in the long format `styleval meta --human` reads, its "
                    "system outputs as a table `styleval score --input` reads, and the metric scores stored with "
                    "it as a table `styleval meta --scores` reads. Segment ids and system names are the same in "
                    "all three. File formats follow the suffix (.csv, .tsv, .jsonl).",
        epilog="example: styleval data export lai2022 --human lai.human.csv --outputs lai.outputs.tsv")
    ex.add_argument("dataset", metavar="DATASET", help=f"one of {', '.join(DATASETS)} (sgdd_tst is sgdd-tst)")
    ex.add_argument("--root", metavar="DIR",
                    help="the folder holding the dataset folders, or the dataset folder itself (default: "
                         "$STYLEVAL_SHARED_DATA, else ../shared/data next to the source checkout)")
    ex.add_argument("--human", metavar="FILE", help="write the human judgments here (for `styleval meta --human`)")
    ex.add_argument("--outputs", metavar="FILE",
                    help="write the system outputs here (for `styleval score --input`; .csv or .jsonl when texts "
                         "hold tabs)")
    ex.add_argument("--stored-scores", metavar="FILE",
                    help="write the metric scores stored with the dataset here (for `styleval meta --scores`)")
    ex.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    ex.set_defaults(run=run_export)
    fe = verbs.add_parser(
        "fetch", help="download public datasets, pinned to a commit and checked by sha256",
        description="Download the public human-judgment and output sets styleval reads into a data folder (default "
                    "$STYLEVAL_DATA_DIR, else the user cache), every file pinned to its repository's commit and "
                    "checked against the sha256 the package ships; a cut download is resumed on the next try, a "
                    "file whose hash differs is refused. Prints each set's licence and citation. Every verb that "
                    "reads a dataset finds the fetched copy without a path.",
        epilog="example: styleval data fetch lai2022 mir2019 sgdd-tst")
    fe.add_argument("names", nargs="*", metavar="NAME",
                    help="datasets to fetch (lai2022, mir2019, sgdd-tst, yelp-dualrl, pt16, paradetox, yelp-shen); "
                         "none: list them")
    fe.add_argument("--dir", metavar="DIR", help="the data folder (default: $STYLEVAL_DATA_DIR, else "
                                                 "~/.cache/styleval/data)")
    fe.add_argument("--mirror", metavar="URL",
                    help="fetch from a mirror serving URL/NAME/PATH (default: $STYLEVAL_DATA_MIRROR, else each "
                         "repository's raw files on GitHub at the pinned commit)")
    fe.add_argument("--retries", type=int, default=3, help="resumed attempts per file after a cut connection")
    fe.add_argument("--verify", action="store_true",
                    help="check every file of a set already fetched against the manifest's sha256 (by default its "
                         "size and modification time are compared with those it had when fetched); files that "
                         "fail are downloaded again")
    fe.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    fe.set_defaults(run=run_fetch)
    eg = verbs.add_parser(
        "example", help="write a bundled example's files into a folder (the documentation's examples run on them)",
        description="Write the bundled example's files into FOLDER: source.txt, ref0.txt, ref1.txt, "
                    "systems/*.txt (plain text, a sentence a line), outputs.tsv (the same as one table), "
                    "styles.tsv (labelled text to train a style model on) and pairs.tsv (scored pairs to train a "
                    "content model on; a toy set). Files of those names are overwritten.",
        epilog="example: styleval data example formality demo && cd demo && styleval score --input outputs.tsv")
    eg.add_argument("name", metavar="NAME", help="the example (formality)")
    eg.add_argument("folder", metavar="FOLDER", help="where to write the files (created if needed)")
    eg.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    eg.set_defaults(run=run_example)


def run_example(args: argparse.Namespace) -> int:
    from ..examples import write_files

    written = write_files(args.name, args.folder)
    if not args.quiet:
        print(f"wrote {len(written)} files into {args.folder}: " + ", ".join(
            str(p.relative_to(args.folder)) for p in written), file=sys.stderr)
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from ..datasets import fetch

    manifest = fetch.load_manifest()
    if not args.names:
        for entry in manifest.values():
            print(f"{entry.name}: {len(entry.files)} files, {entry.size / 1e6:.1f} MB, {entry.repository} @ "
                  f"{entry.commit[:7]}; licence: {entry.licence}")
        return 0
    entries = [fetch.entry(name, manifest) for name in args.names]  # every name checked before any download
    for entry in entries:
        try:
            report = fetch.fetch(entry.name, args.dir, mirror=args.mirror, retries=args.retries, manifest=manifest,
                                 verify=args.verify)
        except fetch.FetchError as exc:
            if args.mirror or os.environ.get(fetch.MIRROR_ENV):
                raise
            raise fetch.FetchError(f"{exc}; without access to GitHub, fetch from a copy of the files: --mirror URL "
                                   f"(or ${fetch.MIRROR_ENV}), a server of URL/NAME/PATH as ../shared/data lays "
                                   "them out (e.g. python -m http.server in that folder)") from None
        if args.quiet:
            continue
        if report.present:
            how = "every sha256 checked" if report.checked == "sha256" else \
                "sizes and modification times as fetched; --verify checks every sha256"
            state = f"already complete: {how}"
        else:
            resumed = f", {len(report.resumed)} resumed" if report.resumed else ""
            state = f"{len(report.downloaded)} files, {report.bytes_received:,} bytes{resumed}; sha256 checked"
            if report.repaired:
                shown = ", ".join(report.repaired[:3]) + (f" and {len(report.repaired) - 3} more"
                                                           if len(report.repaired) > 3 else "")
                state = f"{len(report.repaired)} changed since fetched, downloaded again: {shown}; {state}"
        print(f"{entry.name}: {report.folder} ({state}; {entry.repository} @ {entry.commit[:7]})")
        print(f"  licence: {entry.licence}")
        print(f"  cite: {entry.citation}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    width = max(map(len, DATASETS))
    for name, (what, loader) in DATASETS.items():
        views = "human, outputs, stored scores" if loader else "outputs"
        print(f"{name.ljust(width)}  {what} [{views}]")
    return 0


def _meta_dataset(name: str, root: str | None) -> Any:
    from ..meta import datasets as meta_datasets

    loader = DATASETS[name][1]
    if loader is None:
        raise InputError(f"{name} has no human judgments or stored scores: export its --outputs only")
    load: Callable[..., Any] = getattr(meta_datasets, loader)
    return load(root)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def run_export(args: argparse.Namespace) -> int:
    from ..datasets.export import dataset_name, dataset_records, write_records_table
    from ..outputs import atomic_writer, check_destinations, shown

    name = dataset_name(args.dataset)
    if name not in DATASETS:
        import difflib

        close = difflib.get_close_matches(name, list(DATASETS), n=2)
        raise InputError(f"unknown dataset {args.dataset!r}" + (f"; did you mean {' or '.join(close)}?" if close
                                                                 else "") + f" (datasets: {', '.join(DATASETS)})")
    if not (args.human or args.outputs or args.stored_scores):
        raise InputError("nothing to write: give --human FILE, --outputs FILE and/or --stored-scores FILE")
    check_destinations(("--human", args.human), ("--outputs", args.outputs), ("--stored-scores", args.stored_scores))
    notes = []
    if args.human or args.stored_scores:
        data = _meta_dataset(name, args.root)
        if args.human:
            frame = data.judgments.frame
            data.judgments.write(args.human)
            notes.append(f"wrote {shown(args.human)}: {_plural(len(frame), 'judgment')} of "
                         f"{_plural(frame['system'].nunique(), 'system')} x "
                         f"{_plural(frame['segment'].nunique(), 'segment')}; aspects "
                         f"{', '.join(sorted(frame['aspect'].unique()))}")
        if args.stored_scores:
            table = data.metrics[["system", "segment", "metric", "score"]].copy()
            table["higher_is_better"] = [m not in data.lower_is_better for m in table["metric"]]
            with atomic_writer(args.stored_scores) as fh:
                if str(args.stored_scores).endswith(".jsonl"):
                    table.to_json(fh, orient="records", lines=True, force_ascii=False)
                else:
                    sep = "\t" if str(args.stored_scores).endswith((".tsv", ".tab")) else ","
                    table.to_csv(fh, sep=sep, index=False, lineterminator="\n")
            notes.append(f"wrote {shown(args.stored_scores)}: {_plural(len(table), 'stored score')} of "
                         f"{_plural(table['metric'].nunique(), 'metric')}")
    if args.outputs:
        records = dataset_records(name, args.root)
        write_records_table(records, args.outputs)
        notes.append(f"wrote {shown(args.outputs)}: {_plural(len(records), 'output')} of "
                     f"{_plural(len({r.system for r in records}), 'system')}")
    if not args.quiet:
        for note in notes:
            print(note, file=sys.stderr)
    return 0
