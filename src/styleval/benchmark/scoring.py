"""Scores of each metric on each set: computed with :func:`styleval.score`, cached per set and metric, or read from
a user's scores file.

The cache is a folder with one JSON file per (set, metric spec): the rows (system, segment, column, score), each
column's aspect kind, orientation and signature, and a hash of the records scored and of the model folders the spec
names (``style_accuracy:model=DIR``), so a changed set or a model retrained in place is scored again and adding a
metric scores only that metric. The folder also holds a model-output store
(:data:`MODEL_OUTPUTS`), active while each spec is scored, so specs over one model run it once per text. A metric
whose scoring fails on a set gives a
:class:`Failure` (the one-line reason) instead of rows: the benchmark reports it as failed on that set's tasks.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

import pandas as pd

from ..errors import InputError, StyleEvalError
from ..outputs import write_text
from ..progress import Progress
from ..readers.text import StrPath
from ..records import Record
from ..scoring import score

CACHE_FORMAT = 2  # 2: acceptability/LM metrics' normalize=auto decides per text
#: the model-output store in a cache folder (sentence embeddings, LM log-probabilities), shared by every spec
MODEL_OUTPUTS = "model-outputs.sqlite"


@dataclass
class Scored:
    """One metric spec's columns on one set: a metric table plus, per column, its kind, orientation and
    signature; ``cached``: read from the cache rather than computed."""

    spec: str
    table: pd.DataFrame  # system, segment, metric, score
    kinds: dict[str, str] = field(default_factory=dict)
    lower_is_better: frozenset[str] = frozenset()
    signatures: dict[str, str] = field(default_factory=dict)
    cached: bool = False
    origin: str = "scored"  # or "user": a user's own scores file


@dataclass(frozen=True)
class Failure:
    """A metric spec that could not be scored on a set, with the one-line reason."""

    spec: str
    reason: str


def records_hash(records: Sequence[Record]) -> str:
    """A hash of everything about the records a metric reads."""
    digest = hashlib.sha256()
    for r in records:
        for part in (r.system, r.id, str(r.direction or ""), r.source, r.output, *r.references):
            digest.update(part.encode("utf-8"))
            digest.update(b"\x00")
        digest.update(b"\x01")
    return digest.hexdigest()


def models_hash(spec: str) -> str:
    """The content hashes of the local files or folders a spec's parameters name (its model folders), in one
    hash; empty when it names none."""
    from ..metrics.registry import parse_spec
    from ..models.hashing import content_hash

    try:
        _, params = parse_spec(spec)
    except StyleEvalError:
        return ""  # scoring reports the bad spec
    named = sorted((key, value) for key, value in params.items()
                   if isinstance(value, str) and ("/" in value or "\\" in value) and Path(value).expanduser().exists())
    if not named:
        return ""
    digest = hashlib.sha256()
    for key, value in named:
        digest.update(f"{key}={content_hash(Path(value).expanduser())}\n".encode())
    return digest.hexdigest()


def cache_path(cache_dir: StrPath, set_name: str, spec: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)[:60]
    return Path(cache_dir) / set_name / f"{slug}-{hashlib.sha256(spec.encode()).hexdigest()[:12]}.json"


def _read_cache(path: Path, spec: str, digest: str) -> Scored | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None  # a cache file cut short by an interrupted run: scored again
    if data.get("format") != CACHE_FORMAT or data.get("spec") != spec or data.get("records") != digest:
        return None
    table = pd.DataFrame(data["rows"], columns=["system", "segment", "metric", "score"])
    table["score"] = table["score"].astype(float)
    cols = data["columns"]
    return Scored(spec, table, {c: v["kind"] for c, v in cols.items()},
                  frozenset(c for c, v in cols.items() if not v["higher_is_better"]),
                  {c: v["signature"] for c, v in cols.items()}, cached=True)


def _write_cache(path: Path, scored: Scored, digest: str) -> None:
    rows = [[s, g, m, None if pd.isna(v) else float(v)] for s, g, m, v in scored.table.itertuples(index=False)]
    columns = {c: {"kind": k, "higher_is_better": c not in scored.lower_is_better,
                   "signature": scored.signatures.get(c, "")} for c, k in scored.kinds.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps({"format": CACHE_FORMAT, "spec": scored.spec, "records": digest,
                                 "columns": columns, "rows": rows}) + "\n")


def is_cached(spec: str, records: Sequence[Record], set_name: str, cache_dir: StrPath | None) -> bool:
    """Whether the cache holds ``spec``'s scores of exactly these records (then scoring reads them, and costs
    nothing)."""
    if cache_dir is None:
        return False
    return _read_cache(cache_path(cache_dir, set_name, spec), spec, records_hash(records)) is not None


def score_metric(spec: str, records: Sequence[Record], set_name: str, *, cache_dir: StrPath | None = None,
                 progress: Progress | None = None) -> Scored | Failure:
    """Score ``records`` with metric ``spec`` (every column it gives: ``bleu`` against the source and the
    references), from the cache when it holds this spec on these records. A :class:`StyleEvalError` while scoring
    (an unrated judge segment, a missing model) is returned as a :class:`Failure`."""
    digest = records_hash(records) + (f"+{m}" if (m := models_hash(spec)) else "")
    path = cache_path(cache_dir, set_name, spec) if cache_dir is not None else None
    if path is not None and (hit := _read_cache(path, spec, digest)) is not None:
        return hit
    try:
        with _model_outputs(cache_dir):
            result = score(records, [spec], bootstrap=0, progress=progress)
    except StyleEvalError as exc:
        return Failure(spec, " ".join(str(exc).split()))
    frame = result.to_dataframe("segment")
    table = pd.DataFrame({"system": frame["system"].astype(str), "segment": frame["id"].astype(str),
                          "metric": frame["metric"].astype(str), "score": frame["score"].astype(float)})
    kinds = {r.metric: r.aspect.value for r in result.results}
    lower = frozenset(r.metric for r in result.results if not r.higher_is_better or novelty(r.signature.metric))
    scored = Scored(spec, table, kinds, lower, signatures_by_system(result))
    if path is not None:
        _write_cache(path, scored, digest)
    return scored


def novelty(name: str) -> bool:
    """Whether the registered metric ``name`` measures novelty or distance (:attr:`Metric.measures_novelty`): the
    benchmark orients it like a lower-is-better metric, so that a positive figure means agreement."""
    from ..metrics import registry

    try:
        return bool(getattr(registry.metric_class(name), "measures_novelty", False))
    except StyleEvalError:  # a plugin that is gone: its declared orientation stands
        return False


def signatures_by_system(result: Any) -> dict[str, str]:
    """Per column the signature of its scores: one string when every system's reads the same, else each distinct
    one with the systems it signs (``[a, b] SIG; [c] SIG``), so a decision taken per system (``normalize=auto-corpus``'s
    ``normalized_as``) is named as applied to each."""
    per: dict[str, dict[str, list[str]]] = {}
    for r in result.results:
        per.setdefault(r.metric, {}).setdefault(str(r.signature), []).append(r.system)
    return {metric: next(iter(sigs)) if len(sigs) == 1 else
            "; ".join(f"[{', '.join(systems)}] {sig}" for sig, systems in sigs.items())
            for metric, sigs in per.items()}


SIDES = ("source", "references")


def joint_labels(specs: Sequence[str]) -> dict[str, dict[str, str]]:
    """Per spec: each column's name in a run of that spec alone -> its name in one run of all ``specs``. A run
    names a column plainly unless another metric of the run shares the name (``llm_judge`` for every aspect when
    alone, ``llm_judge:aspect=content`` beside ``llm_judge``); the benchmark scores and caches each spec alone, so
    it renames the columns as the joint run would. Two specs of one metric are an error naming both."""
    from ..metrics.identity import assign_labels
    from ..scoring import build_metrics

    every = assign_labels([m.metric_id for m in build_metrics(specs, SIDES, True)])
    out: dict[str, dict[str, str]] = {}
    k = 0
    for spec in specs:
        own = assign_labels([m.metric_id for m in build_metrics([spec], SIDES, True)])
        out[spec] = {a.label: b.label for a, b in zip(own, every[k:k + len(own)])}
        k += len(own)
    return out


def relabelled(scored: Scored, names: dict[str, str]) -> Scored:
    """``scored`` with its columns renamed (``names``: old -> new; a column not named keeps its name)."""
    if all(old == new for old, new in names.items()):
        return scored

    def name(column: str) -> str:
        return names.get(column, column)

    return replace(scored, table=scored.table.assign(metric=scored.table["metric"].map(name)),
                   kinds={name(c): k for c, k in scored.kinds.items()},
                   lower_is_better=frozenset(name(c) for c in scored.lower_is_better),
                   signatures={name(c): s for c, s in scored.signatures.items()})


@contextlib.contextmanager
def _model_outputs(cache_dir: StrPath | None) -> Iterator[None]:
    """With a cache folder, its model-output store is active while a spec is scored: a spec over a model an earlier
    spec ran reads that model's outputs (``logprop:part=style`` after ``logprop``: one LM pass)."""
    if cache_dir is None:
        yield
        return
    from ..engine.model_cache import ModelOutputCache
    from ..models.outputs import use_store

    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    with ModelOutputCache(Path(cache_dir) / MODEL_OUTPUTS) as store, use_store(store):
        yield


