"""What a server's reply must hold before it is used or cached, and the key taken out of everything it says.

A reply is *usable* when it is a JSON object with no ``error``, a non-empty ``choices`` list whose first choice
(the one with ``"index": 0`` when the choices are numbered, in whatever order they come; :func:`first_choice`) has
the endpoint's answer (a chat ``message`` with text or log-probabilities; a completion's ``text`` or
``logprobs``), and every field the judges read is of its type: log-probabilities are numbers, tokens are text,
token counts are whole numbers, and a log-probability is at most 0 (a probability above 1 is not one). Anything
else -- ``200 {"error": ...}``, ``"choices": []``, an HTML page, a
truncated body, a log-probability sent as a string -- is a failed request: retried within the bound, never cached.
The same check runs on every answer read back from the request cache, so an entry of the wrong shape is asked
again instead of scored.
"""
from __future__ import annotations

import math
from typing import Any

CHAT = "chat.completions"
COMPLETIONS = "completions"
MIN_SECRET = 4  # shorter "keys" (a placeholder such as "none") are not searched for


def scrub(value: Any, secret: str) -> Any:
    """``value`` (JSON: dicts, lists, strings) with every occurrence of ``secret`` replaced by ``***``."""
    if len(secret) < MIN_SECRET:
        return value
    if isinstance(value, str):
        return value.replace(secret, "***")
    if isinstance(value, dict):
        return {scrub(k, secret): scrub(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secret) for v in value]
    return value


#: the largest log-probability accepted (0, with room for rounding): a higher one is a probability above 1
MAX_LOGPROB = 1e-6


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _logprob(value: Any) -> bool:
    return _number(value) and value <= MAX_LOGPROB


def first_choice(answer: Any) -> dict[str, Any]:
    """The choice a judge reads: the one numbered ``"index": 0`` when the choices carry numbers (servers may list
    them in any order), else the first in the list; ``{}`` when there is none."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not choices:
        return {}
    numbered = [c for c in choices if isinstance(c, dict) and "index" in c]
    if numbered:
        return next((c for c in numbered if c.get("index") == 0 and not isinstance(c.get("index"), bool)), {})
    return choices[0] if isinstance(choices[0], dict) else {}


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _token_entries(entries: Any, where: str) -> str | None:
    if entries is None:
        return None
    if not isinstance(entries, list):
        return f"{where} is not a list"
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str) or \
                not _number(entry.get("logprob")):
            return f"{where} holds an entry without a text token and a numeric logprob ({_short(entry)})"
        if not _logprob(entry["logprob"]):
            return f"{where} holds a logprob above 0, a probability above 1 ({_short(entry)})"
        nested = _token_entries(entry.get("top_logprobs"), f"{where}[].top_logprobs")
        if nested is not None:
            return nested
    return None


def problem(endpoint: str, answer: Any) -> str | None:
    """Why ``answer`` is not a usable reply of ``endpoint`` (:data:`CHAT` or :data:`COMPLETIONS`); None when it is."""
    if not isinstance(answer, dict):
        return f"the reply is not a JSON object ({_short(answer)})"
    if answer.get("error"):
        return f"the reply is an error: {_short(answer['error'])}"
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return f"the reply has no answer (choices: {_short(choices)})"
    choice = first_choice(answer)
    if not choice:
        return f"the reply's choices hold none numbered 0 (choices: {_short(choices)})"
    if not isinstance(answer.get("model", ""), (str, type(None))):
        return "the reply's model is not text"
    usage = answer.get("usage")
    if usage is not None and (not isinstance(usage, dict) or not all(
            _count(usage.get(k)) for k in ("prompt_tokens", "completion_tokens"))):
        return f"the reply's token counts are not whole numbers ({_short(usage)})"
    logprobs = choice.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, dict):
        return f"the reply's logprobs are not an object ({_short(logprobs)})"
    if endpoint == CHAT:
        message = choice.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), (str, type(None))):
            return f"the reply's first choice has no message ({_short(choice)})"
        content = (logprobs or {}).get("content")
        bad = _token_entries(content, "logprobs.content")
        if bad is not None:
            return f"the reply's {bad}"
        if message.get("content") is None and not content:
            return "the reply's message has neither text nor log-probabilities"
        return None
    text = choice.get("text")
    if not isinstance(text, (str, type(None))):
        return "the reply's text is not text"
    if logprobs:
        tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            return "the reply's logprobs.tokens are not a list of text tokens"
        if not isinstance(values, list) or not all(v is None or _number(v) for v in values):
            return f"the reply's logprobs.token_logprobs are not numbers ({_short(values)})"
        if not all(v is None or _logprob(v) for v in values):
            return f"the reply's logprobs.token_logprobs hold a value above 0, a probability above 1 ({_short(values)})"
    elif text is None:
        return "the reply's first choice has neither text nor log-probabilities"
    return None


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
