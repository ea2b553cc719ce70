"""``styleval benchmark``: which metric (or judge) follows human judges, on every set styleval reads.

Thin over :mod:`styleval.benchmark`: parses options, prints the tables, writes the files asked for.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "benchmark", help="meta-evaluate metrics on every human-judgment set, each with its published convention",
        description="Score the metrics on every human-judgment set (lai2022, mir2019, sgdd-tst, and sets of your "
                    "own), correlate them with the human judgments task by task as each set's paper did, next to "
                    "the scores stored with each set, rank them in significance clusters per task and average per "
                    "aspect. Scores are cached per set and metric (--cache).",
        epilog="example: styleval benchmark -m bleu,chrf --sets lai2022 --json bench.json --html bench.html")
    p.add_argument("--metrics", "-m", default="",
                   help="comma-separated metric specs (as `styleval score -m`), e.g. bleu,chrf,llm_judge:aspect=style")
    p.add_argument("--recommended", action="store_true",
                   help="add the metrics styleval recommends per aspect (what `evaluate` relies on: style_accuracy, "
                        "sentence_cosine, acceptability)")
    p.add_argument("--scores", action="append", default=[], metavar="NAME:KIND=FILE",
                   help="your own scores: a CSV/TSV/JSONL with set, system, segment, score columns (set may be left "
                        "out with one set); KIND is style, content or fluency (repeatable)")
    p.add_argument("--sets", default="", help="comma-separated built-in sets (default: lai2022,mir2019,sgdd-tst); "
                                              "none: only the sets given with --set")
    p.add_argument("--set", action="append", default=[], metavar="NAME=DIR",
                   help="a set of your own: DIR holds benchmark.json, the outputs table and the human judgments "
                        "(docs/benchmark.md); repeatable")
    p.add_argument("--root", metavar="DIR", help="the folder holding the datasets (default: ../shared/data, "
                                                 "$STYLEVAL_SHARED_DATA, else the `data fetch` folder)")
    p.add_argument("--inputs", type=int, metavar="N",
                   help="run on the first N inputs of each set only (every system's outputs on them): a quick or "
                        "cheap subset, named as such on every task and output; the figures are not the whole set's")
    p.add_argument("--no-stored", action="store_true", help="leave out the scores stored with each set")
    p.add_argument("--cache", metavar="DIR", help="keep scores here between runs (a metric added later is the "
                                                  "only one scored)")
    p.add_argument("--metric-ties", choices=("discordant", "skip", "half", "concordant"),
                   help="how a metric's tie on a pair the humans rank counts in every Kendall tau-like task "
                        "(default: each set's convention; Lai et al.'s is discordant); the labels say so")
    p.add_argument("--ci", type=int, default=200, metavar="N", help="bootstrap resamples per figure (0: none)")
    p.add_argument("--permutations", type=int, default=200, metavar="N",
                   help="resamples of each pairwise permutation test behind the clusters (0: rank by figure)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the clusters")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the bootstrap intervals and permutation tests (default 0)")
    p.add_argument("--ceiling", action="store_true",
                   help="each task's human ceiling (split-half reliability of the human mean, Spearman-Brown) and one "
                        "rater against the rest, with intervals (--ci), and every figure as a share of the ceiling")
    p.add_argument("--strata", action="store_true",
                   help="each segment-level task's figures on inputs where the raters agree and where they do not "
                        "(split at the median rater spread), flagging metrics whose rank changes")
    p.add_argument("--dry-run", action="store_true",
                   help="for judges on a model server: print the requests and token estimate (and the cost with "
                        "price=) per set, send nothing, and stop")
    p.add_argument("--json", metavar="FILE", help="everything: tasks, figures, intervals, ranks, p-values, summary")
    p.add_argument("--csv", metavar="FILE", help="one row per task and metric")
    p.add_argument("--latex", metavar="FILE", help="per aspect a metrics x tasks table, top cluster in bold")
    p.add_argument("--html", metavar="FILE", help="a page with one heat map of metrics x tasks")
    p.add_argument("--digits", type=int, default=3)
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    p.set_defaults(run=run)


def _split(text: str) -> list[str]:
    from .score_options import split_specs

    return split_specs(text)


def _sets(args: argparse.Namespace) -> list:
    from ..benchmark import builtin_set, user_set, with_metric_ties

    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    if names == ["none"]:
        names = []
    elif not names:
        names = [] if args.set and not args.sets else ["lai2022", "mir2019", "sgdd-tst"]
    sets: list = list(names)
    for item in args.set:
        name, sep, folder = item.partition("=")
        if not sep or not name.strip() or not folder.strip():
            raise InputError(f"--set {item!r}: expected NAME=DIR")
        sets.append(user_set(name.strip(), folder.strip()))
    if not sets:
        raise InputError("no set to benchmark on: give --sets or --set NAME=DIR")
    if args.metric_ties:
        sets = [with_metric_ties(s if not isinstance(s, str) else builtin_set(s, args.root), args.metric_ties)
                for s in sets]
    return sets


def _human_options(args: argparse.Namespace) -> dict[str, bool]:
    return {k: True for k in ("ceiling", "strata") if getattr(args, k)}


def run(args: argparse.Namespace) -> int:
    from ..benchmark import benchmark, dry_run, plan_sets, recommended_metrics
    from ..benchmark import render
    from ..outputs import check_destinations, shown, write_text
    from .progress import make as make_progress

    metrics = _split(args.metrics)
    if args.recommended:
        metrics += [m for m in recommended_metrics() if m not in metrics]
    if not metrics and not args.scores and args.no_stored:
        raise InputError("nothing to benchmark: give --metrics, --scores, or keep the stored scores")
    check_destinations(("--json", args.json), ("--csv", args.csv), ("--latex", args.latex), ("--html", args.html))
    sets = plan_sets(_sets(args), args.root, args.inputs)
    if args.dry_run:
        plan = dry_run(metrics, sets, root=args.root)
        if not plan:
            print("dry run: no metric sends requests to a model server; nothing would be sent")
            return 0
        for item in plan:
            cost = f", cost {item['cost']:.4f}" if "cost" in item else ""
            where = f"{item['set']}[{item['subset']}]" if item["subset"] else item["set"]
            print(f"{where}: {item['metric']}: {item['requests']:,} requests, about "
                  f"{item['prompt_tokens']:,} prompt + {item['completion_tokens']:,} completion tokens{cost}")
        total = sum(i["requests"] for i in plan)
        print(f"dry run: {total:,} requests in all; nothing was sent")
        return 0
    with make_progress(not args.quiet) as bar:
        result = benchmark(metrics, sets, root=args.root, scores=args.scores, stored=not args.no_stored,
                           cache_dir=args.cache, ci=args.ci, n_permutations=args.permutations, alpha=args.alpha,
                           seed=args.seed, progress=bar, **_human_options(args))
    texts = {"json": lambda: render.to_json(result), "csv": lambda: render.to_csv(result),
             "latex": lambda: render.to_latex(result, args.digits), "html": lambda: render.to_html(result, args.digits)}
    written = [key for key in texts if getattr(args, key)]
    for key in written:
        write_text(getattr(args, key), texts[key]())
    if not args.quiet:
        print(render.format_text(result, args.digits))
        for key in written:
            print(f"wrote {shown(getattr(args, key))}", file=sys.stderr)
    return 0
