"""``styleval metrics``: every metric in a table that fits a terminal, the recommended default of each aspect
marked; ``styleval metrics NAME``: one metric in full (parameters, reference implementation, signature, the shipped
model behind it and that model's figures on human judgments, from its card)."""
from __future__ import annotations

import argparse
import difflib
import shutil
import textwrap
from typing import Any

from ..errors import InputError
from ..metrics import registry

ASPECT_ORDER = ("style", "content", "fluency", "overall")
#: Width of the table when the terminal's is unknown, and the bounds of any width used.
WIDTH, MIN_WIDTH, MAX_WIDTH = 100, 80, 120


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("metrics", help="list the metrics (recommended defaults marked); NAME: one in full",
                       description="Without NAME: every metric with its aspect, direction, needs and a short "
                                   "description; * marks the recommended default of each aspect (what `styleval "
                                   "evaluate` relies on). With NAME: the metric in full: every parameter with its "
                                   "default and meaning, the reference implementation its scores equal, its "
                                   "signature format and, for a metric backed by a shipped model, that model's "
                                   "figures on human judgments from its card. A metric is asked for by its spec, "
                                   "NAME:key=value;key=value (',' separates metrics in a list; a value holding ';', "
                                   "',', '\"' or '\\' is written in double quotes, with \\\" and \\\\ inside: "
                                   "style_emd:ground=\"0 1; 1 0\"); the same grammar in Python (registry.parse_spec), "
                                   "JSON and signatures (docs/metrics.md).")
    p.add_argument("name", nargs="?", metavar="NAME", help="a metric name (e.g. bleu, preservation, style_accuracy)")
    p.add_argument("--width", type=int, metavar="N",
                   help=f"table width (default: the terminal's, {MIN_WIDTH}-{MAX_WIDTH}; {WIDTH} when not a terminal)")
    p.set_defaults(run=run)


def recommended() -> dict[str, tuple[str, str]]:
    """Metric name -> (aspect, what it does in evaluate) for the recommended default of each aspect."""
    from ..evaluation.plan import RECOMMENDED

    return {name: (aspect, why) for aspect, (name, why) in RECOMMENDED.items()}


SHORT_NEEDS = {"source": "src", "references": "refs", "target_style": "target"}


def needs_text(cls: Any, short: bool = False) -> str:
    """What a metric needs besides the outputs: ``source or references`` for a content metric that takes
    ``against``, else its ``needs`` (``short``: src, refs, target)."""
    if registry.accepts_against(cls):
        return "src or refs" if short else "source or references"
    needs = sorted(cls.needs) if isinstance(cls.needs, frozenset) else ["source"]  # PINC: fixed to the source
    return ", ".join(SHORT_NEEDS[n] if short else n.replace("_", " ") for n in needs) or "-"


def _width(asked: int | None) -> int:
    if asked is not None:
        return max(asked, 40)
    columns = shutil.get_terminal_size((WIDTH, 24)).columns
    return min(max(columns, MIN_WIDTH), MAX_WIDTH)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)].rstrip() + "…"


#: Lines of description a metric gets in the table (the rest: ``styleval metrics NAME``).
DESCRIPTION_LINES = 2


def table_lines(width: int) -> list[str]:
    """The compact table: metrics grouped by aspect, the recommended default first and starred, each description
    wrapped to the room left and cut after two lines."""
    marks = recommended()
    classes = registry.available()
    order = {a: i for i, a in enumerate(ASPECT_ORDER)}
    names = sorted(classes, key=lambda n: (order.get(classes[n].aspect.value, len(order)), n not in marks, n))
    rows = [(n + (" *" if n in marks else ""), classes[n].aspect.value,
             "higher" if classes[n].higher_is_better else "lower", needs_text(classes[n], short=True),
             classes[n].description) for n in names]
    header = ("metric", "aspect", "better", "needs", "description")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    indent = sum(widths) + 2 * 4
    room = max(width - indent, 20)
    lines = []
    for row in [header, *rows]:
        parts = textwrap.wrap(row[4], room) or [""]
        if len(parts) > DESCRIPTION_LINES:
            parts = parts[:DESCRIPTION_LINES - 1] + [_clip(" ".join(parts[DESCRIPTION_LINES - 1:]), room)]
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row[:4], widths)) + "  " + parts[0])
        lines += [" " * indent + part for part in parts[1:]]
    return lines


