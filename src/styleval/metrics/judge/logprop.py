"""``logprop``: the likelihood of an output under instructions with and without the target style (Pauli et al.,
2025, "Mind the Style Gap"), as the authors' released script computes it.

Three chat prompts share the authors' system prompt and differ in the user turn (``templates/logprop.txt``):
*paraphrase* ("Paraphrase the following sentence: {source}"), *rewrite* ("Rewrite the following sentence to be
{target_style}: {source}") and *repeat* ("Repeat the following sentence: {source}"). Each is rendered with the
model's chat template up to the start of the assistant's turn, and the output followed by the model's end-of-turn
token (its ``eos_token``) is scored after it: ``p_c(t)`` is the probability of output token ``t`` under context
``c``. Over the scored tokens,

* content (``part=content``, the default; aspect content): ``mean_t log max(p_paraphrase, p_rewrite, p_repeat)``,
  in nats per token, at most 0;
* style (``part=style``; aspect style): ``mean_t [p_rewrite - max(p_paraphrase, p_repeat)]``, in [-1, 1].

The authors' script scores the output's tokens from the second one on (its slices skip the first); that is the
default here, and ``score_first_token=true`` scores every token. A segment with no token to score (an empty output,
whose only token is the end of the turn, skipped) is NaN and flagged ``no_tokens``.

Backends: a local causal LM (prompt and output tokenized apart and joined, as in the authors' script), or a server's
``/completions`` endpoint with ``echo`` and ``logprobs`` (vLLM, the llama.cpp server; chat-only hosted APIs
cannot return the log-probabilities of given text), where the prompt is rendered here with ``chat_template=`` (a
local folder holding the served model's chat template and ``tokenizer.json``, or a catalog name) and the output's
tokens are the last prompt tokens the server echoes, as many as that tokenizer makes of the output and its end of
turn (their text is checked against the output).

Statistics per segment: ``[content, style, scored tokens]``; corpus: the mean of the segment scores.
"""
from __future__ import annotations

import hashlib
import math
from typing import Any, ClassVar

import numpy as np

from ...errors import InputError
from ...judges import local as local_backend
from ...judges import server as server_backend
from ...judges.chat import ChatFormat, chat_format
from ...judges.templates import LOGPROP_CONTEXTS, LogPropTemplate, logprop_template
from ..base import Aspect, Batch, Metric, SegmentStats
from ..registry import register
from ._common import SERVER_PARAMETER_HELP, InstanceFact, JudgeBackendParams, drop_run_only, segment_label

CONTENT, STYLE, NTOK = 0, 1, 2
PARTS = {"content": (Aspect.CONTENT, (-math.inf, 0.0)), "style": (Aspect.STYLE, (-1.0, 1.0))}


