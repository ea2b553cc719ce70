"""``styleval serve``: the human-evaluation web application (needs the human-evaluation extra)."""
from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import Sequence

from ..errors import ResourceUnavailableError

ADMIN_ENV = "STYLEVAL_ADMIN_TOKEN"
MISSING = ("the web application needs FastAPI, uvicorn, Jinja2, SQLAlchemy and python-multipart "
           "(run scripts/setup_human_eval_deps.sh)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the human evaluation web application")
    _arguments(p)
    p.set_defaults(run=run)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default="styleval-human.db",
                   help="SQLite file (default styleval-human.db) or a postgresql://user@host/name URL")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--export-dir", default="exports", help="folder the admin export writes into (default exports)")
    p.add_argument("--admin-token-file", help=f"file holding the admin token (else ${ADMIN_ENV}, else a new one "
                                              "is generated and printed)")
    p.add_argument("--exit-after", type=float, help="stop by itself after this many seconds")
    p.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])


def _admin_token(args: argparse.Namespace) -> tuple[str, bool]:
    if args.admin_token_file:
        return Path(args.admin_token_file).read_text(encoding="utf-8").strip(), False
    if os.environ.get(ADMIN_ENV):
        return os.environ[ADMIN_ENV].strip(), False
    return secrets.token_urlsafe(24), True


def run(args: argparse.Namespace) -> int:
    try:
        from ..human.web import run_server
    except ImportError as exc:
        raise ResourceUnavailableError(f"{MISSING}; missing: {exc.name}") from None
    token, generated = _admin_token(args)
    if generated:
        print(f"admin token (set {ADMIN_ENV} to choose one): {token}", file=sys.stderr)
    print(f"serving on http://{args.host}:{args.port}/admin (database {args.db})", file=sys.stderr, flush=True)
    run_server(args.db, admin_token=token, export_dir=args.export_dir, host=args.host, port=args.port,
               exit_after=args.exit_after, log_level=args.log_level)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry point (``python -m styleval.cli.serve_cmd``)."""
    parser = argparse.ArgumentParser(prog="styleval serve")
    _arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