def read_user_scores(spec: str) -> tuple[str, str, Path]:
    """``NAME:KIND=FILE`` (a user's own scores, ``KIND`` style, content or fluency) -> (name, kind, path)."""
    head, sep, file = spec.partition("=")
    name, _, kind = head.partition(":")
    if not sep or not name or not file:
        raise InputError(f"--scores {spec!r}: expected NAME:KIND=FILE (KIND style, content or fluency)")
    kind = kind or "content"
    if kind not in ("style", "content", "fluency"):
        raise InputError(f"--scores {spec!r}: the kind must be style, content or fluency, not {kind!r}")
    path = Path(file)
    if not path.is_file():
        raise InputError("scores file does not exist", path)
    return name, kind, path


def user_scores_on(name: str, kind: str, path: Path, set_name: str, n_sets: int) -> Scored | None:
    """The rows of a user's scores file for one set: columns ``system``, ``segment`` (or ``id``), ``score`` and,
    unless the benchmark runs on one set, ``set``; optional ``higher_is_better``. None when the file has no row of
    this set."""
    from ..meta.scores import normalise_metric_table

    sep = "\t" if path.suffix in (".tsv", ".tab") else ","
    if path.suffix in (".jsonl", ".ndjson"):
        frame = pd.read_json(path, lines=True, dtype=False)
    else:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    if "set" not in frame.columns:
        if n_sets != 1:
            raise InputError("a scores file for several sets needs a 'set' column", path)
        frame["set"] = set_name
    frame = frame[frame["set"].astype(str) == set_name]
    if frame.empty:
        return None
    lower = False
    if "higher_is_better" in frame.columns:
        values = {str(v).strip().lower() for v in frame["higher_is_better"]}
        lower = values <= {"false", "0", "no"}
    frame = frame.assign(metric=name).rename(columns={"id": "segment"}) if "id" in frame.columns else \
        frame.assign(metric=name)
    missing = [c for c in ("system", "segment", "score") if c not in frame.columns]
    if missing:
        raise InputError(f"the scores file lacks column(s) {', '.join(missing)} (has {', '.join(frame.columns)})",
                         path)
    table = normalise_metric_table(frame[["system", "segment", "metric", "score"]], source=path)
    return Scored(name, table, {name: kind}, frozenset({name}) if lower else frozenset(),
                  {name: f"{name}|user scores:{path.name}"}, origin="user")


