"""A fault-injecting OpenAI-compatible server (standard library only), started on 127.0.0.1 for the length of a
``with`` block, to see what the judges do when a server misbehaves: the tests use it, and so can a user who wants
to try a setting (retries, timeouts, ``unrated=``) without paying for requests.

By default it behaves: ``GET /v1/models`` lists :attr:`FaultServer.model`, and ``POST /v1/chat/completions``
answers what the prompt asks for: the word after the first ``RATE`` in the last message (``RATE 4`` -> ``"4"``,
``RATE four`` -> ``"four"``, ``RATE empty`` -> ``""``), with that word as the most likely first token among
``top_logprobs`` alternatives (a digit answer puts the neighbouring digits after it). ``POST /v1/completions``
echoes the prompt one character per token, each with log-probability -1.

Faults are chosen per request: :meth:`FaultServer.push` queues scripted :class:`Reply` objects that the next
requests get, in order; :meth:`FaultServer.on` answers every request whose body holds a text with a reply (``times``
of them, or all). A reply sets the status, headers, body (bytes, a JSON value, or a function of the request),
a delay before answering (a hang), or drops the connection; it can drip its body a byte at a time after the
headers (``drip`` seconds apart, with a ``Content-Length`` or ``chunked``; ``drip_headers``: the headers too), pad
it with ``pad`` bytes of white space before the JSON (a huge reply, streamed without being held in memory), send it
gzip-compressed (``gzip``: a small body that inflates to the padded size), or leave the log-probabilities out of
the normal answer (``logprobs=False``).
A redirect is a reply with a 3xx ``status`` and a ``Location`` header. Every request is recorded
(:attr:`FaultServer.log`: time, path, headers, body), so a test can count what was sent and when.
"""
from __future__ import annotations

import json
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Iterator

_RATE = re.compile(r"RATE (\S*)")
_PIECE = 1 << 16


def _padded(body: bytes, pad: int) -> Iterator[bytes]:
    """``pad`` spaces (in pieces, never all in memory) and then ``body``."""
    blank = b" " * _PIECE
    left = pad
    while left > 0:
        yield blank[:min(left, _PIECE)]
        left -= _PIECE
    yield body


def _gzipped(pieces: Iterator[bytes]) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join([*(packer.compress(p) for p in pieces), packer.flush()])


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up mid-reply (a deadline, a size cap) is what the tests provoke: not reported."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


