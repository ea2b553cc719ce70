"""The server backend: any OpenAI-compatible server (vLLM, the llama.cpp server, Ollama, a hosted API) through the
official ``openai`` client.

:class:`ServerConfig` holds the address, the model name, the name of the environment variable that holds the API
key (the key itself is read when a client is made and is never stored, logged or shown in an error), the
concurrency limit, the timeout of one request and the retries. :func:`ask` sends a list of requests: those in the
request cache (:mod:`.request_cache`) are read from it, the others are sent by at most ``concurrency`` threads,
each answer stored as soon as it arrives. A request that fails with a connection error, a timeout, a rate limit
or a server error (5xx) is retried after ``backoff * 2**attempt`` seconds, ``retries`` times; a request that still
fails, or fails with another client error (400, 401, 404 ...), stops the run with :class:`RequestFailedError`
naming its segment. Requests already answered stay in the cache, so the next run sends only the rest.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError, MissingDependencyError, StyleEvalError
from ..models.hashing import cache_dir
from .request_cache import AnswerStore, MemoryAnswers, RequestCache, public_url, request_key

CHAT = "chat.completions"
COMPLETIONS = "completions"
#: what a key-less local server (llama.cpp, vLLM without --api-key) is sent when the key's variable is unset
NO_KEY = "none"


class RequestFailedError(StyleEvalError, RuntimeError):
    """A request to the judge's server failed for good; names the segment it was for."""


@dataclass(frozen=True)
class ServerConfig:
    base_url: str
    model: str = ""  # empty: the first model the server lists
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 3
    backoff: float = 0.5
    request_cache: str = ""  # a file; empty: <cache>/llm-requests.sqlite; "none": no cache

    def __post_init__(self) -> None:
        if not self.base_url.strip():
            raise InputError("the judge's server needs a base_url (e.g. http://127.0.0.1:8000/v1)")
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, not {self.concurrency}")
        if self.timeout <= 0:
            raise InputError(f"timeout must be positive, not {self.timeout}")
        if self.retries < 0 or self.backoff < 0:
            raise InputError("retries and backoff must not be negative")

    @property
    def cache_path(self) -> Path | None:
        if self.request_cache.strip().lower() == "none":
            return None
        return Path(self.request_cache).expanduser() if self.request_cache.strip() else \
            cache_dir() / "llm-requests.sqlite"


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


def _client(config: ServerConfig) -> Any:
    openai = _openai()
    key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
    return openai.OpenAI(base_url=config.base_url, api_key=key or NO_KEY, timeout=config.timeout, max_retries=0)


class _Sender:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.client = _client(config)
        self.key_value = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
        self.openai = _openai()
        self.lock = threading.Lock()
        self.retries = 0

    def scrub(self, text: str) -> str:
        """``text`` without the API key (in case a server or a proxy echoes it back)."""
        return text.replace(self.key_value, "***") if len(self.key_value) >= 4 else text

    def retryable(self, exc: Exception) -> bool:
        o = self.openai
        if isinstance(exc, (o.APIConnectionError, o.RateLimitError, o.InternalServerError)):
            return True
        return isinstance(exc, o.APIStatusError) and (exc.status_code in (408, 409, 429) or exc.status_code >= 500)

    def send(self, request: Request, model: str) -> dict[str, Any]:
        create = (self.client.chat.completions.create if request.endpoint == CHAT
                  else self.client.completions.create)
        attempt = 0
        while True:
            try:
                answer = create(model=model, **request.body)
                return dict(answer.model_dump(mode="json"))
            except self.openai.OpenAIError as exc:
                if attempt >= self.config.retries or not self.retryable(exc):
                    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                    raise RequestFailedError(
                        f"{request.label}: the request to {public_url(self.config.base_url)} failed after {tries}: "
                        f"{type(exc).__name__}: {self.scrub(str(exc))}") from None
            with self.lock:
                self.retries += 1
            time.sleep(self.config.backoff * (2 ** attempt))
            attempt += 1

    def close(self) -> None:
        self.client.close()


def server_model(config: ServerConfig) -> str:
    """``config.model``, or the first model the server lists (one request to ``/models``)."""
    if config.model.strip():
        return config.model.strip()
    sender = _Sender(config)
    try:
        models = [m.id for m in sender.client.models.list()]
    except sender.openai.OpenAIError as exc:
        raise RequestFailedError(f"cannot list the models of {public_url(config.base_url)}: "
                                 f"{type(exc).__name__}: {sender.scrub(str(exc))}") from None
    finally:
        sender.close()
    if not models:
        raise RequestFailedError(f"{public_url(config.base_url)} lists no model; give model=NAME")
    return str(models[0])


def _answers(config: ServerConfig) -> tuple[AnswerStore, RequestCache | None]:
    path = config.cache_path
    if path is None:
        return MemoryAnswers(), None  # this call only: identical requests in it are sent once
    cache = RequestCache(path)
    return cache, cache


def ask(config: ServerConfig, model: str, requests: Sequence[Request]) -> tuple[list[dict[str, Any]], Usage]:
    """The answers to ``requests`` (in order) and what it took; see the module doc."""
    keys = [request_key(config.base_url, r.endpoint, {"model": model, **r.body}) for r in requests]
    store, closable = _answers(config)
    usage = Usage()
    try:
        found = store.get_many(keys)
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

    def one(key: str, request: Request) -> None:
        answer = sender.send(request, model)
        store.put(key, request.endpoint, answer)
        tokens = answer.get("usage") or {}
        with lock:
            found[key] = answer
            usage.requests_sent += 1
            usage.sent_prompt_tokens += int(tokens.get("prompt_tokens") or 0)
            usage.sent_completion_tokens += int(tokens.get("completion_tokens") or 0)

    pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="styleval-judge")
    futures: list[Future[None]] = []
    try:
        futures = [pool.submit(one, key, request) for key, request in todo]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f for f in futures if f.done() and f.exception() is not None), None)
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
    choice = (answer.get("choices") or [{}])[0]
    content = (choice.get("logprobs") or {}).get("content") or []
    if not content:
        return None
    first = content[0]
    top = first.get("top_logprobs") or [{"token": first.get("token", ""), "logprob": first.get("logprob")}]
    return [(str(t.get("token", "")), float(t["logprob"])) for t in top if t.get("logprob") is not None]


def answer_text(answer: dict[str, Any]) -> str:
    """The generated text of a chat answer."""
    choice = (answer.get("choices") or [{}])[0]
    return str(((choice.get("message") or {}).get("content")) or "")


def echoed_logprobs(answer: dict[str, Any], n_tokens: int, text: str, eos: str, label: str) -> np.ndarray:
    """Log-probabilities of the last ``n_tokens`` prompt tokens a ``/completions`` answer with ``echo`` lists (the
    echo holds the prompt's tokens, then the ``usage.completion_tokens`` generated ones); their text, the ``eos``
    token left out, is checked against ``text`` (ASCII characters only: servers split UTF-8 characters apart)."""
    choice = (answer.get("choices") or [{}])[0]
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
