"""The human-judgment sets a benchmark runs on, each with its published convention as meta-evaluation tasks.

A :class:`BenchSet` holds the human judgments (:class:`~styleval.meta.Judgments`), the system outputs to score
(records), the scores stored with the set (a metric table, with the aspect kind of each column and which are
lower-is-better) and its tasks. Built in (:data:`BUILTIN`):

* ``lai2022``: Lai et al. (2022): per-input Kendall tau-like and system Pearson (``conventions.LAI2022_*``), both
  directions pooled and each direction, for style, content and fluency; the reference ``ref`` left out.
* ``mir2019``: Mir et al. (2019): Pearson pooled over each model's settings (ARAE, CAAE, DAR), for style
  transfer intensity, content preservation and naturalness.
* ``sgdd-tst``: Babakov et al. (2022): Spearman over all pairs, content.

A user's set (:func:`user_set`) is a folder with the files ``styleval data export`` writes and a small manifest
``benchmark.json`` (docs/benchmark.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..datasets import lai2022 as lai_data
from ..datasets import mir2019 as mir_data
from ..datasets import sgdd_tst as sgdd_data
from ..errors import InputError
from ..meta import MetaTask
from ..meta.aspects import HUMAN_NAMES
from ..meta.conventions import LAI2022_EXCLUDE, LAI2022_SEGMENT, LAI2022_SYSTEM
from ..meta.datasets import SGDD_SYSTEM, load_lai2022, load_mir2019, load_sgdd_tst
from ..meta.entity_merge import merge_with_entity_score
from ..meta.judgments import Judgments
from ..meta.scores import read_metric_table
from ..readers.tabular import read_table
from ..readers.text import StrPath
from ..records import Record
from .manifest_schema import check_excluded, check_manifest

KINDS = ("style", "content", "fluency")
#: conventions a user's set may name in its manifest (one, or a list: their tasks side by side)
CONVENTIONS = ("lai2022", "mir2019", "sgdd-tst", "pearson", "spearman", "kendall", "system-pearson",
               "system-spearman", "system-kendall")
#: the fewest judged inputs (segments) a segment-level task needs for its figure to be ranked and averaged
MIN_ITEMS = 5
#: the fewest systems a system-level task needs for its figure to be ranked and averaged (2 points: always +-1)
MIN_SYSTEMS = 3
MANIFEST = "benchmark.json"


@dataclass(frozen=True)
class BenchTask:
    """One meta-evaluation task of a set: the set, the metric aspect kind it judges and the :class:`MetaTask`."""

    set: str
    kind: str
    task: MetaTask
    group: str = ""  # a part of the set the task covers (Mir et al.'s model), shown in its label
    subset: str = ""  # the part of the set's inputs the task runs on (first_inputs), "" for all; in name and label

    @property
    def name(self) -> str:
        """The set (and its subset) and the full task name (every convention spelled, as ``styleval meta`` prints
        it)."""
        return f"{self._set}:{self.task.name}"

    @property
    def label(self) -> str:
        """A short column label: set (and subset), aspect, level and statistic, direction or group."""
        t = self.task
        where = self.group or ("" if t.direction == "both" else t.direction)
        ties = f"metric_ties={t.metric_ties}" if t.method == "kendall_tau_like" and t.metric_ties != "discordant" \
            else ""
        return " ".join(x for x in (self._set, t.aspect, t.level, t.method, ties, where) if x)

    @property
    def _set(self) -> str:
        return f"{self.set}[{self.subset}]" if self.subset else self.set


@dataclass
class BenchSet:
    """A human-judgment set: judgments, outputs to score, stored scores and tasks."""

    name: str
    judgments: Judgments
    records: Callable[[], list[Record]]
    tasks: list[BenchTask]
    stored: pd.DataFrame  # system, segment, metric, score
    stored_kinds: dict[str, str] = field(default_factory=dict)  # stored metric -> style/content/fluency
    lower_is_better: frozenset[str] = frozenset()
    about: str = ""
    inputs: tuple[str, ...] | None = None  # the inputs (segments) kept by first_inputs; None: every input
    subset: str = ""  # what first_inputs kept ("first 10 of 80 inputs"), "" for the whole set
    repeated: dict[str, Any] = field(default_factory=dict)  # repeated ratings aggregated (Judgments.repeated)


def first_inputs(bench_set: BenchSet, n: int) -> BenchSet:
    """The set cut to its first ``n`` inputs (segment ids in the order of its outputs), every system's outputs,
    judgments and stored scores on them kept. Its tasks say so in their name and label (``lai2022[first 10 of 80
    inputs]``), so a figure on a subset never reads as one on the whole set."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"the number of inputs per set must be a positive integer, not {n!r}")
    records = bench_set.records()
    ids = list(dict.fromkeys(r.id for r in records))
    if n >= len(ids):
        return bench_set
    keep = tuple(ids[:n])
    kept = [r for r in records if r.id in set(keep)]
    subset = f"first {n} of {len(ids)} inputs"
    judgments = bench_set.judgments.filter(segments=keep)
    stored = bench_set.stored[bench_set.stored["segment"].isin(keep)].reset_index(drop=True)
    tasks = [replace(t, subset=subset) for t in bench_set.tasks]
    return replace(bench_set, judgments=judgments, records=lambda: list(kept), tasks=tasks, stored=stored,
                   inputs=keep, subset=subset)