def run(args: argparse.Namespace) -> int:
    width = _width(args.width)
    if args.name:
        print("\n".join(detail_lines(args.name, width)))
        return 0
    print("\n".join(table_lines(width)))
    print(textwrap.fill("* the recommended default of its aspect: what `styleval evaluate` relies on (README, "
                        "\"Which metric?\"). `styleval metrics NAME` shows a metric in full: parameters, reference "
                        "implementation, signature and its model's figures on human judgments.", width))
    return 0


# ------------------------------------------------------------------------------------------------ one metric
def metric_or_error(name: str) -> Any:
    """The metric class called ``name``, or a one-line :class:`InputError` naming the closest names."""
    classes = registry.available()
    if name in classes:
        return classes[name]
    lowered = {n.lower(): n for n in classes}
    if name.lower() in lowered:
        return classes[lowered[name.lower()]]
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(lowered[c] for c in close)}?" if close else ""
    raise InputError(f"unknown metric {name!r}{hint} (`styleval metrics` lists them all)")


def wrap_at_bars(text: str, width: int, indent: str = "") -> list[str]:
    """A signature on lines of at most ``width``, broken after a ``|`` (a part longer than a line stands alone)."""
    lines: list[str] = []
    current = indent
    for part in text.split("|"):
        piece = part if current == indent else "|" + part
        if current != indent and len(current) + len(piece) > width:
            lines.append(current + "|")
            current, piece = indent, part
        current += piece
    return lines + [current]


def signature_format(cls: Any) -> str:
    """The signature a score of the metric with default parameters carries, resources left as a placeholder."""
    from ..metrics.guide import parameters
    from ..signature import Signature, library_version

    params = {p.name: ("<required>" if p.required else p.default) for p in parameters(cls) if p.name != "against"}
    if issubclass(cls, _composite()) and "<required>" not in params.values():
        # a composite resolves its defaults when built (j: fluency_threshold auto -> 0.5): as a score's signature
        params = {k: (v.metric_id.spec() if hasattr(v, "metric_id") else v) for k, v in cls().get_params().items()}
    libs = {lib: library_version(lib) for lib in cls.libraries}
    libs["styleval"] = library_version("styleval")
    against = next((p.default for p in parameters(cls) if p.name == "against"), None)
    text = str(Signature(metric=cls.name, version=cls.version, against=None if against is None else str(against),
                         params=params, libraries=libs))
    if against is not None:
        text = text.replace(f"against:{against}", f"against:{against}|nrefs:N", 1)
    return text


def _shipped_models(cls: Any) -> list[tuple[str, str]]:
    """(kind, name) of the shipped models behind the metric's default ``model`` (``auto``: every shipped style
    classifier, one of which the direction picks)."""
    from ..metrics.guide import model_parameter_default
    from ..models import cards
    from ..models import registry as models

    default = model_parameter_default(cls)
    if default is None:
        return []
    if default == "auto" and cls.aspect.value == "style":
        return [(models.STYLE, name) for name, folder in models.shipped(models.STYLE).items()
                if cards.read_card(folder, models.STYLE).get("kind") == "classifier"]
    return [(kind, default) for kind in models.SHIPPED if default in models.shipped(kind)]


