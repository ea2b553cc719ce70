"""Credentials and request protection: admin sessions, CSRF tokens, signed timestamps, security headers."""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import Response

CSRF_COOKIE = "styleval_csrf"
ADMIN_COOKIE = "styleval_admin"

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


def admin_session_value(secret: bytes, admin_token: str) -> str:
    """The admin session cookie: bound to the server secret and the current admin token."""
    return sign(secret, "admin:" + hashlib.sha256(admin_token.encode("utf-8")).hexdigest())


def is_admin(request: Request, secret: bytes, admin_token: str) -> bool:
    """An admin session cookie or an ``Authorization: Bearer <admin token>`` header."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and hmac.compare_digest(auth[7:].strip().encode(), admin_token.encode()):
        return True
    cookie = request.cookies.get(ADMIN_COOKIE, "")
    return bool(cookie) and hmac.compare_digest(cookie, admin_session_value(secret, admin_token))


def check_admin_token(candidate: str, admin_token: str) -> bool:
    return hmac.compare_digest(candidate.strip().encode("utf-8"), admin_token.encode("utf-8"))


def csrf_token(request: Request, secret: bytes) -> str:
    """The form token for this browser: an HMAC of its CSRF cookie nonce (double submit, signed)."""
    return sign(secret, "csrf:" + request.state.csrf_nonce)[:40]


def csrf_ok(request: Request, secret: bytes, submitted: object) -> bool:
    nonce = request.cookies.get(CSRF_COOKIE)
    if not nonce or not isinstance(submitted, str):
        return False
    return hmac.compare_digest(submitted, sign(secret, "csrf:" + nonce)[:40])


def stamp(secret: bytes, when: float | None = None) -> str:
    """A signed time stamp put in item forms, so the server knows when the item was shown."""
    when = time.time() if when is None else when
    text = f"{when:.3f}"
    return f"{text}.{sign(secret, 'shown:' + text)[:16]}"


def read_stamp(secret: bytes, value: object) -> float | None:
    if not isinstance(value, str) or value.count(".") != 2:
        return None
    text, sig = value.rsplit(".", 1)
    if not hmac.compare_digest(sig, sign(secret, "shown:" + text)[:16]):
        return None
    try:
        return float(text)
    except ValueError:
        return None


class SecurityMiddleware(BaseHTTPMiddleware):
    """Adds security headers, and gives every browser a CSRF cookie (HttpOnly, SameSite=Strict)."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        nonce = request.cookies.get(CSRF_COOKIE)
        fresh = not nonce or len(nonce) > 100
        request.state.csrf_nonce = secrets.token_urlsafe(24) if fresh else nonce
        response = await call_next(request)
        for key, value in HEADERS.items():
            response.headers.setdefault(key, value)
        if fresh:
            response.set_cookie(CSRF_COOKIE, request.state.csrf_nonce, httponly=True, samesite="strict", path="/")
        return response