def _lai_tasks() -> list[BenchTask]:
    out = []
    for kind in KINDS:
        for direction in ("both", "informal->formal", "formal->informal"):
            for level in (LAI2022_SEGMENT, LAI2022_SYSTEM):
                out.append(BenchTask("lai2022", kind, MetaTask(kind, exclude=LAI2022_EXCLUDE, direction=direction,
                                                               **level)))
    return out


def _kind_of_lai(metric: str) -> str | None:
    group, _, name = metric.partition(":")
    if group == "src":
        return "content"
    if group == "style" and name.endswith("-target"):
        return "style"  # P(formal) or a formality score as stored is not a transfer score on formal->informal rows
    if group == "fluency":
        return "fluency"
    return None


def lai2022_set(root: str | Path | None = None) -> BenchSet:
    """Lai et al. (2022) with the stored scores of its ``.txt`` files (4 decimals, COMET and the XFORMAL
    classifier's target-style probability): content against the source, style, fluency."""
    data = load_lai2022(root, source="txt")
    kinds = {m: k for m in data.metric_names if (k := _kind_of_lai(m))}
    stored = data.metrics[data.metrics["metric"].isin(kinds)][["system", "segment", "metric", "score"]]
    return BenchSet("lai2022", data.judgments,
                    lambda: [r for r in lai_data.records(root, "content.src") if r.system not in LAI2022_EXCLUDE],
                    _lai_tasks(), stored.reset_index(drop=True), kinds, frozenset(data.lower_is_better),
                    "Lai et al. 2022, GYAFC formality, 8 systems x 80 inputs")


def mir2019_set(root: str | Path | None = None) -> BenchSet:
    """Mir et al. (2019), pooled Pearson per model; stored: style-masked and unmasked content metrics, EMD and
    the target-style probability of both classifiers."""
    data = load_mir2019(root)
    kinds: dict[str, str] = {}
    for metric in data.metric_names:
        group = metric.split(":")[0]
        if group in ("unmasked", "style_masked"):
            kinds[metric] = "content"
        elif group in ("emd", "target"):
            kinds[metric] = "style"
    aspects = {"style": "style_transfer_intensity", "content": "content_preservation", "fluency": "naturalness"}
    tasks = []
    for model, systems in data.extra["models"].items():
        for kind, aspect in aspects.items():
            task = MetaTask(aspect, level="segment", method="pearson", average_by="none", systems=tuple(systems))
            tasks.append(BenchTask("mir2019", kind, task, group=model))
    stored = data.metrics[data.metrics["metric"].isin(kinds)][["system", "segment", "metric", "score"]]
    return BenchSet("mir2019", data.judgments, lambda: [r for r in mir_data.records(root) if r.system != "input"],
                    tasks, stored.reset_index(drop=True), kinds, frozenset(data.lower_is_better),
                    "Mir et al. 2019, Yelp sentiment, 12 settings x 244 inputs")


#: SGDD-TST's stored columns that are not metrics of the pair (the NE parts of the merged score)
_SGDD_PARTS = ("scipy_ner", "scipy_proprotion")
#: the metrics Babakov et al.'s Table 4 also reports merged with the NE score
SGDD_MERGED = ("bleu", "rouge1", "Elron/bleurt-large-512")