def model_lines(kind: str, name: str, default: bool, width: int) -> list[str]:
    """A shipped model: version, card, held-out headline and every figure on human judgments from its card."""
    from ..models import cards
    from ..models import registry as models

    folder = models.resolve(kind, name)
    card = cards.read_card(folder, kind)
    head = f"model {name} ({kind}, model version {card.get('version', '?')}" + (", the default)" if default else ")")
    lines = [head, f"  card: {folder / 'README.md'}"]
    headline = cards.held_out_headline(card) if (card.get("held_out") or card.get("test")) else ""
    if headline:
        lines += textwrap.wrap(f"held out: {headline}", width, initial_indent="  ", subsequent_indent="    ")
    figures = cards.human_figure_lines(card)
    if not figures:
        lines += textwrap.wrap("on human judgments: none recorded in its card (no public human judgments of its kind "
                               "in ../shared/data)", width, initial_indent="  ", subsequent_indent="    ")
        return lines
    lines.append("  on human judgments (from its card; docs/results.md):")
    for line in figures:
        lines += textwrap.wrap(line, width, initial_indent="    ", subsequent_indent="      ")
    return lines


def chunks_text(cls: Any) -> str:
    """Whether the metric may be scored in chunks: yes, no (why), or, where its parameters decide (a property on
    the class: BERTScore's idf, the composites' components), why its defaults are not, read from a default
    instance."""
    from ..metrics.guide import parameters

    batch_independent = cls.batch_independent
    if isinstance(batch_independent, bool):
        return "yes" if batch_independent else f"no ({cls.batch_dependence})"
    why = cls.batch_dependence if isinstance(cls.batch_dependence, str) else ""
    if not why and not any(p.required for p in parameters(cls)):
        default = cls()
        why = ("yes with its defaults" if default.batch_independent
               else f"not with its defaults: {default.batch_dependence}")
    return f"it depends on the parameters: {why or 'those of its components'}"


def _composite() -> type:
    from ..metrics.overall.composite import CompositeMetric

    return CompositeMetric


def detail_lines(name: str, width: int) -> list[str]:
    """``styleval metrics NAME``: the whole entry."""
    from ..metrics.guide import parameters, reference

    cls = metric_or_error(name)
    marks = recommended()
    lo, hi = cls.value_range
    lines = [f"{cls.name}: {cls.aspect.value} metric, {'higher' if cls.higher_is_better else 'lower'} is better, "
             f"range {lo:g}..{hi:g}, metric version {cls.version}"]
    if cls.name in marks:
        aspect, why = marks[cls.name]
        lines += textwrap.wrap(f"recommended default for {aspect}: {why}", width)
    lines += [""] + textwrap.wrap(cls.description, width)
    needs = needs_text(cls)
    lines += [""] + textwrap.wrap(f"needs: {needs}" + (
        " (the CLI and styleval.score compute both sides unless --against narrows them: columns NAME/src and "
        "NAME/ref)" if registry.accepts_against(cls) else ""), width)
    params = parameters(cls)
    lines.append("parameters (NAME:key=value;key=value; a value holding ';' or ',' in double quotes):" if params
                 else "parameters: none")
    for p in params:
        shown = "required" if p.required else f"default {p.default!r}"
        lines += textwrap.wrap(f"{p.name} ({shown}): {p.meaning or 'no description'}", width,
                               initial_indent="  ", subsequent_indent="      ")
    lines += textwrap.wrap(f"scored in chunks (score --stream, --cache): {chunks_text(cls)}", width,
                           subsequent_indent="  ")
    if getattr(cls, "measures_novelty", False):
        lines += textwrap.wrap("in the benchmark: a novelty measure (higher = further from what it "
                               "compares against), negated against human judgments of its aspect, so a positive "
                               "figure means agreement", width, subsequent_indent="  ")
    ref = reference(cls)
    if ref:
        lines += textwrap.wrap(f"reference implementation: {ref}", width, subsequent_indent="  ")
    lines += ["signature (resources such as model hashes are added when scoring):"]
    lines += wrap_at_bars(signature_format(cls), width, indent="  ")
    shipped = _shipped_models(cls)
    if shipped:
        lines.append("")
        if len(shipped) > 1:
            lines += textwrap.wrap("model=auto picks the shipped classifier whose labels cover the direction's styles:",
                                   width)
        for kind, model in shipped:
            lines += model_lines(kind, model, default=len(shipped) == 1, width=width)
    return lines
