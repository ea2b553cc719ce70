"""Published meta-evaluation data as :class:`Judgments` plus a metric table.

A metric table is a DataFrame with columns ``system``, ``segment``, ``metric``, ``score`` (and ``direction``).
Missing metric values (NaN in the source) are left out of the table rather than stored as NaN.
Segment and system identifiers are strings. The files are parsed by :mod:`styleval.datasets` (one module per
dataset); this module only shapes what they return.

* :func:`load_lai2022` — Lai et al. (2022), GYAFC formality transfer, 80 inputs x (8 systems + ``ref``),
  2 raters x {content, style, fluency} on 0-100.
* :func:`load_mir2019` — Mir et al. (2019), Yelp sentiment transfer, 244 inputs x 12 model settings,
  mean of 3 raters on 1-5.
* :func:`load_sgdd_tst` — Babakov et al., SGDD-TST, 10,287 (original, rewrite) pairs, mean crowd vote 1-3.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..datasets import lai2022, mir2019, sgdd_tst
from ..datasets.tables import JudgmentTables, MetricRow
from ..errors import InputError
from .judgments import Judgments

SGDD_SYSTEM = "rewrite"


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


def _metric_frame(rows: list[MetricRow]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    frame["score"] = frame["score"].astype(float)
    frame = frame[frame["score"].notna()].reset_index(drop=True)
    return frame


def _judgments(tables: JudgmentTables) -> Judgments:
    return Judgments.from_records(tables.human, source=tables.source)


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
    (= JSON ``comet-20``), ``src:bleurt``, ... (:data:`styleval.datasets.lai2022.CONTENT_TXT`),
    ``style:cls-xformal`` / ``style:cls-pt16`` (probability of *formal*, as stored), ``style:cls-xformal-target`` /
    ``style:cls-pt16-target`` (probability of the target style: 1 - p on formal->informal rows), ``style:reg-pt16``
    (formality score), ``fluency:gpt2_ppl``. Lower is better for ``*:wmd`` and ``fluency:gpt2_ppl``.
    """
    if source == "json":
        tables = lai2022.judgments_json(root)
        extra = dict(tables.extra)
    elif source == "txt":
        tables = lai2022.judgments_txt(root)
        extra = {"stored_z": Judgments.from_records(tables.extra["stored_z"], source=tables.source)}
    else:
        raise InputError(f"source must be 'json' or 'txt', not {source!r}")
    return MetaDataset("lai2022", _judgments(tables), _metric_frame(tables.metrics), lai2022.LOWER_IS_BETTER,
                       extra)


def load_mir2019(root: str | Path | None = None) -> MetaDataset:
    """Mir et al. (2019) human judgments and stored automatic scores.

    Systems are the 12 model settings named as the files are (``ARAE_lambda_1``, ``CAAE_rho_0_01``, ...; use
    :func:`styleval.datasets.mir2019.model_of` to group them by model), plus ``input`` for the naturalness of the
    input texts. Segments ``"0"``..``"243"``: the first half are negative inputs (negative->positive), the second
    half positive.

    Human: the stored scores are already means of 3 raters, so there is one pseudo-annotator ``mean3``; aspects
    ``style_transfer_intensity`` and ``content_preservation`` (12 settings), ``naturalness`` (absolute 1-5; only
    the 9 settings and the inputs that have it). The relative A/B naturalness choices are returned in
    ``extra["naturalness_relative"]`` (system, segment, choice), since they are not scores.

    Metrics: ``<masking>:<metric>`` for content (masking ``unmasked``, ``style_masked``, ``style_removed``; metrics
    BLEU, METEOR, EmbedAvg, GreedyMatch, VectorExtrema, WMD — WMD is a distance, lower is better), ``emd:textcnn`` /
    ``emd:fasttext`` (direction-corrected EMD style transfer intensity, as stored), ``target:textcnn`` /
    ``target:fasttext`` (output's probability of the target style, from the stored style distributions).
    """
    tables = mir2019.judgments(root)
    metrics = _metric_frame(tables.metrics)
    lower = frozenset(m for m in metrics["metric"].unique() if m.endswith(":WMD"))
    return MetaDataset("mir2019", _judgments(tables), metrics, lower, dict(tables.extra))


def load_sgdd_tst(root: str | Path | None = None) -> MetaDataset:
    """SGDD-TST pairs with stored metric columns.

    One system (``rewrite``: the formality-rewritten text) and one pseudo-annotator (``mean_votes``: the stored
    ``human`` column, the mean of 3-6 crowd votes on 1-3), aspect ``content``; segments are row numbers ``"0"``...
    Every other numeric column is a metric under its own name (``bleu``, ``rouge1``, ``Elron/bleurt-large-512``,
    ``scipy_ner`` = NE score, ``scipy_proprotion`` = NE token share p, ...); NaN cells are left out.
    ``extra["frame"]`` is the CSV as read (:func:`styleval.datasets.sgdd_tst.frame`).
    """
    frame, path = sgdd_tst.frame(root)
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
