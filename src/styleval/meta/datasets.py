"""Readers that turn published meta-evaluation data into :class:`Judgments` plus a metric table.

A metric table is a DataFrame with columns ``system``, ``segment``, ``metric``, ``score`` (and ``direction``).
Missing metric values (NaN in the source) are left out of the table rather than stored as NaN.
Segment and system identifiers are strings.

Datasets (see ../shared/data/README.md for provenance and licences; nothing is copied into the package):

* :func:`load_lai2022` — Lai et al. (2022), GYAFC formality transfer, 80 inputs x (8 systems + ``ref``),
  2 raters x {content, style, fluency} on 0-100.
* :func:`load_mir2019` — Mir et al. (2019), Yelp sentiment transfer, 244 inputs x 12 model settings,
  mean of 3 raters on 1-5.
* :func:`load_sgdd_tst` — Babakov et al., SGDD-TST, 10,287 (original, rewrite) pairs, mean crowd vote 1-3.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from styleval.errors import InputError

from .judgments import Judgments

# ../shared/data next to a source checkout; STYLEVAL_SHARED_DATA overrides it
DEFAULT_ROOT = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def default_root() -> Path:
    env = os.environ.get("STYLEVAL_SHARED_DATA")
    return Path(env) if env else DEFAULT_ROOT


@dataclass
class MetaDataset:
    """Human judgments, metric scores and what is known about them."""

    name: str
    judgments: Judgments
    metrics: pd.DataFrame
    lower_is_better: frozenset[str] = frozenset()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def metric_names(self) -> list[str]:
        return list(dict.fromkeys(self.metrics["metric"]))


def _root(root: str | Path | None, sub: str) -> Path:
    from ..readers.datasets import dataset_dir

    return dataset_dir(root if root is not None else default_root(), sub)


def _metric_frame(rows: list[tuple[str, str, str, float, str | None]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    frame["score"] = frame["score"].astype(float)
    frame = frame[frame["score"].notna()].reset_index(drop=True)
    return frame


# ---------------------------------------------------------------------------------------------------- Lai 2022
LAI_SYSTEMS = ("bart", "high", "ibt", "luo", "niu", "rao", "yi", "zhou")
LAI_REFERENCE = "ref"
LAI_ASPECTS = ("content", "style", "fluency")
LAI_DIRECTIONS = ("informal->formal", "formal->informal")
# columns of data/outputs/*.content.{src,ref}.txt after the 16 shared columns; the repository README names the 6th
# and 7th "W2V charF" but they hold chrF then WMD (checked against chatgpt/*.json).
LAI_CONTENT_TXT = ("comet", "comet-w", "bleurt", "bertscore", "meteor", "chrf", "wmd", "bleu", "rouge-1",
                   "rouge-2", "rouge-l")
LAI_LOWER_IS_BETTER = frozenset({"src:wmd", "ref:wmd", "fluency:gpt2_ppl"})


def _lai_direction(index: int) -> str:
    return LAI_DIRECTIONS[0] if index < 40 else LAI_DIRECTIONS[1]


def _read_json_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError("file not found", path)
    out = []
    with path.open(encoding="utf-8") as fh:
        for lineno, text in enumerate(fh, start=1):
            if text.strip():
                try:
                    out.append(json.loads(text))
                except json.JSONDecodeError as exc:
                    raise InputError(f"not valid JSON: {exc.msg}", path, lineno) from None
    return out


def _lai_surveys(outputs: Path) -> list[str] | None:
    """Survey id of each of the 80 rows (column 0 of *.human.txt); the raters differ between surveys."""
    path = outputs / "REF.human.txt"
    if not path.is_file():
        return None
    return [line.split("\t", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines() if line]


def _lai_annotator(surveys: list[str] | None, index: int, rater: int) -> str:
    if surveys is None:
        return f"rater{rater}"
    return f"survey{surveys[index]}/rater{rater}"


def load_lai2022(root: str | Path | None = None, *, source: str = "json") -> MetaDataset:
    """Lai et al. (2022) human judgments and stored metric scores.

    ``source="json"`` reads ``chatgpt/{content.src,content.ref,style,fluency}.json`` (the README's recommendation:
    named keys, values rounded to 3 decimals). ``source="txt"`` reads ``data/outputs/<SYS>.*.txt`` (4 decimals,
    and metrics the JSON lacks: unnormalised COMET, the XFORMAL classifier under its own name, PT16 models).

    Human judgments: aspects content, style, fluency; annotators ``survey<k>/rater<1|2>`` (rows 0-9 and 40-49 are
    survey 1, and so on: the survey id is column 0 of ``*.human.txt``; without those files ``rater1``/``rater2``).
    Segments ``"0"``..``"79"``; directions informal->formal (0-39) and formal->informal (40-79). Systems are
    lower-case and include the reference ``ref`` (exclude it to get the paper's 8 systems).

    Metric names are ``<group>:<metric>`` with group ``src`` / ``ref`` (content against source / reference),
    ``style`` or ``fluency``. JSON: the keys as stored (``src:bleurt``, ``style:c-gyafc``, ``fluency:gpt2_ppl``...;
    ``c-gyafc`` is already the probability of the *target* style). TXT: ``src:comet``, ``src:comet-w``
    (= JSON ``comet-20``), ``src:bleurt``, ... (:data:`LAI_CONTENT_TXT`), ``style:cls-xformal`` / ``style:cls-pt16``
    (probability of *formal*, as stored), ``style:cls-xformal-target`` / ``style:cls-pt16-target`` (probability of
    the target style: 1 - p on formal->informal rows), ``style:reg-pt16`` (formality score), ``fluency:gpt2_ppl``.
    Lower is better for ``*:wmd`` and ``fluency:gpt2_ppl``.
    """
    base = _root(root, "lai2022")
    outputs = base / "data" / "outputs"
    surveys = _lai_surveys(outputs)
    if source == "json":
        judgments, metrics, extra = _lai_json(base / "chatgpt", surveys)
    elif source == "txt":
        judgments, metrics, extra = _lai_txt(outputs)
    else:
        raise InputError(f"source must be 'json' or 'txt', not {source!r}")
    return MetaDataset("lai2022", judgments, metrics, LAI_LOWER_IS_BETTER, extra)


def _lai_json(folder: Path, surveys: list[str] | None):
    files = {"src": ("content.src.json", "content"), "ref": ("content.ref.json", None),
             "style": ("style.json", "style"), "fluency": ("fluency.json", "fluency")}
    human: list[dict[str, Any]] = []
    metric_rows: list[tuple] = []
    texts: dict[tuple[str, str], str] = {}
    sources: list[str] = []
    references: list[str] = []
    for group, (name, aspect) in files.items():
        path = folder / name
        data = _read_json_lines(path)
        if len(data) != 80:
            raise InputError(f"expected 80 lines, found {len(data)}", path)
        for i, obj in enumerate(data):
            seg, direction = str(i), _lai_direction(i)
            if group == "src":
                sources.append(obj["src"])
                references.append(obj["ref"])
            for system, values in obj["sys"].items():
                texts[(system, seg)] = values["out"]
                for key, value in values.items():
                    if key == "out":
                        continue
                    if key in ("human_1", "human_2"):
                        if aspect is not None:
                            rater = int(key[-1])
                            human.append({"system": system, "segment": seg, "aspect": aspect, "score": value,
                                          "annotator": _lai_annotator(surveys, i, rater), "direction": direction})
                        continue
                    metric_rows.append((system, seg, f"{group}:{key}", value, direction))
    extra = {"sources": sources, "references": references, "outputs": texts}
    return Judgments.from_records(human, source=folder), _metric_frame(metric_rows), extra


def _lai_txt(outputs: Path):
    systems = [s.upper() for s in LAI_SYSTEMS] + [LAI_REFERENCE.upper()]
    human: list[dict[str, Any]] = []
    metric_rows: list[tuple] = []
    stored_z: list[dict[str, Any]] = []
    for upper in systems:
        system = upper.lower()

        def lines(kind: str, upper: str = upper) -> list[list[str]]:
            path = outputs / f"{upper}.{kind}.txt"
            if not path.is_file():
                raise InputError("file not found", path)
            rows = [line.rstrip("\n").split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
            if len(rows) != 80:
                raise InputError(f"expected 80 lines, found {len(rows)}", path)
            return rows

        content_src = lines("content.src")
        for i, parts in enumerate(content_src):
            seg, direction = str(i), _lai_direction(i)
            for k, aspect in enumerate(LAI_ASPECTS):
                for rater in (1, 2):
                    col = 4 + k + 3 * (rater - 1)
                    annotator = f"survey{parts[0]}/rater{rater}"
                    human.append({"system": system, "segment": seg, "aspect": aspect, "score": parts[col],
                                  "annotator": annotator, "direction": direction})
                    stored_z.append({"system": system, "segment": seg, "aspect": aspect,
                                     "annotator": annotator, "score": parts[col + 6], "direction": direction})
        for group in ("src", "ref"):
            for i, parts in enumerate(lines(f"content.{group}")):
                for name, value in zip(LAI_CONTENT_TXT, parts[16:]):
                    metric_rows.append((system, str(i), f"{group}:{name}", float(value), _lai_direction(i)))
        for kind, label, target in (("cls.xformal", "cls-xformal", True), ("cls.pt16", "cls-pt16", True),
                                    ("reg.pt16", "reg-pt16", False), ("ppl", None, False)):
            for i, row in enumerate(lines(kind)):
                score = float(row[-1])
                direction = _lai_direction(i)
                metric = "fluency:gpt2_ppl" if label is None else f"style:{label}"
                metric_rows.append((system, str(i), metric, score, direction))
                if target:
                    p_target = score if i < 40 else 1.0 - score
                    metric_rows.append((system, str(i), f"style:{label}-target", p_target, direction))
    extra = {"stored_z": Judgments.from_records(stored_z, source=outputs)}
    return Judgments.from_records(human, source=outputs), _metric_frame(metric_rows), extra


# ---------------------------------------------------------------------------------------------------- Mir 2019
MIR_MODELS = {"ARAE": "lambda", "CAAE": "rho", "DAR": "gamma"}
MIR_ASPECTS = ("style_transfer_intensity", "content_preservation", "naturalness")
MIR_DIRECTIONS = ("negative->positive", "positive->negative")


def mir_model(system: str) -> str:
    """``"CAAE_rho_0_5"`` -> ``"CAAE"``."""
    return system.split("_", 1)[0]


def load_mir2019(root: str | Path | None = None) -> MetaDataset:
    """Mir et al. (2019) human judgments and stored automatic scores.

    Systems are the 12 model settings named as the files are (``ARAE_lambda_1``, ``CAAE_rho_0_01``, ...; use
    :func:`mir_model` to group them by model), plus ``input`` for the naturalness of the input texts. Segments
    ``"0"``..``"243"``: the first half are negative inputs (negative->positive), the second half positive.

    Human: the stored scores are already means of 3 raters, so there is one pseudo-annotator ``mean3``; aspects
    ``style_transfer_intensity`` and ``content_preservation`` (12 settings), ``naturalness`` (absolute 1-5; only
    the 9 settings and the inputs that have it). The relative A/B naturalness choices are returned in
    ``extra["naturalness_relative"]`` (system, segment, choice), since they are not scores.

    Metrics: ``<masking>:<metric>`` for content (masking ``unmasked``, ``style_masked``, ``style_removed``; metrics
    BLEU, METEOR, EmbedAvg, GreedyMatch, VectorExtrema, WMD — WMD is a distance, lower is better), ``emd:textcnn`` /
    ``emd:fasttext`` (direction-corrected EMD style transfer intensity, as stored), ``target:textcnn`` /
    ``target:fasttext`` (output's probability of the target style, from the stored style distributions).
    """
    base = _root(root, "mir2019") / "evaluations"
    human_dir, auto_dir = base / "human", base / "automated"
    systems = sorted(p.stem for p in (human_dir / "style_transfer_intensity").glob("*.npy"))
    if not systems:
        raise InputError("no human style_transfer_intensity/*.npy files", human_dir)
    human: list[dict[str, Any]] = []
    metric_rows: list[tuple] = []
    relative: list[dict[str, Any]] = []

    def direction(i: int, n: int) -> str:
        return MIR_DIRECTIONS[0] if i < n // 2 else MIR_DIRECTIONS[1]

    def add_human(system: str, aspect: str, values) -> None:
        n = len(values)
        for i, v in enumerate(np.asarray(values, dtype=float)):
            human.append({"system": system, "segment": str(i), "annotator": "mean3", "aspect": aspect,
                          "score": float(v), "direction": direction(i, n)})

    for system in systems:
        for aspect in ("style_transfer_intensity", "content_preservation"):
            add_human(system, aspect, np.load(human_dir / aspect / f"{system}.npy"))
        nat = human_dir / "naturalness" / f"{system}.npz"
        if nat.is_file():
            z = np.load(nat, allow_pickle=True)
            add_human(system, "naturalness", z["absolute"])
            if "relative" in z.files:
                relative += [{"system": system, "segment": str(i), "choice": None if c is None else str(c)}
                             for i, c in enumerate(z["relative"])]
        content = auto_dir / "content_preservation" / "sentence_level" / f"{system}.npz"
        if content.is_file():
            z = np.load(content, allow_pickle=True)
            for masking in z.files:
                for metric, values in z[masking].item().items():
                    n = len(values)
                    metric_rows += [(system, str(i), f"{masking}:{metric}", float(v), direction(i, n))
                                    for i, v in enumerate(values)]
        sti = auto_dir / "style_transfer_intensity" / "sentence_level"
        emd = sti / "scores_based_on_emd" / f"{system}.npz"
        if emd.is_file():
            z = np.load(emd, allow_pickle=True)
            for clf in z.files:
                values = np.asarray(z[clf], dtype=float)
                metric_rows += [(system, str(i), f"emd:{clf}", float(v), direction(i, len(values)))
                                for i, v in enumerate(values)]
        dist = sti / "style_distributions" / f"{system}.npz"
        if dist.is_file():
            z = np.load(dist, allow_pickle=True)
            for clf in z.files:
                probs = np.asarray(z[clf], dtype=float)
                n = len(probs)
                # first half: negative inputs, target class 1 (positive); second half: target class 0
                target = np.where(np.arange(n) < n // 2, probs[:, 1], probs[:, 0])
                metric_rows += [(system, str(i), f"target:{clf}", float(v), direction(i, n))
                                for i, v in enumerate(target)]
    inputs = human_dir / "naturalness" / "input_texts.npz"
    if inputs.is_file():
        add_human("input", "naturalness", np.load(inputs, allow_pickle=True)["absolute"])
    metrics = _metric_frame(metric_rows)
    lower = frozenset(m for m in metrics["metric"].unique() if m.endswith(":WMD"))
    extra = {"naturalness_relative": pd.DataFrame(relative, columns=["system", "segment", "choice"]),
             "models": {m: [s for s in systems if mir_model(s) == m] for m in MIR_MODELS}}
    return MetaDataset("mir2019", Judgments.from_records(human, source=human_dir), metrics, lower, extra)


# ---------------------------------------------------------------------------------------------------- SGDD-TST
SGDD_FILE = Path("metric") / "SGDD-TST_with_metrics.csv"
SGDD_SYSTEM = "rewrite"


def load_sgdd_tst(root: str | Path | None = None) -> MetaDataset:
    """SGDD-TST pairs with stored metric columns.

    One system (``rewrite``: the formality-rewritten text) and one pseudo-annotator (``mean_votes``: the stored
    ``human`` column, the mean of 3-6 crowd votes on 1-3), aspect ``content``; segments are row numbers ``"0"``...
    Every other numeric column is a metric under its own name (``bleu``, ``rouge1``, ``Elron/bleurt-large-512``,
    ``scipy_ner`` = NE score, ``scipy_proprotion`` = NE token share p, ...); NaN cells are left out.
    ``extra["frame"]`` is the CSV as read.
    """
    base = _root(root, "sgdd-tst")
    path = base / SGDD_FILE
    if not path.is_file():
        raise InputError("file not found", path)
    frame = pd.read_csv(path)
    for col in ("text1", "text2", "human"):
        if col not in frame.columns:
            raise InputError(f"missing column {col!r}", path)
    bad = pd.to_numeric(frame["human"], errors="coerce").isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"human score {frame['human'].iloc[row]!r} is not a number", path, row + 2)
    segments = [str(i) for i in range(len(frame))]
    judgments = Judgments(pd.DataFrame({"system": SGDD_SYSTEM, "segment": segments, "annotator": "mean_votes",
                                        "aspect": "content", "score": frame["human"].astype(float),
                                        "direction": None}), source=path)
    metric_cols = [c for c in frame.columns if c not in ("text1", "text2", "human", "average")
                   and pd.api.types.is_numeric_dtype(frame[c])]
    long = frame[metric_cols].assign(segment=segments).melt(id_vars="segment", var_name="metric",
                                                             value_name="score")
    long.insert(0, "system", SGDD_SYSTEM)
    long["direction"] = None
    metrics = long[long["score"].notna()].reset_index(drop=True)[["system", "segment", "metric", "score",
                                                                    "direction"]]
    return MetaDataset("sgdd-tst", judgments, metrics, frozenset(), {"frame": frame})
