"""The server backend: any OpenAI-compatible server (vLLM, the llama.cpp server, Ollama, a hosted API) through the
official ``openai`` client.

:class:`ServerConfig` holds the address, the model name, the name of the environment variable that holds the API
key, the concurrency limit, the timeout of one request (as a whole: connecting, headers and body together), the
largest reply accepted (``max_reply_mb``) and the retries; it refuses an address without ``http://`` or
``https://``, with a user name or password, with a credential in its query or a key-like segment in its path.
Requests go through :mod:`.transport` (the deadline, the size cap, redirects only within the origin); a key that is
not printable ASCII is refused before any request, naming the variable. The key is read when a client is
made and never stored: every text that comes back from the server (answers, model names, error bodies) has it
replaced by ``***`` before it reaches a cache, a signature, a fact or an error (:func:`.replies.scrub`). An unset key
is refused before the first request when the server is not on this machine, or when ``api_key_env`` names a
variable of the user's own.

:func:`ask` sends a list of requests: those in the request cache (:mod:`.request_cache`) are read from it, the others
are sent by at most ``concurrency`` threads, each usable answer stored as soon as it arrives. A request that fails
with a connection error, a timeout, a rate limit, a server error (5xx) or a reply without a usable answer
(:mod:`.replies`) is retried after ``backoff * 2**attempt`` seconds, or after the server's ``Retry-After`` when that
is longer (at most :data:`MAX_RETRY_AFTER` s), ``retries`` times; a request that still fails, or fails with another
client error (400, 401, 404 ...), stops the run with :class:`RequestFailedError` naming its segment, what the server
said and, where one is known, the fix. Requests already answered stay in the cache, so the next run sends only the
rest. Progress reports count the requests sent, read from the cache and left.
"""
from __future__ import annotations

import email.utils
import json
import math
import os
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

import numpy as np

from ..errors import InputError, MissingDependencyError, StyleEvalError
from ..models.hashing import cache_dir
from ..progress import active
from ..urls import key_like_segment, secret_query_names, shown_url
from .replies import CHAT, first_choice, problem, scrub
from .replies import COMPLETIONS as COMPLETIONS  # re-exported: the metrics name the endpoints here
from .request_cache import AnswerStore, MemoryAnswers, RequestCache, request_key
from .transport import RedirectRefused, ReplyTooLarge, deadline, guarded_client

#: what a key-less local server (llama.cpp, vLLM without --api-key) is sent when no key is given
NO_KEY = "none"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
#: the longest ``Retry-After`` honoured (seconds); a server asking for more ends the run with a message saying so
MAX_RETRY_AFTER = 120.0
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: the default cap on the size of one reply (MB, counted inflated)
MAX_REPLY_MB = 16.0


class RequestFailedError(StyleEvalError, RuntimeError):
    """A request to the judge's server failed for good; names the segment it was for."""


