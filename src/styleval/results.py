"""The result of a scoring run: segment scores, corpus scores, intervals, comparisons and signatures."""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from .errors import InputError
from .metrics.base import Aspect, MetricResult
from .metrics.identity import MetricId
from .outputs import atomic_writer, write_text
from .signature import Signature


@dataclass(frozen=True)
class Comparison:
    """A significance test between two systems on one metric."""

    metric: str
    system: str
    baseline: str
    delta: float
    p_value: float
    method: str
    n_resamples: int
    seed: int
    excluded_segments: int = 0  # segments left out because either system's statistics were NaN

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Comparison":
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


#: the keys ``score --json`` writes beside the scores, kept by a loaded result
SAVED_BESIDE = ("run", "texts")


def _texts_of(saved: Any, where: Any) -> dict[tuple[str, str], tuple[str, str, tuple[str, ...]]]:
    """(system, id) -> (source, output, references) from the ``texts`` block ``score --json`` writes (its
    :func:`styleval.evaluation.texts.segment_texts` form); none when the file has no texts."""
    if not saved:
        return {}
    try:
        ids, sources, refs = saved["ids"], saved["source"], saved["references"]
        own = saved.get("system_references") or {}
        out: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {}
        for system, outputs in saved["outputs"].items():
            for i, seg in enumerate(ids):
                if outputs[i] is not None:
                    out[(system, seg)] = (sources[i], outputs[i], tuple(own.get(system, {}).get(seg, refs[i])))
        return out
    except (KeyError, TypeError, IndexError) as exc:
        raise InputError(f"the saved texts are not in the form score --json writes: {type(exc).__name__} {exc}",
                         where) from None


def integer_ids(ids: "pd.Series") -> "pd.Series":
    """Segment ids as integers when every one is written as an integer (``"7"``, not ``"07"``), so that frames sort
    1, 2, 10 rather than '1', '10', '2'; otherwise the ids as they are."""
    text = ids.astype(str)
    if len(text) and text.str.fullmatch(r"-?(0|[1-9][0-9]*)").all():
        return text.astype("int64")
    return ids


def _metric_id(data: dict[str, Any] | None) -> MetricId | None:
    """A :class:`MetricId` from its JSON form (the label's shown parameters read back from the saved label)."""
    if not data:
        return None
    label = str(data.get("label", ""))
    shown: tuple[str, ...] = ()
    if label.startswith(data["name"] + "["):
        inside = label[len(data["name"]) + 1:].split("]", 1)[0]
        shown = tuple(part.split("=", 1)[0] for part in inside.split(","))
    modifiers = tuple((m["modifier"], tuple(sorted((k, str(v)) for k, v in m["params"].items())))
                      for m in data.get("modifiers", []))
    return MetricId(name=data["name"], params=tuple(sorted((k, str(v)) for k, v in data["params"].items())),
                    against=data.get("against"), modifiers=modifiers, shown=shown)


def _nan(value: Any) -> float:
    return math.nan if value is None else float(value)


