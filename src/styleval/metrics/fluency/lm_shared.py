"""What the LM-based fluency metrics share: one LM per target style with a generic fallback, their identity in the
signature, text normalisation, and a per-process cache of token log-probabilities.

:class:`StyleLMs` is mixed into ``perplexity``, ``slor``, ``mean_logprob`` and ``acceptability``: each segment is
scored by the LM of its direction's target style (``style_lms``), else by ``model``; the signature names every LM
with its content hash, the styles that fell back to the generic LM (``lm_fallback``) and the code that ran the
forward pass (``lm_backend``).

:func:`scored_texts` runs :func:`styleval.lm.causal.token_logprobs` (with the end-of-text token) on the
normalised outputs and remembers the result per (LM, max_tokens, scored text), so the metrics that read the same
LM pass (``perplexity``, ``slor``, ``mean_logprob``, ``acceptability`` with the same normalisation) run it once per
process; while a model-output store is active (:mod:`styleval.models.outputs`, the streaming engine's ``--cache``)
the pass is also read from and written to it, so it runs once across runs. :func:`cache_snapshot` and
:func:`restore_cache` carry the in-memory cache from one process to another (studies that run the LM pass once).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from ...lm.causal import TokenLogprobs
from ...models.outputs import active_store
from ...models.passes import timed
from ..base import Batch
from ...progress import Progress

_Row = tuple[np.ndarray, np.ndarray, float, bool]  # token ids, their log-probabilities, end-of-text's, truncated
_CACHE: dict[tuple[str, int, str], _Row] = {}
_CACHE_LIMIT = 200_000


class StyleLMs:
    """Mixin of the LM metrics: needs ``model`` and ``_style_lms`` (style -> LM) attributes."""

    model: str
    _style_lms: dict[str, str]

    def _lm_for(self, style: str | None) -> str:
        return self._style_lms.get(style.lower(), self.model) if style else self.model

    def _groups(self, batch: Batch) -> dict[str, list[int]]:
        """LM name -> the rows it scores."""
        groups: dict[str, list[int]] = {}
        for i, d in enumerate(batch.directions):
            groups.setdefault(self._lm_for(d.target_style if d is not None else None), []).append(i)
        return groups

    def resources(self) -> dict[str, str]:
        from ...lm.loading import resolve_causal_lm

        out = {f"{k}": v for k, v in resolve_causal_lm(self.model).identity().items()}
        for style, path in sorted(self._style_lms.items()):
            ident = resolve_causal_lm(path).identity()
            out[f"lm[{style}]"] = ident["lm"]
            out[f"lm[{style}]_hash"] = ident["lm_hash"]
        out.update(normalisation_resources(getattr(self, "normalize", "none")))
        return out

    def signature(self, batch: Batch | None = None, resolved: dict[str, str] | None = None):  # type: ignore
        sig = super().signature(batch, resolved)  # type: ignore[misc]
        if batch is None:
            return sig
        missing = sorted({(d.target_style if d is not None else "none") for d in batch.directions
                          if d is None or d.target_style.lower() not in self._style_lms})
        res = dict(sig.resources)
        if missing and self._style_lms:
            res["lm_fallback"] = ",".join(missing) + "->generic"
        return replace(sig, resources=res) if res != sig.resources else sig


#: why ``normalize=auto-corpus`` makes an LM metric batch-dependent (capabilities, ``styleval metrics NAME``)
CORPUS_NORMALISATION = ("normalize=auto-corpus decides the text normalisation once from all of a system's outputs, so "
                        "one row can change how the others are read; normalize=auto (per text), none, "
                        "detok, truecase or detok+truecase score each text alone and in chunks")


def normalisation_resources(normalize: str) -> dict[str, str]:
    """What the signature says of a normalisation decided per text (the same for any batch, so a cached or
    streamed run signs alike): ``normalized: per text`` for ``auto``; nothing for a fixed mode (a parameter)."""
    from ...textnorm.readable import AUTO

    return {"normalized": "per text"} if normalize == AUTO else {}


def applied_normalisation(normalize: str, outputs: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The mode :func:`scored_texts` applies to one batch (one system's outputs) and the resources that name it:
    ``auto-corpus`` resolved once for the batch (``normalized_as``), any other mode as given."""
    from ...textnorm.readable import AUTO_CORPUS, resolve_auto

    if normalize == AUTO_CORPUS:
        mode = resolve_auto(outputs)
        return mode, {"normalized_as": mode}
    return normalize, {}