def check_base_url(url: str) -> None:
    """Refuse a server address that cannot work or that carries a credential (the message never repeats it)."""
    text = url.strip()
    if not text:
        raise InputError("the judge's server needs a base_url (e.g. http://127.0.0.1:8000/v1)")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise InputError("base_url is not a URL such as http://127.0.0.1:8000/v1 (check the host and port)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = text.split("?")[0].split("@")[-1]
        raise InputError(f"base_url must start with http:// or https:// and name a host: write "
                         f"http://{shown.split('://')[-1]} (e.g. http://127.0.0.1:8000/v1), not {shown!r}")
    if parts.username is not None or parts.password is not None:
        raise InputError("base_url must not hold a user name or password; put the API key in the environment "
                         f"variable that api_key_env names ({DEFAULT_KEY_ENV} by default)")
    secret = secret_query_names(text)
    key_path = [s for s in parts.path.split("/") if key_like_segment(s)]
    if key_path:
        raise InputError("base_url holds what looks like an API key in its path (a segment starting "
                         f"{key_path[0][:3]!r}...); remove it from the URL and put the key in the environment variable "
                         f"that api_key_env names ({DEFAULT_KEY_ENV} by default): a URL is written into signatures, "
                         "caches and errors, a key never is")
    if secret:
        raise InputError(f"base_url carries a credential in its query ({secret[0]}=...); remove it from the URL and "
                         f"put the API key in the environment variable that api_key_env names ({DEFAULT_KEY_ENV} by "
                         "default): a URL is written into signatures, caches and errors, a key never is")


def _finite(name: str, value: float, low: float, strict: bool) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or \
            (value <= low if strict else value < low):
        raise InputError(f"{name} must be a finite number {'above' if strict else 'of at least'} {low:g}, "
                         f"not {value!r}")


@dataclass(frozen=True)
class ServerConfig:
    base_url: str
    model: str = ""  # empty: the first model the server lists
    api_key_env: str = DEFAULT_KEY_ENV
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 3
    backoff: float = 0.5
    request_cache: str = ""  # a file; empty: <cache>/llm-requests.sqlite; "none": no cache
    max_reply_mb: float = MAX_REPLY_MB  # the longest reply accepted (inflated)

    def __post_init__(self) -> None:
        check_base_url(self.base_url)
        for name in ("concurrency", "retries"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < (1 if name == "concurrency" else 0):
                raise InputError(f"{name} must be a whole number of at least {1 if name == 'concurrency' else 0}, "
                                 f"not {value!r}")
        _finite("timeout", self.timeout, 0.0, strict=True)
        _finite("backoff", self.backoff, 0.0, strict=False)
        _finite("max_reply_mb", self.max_reply_mb, 0.0, strict=True)

    @property
    def cache_path(self) -> Path | None:
        if self.request_cache.strip().lower() == "none":
            return None
        return Path(self.request_cache).expanduser() if self.request_cache.strip() else \
            cache_dir() / "llm-requests.sqlite"

    @property
    def local(self) -> bool:
        """Whether the server is on this machine (a key-less server there is normal)."""
        return (urlsplit(self.base_url).hostname or "") in LOCAL_HOSTS

    def api_key(self) -> str:
        """The key to send ("" for none), checked before any request: a variable the user named must be set, and
        a server elsewhere needs a key unless ``api_key_env`` is empty."""
        if not self.api_key_env:
            return ""
        value = os.environ.get(self.api_key_env, "")
        if value:
            bad = next((i for i, ch in enumerate(value) if not (" " < ch < "\x7f")), None)
            if bad is not None:
                what = "a space or control character" if ord(value[bad]) < 0x80 else "a character that is not ASCII"
                raise InputError(f"{self.api_key_env} holds {what} (U+{ord(value[bad]):04X}, character {bad + 1} of "
                                 f"{len(value)}): an API key is printable ASCII; copy the key again (a typographic "
                                 "quote or a trailing line break is the usual cause)")
            return value
        if self.api_key_env != DEFAULT_KEY_ENV:
            raise InputError(f"api_key_env={self.api_key_env} names an environment variable that is unset or empty: "
                             f"set {self.api_key_env} to the server's API key (or give api_key_env= with nothing "
                             "for a server without a key)")
        if not self.local:
            raise InputError(f"{shown_url(self.base_url)} is not on this machine and {DEFAULT_KEY_ENV} is unset: set "
                             f"{DEFAULT_KEY_ENV} to its API key, or name the variable that holds it with "
                             "api_key_env=NAME (api_key_env= with nothing sends no key)")
        return ""


@dataclass(frozen=True)
class Request:
    """One request: the endpoint (:data:`CHAT` or :data:`COMPLETIONS`), its body without the model, and the name
    of what it is for (``system 'A', segment '12'``), for errors."""

    endpoint: str
    body: dict[str, Any]
    label: str


@dataclass
class Usage:
    """Counts of one call of :func:`ask`: requests sent and read from the cache, tokens of all answers used and of
    the answers sent for in this call, retries."""

    requests_sent: int = 0
    requests_cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sent_prompt_tokens: int = 0
    sent_completion_tokens: int = 0
    retries: int = 0
    models: set[str] = field(default_factory=set)

    def add(self, other: "Usage") -> None:
        for name in ("requests_sent", "requests_cached", "prompt_tokens", "completion_tokens", "sent_prompt_tokens",
                     "sent_completion_tokens", "retries"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.models |= other.models


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise MissingDependencyError("openai", "judge", "an LLM judge on a server") from None
    return openai


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header asks to wait; None when
    there is none or it cannot be read."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    try:
        if ms is not None and math.isfinite(float(ms)):
            return max(float(ms) / 1000.0, 0.0)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


@dataclass
class _Failure:
    what: str  # what the server said (scrubbed)
    retryable: bool
    wait: float | None = None  # what Retry-After asked for
    status: int | None = None


class _Sender:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.key_value = config.api_key()  # refused here, before any request, when it must be set and is not
        self.openai = _openai()
        self.http = guarded_client(config.base_url, timeout=config.timeout,
                                   max_bytes=int(config.max_reply_mb * 1e6), connections=config.concurrency)
        self.client = self.openai.OpenAI(base_url=config.base_url, api_key=self.key_value or NO_KEY,
                                         timeout=config.timeout, max_retries=0, http_client=self.http)
        self.lock = threading.Lock()
        self.retries = 0

    def scrub(self, text: str) -> str:
        """``text`` without the API key (in case a server or a proxy echoes it back)."""
        return str(scrub(text, self.key_value))

    def failure(self, exc: Exception) -> _Failure:
        o = self.openai
        name = type(exc).__name__
        if isinstance(exc, (ReplyTooLarge, RedirectRefused)):
            return _Failure(f"{type(exc).__name__}: {self.scrub(str(exc))}", False)
        if isinstance(exc, o.APITimeoutError):
            return _Failure(f"{name}: no complete answer within timeout={self.config.timeout:g} s (connecting, "
                            "headers and body together)", True)
        if isinstance(exc, o.APIConnectionError):
            return _Failure(f"{name}: {self.scrub(str(exc))}", True)
        if isinstance(exc, o.APIStatusError):
            status = exc.status_code
            retryable = status in (408, 409, 429) or status >= 500
            headers = getattr(exc.response, "headers", None)
            return _Failure(f"{name}: {self.scrub(str(exc))}", retryable, retry_after(headers), status)
        return _Failure(f"{name}: {self.scrub(str(exc))}", True)

    def hint(self, failure: _Failure) -> str:
        """How to fix what failed, where the failure says."""
        url = shown_url(self.config.base_url)
        if failure.status == 404 and not urlsplit(url).path.rstrip("/").endswith("/v1"):
            return f"; is base_url missing its /v1 suffix? (try {url.rstrip('/')}/v1)"
        if failure.status == 404:
            return "; check that the server serves this model and endpoint (logprop needs /completions)"
        if failure.status in (401, 403):
            env = self.config.api_key_env
            if not env:
                return (f"; the server wants an API key: set it in {DEFAULT_KEY_ENV} (api_key_env= with nothing "
                        "sends none)")
            state = "is unset" if not self.key_value else "holds a key the server refused"
            return f"; the server wants an API key: {env} {state} (api_key_env names the variable that holds it)"
        if failure.what.startswith("APIConnectionError"):
            return f"; is a server running at {url}?"
        return ""

    def _once(self, request: Request, model: str) -> dict[str, Any] | _Failure:
        create = (self.client.chat.completions.with_raw_response.create if request.endpoint == CHAT
                  else self.client.completions.with_raw_response.create)
        try:
            with deadline(self.config.timeout):
                raw = create(model=model, **request.body)
                text = raw.http_response.text
        except (self.openai.OpenAIError, ReplyTooLarge, RedirectRefused) as exc:
            return self.failure(exc)
        except Exception as exc:  # noqa: BLE001 - anything the client raises on a broken reply: a failed request
            return _Failure(f"{type(exc).__name__}: {self.scrub(str(exc))}", True)
        try:
            answer = json.loads(text)
        except ValueError:
            kind = raw.http_response.headers.get("content-type", "no content type")
            return _Failure(f"the reply is not JSON ({kind}, {len(text)} characters: "
                            f"{self.scrub(text[:80])!r})", True)
        answer = scrub(answer, self.key_value)
        bad = problem(request.endpoint, answer)
        if bad is not None:
            return _Failure(bad, True)
        return dict(answer)

    def send(self, request: Request, model: str) -> dict[str, Any]:
        attempt = 0
        while True:
            outcome = self._once(request, model)
            if not isinstance(outcome, _Failure):
                return outcome
            wait_s = self.config.backoff * (2 ** attempt)
            if outcome.wait is not None and outcome.wait > MAX_RETRY_AFTER:
                raise RequestFailedError(
                    f"{request.label}: {shown_url(self.config.base_url)} asks to wait {outcome.wait:.0f} s before "
                    f"the next request (more than {MAX_RETRY_AFTER:.0f} s): run again later{self.kept()}. It said: "
                    f"{outcome.what}")
            if outcome.wait is not None:
                wait_s = max(wait_s, outcome.wait)
            if attempt >= self.config.retries or not outcome.retryable:
                tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                raise RequestFailedError(
                    f"{request.label}: the request to {shown_url(self.config.base_url)} failed after {tries}: "
                    f"{_one_line(outcome.what)}{self.hint(outcome)}")
            with self.lock:
                self.retries += 1
            time.sleep(wait_s)
            attempt += 1

    def kept(self) -> str:
        """What becomes of the answers received, for messages that end a run."""
        if self.config.cache_path is None:
            return " (request_cache=none: a rerun asks for every answer again)"
        return "; the answers received are cached"

    def close(self) -> None:
        self.client.close()
        self.http.close()


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def server_model(config: ServerConfig) -> str:
    """``config.model``, or the first model the server lists (one request to ``/models``), as the server names
    it (the key scrubbed out)."""
    if config.model.strip():
        return config.model.strip()
    sender = _Sender(config)
    try:
        try:
            with deadline(config.timeout):
                listed = sender.client.models.list()
            models = [m.id for m in listed.data]
        except (sender.openai.OpenAIError, ReplyTooLarge, RedirectRefused) as exc:
            failure = sender.failure(exc)
            raise RequestFailedError(f"cannot list the models of {shown_url(config.base_url)}: "
                                     f"{_one_line(failure.what)}{sender.hint(failure)}") from None
        except Exception as exc:  # noqa: BLE001 - a reply that is not a model list
            raise RequestFailedError(f"cannot list the models of {shown_url(config.base_url)}: the reply is not a "
                                     f"model list ({type(exc).__name__}); give model=NAME") from None
    finally:
        sender.close()
    names = [sender.scrub(m) for m in models if isinstance(m, str) and m.strip()]
    if not names:
        raise RequestFailedError(f"{shown_url(config.base_url)} lists no model; give model=NAME")
    return names[0]


def _answers(config: ServerConfig) -> tuple[AnswerStore, RequestCache | None]:
    path = config.cache_path
    if path is None:
        return MemoryAnswers(), None  # this call only: identical requests in it are sent once
    cache = RequestCache(path)
    return cache, cache


def ask(config: ServerConfig, model: str, requests: Sequence[Request]) -> tuple[list[dict[str, Any]], Usage]:
    """The answers to ``requests`` (in order) and what it took; see the module doc."""
    keys = [request_key(config.base_url, r.endpoint, {"model": model, **r.body}) for r in requests]
    secret = config.api_key()
    store, closable = _answers(config)
    usage = Usage()
    try:
        found = {k: scrub(v, secret) for k, v in store.get_many(keys).items()}
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        todo = [k for k in dict.fromkeys(keys) if k not in found]
        usage.requests_cached = len(dict.fromkeys(keys)) - len(todo)
        if todo:
            _send_all(config, model, store, [(k, requests[first[k]]) for k in todo], found, usage)
    finally:
        if closable is not None:
            closable.close()
    answers = [found[k] for k in keys]
    for k in dict.fromkeys(keys):
        tokens = found[k].get("usage") or {}
        usage.prompt_tokens += int(tokens.get("prompt_tokens") or 0)
        usage.completion_tokens += int(tokens.get("completion_tokens") or 0)
        if found[k].get("model"):
            usage.models.add(str(found[k]["model"]))
    return answers, usage


def _send_all(config: ServerConfig, model: str, store: AnswerStore, todo: list[tuple[str, Request]],
              found: dict[str, dict[str, Any]], usage: Usage) -> None:
    sender = _Sender(config)
    lock = threading.Lock()
    total = usage.requests_cached + len(todo)
    where = shown_url(config.base_url)
    progress = active()  # the caller's callback: the worker threads below do not inherit its context

    def tell() -> None:
        if progress is None:
            return
        left = total - usage.requests_cached - usage.requests_sent
        progress(f"asking {where}: {usage.requests_sent:,} sent, {usage.requests_cached:,} from the cache, {left:,} "
               "left [requests]", usage.requests_sent + usage.requests_cached, total)

    stop = threading.Event()  # set by the first request that fails for good: no further request is started

    def one(key: str, request: Request) -> None:
        if stop.is_set():
            return
        try:
            answer = sender.send(request, model)
        except BaseException:
            stop.set()
            raise
        store.put(key, request.endpoint, answer)
        tokens = answer.get("usage") or {}
        with lock:
            found[key] = answer
            usage.requests_sent += 1
            usage.sent_prompt_tokens += int(tokens.get("prompt_tokens") or 0)
            usage.sent_completion_tokens += int(tokens.get("completion_tokens") or 0)
            tell()

    tell()
    pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="styleval-judge")
    futures: list[Future[None]] = []
    try:
        futures = [pool.submit(one, key, request) for key, request in todo]
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in futures if f.done() and not f.cancelled() and f.exception() is not None), None)
        if failed is not None:
            for f in futures:
                f.cancel()  # requests not started are dropped; those in flight finish and are stored
            wait(futures)
            raise failed.exception()  # type: ignore[misc]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        usage.retries += sender.retries
        sender.close()


