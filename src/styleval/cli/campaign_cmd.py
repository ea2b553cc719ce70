"""``styleval campaign``: create, list, inspect and export human evaluation campaigns."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..errors import InputError, ResourceUnavailableError
from .direction_help import METAVAR, direction_help
from .encoding import add_encoding_argument

if TYPE_CHECKING:
    from ..human import CampaignSpec

MISSING = "campaigns need SQLAlchemy (run scripts/setup_human_eval_deps.sh)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("campaign", help="create, list, inspect and export human evaluation campaigns")
    _arguments(p)
    p.set_defaults(run=run)


def _arguments(p: argparse.ArgumentParser) -> None:
    verbs = p.add_subparsers(dest="action", metavar="ACTION")
    verbs.required = True

    c = verbs.add_parser("create", help="a campaign from system outputs")
    _db(c)
    c.add_argument("--name", required=True)
    c.add_argument("--protocol", required=True, help="see 'styleval campaign protocols'")
    c.add_argument("--sources", help="source sentences, one per line (with --outputs)")
    c.add_argument("--outputs", nargs="+", default=[], metavar="[NAME=]FILE",
                   help="one file per system, named NAME (as in `styleval score --system NAME=FILE`) or else by "
                        "the file's stem; files with the same stem (every system's test.0.tsf) need names")
    c.add_argument("--table", nargs="+", default=[], help="TSV/CSV/JSONL tables with source, output[, system]")
    c.add_argument("--references", nargs="*", default=[], help="reference files (kept with the records)")
    c.add_argument("--direction", metavar=METAVAR, help=direction_help())
    add_encoding_argument(c)
    c.add_argument("--annotators", default="3", help="a number, or comma-separated names")
    c.add_argument("--per-item", type=int, default=1, help="annotators per item (default 1)")
    c.add_argument("--controls", type=int, default=2, help="control items per annotator (default 2)")
    c.add_argument("--repeats", type=int, default=2, help="repeated items per annotator (default 2)")
    c.add_argument("--degraded", type=int, default=6, help="degraded items per annotator (default 6)")
    c.add_argument("--training", type=int, help="training items per annotator (default: 3 if the protocol has)")
    c.add_argument("--max-segments", type=int, help="use only the first N segments")
    c.add_argument("--seed", type=int, default=12345,
                   help="seed of the item order and of the annotator assignment (default 12345)")
    c.add_argument("--mask-lexicon", help="style words to mask, one per line (relative protocol)")
    c.add_argument("--base-url", default="http://127.0.0.1:8000", help="server address used in the printed links")
    c.add_argument("--links-out", help="also write annotator<TAB>link to this file (mode 600)")

    ls = verbs.add_parser("list", help="campaigns in a database")
    _db(ls)
    st = verbs.add_parser("status", help="progress, quality control, agreement and per-system scores")
    _db(st)
    _which(st)
    ex = verbs.add_parser("export", help="judgments in the long format (read by 'styleval meta')")
    _db(ex)
    _which(ex)
    ex.add_argument("--output", "-o", required=True, help="a .csv, .tsv or .jsonl file")
    rv = verbs.add_parser("revoke-link", help="a new link for an annotator; the old one stops working, "
                                               "their judgments are kept")
    _db(rv)
    _which(rv, annotator=True)
    rv.add_argument("--base-url", default="http://127.0.0.1:8000", help="server address used in the printed link")
    rv.add_argument("--links-out", help="write annotator<TAB>link to this file (mode 600) instead of printing it")
    verbs.add_parser("protocols", help="the available protocols")


def _db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default="styleval-human.db", help="SQLite file or postgresql:// URL")


def _which(p: argparse.ArgumentParser, annotator: bool = False) -> None:
    """The campaign: its name, or its id with --id (a name that is also another campaign's id is refused)."""
    p.add_argument("campaign", nargs="?", help="the campaign's name (or its id when no campaign has that name)")
    if annotator:
        p.add_argument("annotator", nargs="?", help="the annotator's name")
    p.add_argument("--id", type=int, dest="campaign_id", metavar="N", help="the campaign's id (as 'campaign list' "
                                                                           "shows it) instead of its name")


def _campaign_ref(args: argparse.Namespace) -> int | str:
    """What names the campaign: an id (``int``, from --id) or a name (``str``); exactly one of them."""
    if args.campaign_id is not None:
        if getattr(args, "annotator", None) is None and args.campaign is not None and args.action == "revoke-link":
            args.annotator, args.campaign = args.campaign, None  # revoke-link --id N ANNOTATOR
        if args.campaign is not None:
            raise InputError(f"give the campaign by name or by --id, not both (got {args.campaign!r} and --id "
                             f"{args.campaign_id})")
        return int(args.campaign_id)
    if args.campaign is None:
        raise InputError("name the campaign (see 'styleval campaign list'), or give --id N")
    return str(args.campaign)


def _db_file(db: str) -> str | None:
    """The SQLite file of --db (None for a server URL): an output must never be that file."""
    return None if "://" in db else db


def _records(args: argparse.Namespace) -> list:
    from ..readers import read_parallel, read_table

    records = []
    if args.outputs:
        if not args.sources:
            raise InputError("--outputs needs --sources")
        for name, path in _named_outputs(args.outputs):
            records += read_parallel(path, args.sources, args.references, system=name, direction=args.direction)
    for path in args.table:
        records += read_table(path, default_direction=args.direction)
    if not records:
        raise InputError("give --sources with --outputs, or --table")
    return records


def _named_outputs(items: Sequence[str]) -> list[tuple[str, str]]:
    """``(system, file)`` of each ``--outputs`` item: ``NAME=FILE``, or a file named by its stem; two systems
    under one name are refused before anything is read, with names to give them."""
    named: dict[str, str] = {}
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name.strip():
            name, path = Path(item).stem, item
        name = name.strip()
        if name in named:
            first, second = Path(named[name]), Path(path)
            hint = f"{first.parent.name or 'A'}={first} {second.parent.name or 'B'}={second}"
            raise InputError(f"--outputs {named[name]} and {path} both give system {name!r} (a system is named by "
                             f"its file's stem unless named): name each one, e.g. --outputs {hint}")
        named[name] = path
        out.append((name, path))
    return out


def run(args: argparse.Namespace) -> int:
    if args.action == "protocols":
        from ..human.protocols import PROTOCOLS

        for p in PROTOCOLS.values():
            print(f"{p.name}\t{p.layout}\t{', '.join(a.name for a in p.aspects)}\t{p.citation}")
        return 0
    try:
        import sqlalchemy as sa

        from ..human import Store, build_campaign
        from ..human.analysis import dashboard, write_export
        from ..human.storage import describe_database_error
    except ImportError as exc:
        raise ResourceUnavailableError(f"{MISSING}; missing: {exc.name}") from None
    from ..outputs import check_destinations

    db_input = [("--db", _db_file(args.db))]
    ref: int | str = 0
    if args.action in ("status", "export", "revoke-link"):
        ref = _campaign_ref(args)
        if args.action == "revoke-link" and not args.annotator:
            raise InputError("name the annotator whose link to replace")
    # every destination is checked before the database is touched (a refused path changes nothing)
    if args.action == "create":
        spec = _spec(args)
        check_destinations(("--links-out", args.links_out), inputs=[*db_input, *_input_files(args)])
    elif args.action == "revoke-link":
        check_destinations(("--links-out", args.links_out), inputs=db_input)
    elif args.action == "export":
        check_destinations(("--output", args.output), inputs=db_input)
    built = build_campaign(spec, _records(args)) if args.action == "create" else None  # before the database
    new_file = args.action == "create" and _db_file(args.db) is not None and not Path(args.db).exists()
    store = Store(args.db)
    created_ok = False
    try:
        if built is not None:
            created = store.create_campaign(built)
            created_ok = True
            base = args.base_url.rstrip("/")
            lines = [f"{name}\t{base}/a/{token}" for name, token in created.tokens.items()]
            failed: InputError | None = None
            if args.links_out:
                try:
                    _write_private(args.links_out, lines, "the links above are the campaign's only copy")
                except InputError as exc:  # committed already: the links are printed below, then the error
                    failed = exc
            n_normal = sum(it.kind == "normal" for it in built.items)
            n_judgments = sum(len(order) for order in built.assignments.values())
            print(f"campaign {created.name!r} (id {created.id}): {n_normal} items and "
                  f"{len(built.items) - n_normal} quality-control items; {n_judgments} judgments to collect from "
                  f"{len(built.assignments)} annotators (as `campaign status` counts them); systems "
                  f"{', '.join(built.systems)}", file=sys.stderr)
            print("\n".join(lines), flush=True)
            if failed is not None:
                raise failed
        elif args.action == "revoke-link":
            ann = store.annotator(ref, args.annotator)
            token = store.reset_token(ann.id)
            line = f"{ann.name}\t{args.base_url.rstrip('/')}/a/{token}"
            if args.links_out:
                try:
                    _write_private(args.links_out, [line], "")
                except InputError as exc:  # committed already: the new link must not be lost with the file
                    print(line, flush=True)
                    raise InputError(f"the new link for {ann.name} is printed above (the old link no longer works); "
                                     f"{exc}") from None
                print(f"new link for {ann.name} written to {args.links_out}; the old link no longer works, their "
                      "judgments are kept", file=sys.stderr)
            else:
                print(f"new link for {ann.name}; the old link no longer works, their judgments are kept",
                      file=sys.stderr)
                print(line)
        elif args.action == "list":
            for c in store.campaigns():
                print(f"{c.id}\t{_printable(c.name)}\t{c.protocol}\t{', '.join(c.config.get('systems', []))}")
        elif args.action == "status":
            _print_status(dashboard(store, store.campaign(ref).id))
        elif args.action == "export":
            out = Path(args.output)
            path = write_export(store, store.campaign(ref).id, out.parent if str(out.parent) else ".", out.name)
            print(f"wrote {path}", file=sys.stderr)
    except sa.exc.SQLAlchemyError as exc:  # e.g. locked or made read-only while we ran: one line, no SQL
        raise describe_database_error(exc, store.where) from None
    finally:
        store.close()
        if new_file and not created_ok:  # a create that failed leaves no database file it made behind
            Path(args.db).unlink(missing_ok=True)
    return 0


def _write_private(path: str, lines: list[str], note: str) -> None:
    """Write links (credentials) to a file only its owner can read, atomically (see :mod:`styleval.outputs`: a
    device or pipe is written through, a symbolic link followed, nothing else replaced)."""
    from ..errors import OutputError
    from ..outputs import write_text

    try:
        write_text(path, "\n".join(lines) + "\n", private=True)
    except OutputError as exc:
        raise InputError(f"cannot write the links ({exc.problem})" + (f"; {note}" if note else ""), path) from None


def _printable(name: str) -> str:
    """A name for the terminal: control characters (refused in new names, possible in old databases) escaped."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in name)


def _spec(args: argparse.Namespace) -> "CampaignSpec":
    """The campaign spec of ``create``, validated (before the database is opened)."""
    from ..human import CampaignSpec

    names = args.annotators.strip()
    mask = None
    if args.mask_lexicon:
        from ..readers.text import read_text

        mask = [w.strip() for w in read_text(args.mask_lexicon).split() if w.strip()]
    spec = CampaignSpec(args.name, args.protocol, int(names) if names.isdigit() else names.split(","),
                        per_item=args.per_item, controls=args.controls, repeats=args.repeats,
                        degraded=args.degraded, training=args.training, seed=args.seed, mask_words=mask,
                        max_segments=args.max_segments)
    spec.validate()
    spec.annotator_names()
    return spec


def _input_files(args: argparse.Namespace) -> list[tuple[str, str]]:
    from ..outputs import input_files

    found = input_files("--sources", args.sources) + input_files("--mask-lexicon", args.mask_lexicon)
    for option, paths in (("--outputs", args.outputs), ("--table", args.table), ("--references", args.references)):
        for path in paths:
            found += input_files(option, path)
    return found


def _print_status(d: object) -> None:
    def f(v: float | None, digits: int = 2) -> str:
        return "-" if v is None or v != v else f"{v:.{digits}f}"

    print(f"{d.campaign.name}: {d.done}/{d.total} judgments ({d.protocol.name})")  # type: ignore[attr-defined]
    print("annotator\tdone\ttotal\tmedian_s\tat_slider_start\tcontrols\trepeat_mad\tdegraded_drop\tdegraded_p\t"
          "flagged\treasons")
    for q in d.quality:  # type: ignore[attr-defined]
        done, total = d.progress[q.annotator]  # type: ignore[attr-defined]
        print(f"{q.annotator}\t{done}\t{total}\t{f(q.median_seconds, 1)}\t{f(q.default_share)}\t"
              f"{q.controls_passed}/{q.controls_total}\t{f(q.repeat_mean_abs_diff)}\t{f(q.degraded_mean_drop)}\t"
              f"{f(q.degraded_p, 3)}\t{q.flagged}\t{'; '.join(q.reasons) or '-'}")
    print("aspect\tlevel\talpha\tunits")
    for a in d.agreement:  # type: ignore[attr-defined]
        print(f"{a.aspect}\t{a.level}\t{a.note or f(a.alpha, 3)}\t{a.units}")
    print("aspect\tsystem\tmean\tz\tsegments\taverage_rank")
    for s in d.systems:  # type: ignore[attr-defined]
        print(f"{s.aspect}\t{s.system}\t{f(s.mean)}\t{f(s.z, 3)}\t{s.n_segments}\t{f(s.average_rank)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry point (``python -m styleval.cli.campaign_cmd``)."""
    from ..errors import StyleEvalError

    parser = argparse.ArgumentParser(prog="styleval campaign")
    _arguments(parser)
    try:
        status = run(parser.parse_args(argv))
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        from .pipes import quiet_broken_pipe

        return quiet_broken_pipe()
    except StyleEvalError as exc:
        print(f"styleval: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
