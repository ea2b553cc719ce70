"""Request protection: CSRF tokens, signed per-item time stamps, security headers, body-size limits and a last
line of defence that turns any unexpected failure into an error page with the same headers."""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from typing import Callable

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..protocols import AnswerError

CSRF_COOKIE = "styleval_csrf"
log = logging.getLogger("styleval.human.web")

HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # annotator links carry tokens: never leak them in Referer
    "Cache-Control": "no-store",
}


def sign(secret: bytes, message: str) -> str:
    return hmac.new(secret, message.encode("utf-8"), hashlib.sha256).hexdigest()


ADMIN_SESSION_COOKIE = "styleval_admin"  # the admin session (see .sessions), named here to bind tokens to it


def _csrf_basis(request: Request, nonce: str | None) -> str | None:
    """What a form token is an HMAC of. With an admin session cookie: that session's random id, which only the
    server and the browser holding the session know, so a CSRF cookie planted by someone else (a sibling domain,
    a shared machine) earns no valid admin form token. Without one (the login form, annotator pages): the
    browser's CSRF cookie nonce (double submit, signed)."""
    session = request.cookies.get(ADMIN_SESSION_COOKIE)
    if session:
        return "admin-session:" + session
    return "csrf:" + nonce if nonce else None


def csrf_token(request: Request, secret: bytes) -> str:
    """The form token for this browser (see :func:`_csrf_basis`)."""
    basis = _csrf_basis(request, request.state.csrf_nonce)
    assert basis is not None  # the middleware always sets a nonce
    return sign(secret, basis)[:40]


def csrf_ok(request: Request, secret: bytes, submitted: object) -> bool:
    basis = _csrf_basis(request, request.cookies.get(CSRF_COOKIE))
    if basis is None or not isinstance(submitted, str):
        return False
    return hmac.compare_digest(submitted, sign(secret, basis)[:40])


# ---------------------------------------------------------------------- time stamps
class StampError(AnswerError):
    """The item form's time stamp is missing, forged, issued for another item, or too old."""


def stamp(secret: bytes, assignment_id: int, when: float | None = None) -> str:
    """A signed time stamp put in an item's form: when the server rendered this assignment's page."""
    text = f"{time.time() if when is None else when:.3f}"
    return f"{text}.{sign(secret, f'shown:{assignment_id}:{text}')[:32]}"


def read_stamp(secret: bytes, value: object, assignment_id: int, *, now: float | None = None,
               max_age_s: float = 86400.0) -> float:
    """The time the page of ``assignment_id`` was shown, from its stamp; :class:`StampError` when the stamp is
    missing, not signed by this server, issued for another item, from the future or older than ``max_age_s``."""
    if not isinstance(value, str) or not value:
        raise StampError("the page's time stamp is missing; your answers are kept below, please submit again")
    text, _, sig = value.rpartition(".")
    if not text or not hmac.compare_digest(sig.encode(), sign(secret, f"shown:{assignment_id}:{text}")[:32].encode()):
        raise StampError("the page's time stamp does not belong to this item; your answers are kept below, "
                         "please submit again")
    try:
        shown = float(text)
    except ValueError:  # only possible with the server secret in other hands
        raise StampError("the page's time stamp is not valid; please submit again") from None
    now = time.time() if now is None else now
    if shown > now + 5:
        raise StampError("the page's time stamp lies in the future; please submit again")
    if now - shown > max_age_s:
        raise StampError("this page was opened too long ago; your answers are kept below, please submit again")
    return shown


# ---------------------------------------------------------------------- middleware
def _client_cookie(scope: Scope, name: str) -> str | None:
    return Request(scope).cookies.get(name)


class GuardMiddleware:
    """Pure ASGI middleware around the whole application.

    * security headers on every response, error pages included;
    * a CSRF cookie nonce for every browser (HttpOnly, SameSite=Strict, Secure over TLS);
    * a request body limit chosen per request by ``body_limit(scope)``: a declared ``Content-Length`` over it is
      answered 413 before a byte of the body is read, and a body that grows past it while streaming stops with
      413 too;
    * an exception nobody handled becomes an error page (503 for a database failure, else 500) with the headers,
      logged in one line for the database and with its traceback otherwise (parameters are never logged).
    """

    def __init__(self, app: ASGIApp, *, body_limit: Callable[[Scope], int],
                 error_page: Callable[[int, str], bytes]) -> None:
        self.app, self.body_limit, self.error_page = app, body_limit, error_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = _client_cookie(scope, CSRF_COOKIE)
        fresh = not nonce or len(nonce) > 100
        if fresh:
            nonce = secrets.token_urlsafe(24)
        scope.setdefault("state", {})["csrf_nonce"] = nonce
        started = False

        async def send_guarded(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = MutableHeaders(scope=message)
                for key, value in HEADERS.items():
                    if key not in headers:
                        headers[key] = value
                if fresh:
                    secure = "; Secure" if scope.get("scheme") == "https" else ""
                    headers.append("set-cookie", f"{CSRF_COOKIE}={nonce}; HttpOnly; Path=/; SameSite=strict{secure}")
            await send(message)

        limit = self.body_limit(scope)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._page(send_guarded, 413, _too_large(limit))
            return
        received = 0

        async def receive_limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise StarletteHTTPException(413, _too_large(limit))
            return message

        try:
            await self.app(scope, receive_limited, send_guarded)
        except Exception as exc:  # the last line: nothing may leave without an answer and the headers
            if started:
                raise
            import sqlalchemy as sa

            from ..storage import describe_database_error

            if isinstance(exc, sa.exc.SQLAlchemyError):
                log.error("%s %s: %s", scope.get("method"), _path_for_log(scope), describe_database_error(exc, "?"))
                await self._page(send_guarded, 503, "The server cannot use its database right now; what you sent "
                                                    "was NOT saved. Please try again in a few minutes.")
            else:
                log.exception("%s %s failed", scope.get("method"), _path_for_log(scope))
                await self._page(send_guarded, 500, "Something went wrong on the server; what you sent may not "
                                                    "have been saved. Please reload the page.")

    async def _page(self, send: Send, status: int, message: str) -> None:
        body = self.error_page(status, message)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/html; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(limit: int) -> str:
    return f"The request is too large (the limit is {_size(limit)})."


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 2**10:g} KiB"


def _path_for_log(scope: Scope) -> str:
    """The path with annotator tokens cut out (a log must not hold credentials)."""
    parts = str(scope.get("path", "")).split("/")
    if len(parts) > 2 and parts[1] == "a":
        parts[2] = "<token>"
    return "/".join(parts)
