"""``llm_judge``: a language model prompted to rate one aspect of each output on a 1-5 scale.

Aspects (``aspect=``): ``style`` (how strongly the output shows the target style; needs the direction),
``content`` (how much of the source's meaning the output keeps, changes the target style needs excepted; needs the
source and the direction) and ``fluency``. The prompt is the shipped template of the aspect
(``styleval/judges/templates/<aspect>.txt``) or ``template=PATH`` (:mod:`styleval.judges.templates`).

Scoring (``scoring=``): ``probability`` weights each rating by the probability of its token at the first answer
position (among the ``top_logprobs`` most likely tokens, :mod:`styleval.judges.rating`), ``parsed`` reads the first
digit of the greedy answer (at most ``max_tokens`` tokens), ``auto`` (default) weights where the rating tokens have
probability and parses elsewhere. Decoding is greedy (temperature 0). The signature records the template's hash,
the model's identity (content hash of a local folder; the model the server reports), the decoding settings and
which scoring produced the scores (``scoring_used``).

Statistics per segment: ``[rating, probability mass on the rating tokens (NaN when parsed), 1 if the rating is
probability-weighted / 0 if parsed / NaN if none]``. Segment score: the rating (``parsed_rating`` flags the parsed
ones).

Segments without a rating (an answer off the scale, in words, empty; flagged ``no_rating``): with
``unrated=fail`` (the default) the run stops with one line naming the systems and first segments concerned and how
many there are (the answers stay in the request cache, so a rerun costs nothing); with ``unrated=skip`` the corpus
score is the mean over the rated segments, and the count and share of unrated ones stand beside it: in the run
facts (``unrated_segments``, ``unrated_share``), the terminal table, the report and the signature (``unrated:N/M``).
Greedy decoding makes a re-ask pointless (the same prompt gives the same answer), and scoring an unrated segment as
the lowest rating would mix the judge's failures into its ratings, so neither is offered (docs/llm-judges.md).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Sequence

import numpy as np

from ...errors import InputError
from ..content._common import check_number
from ...judges import local as local_backend
from ...judges import server as server_backend
from ...judges.rating import parse_rating, weighted_rating
from ...judges.templates import JUDGE_ASPECTS, JudgeTemplate, judge_template
from ...signature import Signature
from ..base import Aspect, Batch, Metric, MetricResult, SegmentStats
from ..identity import MetricId
from ..registry import register
from ._common import SERVER_PARAMETER_HELP, InstanceFact, JudgeBackendParams, drop_run_only, segment_label

UNRATED = ("fail", "skip")


class UnratedSegmentsError(InputError):
    """``unrated=fail`` and the judge gave some segments no rating."""

RATING, MASS, METHOD = 0, 1, 2
SCORINGS = ("auto", "probability", "parsed")
_ASPECTS = {"style": Aspect.STYLE, "content": Aspect.CONTENT, "fluency": Aspect.FLUENCY}
_NEEDS = {"style": frozenset({"target_style"}), "content": frozenset({"source", "target_style"}),
          "fluency": frozenset()}


@register
class LLMJudge(JudgeBackendParams, Metric):
    """A prompted rating of style, content or fluency by a local causal LM or an OpenAI-compatible server."""

    name = "llm_judge"
    parameter_help: ClassVar[dict[str, str]] = {
        **SERVER_PARAMETER_HELP,
        "aspect": "style (how strongly the output shows the target style), content (the source's meaning "
                  "kept, the style change excepted) or fluency",
        "scoring": "probability (ratings weighted by their first-token probabilities), parsed (the greedy "
                   "answer's digit) or auto (weighted where possible)",
        "top_logprobs": "how many first-token alternatives are read for the weighted rating",
        "max_tokens": "length of the greedy answer a parsed rating is read from",
        "unrated": "segments the judge gave no rating: fail (default) stops the run naming them; skip scores the "
                   "rest and shows how many were left out beside the score and in the signature",
    }
    version = "1"
    n_stats = 3
    aspect = InstanceFact(Aspect.STYLE)  # type: ignore[assignment]
    needs = InstanceFact(frozenset({"target_style"}))  # type: ignore[assignment]
    higher_is_better = True
    value_range = InstanceFact((1.0, 5.0))  # type: ignore[assignment]
    unit_range = InstanceFact((1.0, 5.0))  # type: ignore[assignment]
    description = ("LLM rating of style, content or fluency (1-5): probability-weighted over the rating tokens "
                   "or parsed; local model or OpenAI-compatible server; corpus: mean")
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers", "openai")

    def __init__(self, *, aspect: str = "style", model: str = "", base_url: str = "", template: str = "",
                 scoring: str = "auto", top_logprobs: int = 20, max_tokens: int = 3, unrated: str = "fail",
                 api_key_env: str = "OPENAI_API_KEY", concurrency: int = 4, timeout: float = 60.0, retries: int = 3,
                 backoff: float = 0.5, request_cache: str = "", price: str = "", max_reply_mb: float = 16.0,
                 batch_tokens: int = local_backend.BATCH_TOKENS) -> None:
        if aspect not in JUDGE_ASPECTS:
            raise InputError(f"llm_judge: aspect must be one of {', '.join(JUDGE_ASPECTS)}, not {aspect!r}")
        if scoring not in SCORINGS:
            raise InputError(f"llm_judge: scoring must be one of {', '.join(SCORINGS)}, not {scoring!r}")
        check_number(self.name, "top_logprobs", top_logprobs, low=1, high=20, integer=True)  # the OpenAI API's limit
        check_number(self.name, "max_tokens", max_tokens, low=1, integer=True)
        if unrated not in UNRATED:
            raise InputError(f"llm_judge: unrated must be one of {', '.join(UNRATED)} (what to do with segments the "
                             f"judge gave no rating), not {unrated!r}")
        self.unrated = unrated
        self._aspect = _ASPECTS[aspect]
        self._needs = _NEEDS[aspect]
        self.template = str(template)
        self._template: JudgeTemplate = judge_template(aspect, self.template)  # read and checked now
        scale = self._template.scale
        self._value_range = self._unit_range = (float(scale[0]), float(scale[-1]))
        self.scoring = scoring
        self.top_logprobs = int(top_logprobs)  # checked above
        self.max_tokens = int(max_tokens)
        self._set_backend(model=model, base_url=base_url, api_key_env=api_key_env, concurrency=concurrency,
                          timeout=timeout, retries=retries, backoff=backoff, request_cache=request_cache,
                          price=price, max_reply_mb=max_reply_mb, batch_tokens=batch_tokens)

    def get_params(self) -> dict[str, Any]:
        params = drop_run_only(super().get_params())
        params["aspect"] = self._aspect.value
        params["temperature"] = 0  # greedy decoding, always
        return params

    def resources(self) -> dict[str, str]:
        out = {"template_used": self._template.file.name, "template_hash": self._template.file.short_hash}
        if self.on_server:
            out.update(self.server_resources())
        else:
            from ...lm.loading import resolve_causal_lm

            ident = resolve_causal_lm(self.model or local_backend.DEFAULT_MODEL).identity()
            out.update({"judge_model": ident["lm"], "judge_model_hash": ident["lm_hash"]})
        return out

    def _messages(self, batch: Batch) -> list[list[dict[str, str]]]:
        out = []
        for i in range(len(batch)):
            d = batch.directions[i]
            out.append(self._template.messages({"source": batch.sources[i], "output": batch.outputs[i],
                                                "source_style": d.source_style if d is not None else "",
                                                "target_style": d.target_style if d is not None else ""}))
        return out

    def segment_stats(self, batch: Batch) -> SegmentStats:
        batch = batch.blanks_emptied()  # a whitespace-only text is rated as the empty text it is
        labels = [segment_label(batch.system, i) for i in batch.ids]
        messages = self._messages(batch)
        if self.on_server:
            stats, resources, extra = self._server(messages, labels)
        else:
            stats, resources, extra = self._local(messages, labels)
        methods = {"probability" if m == 1 else "parsed" for m in stats[:, METHOD] if not math.isnan(m)}
        resources["scoring_used"] = "+".join(sorted(methods)) or "none"
        flags = {"no_rating": [int(i) for i in np.flatnonzero(np.isnan(stats[:, RATING]))],
                 "parsed_rating": [int(i) for i in np.flatnonzero(stats[:, METHOD] == 0)]}
        return SegmentStats(values=stats, flags=flags, extra=extra, resources=resources)

    def _local(self, messages: list[list[dict[str, str]]], labels: list[str]
               ) -> tuple[np.ndarray, dict[str, str], dict[str, Any]]:
        model = local_backend.load_local(self.model or local_backend.DEFAULT_MODEL)
        prompts = [model.chat.render(m) for m in messages]
        stats = np.full((len(prompts), 3), np.nan)
        if self.scoring != "parsed":
            tops = local_backend.first_token_top(model, prompts, self.top_logprobs, labels,
                                                 batch_tokens=self.batch_tokens)
            for i, (ids, logprobs) in enumerate(tops):
                rating, mass = weighted_rating(((model.token_text(t), float(lp)) for t, lp in zip(ids, logprobs)),
                                               self._template.scale)
                stats[i] = (rating, mass, 1.0 if not math.isnan(rating) else np.nan)
        todo = [i for i in range(len(prompts)) if self.scoring == "parsed"
                or (self.scoring == "auto" and math.isnan(stats[i, RATING]))]
        if todo:
            answers = local_backend.greedy_answers(model, [prompts[i] for i in todo], self.max_tokens,
                                                   [labels[i] for i in todo], batch_tokens=self.batch_tokens)
            for i, text in zip(todo, answers):
                rating = parse_rating(text, self._template.scale)
                stats[i, RATING], stats[i, METHOD] = rating, (0.0 if not math.isnan(rating) else np.nan)
        n_tokens = sum(len(r) for r in local_backend.encode(model, prompts))
        return stats, model.identity(), {"prompts": len(prompts), "prompt_tokens": n_tokens}

    def _server(self, messages: list[list[dict[str, str]]], labels: list[str]
                ) -> tuple[np.ndarray, dict[str, str], dict[str, Any]]:
        config = self.server_config()
        model = server_backend.server_model(config)
        body: dict[str, Any] = {"max_tokens": self.max_tokens, "temperature": 0}
        if self.scoring != "parsed":
            body.update({"logprobs": True, "top_logprobs": self.top_logprobs})
        requests = [server_backend.Request(server_backend.CHAT, {"messages": m, **body}, label)
                    for m, label in zip(messages, labels)]
        answers, usage = server_backend.ask(config, model, requests)
        stats = np.full((len(answers), 3), np.nan)
        for i, answer in enumerate(answers):
            top = server_backend.first_answer_top(answer)
            if self.scoring != "parsed":
                if top is None and self.scoring == "probability":
                    raise InputError(f"{labels[i]}: the server returned no log-probabilities; score with "
                                     "scoring=auto or scoring=parsed")
                if top is not None:
                    rating, mass = weighted_rating(top, self._template.scale)
                    stats[i] = (rating, mass, 1.0 if not math.isnan(rating) else np.nan)
            if self.scoring == "parsed" or (self.scoring == "auto" and math.isnan(stats[i, RATING])):
                rating = parse_rating(server_backend.answer_text(answer), self._template.scale)
                stats[i, RATING], stats[i, METHOD] = rating, (0.0 if not math.isnan(rating) else np.nan)
        resources = {"judge_model": model, "judge_model_reported": ",".join(sorted(usage.models)) or "unknown",
                     "judge_backend": "server"}
        return stats, resources, self.run_facts(usage)

    def scores_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.asarray(stats, dtype=float)[:, RATING]

    def check_complete(self, systems: dict[str, tuple[int, dict[str, list[str]]]]) -> None:
        """With ``unrated=fail``, refuse a run in which some segment has no rating (one line: how many, where)."""
        if self.unrated != "fail":
            return
        unrated = {name: (n, flags.get("no_rating", [])) for name, (n, flags) in systems.items()
                   if flags.get("no_rating")}
        if not unrated:
            return
        count = sum(len(ids) for _, ids in unrated.values())
        total = sum(n for n, _ in systems.values())
        where = "; ".join(f"system {name!r}: {len(ids)} of {n} (first: {', '.join(repr(i) for i in ids[:3])})"
                          for name, (n, ids) in list(unrated.items())[:3])
        more = f"; and {len(unrated) - 3} more systems" if len(unrated) > 3 else ""
        lo, hi = self._template.scale[0], self._template.scale[-1]
        if not self.on_server:
            rerun = "greedy decoding gives the same answers on a rerun"
        elif self.server_config().cache_path is None:
            rerun = "with request_cache=none a rerun asks the server for every answer again"
        else:
            rerun = "the answers are cached, so rerunning sends no request"
        raise UnratedSegmentsError(
            f"{self.display_name}: {count} of {total} segments got no rating on the scale {lo}-{hi} from the judge "
            f"({where}{more}); give unrated=skip to score the rated ones (the count then stands beside the score; "
            f"{rerun}), or change the template or the model")

    def summarise(self, system: str, stats: np.ndarray, *, ids: Sequence[str] | None, flags: dict[str, list[str]],
                  extra: dict[str, Any], signature: Signature, metric_id: MetricId | None = None) -> MetricResult:
        """The result of one system; with unrated segments (``unrated=skip``), their count and share in the run
        facts and the signature."""
        n = len(stats)
        self.check_complete({system: (n, flags)})
        missing = int(np.isnan(self.scores_from_stats(stats)).sum()) if n else 0
        if self.unrated == "skip":
            extra = {**extra, "unrated_segments": missing, "unrated_share": missing / n if n else 0.0}
            signature = dataclasses.replace(signature, resources={**signature.resources,
                                                                  "unrated": f"{missing}/{n}"})
        return super().summarise(system, stats, ids=ids, flags=flags, extra=extra, signature=signature,
                                 metric_id=metric_id)

    def resample_stats(self, stats: np.ndarray) -> np.ndarray:
        """The statistics with the probability mass and method of every rated segment made finite (a parsed rating
        has no mass, NaN, and is still a rating; :meth:`aggregate` reads the rating only), so that the interval
        covers all the rated segments the score is the mean of; unrated segments stay NaN and out."""
        out = np.array(stats, dtype=float)
        rated = np.isfinite(out[:, RATING])
        out[rated, MASS:] = np.nan_to_num(out[rated, MASS:], nan=0.0)
        return out

    def aggregate(self, stats: np.ndarray) -> float:
        scores = self.scores_from_stats(stats)
        return float(np.nanmean(scores)) if np.isfinite(scores).any() else float("nan")
