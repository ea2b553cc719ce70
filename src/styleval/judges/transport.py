"""The HTTP layer under the ``openai`` client of the server backend: a deadline on the whole request, a cap on the
size of a reply, and redirects followed only within the server's origin.

* **Deadline.** ``timeout`` bounds a request as a whole -- connecting, sending, the status line and headers and the
  body together -- not each read: every network operation gets the time left before the request's deadline (set
  per thread by :func:`deadline`), so a server that sends a byte a second (headers or body, with a
  ``Content-Length`` or chunked) is cut off at the deadline with a timeout.
* **Size.** A reply longer than ``max_bytes`` is refused (:class:`ReplyTooLarge`): before reading when its
  ``Content-Length`` says so, else as it arrives. A compressed reply (gzip, deflate; the only encodings asked for)
  is inflated here and counted as it inflates, so a small body that inflates to gigabytes stops at the cap.
* **Redirects.** A redirect is followed only to the same origin (scheme, host and port) and only when it keeps
  the method (307 and 308, or any redirect of a GET): anything else is :class:`RedirectRefused`, naming the status
  and the target (credentials taken out), so that scores never come from a host the signature does not name.

The transport is built on ``httpcore2`` (the connection pool of ``httpx2``, which the ``openai`` client uses) with a
network backend of its own; proxies named in the environment (``HTTPS_PROXY`` ...) are used as ``httpx2`` would.
"""
from __future__ import annotations

import threading
import time
import urllib.request
import zlib
from contextlib import contextmanager
from typing import Any, Iterator
from urllib.parse import urlsplit

from ..urls import shown_url

CHUNK = 1 << 16
_local = threading.local()


class ReplyTooLarge(Exception):
    """The reply is longer than the cap (``max_reply_mb``)."""


class RedirectRefused(Exception):
    """The server redirected the request to another origin, or in a way that changes the method."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Requests made in this thread inside the block must finish within ``seconds`` from now."""
    before = getattr(_local, "end", None)
    _local.end = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.end = before


