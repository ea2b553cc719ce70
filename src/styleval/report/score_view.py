"""A ``styleval score`` run read as the report reads an evaluation, so ``styleval report scores.json`` gives the
same page (tables, plots, segment explorer) and the same paper tables as an ``evaluate`` run.

A score run has no battery: its metrics are grouped by the aspect each declares (style, content, fluency,
overall), it has no HM/GM/J of its own (a ``-m j`` metric is an overall-aspect metric like any other), and its
rationale says so. The trade-off plot uses the first higher-is-better style metric and the first
higher-is-better content metric when the run has both; the explorer shows the texts when the JSON keeps them
(``styleval score --json`` writes them under ``texts``, as ``evaluate`` does), else the segment scores by id.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError
from ..evaluation.battery import FORMAT, Evaluation
from ..results import ScoreResult, read_json

#: ``settings["source"]`` of a score run's view: the report says "scores" where it would say "evaluation"
SCORE_SOURCE = "score"
SCORE_RATIONALE = ("A `styleval score` run: its metrics are the ones chosen on the command line, grouped by the "
                   "aspect each declares; there is no recommended battery and no HM, GM or J of evaluate (the "
                   "signatures say how every score was made).")


def is_score_dict(data: Any) -> bool:
    """Whether ``data`` is the JSON form of a :class:`~styleval.results.ScoreResult` (``styleval score --json``)."""
    return (isinstance(data, Mapping) and data.get("format") != FORMAT
            and all(isinstance(data.get(k), list) for k in ("corpus", "segments"))
            and isinstance(data.get("settings"), Mapping))


def texts_of_result(result: ScoreResult) -> dict[str, Any] | None:
    """The texts a :class:`ScoreResult` kept, in the form of ``evaluation.texts.segment_texts`` (no direction: the
    result does not keep it); None when it kept none (a streamed run)."""
    if not result.texts:
        return None
    ids = list(dict.fromkeys(i for _, i in result.texts))
    index = {i: k for k, i in enumerate(ids)}
    first: dict[str, tuple[str, tuple[str, ...]]] = {}
    outputs: dict[str, list[str | None]] = {}
    own: dict[str, dict[str, list[str]]] = {}
    for (system, i), (source, output, refs) in result.texts.items():
        seen = first.setdefault(i, (source, refs))
        if list(seen[1]) != list(refs):
            own.setdefault(system, {})[i] = list(refs)
        outputs.setdefault(system, [None] * len(ids))[index[i]] = output
    return {"ids": ids, "source": [first[i][0] for i in ids], "references": [list(first[i][1]) for i in ids],
            "direction": [None] * len(ids), "outputs": outputs, "system_references": own}


def score_view(score: Mapping[str, Any], texts: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The evaluation-shaped dict of a score run (see the module docstring); ``texts``: the run's texts when they
    are not in ``score`` itself."""
    corpus = score["corpus"]
    if not corpus:
        raise InputError("the score file holds no scores")
    aspects: dict[str, list[str]] = {}
    for c in corpus:
        names = aspects.setdefault(str(c.get("aspect") or "content"), [])
        if c["metric"] not in names:
            names.append(c["metric"])

    def first(aspect: str) -> str | None:
        return next((c["metric"] for c in corpus if c.get("aspect") == aspect and c["higher_is_better"]), None)

    roles = {k: v for k, v in (("style", first("style")), ("content", first("content"))) if v}
    texts = texts if texts is not None else score.get("texts")
    settings: dict[str, Any] = {"source": SCORE_SOURCE, "n_records": score["settings"].get("n_records"),
                                "directions": sorted({d for d in (texts or {}).get("direction", []) if d})}
    if score.get("run"):
        settings["run"] = score["run"]
    out = {"format": FORMAT, "settings": settings,
           "metric_specs": list(dict.fromkeys(c["metric"] for c in corpus)), "aspects": aspects, "roles": roles,
           "overall": [], "overall_comparisons": [], "rationale": [SCORE_RATIONALE],
           "score": {k: v for k, v in score.items() if k not in ("texts", "run")}, "overall_segments": []}
    if texts:
        out["texts"] = dict(texts)
    return out


def report_data(source: Any) -> dict[str, Any]:
    """The JSON form the report reads, from an :class:`~styleval.evaluation.Evaluation` or its dict, or from a
    :class:`ScoreResult` or its dict (``styleval score --json``; see :func:`score_view`)."""
    if isinstance(source, Evaluation):
        return source.to_dict()
    if isinstance(source, ScoreResult):
        return score_view(source.to_dict(), texts_of_result(source))
    if isinstance(source, Mapping) and source.get("format") == FORMAT:
        return dict(source)
    if is_score_dict(source):
        return score_view(source)
    raise InputError(f"expected an evaluation (format {FORMAT!r}, `styleval evaluate --json`) or the scores of "
                     "`styleval score --json` (keys corpus, segments and settings)")


def is_score_run(data: Mapping[str, Any]) -> bool:
    """Whether a report's data is the view of a score run (no battery, no overall scores)."""
    return data.get("settings", {}).get("source") == SCORE_SOURCE


def load_report_data(path: str | Path) -> dict[str, Any]:
    """Read a file written by ``styleval evaluate --json`` or ``styleval score --json`` as :func:`report_data`
    returns it; a one-line :class:`InputError` naming the file when it is neither."""
    p = Path(path)
    data = read_json(p)
    if not (data.get("format") == FORMAT or is_score_dict(data)):
        raise InputError(f"neither a styleval evaluation (format {FORMAT!r}, written by `styleval evaluate --json`) "
                         "nor styleval scores (`styleval score --json`: keys corpus, segments, settings)", p)
    return report_data(data)
