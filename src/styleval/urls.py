"""URLs as they may be printed: every credential a URL can carry taken out (:func:`shown_url`).

A URL holds a secret in three places: its user information (``user:password@host``), its query (``?api-key=``,
``?code=``, ``?token=``, ``?sig=`` ...) and its path (``/v1/sk-proj-.../``, a long random segment). Errors, logs,
signatures and progress lines print :func:`shown_url`, which keeps the scheme, host, port and the rest of the path
and writes ``***`` for each of those.
"""
from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

#: query parameter names that carry a credential (``api-key``, ``access_token``, ``sig``, ``code`` ...)
SECRET_NAME = re.compile(r"key|token|secret|pass|auth|sig|credential|(?:^|[-_])code$", re.IGNORECASE)
#: path segments that are keys: the prefixes of the common API keys (OpenAI sk-, Hugging Face hf_, Groq gsk_,
#: xAI xai-, Google AIza, GitHub ghp_, Replicate r8_, Perplexity pplx-)
KEY_PREFIX = re.compile(r"^(?:sk|pk|rk)[-_]|^(?:hf|gsk|ghp|gho|r8)_|^(?:xai|pplx)-|^AIza", re.IGNORECASE)
#: a long random-looking path segment (letters and digits mixed, 24+ characters): masked when shown
_RANDOM = re.compile(r"^(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{24,}$")
MASK = "***"


def key_like_segment(segment: str) -> bool:
    """Whether a path segment starts like an API key (``sk-...``, ``hf_...``)."""
    return bool(KEY_PREFIX.match(segment)) and len(segment) >= 8


def secret_query_names(url: str) -> list[str]:
    """The names of the query parameters of ``url`` that carry a credential."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    return [name for name, _ in parse_qsl(query, keep_blank_values=True) if SECRET_NAME.search(name)]


def shown_url(url: str) -> str:
    """``url`` with its user name and password left out and every credential in its query or path written ``***``
    (the URL unchanged in form otherwise); a text that is not a URL comes back with anything before an ``@`` cut."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url.split("@")[-1]
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if port is not None:
        host += f":{port}"
    segments = [MASK if key_like_segment(s) or _RANDOM.match(s) else s for s in parts.path.split("/")]
    query = "&".join(f"{quote(name, safe='')}={MASK if SECRET_NAME.search(name) else quote(value, safe='/:')}"
                     for name, value in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, host, "/".join(segments), query, ""))