def scored_texts(lm_name: str, texts: Sequence[str], *, normalize: str = "none", batch_tokens: int = 4096,
                 max_tokens: int = 0, progress: Progress | None = None,
                 backends: set[str] | None = None) -> tuple[TokenLogprobs, list[str]]:
    """Token log-probabilities (with the end-of-text token) of ``texts`` after normalisation, under ``lm_name``;
    also returns the texts as scored. ``backends`` receives the backend that ran the LM (native or transformers)."""
    from ...textnorm.readable import normalize_all
    from ...lm.causal import token_logprobs
    from ...lm.loading import load_causal_lm

    shown = [t if t.strip() else "" for t in normalize_all(texts, normalize)]  # whitespace only: an empty text
    lm = load_causal_lm(lm_name, progress=progress)
    if backends is not None:
        backends.add(lm.backend)
    key = lm.spec.key
    got: dict[str, _Row] = {}  # this call's rows (the process-wide memo may be emptied while it fills)
    for t in dict.fromkeys(shown):
        row = _CACHE.get((key, max_tokens, t))
        if row is not None:
            got[t] = row
    todo = [t for t in dict.fromkeys(shown) if t not in got]
    store = active_store() if todo else None
    namespace = _store_namespace(lm, max_tokens) if store is not None else ""
    if store is not None:  # a model-output store (the streaming engine's --cache): LM passes of past runs
        for t, (ids, lp, end, cut) in store.get_many(namespace, todo).items():
            got[t] = (ids, lp, float(end), bool(cut))
        todo = [t for t in todo if t not in got]
    if todo:
        with timed("model", f"lm {lm.spec.name}", len(todo)):
            res = token_logprobs(lm, todo, with_end=True, batch_tokens=batch_tokens,
                                 max_tokens=max_tokens or None, progress=progress)
        new = {t: (ids, lp, float(end), bool(cut))
               for t, ids, lp, end, cut in zip(todo, res.token_ids, res.logprobs, res.end_logprob, res.truncated)}
        got.update(new)
        if store is not None:
            store.put_many(namespace, {t: (r[0], r[1], np.asarray(r[2], np.float64), np.asarray(r[3], np.bool_))
                                       for t, r in new.items()})
    if len(_CACHE) + len(got) > _CACHE_LIMIT:
        _CACHE.clear()
    for t, row in got.items():
        _CACHE[(key, max_tokens, t)] = row
    rows = [got[t] for t in shown]
    return TokenLogprobs(token_ids=[r[0] for r in rows], logprobs=[r[1] for r in rows],
                         end_logprob=np.array([r[2] for r in rows], dtype=float),
                         truncated=np.array([r[3] for r in rows], dtype=bool)), shown


def _store_namespace(lm: Any, max_tokens: int) -> str:
    """What names this LM pass in a model-output store: the LM's content (and an adapter's base's), the code that
    ran it, the effective token limit, and the end-of-text token being scored."""
    spec = lm.spec
    model = spec.content_hash() + (f"+{spec.base.content_hash()}" if spec.base is not None else "")
    limit = min(max_tokens or lm.max_length, lm.max_length)
    return f"lm-logprobs:{model}:{lm.backend}:max{limit}:end"


def clear_cache() -> None:
    _CACHE.clear()


def cache_snapshot() -> dict[tuple[str, int, str], tuple[np.ndarray, np.ndarray, float, bool]]:
    """A copy of the per-process cache of LM passes, keyed by (LM key, max_tokens, scored text), to be saved and
    handed to :func:`restore_cache` in a later process."""
    return dict(_CACHE)


def restore_cache(rows: dict[tuple[str, int, str], tuple[np.ndarray, np.ndarray, float, bool]]) -> None:
    """Add the rows of an earlier :func:`cache_snapshot` to the per-process cache."""
    _CACHE.update(rows)


def cache_size() -> int:
    """How many LM passes the per-process cache holds."""
    return len(_CACHE)


def lm_params(metric: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Signature parameters of an LM metric: ``batch_tokens`` left out (it does not change scores), style LMs as
    one ``style=path;...`` string."""
    params.pop("batch_tokens", None)
    params["style_lms"] = ";".join(f"{k}={v}" for k, v in sorted(metric._style_lms.items())) or "none"
    return params
