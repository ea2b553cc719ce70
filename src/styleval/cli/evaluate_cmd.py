"""``styleval evaluate``: the recommended metric battery for a transfer direction, with intervals, significance
marks, overall scores and the reasons for each choice. Inputs are those of ``styleval score``."""
from __future__ import annotations

import argparse
import sys

from ..models.catalog import DEFAULT_CAUSAL_LM
from . import paper_options, progress, score_cmd
from .score_options import add_statistics_arguments, statistics_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="run the recommended style/content/fluency battery with overall scores",
                       description="Evaluate systems with the metrics recommended for their transfer direction: "
                                   "style classifier accuracy and EMD, content against the source (the similarity "
                                   "metric chosen by a rule on human content judgments) and the references (BLEU, "
                                   "chrF, METEOR), fluency (acceptability, the shipped "
                                   "classifier, and perplexity under a language model), and "
                                   "overall HM, GM and J, each with a bootstrap interval and paired tests (for the "
                                   "overall scores the segments are resampled jointly). Inputs are those of "
                                   "`styleval score`. Name systems MODEL@SETTING (e.g. caae@0.1, caae@0.5) to have "
                                   "the report's trade-off plots draw one line per model through its settings.")
    score_cmd.add_input_arguments(p)
    add_statistics_arguments(p, significance="paired-bootstrap")
    b = p.add_argument_group("battery")
    b.add_argument("--fast", action="store_true",
                   help="leave out the neural content and fluency models (lexical metrics and the style classifier)")
    b.add_argument("--style-model", default="auto",
                   help="style classifier: shipped name, model folder, transformers classifier folder, or hub id "
                        "with STYLEVAL_ALLOW_HUB=1 (default: auto, the shipped one covering the direction)")
    b.add_argument("--style-labels", default=None, metavar="LABELS",
                   help="a transformers style classifier's labels as styles, e.g. 'LABEL_0=informal,LABEL_1=formal' "
                        "(default: its config's id2label); for a single-output head LOW,HIGH")
    b.add_argument("--style-threshold", type=float, default=None, metavar="T",
                   help="a single-output style head's decision: the score from which an output counts for the "
                        "high style")
    b.add_argument("--fluency-model", default=None, metavar="MODEL",
                   help="acceptability classifier for J's fluency factor: a CoLA-style transformers classifier "
                        "folder, a hub id with STYLEVAL_ALLOW_HUB=1, or an acceptability folder (default: the "
                        "shipped acceptability-smollm2)")
    b.add_argument("--acceptable-label", default=None, metavar="LABEL",
                   help="the --fluency-model label (name or index) that means acceptable (default: the label "
                        "named 'acceptable')")
    from ..evaluation.plan import CONTENT_MODELS, DEFAULT_CONTENT_MODEL

    b.add_argument("--content-model", choices=tuple(CONTENT_MODELS), default=DEFAULT_CONTENT_MODEL,
                   help="content metric against the source, J's SIM (default: %(default)s, MiniLM sentence "
                        "cosine, the similarity rule's choice: the learned preservation metric leads on the "
                        "in-repository human content sets but not on outside ones, docs/results.md; "
                        "`styleval metrics NAME` gives each one's versions and figures)")
    b.add_argument("--lm", default=DEFAULT_CAUSAL_LM, help=f"generic LM for perplexity (default: {DEFAULT_CAUSAL_LM})")
    b.add_argument("--style-lm", action="append", default=[], metavar="STYLE=DIR",
                   help="a target-style LM for perplexity (repeatable), e.g. formal=lms/formal")
    b.add_argument("--fluency", choices=("acceptability", "perplexity"), default="acceptability",
                   help="the metric behind J's fluency factor (default: acceptability, the shipped classifier)")
    b.add_argument("--fluency-threshold", type=float, default=None,
                   help="pass threshold of J's fluency factor: acceptability at or above it (default 0.5), or "
                        "perplexity at or below it (default 200)")
    anchor = b.add_mutually_exclusive_group()
    anchor.add_argument("--anchor", dest="anchor", action="store_const", const=True, default=None,
                        help="require the human references as an anchor row (system 'human-reference': each input's "
                             "first reference scored against the others): an error when an input has fewer than two "
                             "references. Without --anchor or --no-anchor the row is added when every input has two "
                             "references or more")
    anchor.add_argument("--no-anchor", dest="anchor", action="store_const", const=False,
                        help="leave out the anchor row of the human references")
    b.add_argument("--naturalness", nargs="?", const="unigram", choices=("unigram", "embedding"), default=None,
                   help="also compute Mir et al.'s adversarial naturalness (share of outputs a classifier trained to "
                        "tell inputs from outputs finds more human-like than their input) with a unigram (default) "
                        "or sentence-embedding classifier; the report then plots naturalness against style "
                        "intensity")
    f = p.add_argument_group("the field's setups (docs/field-models.md)")
    f.add_argument("--setup", metavar="NAME", default=None,
                   help="run a published protocol with its own models and formula instead of the battery: "
                        "paradetox (J of Logacheva et al. 2022), krishna2020 (J(A,S,F)), gyafc (accuracy, BLEU "
                        "against the references, HM); its models come from the hub (STYLEVAL_ALLOW_HUB=1) or from "
                        "--model-dir")
    f.add_argument("--model-dir", action="append", default=[], metavar="HUB_ID=DIR",
                   help="a local copy of one of the setup's hub models (repeatable)")
    o = p.add_argument_group("outputs")
    o.add_argument("--json", metavar="FILE", help="write the evaluation as JSON (input of `styleval report`)")
    o.add_argument("--html", metavar="FILE", help="also write the HTML report")
    o.add_argument("--markdown", metavar="FILE", help="also write the Markdown report")
    paper_options.add_arguments(o)
    o.add_argument("--human", metavar="FILE",
                   help="human judgments (CSV/TSV/JSONL, as for `styleval meta`) whose correlations with every "
                        "metric the HTML/Markdown report shows; needs --html or --markdown")
    o.add_argument("--exclude-system", action="append", default=[], metavar="SYSTEM",
                   help="leave SYSTEM out of the correlations with --human (repeatable), e.g. the human references "
                        "as Lai et al. 2022 do (--exclude-system ref); the report names the systems left out")
    o.add_argument("--no-progress", action="store_true", help="no progress bar")
    o.add_argument("--quiet", "-q", action="store_true",
                   help="no progress, notes or warnings: the report on stdout (nothing when --json, --html or "
                        "--markdown hold it) and errors")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.setup:
        return run_setup(args)
    if args.model_dir:
        from ..errors import InputError

        raise InputError("--model-dir gives local copies of a setup's models: use it with --setup NAME")
    from ..errors import InputError
    from ..evaluation import evaluate
    from ..evaluation.summary import signature_rows
    from ..report.text import text_report

    style_lms = {}
    for item in args.style_lm:
        style, sep, path = item.partition("=")
        if not sep or not style.strip() or not path.strip():
            raise InputError(f"--style-lm {item!r}: expected STYLE=DIR")
        style_lms[style.strip()] = path.strip()
    from ..outputs import check_destinations, shown

    check_destinations(("--json", args.json), ("--html", args.html), ("--markdown", args.markdown),
                       *paper_options.destinations(args),
                       inputs=score_cmd.input_files(args) + [("--style-lm", d) for d in style_lms.values()])
    human = None
    if args.exclude_system and not args.human:
        raise InputError("--exclude-system leaves systems out of the correlations with human judgments: give --human")
    if getattr(args, "human", None):
        if not (args.html or args.markdown):
            raise InputError("--human adds correlations to the report: give --html FILE and/or --markdown FILE")
        from ..meta.judgments import Judgments

        human = Judgments.read(args.human)  # read before the long evaluation, so a bad file fails fast
    records = score_cmd.load_records(args)
    with progress.make(not (args.no_progress or args.quiet)) as bar:
        ev = evaluate(records, style_model=args.style_model, content_model=args.content_model,
                      fluency_model=args.fluency_model, style_labels=args.style_labels,
                      style_threshold=args.style_threshold, acceptable_label=args.acceptable_label, lm=args.lm,
                      style_lms=style_lms or None, fluency=args.fluency, fluency_threshold=args.fluency_threshold,
                      fast=args.fast, naturalness=args.naturalness, options=statistics_options(args), progress=bar,
                      anchor=args.anchor)
        from ..outputs import input_files
        from ..report.provenance import run_facts

        ev.settings["run"] = run_facts(getattr(args, "argv", []), score_cmd.input_files(args)
                                       + [f for d in style_lms.values() for f in input_files("--style-lm", d)])
        if args.json:
            ev.write_json(args.json)
        if args.html or args.markdown:
            from ..report.html import write_report

            bar("writing the report", 0, 1)
            write_report(ev, html=args.html, markdown=args.markdown, human=human,
                         exclude_systems=args.exclude_system)
        paper_options.write_tables(args, ev)
    if not (args.quiet and any((args.json, args.html, args.markdown, args.latex, args.markdown_table))):
        data = ev.to_dict()
        print(text_report(data))
        print("\nsignatures:")
        for metric, sig in signature_rows(data):
            print(f"  {metric}: {sig}")
    if getattr(args, "verbose", False) and ev.timing:
        print(timing_text(ev.timing), file=sys.stderr)
    for path in (args.json, args.html, args.markdown, args.latex, args.markdown_table):
        if path:
            print(f"wrote {shown(path)}", file=sys.stderr)
    return 0


