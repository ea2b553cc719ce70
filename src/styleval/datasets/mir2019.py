"""Mir et al. (2019), Yelp sentiment transfer (``mir2019/``): 244 inputs x 12 settings of ARAE, CAAE and DAR.

Views: :func:`records` (the texts) and :func:`judgments` (mean human ratings and stored automatic scores from
``evaluations/``, for :mod:`styleval.meta.datasets`). Both number the inputs the same way: ids ``"0"``..``"243"``,
0-121 are ``data/sentiment.test.0`` lines 1-122 (negative->positive), 122-243 are ``sentiment.test.1`` lines 1-122
(positive->negative) -- the order of the ``evaluations/`` arrays (checked against the stored sentence BLEU:
exactly 100 where output == source at the same index).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..readers.plain import build_records
from ..readers.text import StrPath, read_lines
from ..records import Record
from .paths import dataset_dir
from .tables import JudgmentTables, MetricRow

DIRECTIONS = ("negative->positive", "positive->negative")  # sentiment.test.0, sentiment.test.1
MODELS = {"ARAE": "lambda", "CAAE": "rho", "DAR": "gamma"}
ASPECTS = ("style_transfer_intensity", "content_preservation", "naturalness")
HUMAN_SCALE = (1.0, 5.0)  # the raters' scale; the stored values are means of three ratings


def model_of(system: str) -> str:
    """``"CAAE_rho_0_5"`` -> ``"CAAE"``."""
    return system.split("_", 1)[0]


def records(root: StrPath | None) -> list[Record]:
    """The 12 settings' outputs with their sources, no references; systems ``"<MODEL>_<setting>"`` (the names of the
    files under ``evaluations/``, e.g. ``ARAE_lambda_1``) in name order, ``meta`` holds ``model`` and ``setting``.

    Outputs: ``transfer_model_outputs/<MODEL>/<setting>/sentiment.test.{0,1}.tsf``, as many lines as the sources.
    """
    base = dataset_dir(root, "mir2019")
    sources = [(str(p), read_lines(p, "utf-8")) for p in (base / "data" / f"sentiment.test.{k}" for k in (0, 1))]
    offset = len(sources[0][1])
    out_root = base / "transfer_model_outputs"
    if not out_root.is_dir():
        raise InputError("folder does not exist", out_root)
    settings = sorted((m.name, s.name) for m in out_root.iterdir() if m.is_dir() and not m.name.startswith(".")
                      for s in m.iterdir() if s.is_dir() and not s.name.startswith("."))
    if not settings:
        raise InputError("no <MODEL>/<setting> folders", out_root)
    out: list[Record] = []
    for model, setting in settings:
        for k, (src, direction) in enumerate(zip(sources, DIRECTIONS)):
            path = out_root / model / setting / f"sentiment.test.{k}.tsf"
            start = 0 if k == 0 else offset
            out += build_records((str(path), read_lines(path, "utf-8")), src, system=f"{model}_{setting}",
                                 direction=direction, ids=[str(start + i) for i in range(len(src[1]))],
                                 meta={"model": model, "setting": setting})
    return out


def judgments(root: StrPath | None) -> JudgmentTables:
    """Mean human ratings and stored automatic scores (see :func:`styleval.meta.datasets.load_mir2019`).

    Human rows: annotator ``mean3`` (the stored values are means of 3 raters), aspects
    ``style_transfer_intensity`` and ``content_preservation`` (12 settings), ``naturalness`` (absolute 1-5, the 9
    settings that have it and system ``input``). Metric rows ``<masking>:<metric>``, ``emd:<clf>``,
    ``target:<clf>``. ``extra``: ``naturalness_relative`` (the A/B choices) and ``models`` (settings by model).
    A human score off the raters' 1-5 scale (NaN included) is an :class:`InputError` naming the file and entry.
    """
    base = dataset_dir(root, "mir2019") / "evaluations"
    human_dir, auto_dir = base / "human", base / "automated"
    systems = sorted(p.stem for p in (human_dir / "style_transfer_intensity").glob("*.npy"))
    if not systems:
        raise InputError("no human style_transfer_intensity/*.npy files", human_dir)
    human: list[dict[str, Any]] = []
    metrics: list[MetricRow] = []
    relative: list[dict[str, Any]] = []

    def direction(i: int, n: int) -> str:
        return DIRECTIONS[0] if i < n // 2 else DIRECTIONS[1]

    def add_human(system: str, aspect: str, values: Any, path: Path) -> None:
        n = len(values)
        for i, v in enumerate(np.asarray(values, dtype=float)):
            if not HUMAN_SCALE[0] <= v <= HUMAN_SCALE[1]:  # NaN fails too
                raise InputError(f"entry {i} ({aspect} of {system}): human score {v:g} is not on the raters' 1-5 "
                                 "scale", path)
            human.append({"system": system, "segment": str(i), "annotator": "mean3", "aspect": aspect,
                          "score": float(v), "direction": direction(i, n)})

    for system in systems:
        for aspect in ("style_transfer_intensity", "content_preservation"):
            path = human_dir / aspect / f"{system}.npy"
            add_human(system, aspect, np.load(path), path)
        nat = human_dir / "naturalness" / f"{system}.npz"
        if nat.is_file():
            z = np.load(nat, allow_pickle=True)
            add_human(system, "naturalness", z["absolute"], nat)
            if "relative" in z.files:
                relative += [{"system": system, "segment": str(i), "choice": None if c is None else str(c)}
                             for i, c in enumerate(z["relative"])]
        content = auto_dir / "content_preservation" / "sentence_level" / f"{system}.npz"
        if content.is_file():
            z = np.load(content, allow_pickle=True)
            for masking in z.files:
                for metric, values in z[masking].item().items():
                    n = len(values)
                    metrics += [(system, str(i), f"{masking}:{metric}", float(v), direction(i, n))
                                for i, v in enumerate(values)]
        sti = auto_dir / "style_transfer_intensity" / "sentence_level"
        emd = sti / "scores_based_on_emd" / f"{system}.npz"
        if emd.is_file():
            z = np.load(emd, allow_pickle=True)
            for clf in z.files:
                values = np.asarray(z[clf], dtype=float)
                metrics += [(system, str(i), f"emd:{clf}", float(v), direction(i, len(values)))
                            for i, v in enumerate(values)]
        dist = sti / "style_distributions" / f"{system}.npz"
        if dist.is_file():
            z = np.load(dist, allow_pickle=True)
            for clf in z.files:
                probs = np.asarray(z[clf], dtype=float)
                n = len(probs)
                # first half: negative inputs, target class 1 (positive); second half: target class 0
                target = np.where(np.arange(n) < n // 2, probs[:, 1], probs[:, 0])
                metrics += [(system, str(i), f"target:{clf}", float(v), direction(i, n))
                            for i, v in enumerate(target)]
    inputs = human_dir / "naturalness" / "input_texts.npz"
    if inputs.is_file():
        add_human("input", "naturalness", np.load(inputs, allow_pickle=True)["absolute"], inputs)
    extra = {"naturalness_relative": pd.DataFrame(relative, columns=["system", "segment", "choice"]),
             "models": {m: [s for s in systems if model_of(s) == m] for m in MODELS}}
    return JudgmentTables(human, metrics, human_dir, extra)
