"""The metric and statistics options of ``styleval score`` (in memory or ``--stream``) read into library objects."""
from __future__ import annotations

import argparse

from ..engine.metric_specs import Modifier
from ..errors import InputError
from ..engine.options import SIGNIFICANCE_METHODS, StatisticsOptions


def add_statistics_arguments(p: argparse.ArgumentParser, significance: str = "none") -> None:
    """Intervals and paired tests; shared by ``score`` and ``evaluate``."""
    s = p.add_argument_group("statistics")
    s.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for CIs (0: none)")
    s.add_argument("--confidence", type=float, default=0.95,
                   help="coverage of the bootstrap confidence intervals (default 0.95: 95%% intervals)")
    s.add_argument("--significance", choices=SIGNIFICANCE_METHODS, default=None,
                   help=f"paired test between systems (default: {significance}"
                        + ("; none with --bootstrap 0)" if significance == "paired-bootstrap" else ")"))
    p.set_defaults(default_significance=significance)
    s.add_argument("--baseline", help="compare every system with this one (default: all pairs)")
    s.add_argument("--seed", type=int, default=12345,
                   help="seed of the bootstrap resamples and the paired tests: the same seed gives the same "
                        "intervals and p-values (default 12345)")


def statistics_options(args: argparse.Namespace) -> StatisticsOptions:
    """The options :func:`add_statistics_arguments` read."""
    given = {"bootstrap": args.bootstrap, "confidence": args.confidence, "baseline": args.baseline, "seed": args.seed}
    if args.significance is not None:
        given["significance"] = args.significance
    # the command's default test, dropped by StatisticsOptions.given when --bootstrap 0 leaves it no resamples
    return StatisticsOptions.given(StatisticsOptions(significance=args.default_significance), **given)


def split_specs(text: str) -> list[str]:
    """Split ``bleu,chrf:word_order=2;lowercase=true`` into specs (the grammar of
    :mod:`styleval.metrics.spec`: ',' separates metrics, ';' parameters, double quotes keep both in a value)."""
    from ..metrics.spec import split_list

    return split_list(text)


def build_modifiers(args: argparse.Namespace) -> list[Modifier]:
    """Modified variants of the content metrics asked for by flags."""
    modifiers: list[Modifier] = []
    if args.style_mask or args.style_remove:
        from ..metrics.style import StyleMask, StyleRemove
        from ..style_models.lexicon import load_lexicon

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