def dry_run_estimate(spec: str, records: Sequence[Record]) -> dict[str, Any] | None:
    """For a judge on a model server (``llm_judge``/``logprop`` with ``base_url``): the requests scoring
    ``records`` sends and a token estimate (prompt characters / 4; the completion at most ``max_tokens``), and the
    cost with ``price=``; None for any other metric (nothing is sent)."""
    from ..scoring import build_metrics

    estimates = []
    for metric in build_metrics([spec], ("source", "references"), any(r.references for r in records)):
        if not getattr(metric, "on_server", False):
            continue
        template = getattr(metric, "_template", None)
        chars = 0
        for r in records:
            d = r.direction
            fields = {"source": r.source, "output": r.output,
                      "source_style": d.source_style if d is not None else "",
                      "target_style": d.target_style if d is not None else ""}
            if template is not None:
                chars += sum(len(m["content"]) for m in template.messages(fields))
            else:
                chars += len(r.source) + len(r.output) + 200
        prompt = chars // 4
        completion = len(records) * int(getattr(metric, "max_tokens", 1))
        estimate: dict[str, Any] = {"requests": len(records), "prompt_tokens": prompt,
                                    "completion_tokens": completion}
        prices = getattr(metric, "_prices", None)
        if prices is not None:
            estimate["cost"] = (prompt * prices[0] + completion * prices[1]) / 1e6
        estimates.append(estimate)
    if not estimates:
        return None
    return {k: sum(e.get(k, 0) for e in estimates) for k in estimates[0]}