def sgdd_tst_set(root: str | Path | None = None) -> BenchSet:
    """SGDD-TST: Spearman over all pairs with the content judgments; stored: the 12 metric columns and, for the
    metrics of Babakov et al.'s Table 4, the same merged with the NE score (``<metric>+ne``)."""
    data = load_sgdd_tst(root)
    metrics = data.metrics[~data.metrics["metric"].isin(_SGDD_PARTS)][["system", "segment", "metric", "score"]]
    wide = data.metrics.pivot(index="segment", columns="metric", values="score")
    merged = []
    for metric in SGDD_MERGED:
        values = np.asarray(merge_with_entity_score(wide[metric], wide["scipy_ner"], wide["scipy_proprotion"]))
        merged.append(pd.DataFrame({"system": SGDD_SYSTEM, "segment": wide.index, "metric": f"{metric}+ne",
                                    "score": values}).dropna())
    stored = pd.concat([metrics, *merged], ignore_index=True)
    kinds = {m: "content" for m in dict.fromkeys(stored["metric"])}
    task = MetaTask("content", level="segment", method="spearman", average_by="none")
    return BenchSet("sgdd-tst", data.judgments, lambda: sgdd_data.records(root, system=SGDD_SYSTEM),
                    [BenchTask("sgdd-tst", "content", task)], stored, kinds, frozenset(),
                    "Babakov et al. 2022, SGDD-TST formality rewrites, 10,287 pairs")


def with_metric_ties(bench_set: BenchSet, metric_ties: str) -> BenchSet:
    """The set with ``metric_ties`` on every Kendall tau-like task in place of its convention's (Lai et al. count a
    metric's tie on a non-tied human pair as discordant; ``skip`` leaves such pairs out). Other tasks stay."""
    tasks = [replace(bt, task=bt.task.with_(metric_ties=metric_ties)) if bt.task.method == "kendall_tau_like" else bt
             for bt in bench_set.tasks]
    return replace(bench_set, tasks=tasks)


BUILTIN: dict[str, Callable[[str | Path | None], BenchSet]] = {"lai2022": lai2022_set, "mir2019": mir2019_set,
                                                            "sgdd-tst": sgdd_tst_set}


def builtin_set(name: str, root: str | Path | None = None) -> BenchSet:
    key = name.strip().lower().replace("_", "-")
    if key not in BUILTIN:
        raise InputError(f"unknown benchmark set {name!r}; sets: {', '.join(BUILTIN)} (or NAME=DIR for your own)")
    return BUILTIN[key](root)


# ------------------------------------------------------------------------------------------------ user sets
def convention_tasks(set_name: str, aspect: str, kind: str, convention: str, *, exclude: tuple[str, ...] = (),
                     directions: tuple[str, ...] = ("both",)) -> list[BenchTask]:
    """The tasks a named convention gives for one human aspect (see :data:`CONVENTIONS`)."""
    out = []
    for direction in directions:
        if convention == "lai2022":
            tasks = [MetaTask(aspect, exclude=exclude, direction=direction, **LAI2022_SEGMENT),
                     MetaTask(aspect, exclude=exclude, direction=direction, **LAI2022_SYSTEM)]
        elif convention in ("mir2019", "pearson"):
            tasks = [MetaTask(aspect, level="segment", method="pearson", exclude=exclude, direction=direction)]
        elif convention in ("sgdd-tst", "spearman"):
            tasks = [MetaTask(aspect, level="segment", method="spearman", exclude=exclude, direction=direction)]
        elif convention == "kendall":
            tasks = [MetaTask(aspect, level="segment", method="kendall", exclude=exclude, direction=direction)]
        elif convention.startswith("system-") and convention in CONVENTIONS:
            tasks = [MetaTask(aspect, level="system", method=convention.removeprefix("system-"), exclude=exclude,
                              direction=direction, orientation="abs", human="mean")]
        else:
            raise InputError(f"unknown convention {convention!r}; conventions: {', '.join(CONVENTIONS)}")
        out += [BenchTask(set_name, kind, t) for t in tasks]
    return out


def manifest_conventions(data: dict[str, Any], where: Path) -> tuple[str, ...]:
    """The manifest's ``convention``: one name or a list of names of :data:`CONVENTIONS` (default ``pearson``)."""
    value = data.get("convention", "pearson")
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise InputError(f'"convention" must be a name or a list of names ({", ".join(CONVENTIONS)}), not '
                         f"{json.dumps(value)}", where)
    for n in names:
        if n not in CONVENTIONS:
            raise InputError(f'"convention": unknown convention {n!r}; conventions: {", ".join(CONVENTIONS)}', where)
    return tuple(dict.fromkeys(names))


