"""Admin credentials: server-side sessions (revocable, expiring) and a per-client throttle on wrong tokens.

A login stores only the SHA-256 of a random session id, with the fingerprint of the admin token it was opened
under; logout deletes it, and starting the server with another admin token deletes every session opened under
the old one. Wrong tokens (on the login form or in an ``Authorization: Bearer`` header) count against the
client's address (the connecting address: forwarded headers count only from proxies named with
``--forwarded-allow-ips``): after ``free_attempts`` the client must wait ``base_delay_s`` before its next try, then
twice as long after each further wrong token (up to ``max_delay_s``), and no token is even compared while it waits.
"""
from __future__ import annotations

import hmac
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

from starlette.requests import Request

from ..storage import Store
from .security import ADMIN_SESSION_COOKIE, sign

ADMIN_COOKIE = ADMIN_SESSION_COOKIE
Clock = Callable[[], float]


@dataclass
class LoginThrottle:
    """Growing delays for clients that send wrong admin tokens. ``clock`` is injectable for tests."""

    free_attempts: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 600.0
    max_clients: int = 10_000
    clock: Clock = time.monotonic
    _clients: OrderedDict[str, tuple[int, float, float]] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wait(self, client: str) -> float:
        """Seconds ``client`` must still wait before its next try (0: it may try now)."""
        with self._lock:
            return self._wait(client)

    def _wait(self, client: str) -> float:
        entry = self._clients.get(client)
        if entry is None:
            return 0.0
        _failures, blocked_until, last = entry
        now = self.clock()
        if now - last > 2 * self.max_delay_s:  # quiet long enough: forgotten
            del self._clients[client]
            return 0.0
        return max(0.0, blocked_until - now)

    def failed(self, client: str) -> float:
        """Count a wrong token; returns the delay the client now has to wait."""
        with self._lock:
            return self._failed(client)

    def _failed(self, client: str) -> float:
        self._wait(client)  # forget an old record first
        failures = self._clients.get(client, (0, 0.0, 0.0))[0] + 1
        now = self.clock()
        over = failures - self.free_attempts  # the wait starts with the free_attempts-th wrong token
        delay = 0.0 if over < 0 else min(self.max_delay_s, self.base_delay_s * 2 ** over)
        self._clients[client] = (failures, now + delay, now)
        self._clients.move_to_end(client)
        while len(self._clients) > self.max_clients:
            self._clients.popitem(last=False)
        return delay

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)


class TooManyAttempts(Exception):
    """A client that is still waiting after wrong admin tokens."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"wait {math.ceil(wait_s)} s")
        self.wait_s = wait_s

    @property
    def retry_after(self) -> int:
        """Whole seconds to wait, rounded up and never 0 (``Retry-After: 0`` would invite an immediate retry that
        is refused again)."""
        return max(1, math.ceil(self.wait_s))


def client_key(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class AdminAuth:
    """Checks and issues admin credentials for one admin token."""

    def __init__(self, store: Store, admin_token: str, *, session_ttl_s: float = 12 * 3600,
                 throttle: LoginThrottle | None = None, clock: Clock = time.time) -> None:
        self.store, self.admin_token, self.session_ttl_s = store, admin_token, session_ttl_s
        self.throttle = throttle or LoginThrottle()
        self.clock = clock
        self.fingerprint = sign(store.secret, "admin-token:" + admin_token)
        store.revoke_admin_sessions(keep_fingerprint=self.fingerprint)  # a changed token ends the old sessions

    def token_matches(self, request: Request, candidate: str) -> bool:
        """Compare a token sent by ``request``'s client, counting wrong ones; :class:`TooManyAttempts` while the
        client must wait (the token is then not compared at all)."""
        who = client_key(request)
        wait = self.throttle.wait(who)
        if wait > 0:
            raise TooManyAttempts(wait)
        if hmac.compare_digest(candidate.strip().encode("utf-8"), self.admin_token.encode("utf-8")):
            self.throttle.succeeded(who)
            return True
        self.throttle.failed(who)
        return False

    def is_admin(self, request: Request) -> bool:
        """A live session cookie, or an ``Authorization: Bearer <admin token>`` header (throttled like logins)."""
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return self.token_matches(request, auth[7:])
        session = request.cookies.get(ADMIN_COOKIE, "")
        return bool(session) and self.store.admin_session_valid(session, self.fingerprint, now=self.clock())

    def open_session(self) -> str:
        return self.store.open_admin_session(self.fingerprint, self.session_ttl_s, now=self.clock())

    def close_session(self, request: Request) -> None:
        self.store.close_admin_session(request.cookies.get(ADMIN_COOKIE, ""))
