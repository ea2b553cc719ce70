"""What ``llm_judge`` and ``logprop`` share: the backend choice, the server settings, the run facts and class
facts that follow a parameter."""
from __future__ import annotations

import math
from typing import Any, ClassVar, Generic, TypeVar

from ...errors import InputError
from ..content._common import check_number
from ...judges.request_cache import public_url
from ...judges.server import ServerConfig, Usage, check_base_url

T = TypeVar("T")

#: parameters that change how requests are made or where answers are kept, never a score: left out of the
#: signature and the label (as ``batch_tokens`` is for the LM metrics)
RUN_ONLY = ("batch_tokens", "api_key_env", "concurrency", "timeout", "retries", "backoff", "request_cache", "price",
            "max_reply_mb")


#: what the parameters both judge metrics share mean (``styleval metrics llm_judge``, ``... logprop``)
SERVER_PARAMETER_HELP: dict[str, str] = {
    "model": "the judging LM: a catalog name or local folder (base_url empty), or the model name the "
             "server knows",
    "base_url": "an OpenAI-compatible server's address (ending in /v1); empty: run model locally through "
                "transformers",
    "template": "a prompt template file of one's own (default: the shipped one; docs/llm-judges.md)",
    "api_key_env": "the environment variable holding the server's API key (never written anywhere)",
    "concurrency": "server requests in flight at once",
    "timeout": "seconds for one server request as a whole (connecting, headers and body together)",
    "max_reply_mb": "the longest server reply accepted, in MB (a compressed one counted as it inflates); a longer one "
                    "fails the request and is never cached",
    "retries": "retries of a request that failed for a transient reason (connection, 429, 5xx)",
    "backoff": "seconds before the first retry, doubled for each further one",
    "request_cache": "SQLite file of server answers, so that a rerun or resumed run sends nothing twice "
                     "(none: this process only)",
    "price": "IN/OUT currency per million prompt / completion tokens, for a cost estimate in the run "
             "facts",
    "batch_tokens": "tokens per local batch (speed and memory only)",
}


class InstanceFact(Generic[T]):
    """A class fact (``aspect``, ``value_range`` ...) that a parameter decides: the class default on the class (what
    ``styleval metrics`` lists), the instance's own value, set as ``_<name>``, on an instance."""

    def __init__(self, default: T) -> None:
        self.default = default
        self.attr = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        return self.default if obj is None else getattr(obj, self.attr, self.default)


class JudgeBackendParams:
    """The backend parameters of the judge metrics: ``base_url`` empty runs ``model`` locally (a catalog name or a
    folder; default SmolLM2-135M-Instruct), else asks that server for ``model`` (default: the first it lists)."""

    name: ClassVar[str]
    model: str
    base_url: str
    api_key_env: str
    concurrency: int
    timeout: float
    retries: int
    backoff: float
    request_cache: str
    max_reply_mb: float
    price: str
    batch_tokens: int
    facts_add_up = True  # requests, tokens and costs (Metric.merge_facts)

    def _set_backend(self, *, model: str, base_url: str, api_key_env: str, concurrency: int, timeout: float,
                     retries: int, backoff: float, request_cache: str, price: str, batch_tokens: int,
                     max_reply_mb: float = 16.0) -> None:
        self.model = str(model)
        if str(base_url).strip():
            check_base_url(str(base_url))  # before public_url: a refused credential never reaches a signature
        self.base_url = public_url(str(base_url).strip()) if str(base_url).strip() else ""
        self.api_key_env = str(api_key_env)
        for param, value, low, integer in (("concurrency", concurrency, 1, True), ("timeout", timeout, 1e-3, False),
                                           ("retries", retries, 0, True), ("backoff", backoff, 0, False),
                                           ("max_reply_mb", max_reply_mb, 1e-3, False),
                                           ("batch_tokens", batch_tokens, 1, True)):
            check_number(self.name, param, value, low=low, integer=integer)  # type: ignore[attr-defined]
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.request_cache = str(request_cache)
        self.max_reply_mb = float(max_reply_mb)
        self.price = str(price)
        self.batch_tokens = int(batch_tokens)
        self._prices = parse_price(self.price)
        if self.on_server:
            self.server_config()  # checked now, not at the first request

    @property
    def on_server(self) -> bool:
        return bool(self.base_url)

    def server_resources(self) -> dict[str, str]:
        """The served model, as the server names it (``model=`` or the first it lists: one request to
        ``/models``), so that the statistics cache and the signature change when the server's model does."""
        from ...judges.server import server_model

        return {"judge_model": server_model(self.server_config()), "judge_backend": "server"}

    def server_config(self) -> ServerConfig:
        return ServerConfig(base_url=self.base_url, model=self.model, api_key_env=self.api_key_env,
                            concurrency=self.concurrency, timeout=self.timeout, retries=self.retries,
                            backoff=self.backoff, request_cache=self.request_cache, max_reply_mb=self.max_reply_mb)

    def run_facts(self, usage: Usage) -> dict[str, Any]:
        """Token counts and requests of one system's scoring, and the cost estimate when a price was given."""
        facts: dict[str, Any] = {
            "requests_sent": usage.requests_sent, "requests_cached": usage.requests_cached,
            "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "sent_prompt_tokens": usage.sent_prompt_tokens, "sent_completion_tokens": usage.sent_completion_tokens,
            "retries": usage.retries}
        if self._prices is not None:
            p_in, p_out = self._prices
            facts["cost_estimate"] = (usage.prompt_tokens * p_in + usage.completion_tokens * p_out) / 1e6
            facts["cost_sent"] = (usage.sent_prompt_tokens * p_in + usage.sent_completion_tokens * p_out) / 1e6
        return facts


def parse_price(text: str) -> tuple[float, float] | None:
    """``"IN/OUT"`` (price per million prompt / completion tokens) or one number for both; empty: none."""
    text = str(text).strip()
    if not text:
        return None
    parts = text.split("/")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or not all(math.isfinite(v) and v >= 0 for v in values):
        raise InputError(f"price must be 'IN/OUT' (per million prompt / completion tokens) or one number, "
                         f"not {text!r}")
    return (values[0], values[-1])


def drop_run_only(params: dict[str, Any]) -> dict[str, Any]:
    for name in RUN_ONLY:
        params.pop(name, None)
    return params


def segment_label(system: str, segment_id: str) -> str:
    return f"system {system!r}, segment {segment_id!r}"