@dataclass
class Reply:
    """One scripted reply. ``body``: bytes sent as they are, a JSON value, or ``f(request) -> JSON value`` (the
    request as :attr:`FaultServer.log` records it); None: the server's normal answer (with ``status``/``headers``
    changed). ``drop``: close the connection without a reply."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False
    drip: float = 0.0  # seconds between the body's bytes (0: all at once)
    drip_headers: bool = False  # drip the status line and headers too, not only the body
    chunked: bool = False  # Transfer-Encoding: chunked instead of a Content-Length
    pad: int = 0  # bytes of white space sent before the body
    gzip: bool = False  # the body (padding included) gzip-compressed, with Content-Encoding: gzip
    logprobs: bool = True  # False: the normal answer without log-probabilities


@dataclass
class Recorded:
    """One request the server received."""

    time: float
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any


class FaultServer:
    """``with FaultServer() as srv: ... srv.base_url ...``; see the module doc."""

    def __init__(self, *, model: str = "fault-judge", api_key: str = "") -> None:
        self.model = model
        self.api_key = api_key  # when set, requests without "Authorization: Bearer <key>" get 401
        self.log: list[Recorded] = []
        self._queue: list[Reply] = []
        self._rules: list[list[Any]] = []  # [text, reply, times left (None: always)]
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def push(self, *replies: Reply) -> None:
        """The next requests (of any path but ``/models``) get these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def on(self, text: str, reply: Reply, times: int | None = None) -> None:
        """Requests whose body holds ``text`` get ``reply`` (``times`` of them; None: all)."""
        with self._lock:
            self._rules.append([text, reply, times])

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._rules.clear()

    def posts(self, path: str = "/v1/chat/completions") -> list[Recorded]:
        with self._lock:
            return [r for r in self.log if r.method == "POST" and r.path == path]

    # -- the normal answers ------------------------------------------------------------------------------------
    def answer(self, request: Recorded) -> Any:
        body = request.body if isinstance(request.body, dict) else {}
        if request.path.endswith("/completions") and "chat" not in request.path:
            prompt = str(body.get("prompt", ""))
            return {"id": "cmpl-fault", "object": "text_completion", "model": self.model,
                    "choices": [{"index": 0, "text": prompt + "x", "finish_reason": "length",
                                 "logprobs": {"tokens": list(prompt) + ["x"],
                                              "token_logprobs": [None] + [-1.0] * len(prompt)}}],
                    "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1,
                              "total_tokens": len(prompt) + 1}}
        messages = body.get("messages") or [{}]
        match = _RATE.search(str(messages[-1].get("content", "")))
        word = match.group(1) if match else ""
        word = "" if word == "empty" else word
        alternatives = [(word, -0.05)] if word else []
        if word.isdigit() and len(word) == 1:
            alternatives += [(str(int(word) + d), -3.0 - abs(d)) for d in (-1, 1) if 0 <= int(word) + d <= 9]
        k = int(body.get("top_logprobs") or 0)
        logprobs = None
        if body.get("logprobs") and alternatives:
            top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in alternatives[:max(k, 1)]]
            logprobs = {"content": [{"token": word, "logprob": -0.05, "bytes": None, "top_logprobs": top}]}
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        return {"id": "chat-fault", "object": "chat.completion", "created": 0, "model": self.model,
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": logprobs,
                             "message": {"role": "assistant", "content": word}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": prompt_tokens + 1}}

    def _scripted(self, raw: str) -> Reply | None:
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
            for rule in self._rules:
                if rule[0] in raw and (rule[2] is None or rule[2] > 0):
                    if rule[2] is not None:
                        rule[2] -= 1
                    return rule[1]  # type: ignore[no-any-return]
        return None

    # -- serving ------------------------------------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
                pass  # quiet: the requests are in server.log

            def _send(self, status: int, body: bytes, headers: dict[str, str], reply: Reply | None = None) -> None:
                reply = reply or Reply()
                if reply.gzip:
                    packed = _gzipped(_padded(body, reply.pad))
                    pieces, size = iter([packed]), len(packed)
                else:
                    pieces, size = _padded(body, reply.pad), len(body) + reply.pad
                head = dict(headers)
                if not any(k.lower() == "content-type" for k in head):
                    head["Content-Type"] = "application/json"
                if reply.gzip:
                    head["Content-Encoding"] = "gzip"
                head.update({"Transfer-Encoding": "chunked"} if reply.chunked else {"Content-Length": str(size)})
                try:
                    if reply.drip_headers:
                        text = f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n" + "".join(
                            f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n"
                        for byte in text.encode("latin-1"):
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(reply.drip)
                    else:
                        self.send_response(status)
                        for k, v in head.items():
                            self.send_header(k, v)
                        self.end_headers()
                    for piece in pieces:
                        for part in (piece[i:i + 1] for i in range(len(piece))) if reply.drip else [piece]:
                            if not part:
                                continue
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if reply.chunked else part)
                            if reply.drip:
                                self.wfile.flush()
                                time.sleep(reply.drip)
                    if reply.chunked:
                        self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (a deadline, a size cap)

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                try:
                    parsed: Any = json.loads(raw) if raw else None
                except ValueError:
                    parsed = raw
                request = Recorded(time.monotonic(), method, self.path.split("?")[0],
                                   {k.lower(): v for k, v in self.headers.items()}, parsed)
                with server._lock:
                    server.log.append(request)
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._send(401, json.dumps({"error": {"message": "Incorrect API key provided",
                                                          "type": "invalid_request_error"}}).encode(), {})
                    return
                if not request.path.startswith("/v1/"):
                    self._send(404, json.dumps({"detail": "Not Found"}).encode(), {})
                    return
                if method == "GET" and request.path == "/v1/models":
                    self._send(200, json.dumps({"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "styleval"}]}).encode(), {})
                    return
                reply = server._scripted(raw) or Reply()
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                body = reply.body
                if body is None:
                    body = server.answer(request)
                    if not reply.logprobs:
                        for choice in body["choices"]:
                            choice["logprobs"] = None
                elif callable(body):
                    body = body(request)
                data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
                self._send(reply.status, data, reply.headers, reply)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

        return Handler

    def start(self) -> "FaultServer":
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> "FaultServer":
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

