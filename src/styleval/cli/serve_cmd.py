"""``styleval serve``: the human-evaluation web application (needs the human-evaluation extra)."""
from __future__ import annotations

import argparse
import os
import re
import secrets
import stat
import sys
from pathlib import Path
from typing import Sequence

from ..errors import InputError, ResourceUnavailableError, StyleEvalError

ADMIN_ENV = "STYLEVAL_ADMIN_TOKEN"
DEFAULT_TOKEN_FILE = "styleval-admin-token"
MIN_TOKEN_CHARS = 12
MISSING = ("the web application needs FastAPI, uvicorn, Jinja2, SQLAlchemy and python-multipart "
           "(run scripts/setup_human_eval_deps.sh)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the human evaluation web application")
    _arguments(p)
    p.set_defaults(run=run)


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port from 1 to 65535, not {text!r}")
    return int(text)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"a positive number, not {text!r}")
    return value


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default="styleval-human.db",
                   help="SQLite file (default styleval-human.db, created with mode 600) or a "
                        "postgresql://user@host/name URL")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000)
    p.add_argument("--export-dir", default="exports", help="folder the admin export writes into (default exports)")
    p.add_argument("--admin-token-file",
                   help=f"file holding the admin token (else ${ADMIN_ENV}, else {DEFAULT_TOKEN_FILE}); a missing "
                        "file is created with a new random token, mode 600; the token is never printed")
    p.add_argument("--max-upload-mb", type=_positive, default=20.0,
                   help="largest campaign upload on the admin page in MiB (default 20); refused before reading")
    p.add_argument("--ssl-certfile", help="serve HTTPS with this certificate (admin cookies are then Secure)")
    p.add_argument("--ssl-keyfile", help="the certificate's private key")
    p.add_argument("--forwarded-allow-ips", metavar="ADDRESSES",
                   help="behind a reverse proxy: the proxies (comma-separated addresses or networks) whose "
                        "X-Forwarded-For/-Proto headers are trusted; by default these headers are ignored and the "
                        "login throttle counts wrong tokens per connecting address")
    p.add_argument("--exit-after", type=_positive, help="stop by itself after this many seconds")
    p.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])


def _token_from_file(path: Path) -> tuple[str, str]:
    """The token in ``path``, or a new one written there (mode 600); returns (token, note for the operator)."""
    if not path.exists():
        token = secrets.token_urlsafe(24)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            raise InputError(f"cannot create the admin token file: {exc.strerror}", path) from None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
        return token, f"a new admin token was written to {path} (mode 600)"
    try:
        token = path.read_text(encoding="utf-8").strip()
        mode = path.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the admin token file: {getattr(exc, 'strerror', None) or exc}", path) from None
    note = f"admin token from {path}"
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        note += f" (warning: others may read it; run chmod 600 {path})"
    return token, note


def _admin_token(args: argparse.Namespace) -> tuple[str, str]:
    """(token, where it came from); the token itself is never printed."""
    if args.admin_token_file:
        token, note = _token_from_file(Path(args.admin_token_file))
        source = f"the admin token file {args.admin_token_file}"
    elif os.environ.get(ADMIN_ENV, "").strip():
        token, note = os.environ[ADMIN_ENV].strip(), f"admin token from ${ADMIN_ENV}"
        source = f"${ADMIN_ENV}"
    else:
        token, note = _token_from_file(Path(DEFAULT_TOKEN_FILE))
        source = f"the admin token file {DEFAULT_TOKEN_FILE}"
    if len(token) < MIN_TOKEN_CHARS:
        raise InputError(f"the admin token in {source} has {len(token)} characters; use at least {MIN_TOKEN_CHARS}")
    return token, note


def shown_database(target: str) -> str:
    """The database for messages: a URL's password replaced by ``***``."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", target)


def run(args: argparse.Namespace) -> int:
    try:
        from ..human.web import run_server
    except ImportError as exc:
        raise ResourceUnavailableError(f"{MISSING}; missing: {exc.name}") from None
    if bool(args.ssl_certfile) != bool(args.ssl_keyfile):
        raise InputError("--ssl-certfile and --ssl-keyfile go together")
    for option in (args.ssl_certfile, args.ssl_keyfile):
        if option and not Path(option).is_file():
            raise InputError("file not found", option)
    token, note = _admin_token(args)
    scheme = "https" if args.ssl_certfile else "http"

    def ready() -> None:
        print(note, file=sys.stderr)
        where = shown_database(args.db)
        print(f"serving on {scheme}://{args.host}:{args.port}/admin (database {where})", file=sys.stderr, flush=True)

    run_server(args.db, admin_token=token, export_dir=args.export_dir, host=args.host, port=args.port,
               exit_after=args.exit_after, log_level=args.log_level,
               max_upload_bytes=int(args.max_upload_mb * 2**20), ssl_certfile=args.ssl_certfile,
               ssl_keyfile=args.ssl_keyfile, on_ready=ready, forwarded_allow_ips=args.forwarded_allow_ips)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry point (``python -m styleval.cli.serve_cmd``)."""
    parser = argparse.ArgumentParser(prog="styleval serve")
    _arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except StyleEvalError as exc:
        print(f"styleval: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