def manifest_repeated(data: dict[str, Any], where: Path) -> str:
    """The manifest's ``repeated_ratings``: the rule for several ratings of one (system, segment, annotator,
    aspect) key (:data:`~styleval.meta.judgments.REPEATED_RULES`; ``mean`` by default)."""
    from ..meta.judgments import REPEATED_RULES

    rule = data.get("repeated_ratings", "mean")
    if rule not in REPEATED_RULES:
        raise InputError(f'"repeated_ratings" must be one of {", ".join(REPEATED_RULES)}, not {json.dumps(rule)}',
                         where)
    return str(rule)


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(f"a benchmark set needs a {MANIFEST} (aspects, scale, convention; see docs/benchmark.md)",
                         path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", path, exc.lineno) from None
    return check_manifest(data, path, kinds=KINDS, conventions=CONVENTIONS)


def _file(folder: Path, data: dict[str, Any], key: str, default: str) -> Path:
    path = folder / str(data.get(key, default))
    if not path.is_file():
        raise InputError(f"the {key} file named by {MANIFEST} does not exist", path)
    return path


def user_set(name: str, folder: StrPath) -> BenchSet:
    """A set of one's own: ``folder`` holds ``benchmark.json``, the outputs table and the human judgments in the
    formats ``styleval data export`` writes, and optionally stored scores (docs/benchmark.md)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("benchmark set folder does not exist", folder)
    data = _manifest(folder)
    where = folder / MANIFEST
    outputs = _file(folder, data, "outputs", "outputs.tsv")
    human_path = _file(folder, data, "human", "human.csv")
    stored_path = _file(folder, data, "stored", "stored.csv") if "stored" in data or (folder / "stored.csv").is_file() \
        else None
    conventions = manifest_conventions(data, where)
    judgments = Judgments.read(human_path, repeated=manifest_repeated(data, where))
    frame = judgments.frame
    check_excluded(data.get("exclude", []), frame["system"], where, lambda: {r.system for r in read_table(outputs)})
    exclude = tuple(str(s) for s in data.get("exclude", []))
    directions = tuple(data.get("directions", ["both"]))
    scale = data.get("scale")
    tasks: list[BenchTask] = []
    for aspect, kind in data["aspects"].items():
        if kind not in KINDS:
            raise InputError(f"aspect {aspect!r}: the kind must be one of {', '.join(KINDS)}, not {kind!r}", where)
        got = frame[frame["aspect"] == aspect]
        if got.empty:
            raise InputError(f"{MANIFEST} names aspect {aspect!r} but the judgments have none (they have "
                             f"{', '.join(sorted(frame['aspect'].unique()))})", human_path)
        if scale is not None:
            low, high = (float(x) for x in scale)
            bad = got[(got["score"] < low) | (got["score"] > high)]
            if len(bad):
                row = bad.iloc[0]
                raise InputError(f"{len(bad)} {aspect} score(s) outside the scale {low:g}..{high:g} of {MANIFEST}, "
                                 f"e.g. {row['score']:g} (system {row['system']!r}, segment {row['segment']!r})",
                                 human_path)
        for convention in conventions:
            tasks += convention_tasks(name, aspect, kind, convention, exclude=exclude, directions=directions)
    tasks = list({t.name: t for t in tasks}.values())  # lai2022 and system-pearson share a task: once
    if stored_path is not None:
        stored = read_metric_table(stored_path)[["system", "segment", "metric", "score"]]
        stored_kinds = _stored_kinds(data, stored, where)
    else:
        stored, stored_kinds = pd.DataFrame(columns=["system", "segment", "metric", "score"]), {}
    lower = frozenset(str(m) for m in data.get("lower_is_better", []))
    path = outputs

    def records() -> list[Record]:
        return [r for r in read_table(path) if r.system not in exclude]

    return BenchSet(name, judgments, records, tasks, stored, stored_kinds, lower, str(data.get("about", "")),
                    repeated=dict(judgments.repeated))


def _stored_kinds(data: dict[str, Any], stored: pd.DataFrame, where: Path) -> dict[str, str]:
    """The aspect kind of each stored column: ``stored_aspects`` of the manifest, else a kind its name holds."""
    declared = data.get("stored_aspects", {})
    kinds = {}
    for metric in dict.fromkeys(stored["metric"]):
        kind = declared.get(metric)
        if kind is None:
            kind = next((k for k, names in HUMAN_NAMES.items() if any(n in metric.split(":") for n in names)), None)
        if kind is None:
            from ..meta.aspects import metric_kind

            kind = metric_kind(metric)
        if kind not in KINDS:
            raise InputError(f"stored metric {metric!r}: say its aspect kind in \"stored_aspects\"", where)
        kinds[metric] = kind
    return kinds