@register
class LogProp(JudgeBackendParams, Metric):
    """Pauli et al.'s style-aware likelihood: the output under paraphrase, rewrite-to-style and repeat prompts."""

    name = "logprop"
    parameter_help: ClassVar[dict[str, str]] = {
        **SERVER_PARAMETER_HELP,
        "part": "content (mean log of the best of the three prompts' token probabilities) or style (rewrite "
                "minus the best other)",
        "chat_template": "a local folder with the served model's chat template (logprop over a server)",
        "score_first_token": "also score the output's first token (the authors' script does not)",
    }
    version = "1"
    n_stats = 3
    aspect = InstanceFact(Aspect.CONTENT)  # type: ignore[assignment]
    needs = frozenset({"source", "target_style"})
    higher_is_better = True
    value_range = InstanceFact((-math.inf, 0.0))  # type: ignore[assignment]
    description = ("Pauli et al. 2025: mean log max over paraphrase/rewrite/repeat prompts of each output token's "
                   "probability (content) or rewrite minus the others (style); corpus: mean")
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers", "openai")

    def __init__(self, *, part: str = "content", model: str = "", base_url: str = "", template: str = "",
                 chat_template: str = "", score_first_token: bool = False, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 4, timeout: float = 60.0, retries: int = 3, backoff: float = 0.5,
                 request_cache: str = "", price: str = "", max_reply_mb: float = 16.0,
                 batch_tokens: int = local_backend.BATCH_TOKENS) -> None:
        if part not in PARTS:
            raise InputError(f"logprop: part must be one of {', '.join(PARTS)}, not {part!r}")
        self.part = part
        self._aspect, self._value_range = PARTS[part]
        self.template = str(template)
        self._template: LogPropTemplate = logprop_template(self.template)
        self.chat_template = str(chat_template)
        self.score_first_token = bool(score_first_token)
        self._set_backend(model=model, base_url=base_url, api_key_env=api_key_env, concurrency=concurrency,
                          timeout=timeout, retries=retries, backoff=backoff, request_cache=request_cache,
                          price=price, max_reply_mb=max_reply_mb, batch_tokens=batch_tokens)
        if self.on_server and not self.chat_template.strip():
            raise InputError("logprop on a server renders its prompts here: give chat_template=FOLDER (a local "
                             "folder with the served model's chat_template.jinja or tokenizer_config.json) or a "
                             "catalog name such as smollm2-135m")

    def get_params(self) -> dict[str, Any]:
        return drop_run_only(super().get_params())

    def resources(self) -> dict[str, str]:
        out = {"template_used": self._template.file.name, "template_hash": self._template.file.short_hash}
        if self.on_server:
            out.update(self.server_resources())
        else:
            from ...lm.loading import resolve_causal_lm

            ident = resolve_causal_lm(self.model or local_backend.DEFAULT_MODEL).identity()
            out.update({"judge_model": ident["lm"], "judge_model_hash": ident["lm_hash"]})
        return out

    def _prompts(self, chat: ChatFormat, batch: Batch) -> list[list[str]]:
        """Per segment, the three rendered contexts (paraphrase, rewrite, repeat)."""
        out = []
        for source, d in zip(batch.sources, batch.directions):
            values = {"source": source, "target_style": d.target_style if d is not None else ""}
            out.append([chat.render(self._template.messages(c, values)) for c in LOGPROP_CONTEXTS])
        return out

    def segment_stats(self, batch: Batch) -> SegmentStats:
        batch = batch.blanks_emptied()  # a whitespace-only text is scored as the empty text it is
        labels = [segment_label(batch.system, i) for i in batch.ids]
        if self.on_server:
            chat = _server_chat(self.chat_template)
            logprobs, resources, extra = self._server(chat, batch, labels)
        else:
            model = local_backend.load_local(self.model or local_backend.DEFAULT_MODEL)
            chat = model.chat
            prompts = self._prompts(chat, batch)
            flat_prompts = [p for row in prompts for p in row]
            flat_outputs = [o + chat.eos_token for o in batch.outputs for _ in LOGPROP_CONTEXTS]
            flat_labels = [label for label in labels for _ in LOGPROP_CONTEXTS]
            flat = local_backend.continuation_logprobs(model, flat_prompts, flat_outputs, flat_labels,
                                                       batch_tokens=self.batch_tokens)
            logprobs = [flat[3 * i:3 * i + 3] for i in range(len(batch))]
            resources, extra = model.identity(), {"prompts": len(flat_prompts)}
        resources["chat_template_hash"] = hashlib.sha256(chat.template.encode("utf-8")).hexdigest()[:12]
        if not chat.eos_token:
            raise InputError("the chat template's folder names no eos_token to end the output's turn", chat.folder)
        stats = np.array([self._row(lps, label) for lps, label in zip(logprobs, labels)], dtype=float).reshape(-1, 3)
        return SegmentStats(values=stats, flags={"no_tokens": [int(i) for i in np.flatnonzero(stats[:, NTOK] == 0)]},
                            extra=extra, resources=resources)

    def _row(self, lps: list[np.ndarray], label: str) -> tuple[float, float, float]:
        if len({len(lp) for lp in lps}) != 1:
            raise InputError(f"{label}: the output was tokenized into different numbers of tokens under the three "
                             f"prompts ({', '.join(str(len(lp)) for lp in lps)})")
        para, rewrite, repeat = (np.asarray(lp, dtype=float)[0 if self.score_first_token else 1:] for lp in lps)
        if len(para) == 0:
            return math.nan, math.nan, 0.0
        content = float(np.mean(np.maximum(np.maximum(para, rewrite), repeat)))  # log max p = max log p
        style = float(np.mean(np.exp(rewrite) - np.maximum(np.exp(para), np.exp(repeat))))
        return content, style, float(len(para))

    def _server(self, chat: ChatFormat, batch: Batch, labels: list[str]
                ) -> tuple[list[list[np.ndarray]], dict[str, str], dict[str, Any]]:
        config = self.server_config()
        model = server_backend.server_model(config)
        prompts = self._prompts(chat, batch)
        continuations = [out + chat.eos_token for out in batch.outputs]
        lengths = chat.count_tokens(continuations)
        body = {"max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
        requests = [server_backend.Request(server_backend.COMPLETIONS, {"prompt": p + continuations[i], **body},
                                           labels[i]) for i, row in enumerate(prompts) for p in row]
        answers, usage = server_backend.ask(config, model, requests)
        flat = [server_backend.echoed_logprobs(a, lengths[k // 3], batch.outputs[k // 3], chat.eos_token,
                                                labels[k // 3])
                for k, a in enumerate(answers)]
        resources = {"judge_model": model, "judge_model_reported": ",".join(sorted(usage.models)) or "unknown",
                     "judge_backend": "server"}
        return [flat[3 * i:3 * i + 3] for i in range(len(batch))], resources, self.run_facts(usage)

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.asarray(stats, dtype=float)[:, CONTENT if self.part == "content" else STYLE]

    def aggregate(self, stats: np.ndarray) -> float:
        scores = self.scores_from_stats(stats)
        return float(np.nanmean(scores)) if np.isfinite(scores).any() else float("nan")


def _server_chat(name: str) -> ChatFormat:
    """The chat format of a catalog model or a local folder (what ``chat_template=`` names)."""
    from ...lm.loading import ensure_converted, resolve_causal_lm

    spec = resolve_causal_lm(name)
    return chat_format(ensure_converted(spec) if spec.source == "catalog" else spec.path)