def _left(timeout: float | None, kind: str) -> float | None:
    """``timeout`` cut to the time left before this thread's deadline; the timeout error once it has passed."""
    end = getattr(_local, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        import httpcore2

        error = httpcore2.ConnectTimeout if kind == "connect" else httpcore2.ReadTimeout
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``url``, the default port filled in."""
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return (parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default)


def _backend() -> Any:
    import httpcore2

    class Stream(httpcore2.NetworkStream):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self.inner.read(max_bytes, _left(timeout, "read"))  # type: ignore[no-any-return]

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self.inner.write(buffer, _left(timeout, "write"))

        def close(self) -> None:
            self.inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> "Stream":
            return Stream(self.inner.start_tls(ssl_context, server_hostname, _left(timeout, "connect")))

        def get_extra_info(self, info: str) -> Any:
            return self.inner.get_extra_info(info)

    class Backend(httpcore2.NetworkBackend):  # type: ignore[misc]
        def __init__(self) -> None:
            self.inner = httpcore2.SyncBackend()

        def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                        socket_options: Any = None) -> Stream:
            return Stream(self.inner.connect_tcp(host, port, _left(timeout, "connect"), local_address,
                                                 socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Stream:
            return Stream(self.inner.connect_unix_socket(path, _left(timeout, "connect"), socket_options))

        def sleep(self, seconds: float) -> None:
            self.inner.sleep(seconds)

    return Backend()


def _inflater(encoding: str) -> Any:
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


def _mapped(exc: Exception) -> Exception:
    """An ``httpcore2`` error as the ``httpx2`` error of the same name (what the ``openai`` client expects)."""
    import httpx2

    for cls in type(exc).__mro__:
        target = getattr(httpx2, cls.__name__, None)
        if cls.__module__.startswith("httpcore2") and isinstance(target, type) and \
                issubclass(target, httpx2.HTTPError):
            return target(str(exc))  # type: ignore[call-arg]
    return exc


def guarded_client(base_url: str, *, timeout: float, max_bytes: int, connections: int) -> Any:
    """An ``httpx2.Client`` for the ``openai`` client (``http_client=``) with the guards of the module doc."""
    import httpcore2
    import httpx2

    home = origin(base_url)
    shown = shown_url(base_url)

    class Body(httpx2.SyncByteStream):  # type: ignore[misc]
        """The reply's body, inflated and counted."""

        def __init__(self, raw: Any, encoding: str) -> None:
            self.raw, self.inflater, self.size = raw, _inflater(encoding), 0

        def _count(self, data: bytes) -> bytes:
            self.size += len(data)
            if self.size > max_bytes:
                raise ReplyTooLarge(f"the reply from {shown} is longer than {max_bytes / 1e6:g} MB "
                                    "(max_reply_mb); nothing of it was kept")
            return data

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self.raw:
                    if self.inflater is None:
                        yield self._count(chunk)
                        continue
                    data = chunk
                    while data:
                        yield self._count(self.inflater.decompress(data, CHUNK))
                        data = self.inflater.unconsumed_tail
                if self.inflater is not None:
                    yield self._count(self.inflater.flush())
            except zlib.error as exc:
                raise _mapped(httpcore2.RemoteProtocolError(f"the compressed reply is broken ({exc})")) from None
            except httpcore2.TimeoutException as exc:
                raise _mapped(exc) from None
            except (httpcore2.NetworkError, httpcore2.ProtocolError) as exc:
                raise _mapped(exc) from None

        def close(self) -> None:
            if hasattr(self.raw, "close"):
                self.raw.close()

    class Transport(httpx2.BaseTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            scheme = home[0]
            proxy = urllib.request.getproxies().get(scheme)
            if proxy and urllib.request.proxy_bypass(home[1]):
                proxy = None
            common = {"ssl_context": httpx2.create_ssl_context(), "max_connections": connections,
                      "network_backend": _backend()}
            self.pool = httpcore2.HTTPProxy(proxy_url=proxy, **common) if proxy else \
                httpcore2.ConnectionPool(**common)

        def handle_request(self, request: Any) -> Any:
            if origin(str(request.url)) != home:
                raise RedirectRefused(f"{shown} redirected the request to another origin, "
                                      f"{shown_url(str(request.url))}: styleval follows redirects within "
                                      "the server's own origin only; give that address as base_url if it is meant")
            request.headers["Accept-Encoding"] = "gzip, deflate"
            core = httpcore2.Request(method=request.method, url=httpcore2.URL(
                scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                target=request.url.raw_path), headers=request.headers.raw, content=request.stream,
                extensions=request.extensions)
            try:
                reply = self.pool.handle_request(core)
            except httpcore2.TimeoutException as exc:
                raise _mapped(exc) from None
            except (httpcore2.NetworkError, httpcore2.ProtocolError, httpcore2.UnsupportedProtocol) as exc:
                raise _mapped(exc) from None
            headers = httpx2.Headers(reply.headers)
            if 300 <= reply.status < 400 and "location" in headers:
                self._check_redirect(request, reply, headers)
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > max_bytes:
                reply.close()
                raise ReplyTooLarge(f"the reply from {shown} announces {int(length) / 1e6:,.1f} MB, more than "
                                    f"{max_bytes / 1e6:g} MB (max_reply_mb); it was not read")
            encoding = headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("identity", "gzip", "deflate"):
                reply.close()
                raise _mapped(httpcore2.RemoteProtocolError(f"the reply is encoded as {encoding!r}, which was "
                                                            "not asked for"))
            if encoding != "identity":
                del headers["content-encoding"]
                headers.pop("content-length", None)
            return httpx2.Response(status_code=reply.status, headers=headers, stream=Body(reply.stream, encoding),
                                   extensions=reply.extensions)

        def _check_redirect(self, request: Any, reply: Any, headers: Any) -> None:
            target = str(request.url.join(headers["location"]))
            same = origin(target) == home
            keeps = reply.status in (307, 308) or request.method in ("GET", "HEAD")
            if same and keeps:
                return
            reply.close()
            why = ("to another origin" if not same else
                   f"with {reply.status}, which turns the {request.method} into a GET")
            raise RedirectRefused(f"{shown} answered {reply.status}, a redirect {why}: {shown_url(target)}; "
                                  "styleval follows redirects within the server's own origin that keep the method "
                                  "only; give the address the server means as base_url")

        def close(self) -> None:
            self.pool.close()

    return httpx2.Client(transport=Transport(), timeout=timeout, follow_redirects=True, trust_env=False)