def read_json(path: str | Path) -> dict[str, Any]:
    """A JSON object from ``path``; a missing or unreadable file, or one that holds no object, is an
    :class:`InputError` naming it."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", p) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a JSON file: {exc}", p) from None
    if not isinstance(data, dict):
        raise InputError("not a styleval result: the JSON holds no object", p)
    return data


def _json_facts(value: Any) -> Any:
    """Run facts as JSON values: numpy numbers as Python ones, NaN as null, anything else unknown as its text."""
    if isinstance(value, dict):
        return {str(k): _json_facts(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_facts(v) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _clean(float(value))
    return str(value)


def unrated_note(facts: Any) -> str:
    """``[15 unrated, 50%]`` when a metric left segments out of its corpus score (``llm_judge:unrated=skip``; the
    run facts ``unrated_segments`` and ``unrated_share``), else "": printed beside the score in every table."""
    count = facts.get("unrated_segments") if isinstance(facts, dict) else None
    if not count:
        return ""
    share = facts.get("unrated_share")
    return f"[{int(count):,} unrated, {share:.0%}]" if isinstance(share, (int, float)) else f"[{int(count):,} unrated]"


def _clean(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


#: the columns ``to_dataframe("segment")`` adds when the run kept its records' texts
TEXT_COLUMNS = ("source", "output", "references")


@dataclass
class ScoreResult:
    """All metric results of one call to :func:`styleval.score`."""

    results: list[MetricResult]
    comparisons: list[Comparison] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    #: (system, segment id) -> (source, output, references) of the records scored, when the run kept them
    #: (``styleval.score`` does; a streamed run does not hold its texts); never written to JSON
    texts: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = field(default_factory=dict, repr=False)
    #: what a saved file held beside the scores (``score --json``'s ``run`` and ``texts``), written back as read
    saved: dict[str, Any] = field(default_factory=dict, repr=False)

    def __iter__(self) -> Iterator[MetricResult]:
        return iter(self.results)

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(r.system for r in self.results))

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(r.metric for r in self.results))

    def get(self, metric: str, system: str) -> MetricResult:
        for r in self.results:
            if r.metric == metric and r.system == system:
                return r
        raise KeyError(f"no result for metric {metric!r} and system {system!r}; "
                       f"metrics: {', '.join(self.metrics)}; systems: {', '.join(self.systems)}")

    def signatures(self) -> dict[str, str]:
        """One signature string per metric (identical across systems except for nrefs when it differs)."""
        out: dict[str, str] = {}
        for r in self.results:
            out.setdefault(r.metric, str(r.signature))
        return out

    # -- tables ------------------------------------------------------------------------------
    def to_dataframe(self, level: str = "corpus", *, alpha: float = 0.05) -> pd.DataFrame:
        """A tidy frame (one row per observation, as pandas and seaborn expect) at one of three levels.

        * ``"corpus"``: a row per (system, metric): score, ci_low, ci_high, signature ...;
        * ``"segment"``: a row per segment score: system, metric, id, score, ..., and, when the run kept the texts
          (``styleval.score`` does, ``score_stream`` does not), ``source``, ``output`` and ``references`` (a list);
          ``frame.pivot(index="id", columns="system", values="score")`` puts the systems side by side;
        * ``"comparisons"``: a row per paired test: metric, system, baseline, delta (system minus baseline),
          p_value, method, n_resamples, seed, excluded_segments, higher_is_better, ``significant``
          (p < ``alpha``) and ``better`` (the significantly better of the two, else None).
        """
        if level == "corpus":
            rows = [{
                "system": r.system, "metric": r.metric, "aspect": r.aspect.value, "score": r.corpus_score,
                "ci_low": r.ci[0] if r.ci else math.nan, "ci_high": r.ci[1] if r.ci else math.nan,
                "higher_is_better": r.higher_is_better, "n": len(r.ids),
                "flagged_empty": len(r.flags.get("empty_output", [])), "signature": str(r.signature),
            } for r in self.results]
            return pd.DataFrame(rows)
        if level == "segment":
            frames = [pd.DataFrame({"system": r.system, "metric": r.metric, "id": r.ids,
                                    "score": r.segment_scores,
                                    "empty_output": [i in set(r.flags.get("empty_output", [])) for i in r.ids],
                                    "higher_is_better": r.higher_is_better})
                      for r in self.results]
            frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
                columns=["system", "metric", "id", "score", "empty_output", "higher_is_better"])
            if self.texts and len(frame):
                keys = list(zip(frame["system"], frame["id"]))
                missing = [k for k in keys if k not in self.texts]
                if missing:  # a text column with holes would look complete: refuse instead
                    raise KeyError(f"no texts kept for system {missing[0][0]!r}, segment {missing[0][1]!r}")
                for k, column in enumerate(("source", "output")):
                    frame[column] = [self.texts[key][k] for key in keys]
                frame["references"] = [list(self.texts[key][2]) for key in keys]
            frame["id"] = integer_ids(frame["id"])
            return frame
        if level == "comparisons":
            hib = {r.metric: r.higher_is_better for r in self.results}
            tests: list[dict[str, Any]] = []
            for c in self.comparisons:
                significant = bool(c.p_value < alpha)
                up = hib.get(c.metric, True)
                better = None if not significant or c.delta == 0 else \
                    (c.system if (c.delta > 0) == up else c.baseline)
                tests.append({**c.to_dict(), "higher_is_better": up, "significant": significant, "better": better})
            columns = [f.name for f in fields(Comparison)] + ["higher_is_better", "significant", "better"]
            return pd.DataFrame(tests, columns=columns)
        raise ValueError(f"level must be 'corpus', 'segment' or 'comparisons', got {level!r}")

    def corpus_table(self, intervals: bool = True) -> pd.DataFrame:
        """Systems as rows, metrics as columns, corpus scores as values; with ``intervals``, each metric that has
        confidence intervals is followed by the columns ``"<metric> low"`` and ``"<metric> high"`` (its bounds).
        ``to_dataframe("corpus")`` has the same numbers in long form, with signatures."""
        df = self.to_dataframe("corpus")
        table = pd.DataFrame(index=pd.Index(self.systems, name="system"))
        for metric in self.metrics:
            rows = df[df["metric"] == metric].set_index("system").reindex(self.systems)
            table[metric] = rows["score"]
            if intervals and rows["ci_low"].notna().any():
                table[f"{metric} low"], table[f"{metric} high"] = rows["ci_low"], rows["ci_high"]
        table.columns.name = "metric"
        return table

    # -- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "corpus": [{
                "system": r.system, "metric": r.metric, "aspect": r.aspect.value, "score": _clean(r.corpus_score),
                "ci": None if r.ci is None else [_clean(r.ci[0]), _clean(r.ci[1])], "ci_level": r.ci_level,
                "higher_is_better": r.higher_is_better, "n_segments": len(r.ids), "flags": r.flags,
                **({"unrated_segments": int(r.extra["unrated_segments"])} if "unrated_segments" in r.extra else {}),
                "metric_id": r.metric_id.to_dict() if r.metric_id is not None else None,
                "signature": r.signature.to_dict(), "signature_string": str(r.signature),
                "facts": _json_facts(r.extra),
            } for r in self.results],
            "segments": [{
                "system": r.system, "metric": r.metric,
                "scores": {i: _clean(float(s)) for i, s in zip(r.ids, r.segment_scores)},
            } for r in self.results],
            "comparisons": [c.to_dict() for c in self.comparisons],
            **self.saved,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: Any = None) -> "ScoreResult":
        """The result :meth:`to_dict` wrote: corpus scores, intervals, flags, signatures, segment scores and paired
        tests, as saved. The segment statistics are not saved, so a loaded result carries none (an empty
        ``stats`` array per metric): it cannot give new intervals or tests. ``where``: the file, for errors."""
        try:
            segments = {(s["metric"], s["system"]): s["scores"] for s in data["segments"]}
            results = []
            for row in data["corpus"]:
                scores = segments[(row["metric"], row["system"])]
                ids = list(scores)
                ci = row.get("ci")
                results.append(MetricResult(
                    metric=row["metric"], system=row["system"], ids=ids,
                    segment_scores=np.array([_nan(scores[i]) for i in ids], dtype=float),
                    stats=np.empty((len(ids), 0)), corpus_score=_nan(row["score"]),
                    signature=Signature.from_dict(row["signature"]), higher_is_better=bool(row["higher_is_better"]),
                    aspect=Aspect(row["aspect"]), flags={k: list(v) for k, v in (row.get("flags") or {}).items()},
                    ci=None if ci is None else (_nan(ci[0]), _nan(ci[1])), ci_level=row.get("ci_level"),
                    extra={k: (math.nan if v is None else v) for k, v in (row.get("facts") or {}).items()},
                    metric_id=_metric_id(row.get("metric_id"))))
            comparisons = [Comparison.from_dict(c) for c in data.get("comparisons", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a styleval score result: {type(exc).__name__} {exc}", where) from None
        saved = {key: data[key] for key in SAVED_BESIDE if key in data}
        return cls(results=results, comparisons=comparisons, settings=dict(data.get("settings") or {}),
                   texts=_texts_of(saved.get("texts"), where), saved=saved)

    @classmethod
    def from_json(cls, path: str | Path) -> "ScoreResult":
        """The result ``styleval score --json`` (or :meth:`write_json`) saved; an ``evaluate --json`` file gives its
        scores (``styleval.load`` gives the whole evaluation)."""
        data = read_json(path)
        return cls.from_dict(data["score"] if "score" in data else data, path)

    def write_json(self, path: str | Path) -> None:
        """Everything as JSON, written atomically."""
        write_text(path, json.dumps(self.to_dict(), indent=1, ensure_ascii=False))

    def write_jsonl(self, path: str | Path) -> None:
        """One line per segment score, each with the metric's signature string (written atomically)."""
        sigs = {(r.metric, r.system): str(r.signature) for r in self.results}
        with atomic_writer(path) as fh:
            for row in self.to_dataframe("segment").itertuples(index=False):
                fh.write(json.dumps({"system": row.system, "metric": row.metric, "id": str(row.id),
                                     "score": _clean(float(row.score)), "empty_output": bool(row.empty_output),
                                     "higher_is_better": bool(row.higher_is_better),
                                     "signature": sigs[(row.metric, row.system)]}, ensure_ascii=False) + "\n")

    def write_csv(self, path: str | Path, level: str = "corpus") -> None:
        """Corpus or segment scores as CSV, written atomically (segment rows without their texts: the inputs hold
        them)."""
        frame = self.to_dataframe(level)
        frame = frame.drop(columns=[c for c in TEXT_COLUMNS if c in frame.columns]) if level == "segment" else frame
        with atomic_writer(path) as fh:
            frame.to_csv(fh, index=False, quoting=csv.QUOTE_MINIMAL)
