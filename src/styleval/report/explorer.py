"""The segment explorer of the HTML report: every input with its references, each system's output and every
metric's segment score, as one compact JSON block that ``static/explorer.js`` renders in the page.

Encoding (what keeps a large report small): every distinct text is stored once in ``strings`` and referred to by
index (a copy system's outputs cost nothing beyond their indices); segment scores are rounded to their metric's
display precision (:func:`styleval.evaluation.summary.display_decimals` of the corpus scores) and stored per metric
and system as one array aligned with ``ids``.

Above :data:`MAX_OUTPUTS` outputs (inputs × systems) the report embeds a sample of the inputs: the inputs holding
the :data:`EXTREMES` lowest and highest segment scores of every metric (over all systems; fewer when that would take
more than about half the budget), and a random sample of the others (numpy's default generator with the given
seed) up to the budget of ``MAX_OUTPUTS / systems`` inputs; ``sample`` says so and the page repeats it above the
table.
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

import numpy as np

from ..evaluation.summary import TABLE_ASPECTS, display_decimals, systems_of

#: the most outputs (inputs × systems) embedded in full; above it, a documented sample of the inputs
MAX_OUTPUTS = 40_000
#: inputs kept for each metric's lowest and for its highest segment scores when sampling
EXTREMES = 10
#: significant digits of a human score shown in the explorer
HUMAN_DIGITS = 3

HumanSegments = Mapping[str, Mapping[str, Mapping[str, float]]]  # aspect -> system -> segment id -> mean score


def _decimals(values: Sequence[float | None], binary: bool) -> int:
    if binary:
        return 0
    finite = [v for v in values if v is not None and math.isfinite(v)]
    dec = display_decimals(max(finite, key=abs)) if finite else None
    return 3 if dec is None else min(dec, 6)


def _metric_columns(data: Mapping[str, Any], human: HumanSegments | None) -> list[dict[str, Any]]:
    """Every column of the explorer: the aspects' metrics in table order, the per-segment overall scores (``j``),
    then the human aspects; each with its per-system segment scores ``{system: {id: value}}``."""
    corpus = {(c["metric"], c["system"]): c for c in data["score"]["corpus"]}
    segs: dict[str, dict[str, dict[str, float | None]]] = {}
    for s in data["score"]["segments"]:
        segs.setdefault(s["metric"], {})[s["system"]] = s["scores"]
    columns = []
    for aspect in TABLE_ASPECTS:
        for metric in data["aspects"].get(aspect, []):
            if metric not in segs:
                continue
            entries = [c for (m, _), c in corpus.items() if m == metric]
            columns.append({"key": metric, "aspect": aspect, "hib": bool(entries[0]["higher_is_better"]),
                            "scores": segs[metric], "corpus": [c["score"] for c in entries]})
    for entry in data.get("overall_segments", []):
        col = next((c for c in columns if c["key"] == entry["score"] and c["aspect"] == "overall"), None)
        if col is None:
            col = {"key": entry["score"], "aspect": "overall", "hib": True, "scores": {}, "corpus": []}
            columns.append(col)
        col["scores"][entry["system"]] = entry["scores"]
    for aspect, per_system in (human or {}).items():
        columns.append({"key": f"human {aspect}", "aspect": "human", "hib": True, "scores": dict(per_system),
                        "corpus": [], "human": True})
    return columns


def _all_ids(data: Mapping[str, Any]) -> list[str]:
    texts = data.get("texts")
    if texts:
        return list(texts["ids"])
    return list(dict.fromkeys(i for s in data["score"]["segments"] for i in s["scores"]))


def _sample(ids: list[str], columns: list[dict[str, Any]], systems: list[str], max_outputs: int, seed: int
            ) -> tuple[list[int], dict[str, Any] | None]:
    """Indices of the inputs to embed (in input order) and the description of the sample (None: all of them)."""
    n = len(ids)
    if n * max(1, len(systems)) <= max_outputs:
        return list(range(n)), None
    budget = max(1, max_outputs // max(1, len(systems)))
    # each metric's extremes take at most about half the budget
    per_end = max(1, min(EXTREMES, budget // (4 * max(1, len(columns)))))
    index = {i: k for k, i in enumerate(ids)}
    keep: set[int] = set()
    for col in columns:
        pooled = [(v, index[i]) for s in systems for i, v in col["scores"].get(s, {}).items()
                  if v is not None and i in index and math.isfinite(v)]
        pooled.sort()
        for _, k in pooled[:per_end] + pooled[-per_end:]:
            keep.add(k)
    extremes = len(keep)
    rest = np.array(sorted(set(range(n)) - keep), dtype=int)
    take = max(0, min(len(rest), budget - extremes))
    chosen = np.random.default_rng(seed).choice(rest, size=take, replace=False) if take else np.array([], dtype=int)
    keep.update(int(k) for k in chosen)
    note = (f"This report embeds {len(keep)} of the {n} inputs ({n * len(systems)} outputs exceed the "
            f"explorer's budget of {max_outputs}): the inputs holding the {per_end} lowest and {per_end} highest "
            f"segment scores of every metric ({extremes} inputs) and a random sample of {take} others (seed "
            f"{seed}). The tables and figures above use every segment.")
    return sorted(keep), {"embedded": len(keep), "total": n, "extremes": extremes, "per_metric": per_end,
                          "random": take, "seed": seed,
                          "max_outputs": max_outputs, "note": note}


def _cell(value: float | None, decimals: int) -> float | int | None:
    """A segment score at its display precision (an integer at 0 decimals); None when missing or not finite."""
    if value is None or not math.isfinite(value):
        return None
    rounded = round(value, decimals)
    return int(rounded) if decimals == 0 else rounded


def explorer_payload(data: Mapping[str, Any], human: HumanSegments | None = None, *,
                     max_outputs: int = MAX_OUTPUTS, seed: int = 0,
                     figures: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The explorer's data (see the module docstring) from the JSON form of an evaluation; ``human``: mean human
    score per aspect, system and segment; ``figures``: the clickable points of the report's figures
    (``{"img": element id, "points": [{"x", "y", "label", "system", "metric", "ids"}]}``, metric and system as
    names, turned into column and system indices here; a bar of a 0/1 metric gives ``equals``, the decision whose
    segments it opens, instead of ``ids``, and ``box``, its pixel box); ``anchor``: the index of the anchor row of
    the human references among ``systems`` (None without one), which the mean over the systems leaves out."""
    systems = systems_of(data)
    ids = _all_ids(data)
    columns = _metric_columns(data, human)
    keep, sample = _sample(ids, columns, systems, max_outputs, seed)
    strings: dict[str, int] = {}

    def ref(text: str | None) -> int | None:
        if text is None:
            return None
        return strings.setdefault(text, len(strings))

    texts = data.get("texts")
    kept_ids = [ids[k] for k in keep]
    directions: dict[str | None, int] = {}
    if texts:
        src = [ref(texts["source"][k]) for k in keep]
        refs = [[ref(r) for r in texts["references"][k]] for k in keep]
        dir_index = [directions.setdefault(texts["direction"][k], len(directions)) for k in keep]
        out = [[ref(texts["outputs"].get(s, [None] * len(ids))[k]) for k in keep] for s in systems]
        own = texts.get("system_references", {})
        position = {i: k for k, i in enumerate(kept_ids)}
        sysrefs = {str(systems.index(s)): {str(position[i]): [ref(r) for r in refs_]
                                           for i, refs_ in per_id.items() if i in position}
                   for s, per_id in own.items() if s in systems}
    else:
        src = [None] * len(keep)
        refs = [[] for _ in keep]
        dir_index = [directions.setdefault(None, 0) for _ in keep]
        out = [[None] * len(keep) for _ in systems]
        sysrefs = {}
    metrics = []
    for col in columns:
        values = [v for s in systems for v in col["scores"].get(s, {}).values()]
        finite = [v for v in values if v is not None and math.isfinite(v)]
        binary = bool(finite) and all(v in (0.0, 1.0) for v in finite)
        if col.get("human"):
            mag = max((abs(v) for v in finite), default=0.0)
            dec = 2 if mag == 0 else max(0, HUMAN_DIGITS - 1 - math.floor(math.log10(mag)))
        else:
            dec = _decimals(col["corpus"] or finite, binary)

        metrics.append({"key": col["key"], "aspect": col["aspect"], "hib": col["hib"], "dec": dec,
                        "binary": binary, "note": col.get("note", ""),
                        "v": [[_cell(col["scores"].get(s, {}).get(i), dec) for i in kept_ids] for s in systems]})
    keys = [m["key"] for m in metrics]
    roles = data.get("roles", {})
    settings = data.get("settings", {})

    def column(label: str | None) -> int | None:
        return keys.index(label) if label in keys else None

    style = column(roles.get("style"))
    decisions = {"style": style if style is not None and metrics[style]["binary"] else None,
                 "j": column("j"), "fluency": column(roles.get("fluency")),
                 "threshold": settings.get("fluency_threshold")}
    if decisions["threshold"] is None:
        decisions["fluency"] = None
    figs = [{"img": fig["img"], "points": [_point(p, systems, keys) for p in fig["points"]]} for fig in figures]
    anchor = settings.get("anchor")
    return {"systems": systems, "anchor": systems.index(anchor) if anchor in systems else None, "ids": kept_ids,
            "strings": list(strings), "src": src, "refs": refs,
            "sysrefs": sysrefs,
            "dir": dir_index, "dirs": list(directions), "out": out, "metrics": metrics, "decisions": decisions,
            "sample": sample, "has_texts": bool(texts), "figures": figs}


def _point(p: Mapping[str, Any], systems: list[str], keys: list[str]) -> dict[str, Any]:
    """A figure's clickable point with its system and metric as indices into the payload's lists."""
    q = {"x": p["x"], "y": p["y"], "label": p["label"]}
    if p.get("system") in systems:
        q["system"] = systems.index(p["system"])
    if p.get("metric") in keys:
        q["metric"] = keys.index(p["metric"])
    if p.get("ids") is not None:
        q["ids"] = list(p["ids"])
    if p.get("equals") is not None and "system" in q and "metric" in q:
        q["equals"] = p["equals"]  # a bar of a 0/1 metric: that system's segments with this decision
    if p.get("box") is not None:  # clickable anywhere in this pixel box (left, top, right, bottom)
        q["box"] = list(p["box"])
    return q


def payload_json(payload: Mapping[str, Any]) -> str:
    """The payload as JSON safe inside ``<script type="application/json">``: compact, and ``<``, ``>``, ``&``
    escaped so no text can close the element."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
