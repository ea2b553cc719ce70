"""``styleval score``: score one or many systems with any metrics; table on the terminal, files on request."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..errors import InputError
from ..records import Record
from ..results import ScoreResult
from ..scoring import SIGNIFICANCE_METHODS, Modifier, score
from . import progress

DEFAULT_METRICS = "bleu,chrf,chrf++,ter,rouge1,rouge2,rougeL,meteor,pinc,levenshtein"


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """Where the records come from; shared by ``score`` and ``evaluate``."""
    src = p.add_argument_group("inputs")
    src.add_argument("--input", action="append", default=[], metavar="TABLE",
                     help="TSV/CSV/JSONL with columns source, output, ref*, system, id, direction (repeatable)")
    src.add_argument("--system", action="append", default=[], metavar="[NAME=]FILE",
                     help="one system's outputs, one sentence per line (repeatable)")
    src.add_argument("--systems-dir", metavar="DIR", help="a directory whose every file is one system's outputs")
    src.add_argument("--source", metavar="FILE", help="source sentences, one per line")
    src.add_argument("--reference", "-r", action="append", default=[], metavar="FILE",
                     help="a reference file, one sentence per line (repeatable, for multi-reference metrics)")
    src.add_argument("--direction", metavar="SRC->TGT", help="transfer direction, e.g. informal->formal")
    src.add_argument("--example", metavar="NAME", help="score a bundled example (formality)")
    src.add_argument("--gyafc", metavar="ROOT", help="GYAFC release folder: sources and ref0..ref3 come from it; "
                                                     "give outputs with --system NAME=FILE and pick --direction "
                                                     "and --domain")
    src.add_argument("--domain", help="GYAFC domain (Entertainment_Music or Family_Relationships; default both)")
    src.add_argument("--split", default="test", help="GYAFC split (default: test)")


def add_statistics_arguments(p: argparse.ArgumentParser, significance: str = "none") -> None:
    """Intervals and paired tests; shared by ``score`` and ``evaluate``."""
    s = p.add_argument_group("statistics")
    s.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for CIs (0: none)")
    s.add_argument("--confidence", type=float, default=0.95)
    s.add_argument("--significance", choices=SIGNIFICANCE_METHODS, default=significance,
                   help=f"paired test between systems (default: {significance})")
    s.add_argument("--baseline", help="compare every system with this one (default: all pairs)")
    s.add_argument("--seed", type=int, default=12345)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score system outputs with chosen metrics (content, style, fluency)",
                       description="Score one or many systems. Give plain-text files (--system/--systems-dir with "
                                   "--source and --reference) or tables with named columns (--input).")
    add_input_arguments(p)
    m = p.add_argument_group("metrics")
    m.add_argument("--metrics", "-m", default=DEFAULT_METRICS,
                   help=f"comma-separated metric specs, name or name:key=value;... (default: {DEFAULT_METRICS}). "
                        "Parameters inside a spec are separated by ';'")
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
    o.add_argument("--no-progress", action="store_true", help="no progress bar")
    o.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    from . import stream_cmd  # --stream, --cache, --engine ray: the scale engine (issue 17)

    stream_cmd.add_arguments(p)
    p.set_defaults(run=run)


def split_specs(text: str) -> list[str]:
    """Split ``bleu,chrf:word_order=2;lowercase=true`` into specs; ';' separates parameters inside a spec."""
    return [spec.strip().replace(";", ",") for spec in text.split(",") if spec.strip()]


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
        from ..readers import read_gyafc

        outputs = {}
        for item in args.system:
            name, sep, path = item.partition("=")
            if not sep:
                raise InputError(f"with --gyafc, name each system: --system NAME=FILE (got {item!r})")
            outputs[name] = path
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


def input_files(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Every file the records, lexicons and models of ``score``/``evaluate`` are read from, with its option: an
    output path must not be one of them."""
    from ..outputs import input_files as files

    found: list[tuple[str, str]] = []
    if getattr(args, "example", None):
        from ..examples import get

        ex = get(args.example)
        found += files("--example", ex.systems_dir) + files("--example", ex.source)
        for ref in ex.references:
            found += files("--example", ref)
    for table in args.input:
        found += files("--input", table)
    for item in args.system:
        name, sep, path = item.partition("=")
        found += files("--system", path if sep else item)
    for option, value in (("--systems-dir", args.systems_dir), ("--source", args.source), ("--gyafc", args.gyafc),
                          ("--style-mask", getattr(args, "style_mask", None)),
                          ("--style-remove", getattr(args, "style_remove", None)),
                          ("--human", getattr(args, "human", None))):
        found += files(option, value)
    for ref in args.reference:
        found += files("--reference", ref)
    lexicon = getattr(args, "sentiment_aware", None)
    if lexicon and ":" in lexicon:
        found += files("--sentiment-aware", lexicon.split(":", 1)[1])
    return found