def first_answer_top(answer: dict[str, Any]) -> list[tuple[str, float]] | None:
    """``(token, log-probability)`` of the alternatives at the first position of a chat answer (the chosen token
    alone when the server gave no alternatives), or None when the answer has no log-probabilities."""
    choice = first_choice(answer)
    content = (choice.get("logprobs") or {}).get("content") or []
    if not content:
        return None
    first = content[0]
    top = first.get("top_logprobs") or [{"token": first.get("token", ""), "logprob": first.get("logprob")}]
    return [(str(t.get("token", "")), float(t["logprob"])) for t in top if t.get("logprob") is not None]


def answer_text(answer: dict[str, Any]) -> str:
    """The generated text of a chat answer."""
    choice = first_choice(answer)
    return str(((choice.get("message") or {}).get("content")) or "")


def echoed_logprobs(answer: dict[str, Any], n_tokens: int, text: str, eos: str, label: str) -> np.ndarray:
    """Log-probabilities of the last ``n_tokens`` prompt tokens a ``/completions`` answer with ``echo`` lists (the
    echo holds the prompt's tokens, then the ``usage.completion_tokens`` generated ones); their text, the ``eos``
    token left out, is checked against ``text`` (ASCII characters only: servers split UTF-8 characters apart)."""
    choice = first_choice(answer)
    lp = choice.get("logprobs") or {}
    tokens, values = lp.get("tokens"), lp.get("token_logprobs")
    generated = int((answer.get("usage") or {}).get("completion_tokens") or 0)
    if not tokens or not values or len(tokens) != len(values) or len(values) < generated + n_tokens:
        raise InputError(f"{label}: the server did not echo the prompt's log-probabilities (this needs a "
                         "/completions endpoint with echo and logprobs, as vLLM and the llama.cpp server offer)")
    stop = len(values) - generated
    picked, texts = values[stop - n_tokens:stop], tokens[stop - n_tokens:stop]
    if _ascii("".join(texts).replace(eos, "")) != _ascii(text) or any(v is None for v in picked):
        raise InputError(f"{label}: the server's last {n_tokens} prompt tokens are not the text scored (is the "
                         "chat template the served model's?)")
    return np.asarray(picked, dtype=float)


def _ascii(text: str) -> str:
    return "".join(ch for ch in text if ord(ch) < 128)