def run_setup(args: argparse.Namespace) -> int:
    """``evaluate --setup NAME``: the protocol's metrics, table, formula and differences from the paper."""
    from ..evaluation.setups import get_setup, parse_model_dirs, resolved_models, setup_specs
    from ..models.spec import hub_allowed
    from ..outputs import check_destinations, shown
    from ..scoring import score

    setup = get_setup(args.setup)
    models = resolved_models(setup, parse_model_dirs(args.model_dir), hub_allowed=hub_allowed())
    check_destinations(("--json", args.json), inputs=score_cmd.input_files(args))
    records = score_cmd.load_records(args)
    if setup.needs_references and not all(r.references for r in records):
        from ..errors import InputError

        raise InputError(f"setup {setup.name!r} scores against references: give --reference files (or a table "
                         "with ref columns) for every input")
    with progress.make(not (args.no_progress or args.quiet)) as bar:
        result = score(records, setup_specs(setup, models), options=statistics_options(args), progress=bar)
    if args.json:
        result.write_json(args.json)
    if not args.quiet:
        print(f"{setup.title}\n  {setup.formula}\n  paper: {setup.paper}\n  code: {setup.code}")
        for m in setup.models:
            print(f"  {m.role}: {models[m.role]}  ({m.note})")
        for d in setup.differences:
            print(f"  differs from the paper: {d}")
        print()
        score_cmd.print_result(result)
    if args.json:
        print(f"wrote {shown(args.json)}", file=sys.stderr)
    return 0


def timing_text(timing: dict) -> str:
    """Where the run's time went (``--verbose``): each model's passes, the loads, then each metric and the
    statistics."""
    total = timing["total_seconds"]
    cpu = timing.get("total_cpu_seconds")
    lines = [f"time: {total:.1f} s in all" + (f" ({cpu:.1f} CPU-s)" if cpu is not None else "")]
    for title, key in (("model passes (own time, texts passed)", "model_passes"),
                       ("loading models and resources (imports included)", "loads"),
                       ("metrics (their model passes and loads included)", "metrics"), ("statistics", "statistics")):
        rows = timing.get(key) or {}
        if rows:
            lines.append(f"  {title}:")
        for name, t in sorted(rows.items(), key=lambda kv: -kv[1]["seconds"]):
            texts = (f", {t['cpu_seconds']:.1f} CPU-s" if "cpu_seconds" in t else "") \
                + (f", {t['texts']:,} texts" if key == "model_passes" else "")
            lines.append(f"    {name}: {t['seconds']:.1f} s ({t['seconds'] / total:.0%}){texts}" if total else
                         f"    {name}: {t['seconds']:.1f} s{texts}")
    return "\n".join(lines)