def check_metrics(text: str) -> list[str]:
    """The metric specs of ``--metrics``; an empty list is a one-line error (not a complaint about references)."""
    specs = split_specs(text)
    if not specs:
        raise InputError(f"--metrics names no metric (got {text!r}); give at least one, e.g. -m bleu "
                         "(`styleval metrics` lists them)")
    return specs


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


def build_modifiers(args: argparse.Namespace) -> "list[Modifier]":
    """Modified variants of the content metrics asked for by flags."""
    modifiers: list[Modifier] = []
    if args.style_mask or args.style_remove:
        from ..metrics.style import StyleMask, StyleRemove
        from ..style.lexicon import load_lexicon

        if args.style_mask:
            lex = load_lexicon(args.style_mask)
            modifiers.append(lambda m: StyleMask(inner=m, lexicon=lex, placeholder=args.mask_placeholder))
        if args.style_remove:
            lex_r = load_lexicon(args.style_remove)
            modifiers.append(lambda m: StyleRemove(inner=m, lexicon=lex_r))
    if args.entity_aware or args.sentiment_aware:
        from ..metrics.aware import EntityAware, SentimentAware

        if args.entity_aware:
            modifiers.append(lambda m: EntityAware(inner=m, ne_score=args.entity_aware) if m.higher_is_better
                             else None)
        if args.sentiment_aware:
            modifiers.append(lambda m: SentimentAware(inner=m, lexicon=args.sentiment_aware) if m.higher_is_better
                             else None)
    return modifiers


def run(args: argparse.Namespace) -> int:
    from ..outputs import check_destinations, shown
    from . import stream_cmd

    if stream_cmd.wanted(args):
        return stream_cmd.run(args)
    specs = check_metrics(args.metrics)
    check_destinations(("--json", args.json), ("--csv", args.csv), ("--segments-csv", args.segments_csv),
                       ("--jsonl", args.jsonl), inputs=input_files(args))
    records = load_records(args)
    bar = progress.make(not (args.no_progress or args.quiet))
    result = score(records, specs, against=[a.strip() for a in args.against.split(",")],
                   modifiers=build_modifiers(args),
                   bootstrap=args.bootstrap, confidence=args.confidence, significance=args.significance,
                   baseline=args.baseline, seed=args.seed, progress=bar)
    if args.json:
        result.write_json(args.json)
    if args.csv:
        result.write_csv(args.csv, level="corpus")
    if args.segments_csv:
        result.write_csv(args.segments_csv, level="segment")
    if args.jsonl:
        result.write_jsonl(args.jsonl)
    if args.quiet:
        return 0
    print(format_table(result))
    flagged = {r.system: len(r.flags.get("empty_output", [])) for r in result.results if r.flags.get("empty_output")}
    for system, n in flagged.items():
        print(f"note: {system}: {n} empty output(s) scored as they are (flagged in the segment files)")
    if result.comparisons:
        ci = f"{result.settings['confidence']:.0%} CI half-width after ±"
        if result.settings["baseline"]:
            print(f"\n* p < 0.05 against {result.settings['baseline']!r} ({result.settings['significance']}); {ci}")
        else:
            print(f"\n^bc: significantly better (p < 0.05, {result.settings['significance']}, all pairs) than the "
                  f"systems with those column letters; {ci}")
    elif args.bootstrap:
        print(f"\n± half-width of the {args.confidence:.0%} bootstrap CI ({args.bootstrap} resamples, "
              f"seed {args.seed})")
    print("\nsignatures:")
    for metric, sig in result.signatures().items():
        print(f"  {metric}: {sig}")
    for path in (args.json, args.csv, args.segments_csv, args.jsonl):
        if path:
            print(f"wrote {shown(path)}", file=sys.stderr)
    return 0
