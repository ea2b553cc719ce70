"""Lai et al. (2022), GYAFC Family & Relationships formality transfer (``lai2022/``).

80 inputs (rows 0-39 informal->formal, 40-79 formal->informal), the outputs of 8 published systems plus the
human reference as system ``ref``, one reference, stored metric scores and two raters' 0-100 judgments of content,
style and fluency. Two copies of the scores exist: ``chatgpt/<aspect>.json`` (named keys, 3 decimals; parsed by
:func:`rows`) and ``data/outputs/<SYS>.<kind>.txt`` (4 decimals and metrics the JSON lacks; parsed by
:func:`judgments_txt`).

Views: :func:`records` (one :class:`~styleval.records.Record` per system and input), :func:`judgments_json` /
:func:`judgments_txt` (human judgments and stored scores as rows, for :mod:`styleval.meta.datasets`),
:func:`xformal` (the 80-line GYAFC files of ``data/xformal`` as formality-labelled text).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..records import Direction, Record
from ..readers.text import StrPath, iter_json_objects, read_lines
from .labelled import LabelledData
from .paths import dataset_dir, number
from .tables import JudgmentTables, MetricRow

ASPECT_FILES = {"content.src": "content.src.json", "content.ref": "content.ref.json", "style": "style.json",
                "fluency": "fluency.json"}
DIRECTIONS = ("informal->formal", "formal->informal")  # rows 0-39, rows 40-79
SYSTEMS = ("bart", "high", "ibt", "luo", "niu", "rao", "yi", "zhou")
REFERENCE = "ref"
ASPECTS = ("content", "style", "fluency")
RATERS = ("human_1", "human_2")  # the two raters' keys in chatgpt/*.json
SCALE = (0.0, 100.0)  # the raters' scale
ROWS = 80
# columns of data/outputs/*.content.{src,ref}.txt after the 16 shared columns; the repository README names the 6th
# and 7th "W2V charF" but they hold chrF then WMD (checked against chatgpt/*.json).
CONTENT_TXT = ("comet", "comet-w", "bleurt", "bertscore", "meteor", "chrf", "wmd", "bleu", "rouge-1",
               "rouge-2", "rouge-l")
LOWER_IS_BETTER = frozenset({"src:wmd", "ref:wmd", "fluency:gpt2_ppl"})
#: data/xformal: the inputs (rows 0-39 informal, 40-79 formal) and four rewrites of them (ref0 is system ``ref``)
XFORMAL_INPUTS = "fr.input.80"
XFORMAL_REFERENCES = ("fr.80.ref0", "fr.80.ref1", "fr.80.ref2", "fr.80.ref3")
#: the files of data/outputs each system has; their first four columns (survey, source, output, reference) agree
TXT_KINDS = ("content.src", "content.ref", "cls.xformal", "cls.pt16", "reg.pt16", "ppl", "human")


def human_score(value: float, what: str, path: StrPath, line: int) -> float:
    """A rater's score as read (:func:`~styleval.datasets.paths.number`): :class:`InputError` naming the file and
    line unless it is a number on the documented 0-100 scale (NaN, an empty cell or ``null``, included)."""
    if not SCALE[0] <= value <= SCALE[1]:  # NaN fails too
        if math.isnan(value):
            raise InputError(f"{what}: the human score is missing (null, NaN or an empty cell); the raters scored "
                             "every output on 0-100", path, line)
        raise InputError(f"{what}: human score {value:g} is not on the raters' 0-100 scale", path, line)
    return value


def direction_of(index: int) -> str:
    """The direction of input row ``index`` (0-39 informal->formal, 40-79 formal->informal)."""
    return DIRECTIONS[0] if index < 40 else DIRECTIONS[1]


@dataclass(frozen=True)
class SystemOutput:
    """One system's output for a row and every stored value for it (raters ``human_1``/``human_2`` and metrics)
    as floats, NaN where the file has ``null``."""

    output: str
    values: dict[str, float]


@dataclass(frozen=True)
class Row:
    """One line of ``chatgpt/<aspect>.json``: input ``index`` (0-based), file ``line``, source, reference and the
    systems' outputs in the file's order."""

    index: int
    line: int
    source: str
    reference: str
    systems: dict[str, SystemOutput]


def aspect_path(root: StrPath | None, aspect: str) -> Path:
    if aspect not in ASPECT_FILES:
        raise InputError(f"unknown lai2022 aspect {aspect!r}; choose from {', '.join(ASPECT_FILES)}")
    return dataset_dir(root, "lai2022") / "chatgpt" / ASPECT_FILES[aspect]


def rows(root: StrPath | None, aspect: str) -> list[Row]:
    """The 80 rows of ``chatgpt/<aspect>.json`` (aspect ``content.src``, ``content.ref``, ``style``, ``fluency``).

    One JSON object per line: ``{"src", "ref", "sys": {system: {"out", "human_1", "human_2", <metrics>}}}``.
    Every row must hold the first row's systems, a non-empty string source, a string reference and a string
    output per system; anything else is an :class:`InputError` naming the file and line.
    """
    path = aspect_path(root, aspect)
    raw: list[tuple[int, dict[str, Any]]] = []
    for number_, obj in iter_json_objects(path, "utf-8"):
        if not {"src", "ref", "sys"} <= obj.keys() or not isinstance(obj["sys"], dict):
            raise InputError("expected an object with keys 'src', 'ref' and 'sys'", path, number_)
        raw.append((number_, obj))
    if len(raw) != ROWS:
        raise InputError(f"expected {ROWS} rows (40 per direction), found {len(raw)}", path)
    systems = list(raw[0][1]["sys"])
    out: list[Row] = []
    for index, (line, obj) in enumerate(raw):
        if set(obj["sys"]) != set(systems):
            raise InputError(f"systems {sorted(obj['sys'])} differ from the first row's {sorted(systems)}",
                             path, line)
        source, ref = obj["src"], obj["ref"]
        if not isinstance(source, str) or not source.strip():
            raise InputError("empty or non-string 'src'", path, line)
        if not isinstance(ref, str):
            raise InputError("non-string 'ref'", path, line)
        outputs: dict[str, SystemOutput] = {}
        for system, values in obj["sys"].items():
            if not isinstance(values, dict) or not isinstance(values.get("out"), str):
                raise InputError(f"system {system!r}: expected an object with a string 'out'", path, line)
            stored = {k: number(v, f"{system}.{k}", path, line) for k, v in values.items() if k != "out"}
            for rater in RATERS:
                if rater in stored:
                    human_score(stored[rater], f"system {system!r} {rater}", path, line)
            outputs[system] = SystemOutput(values["out"], stored)
        out.append(Row(index, line, source, ref, outputs))
    return out


def records(root: StrPath | None, aspect: str = "content.src") -> list[Record]:
    """Records of ``chatgpt/<aspect>.json``: 80 rows x 9 systems (the 8 published systems and ``ref``, the human
    reference as a system; drop ``system == "ref"`` for the paper's 8), system by system in the file's order.

    Ids are row indices ``"0"``..``"79"``; ``references == [ref]``; ``meta`` holds every stored value but ``out``
    as a float: the two raters' scores for that aspect (``human_1``, ``human_2``, 0-100) and the stored metric
    scores (``bleu``, ``bleurt``, ...).
    """
    parsed = rows(root, aspect)
    path = aspect_path(root, aspect)
    others = {a: rows(root, a) for a in ASPECT_FILES if a != aspect and aspect_path(root, a).is_file()}
    check_aligned({aspect: parsed, **others}, root)
    by_system: dict[str, list[Record]] = {s: [] for s in parsed[0].systems}
    for row in parsed:
        direction = Direction.parse(direction_of(row.index))
        for system, got in row.systems.items():
            meta: dict[str, Any] = dict(got.values)
            if not row.reference.strip():
                meta["missing_references"] = [str(path)]
            by_system[system].append(Record(id=str(row.index), source=row.source, output=got.output,
                                            references=[row.reference] if row.reference.strip() else [],
                                            system=system, direction=direction, meta=meta))
    return [rec for recs in by_system.values() for rec in recs]


def _odd_one(values: Sequence[Any]) -> int | None:
    """The index of the value that differs from what most others hold (the first differing from the first value
    when there is no majority); None when all are equal."""
    if all(v == values[0] for v in values):
        return None
    common, count = Counter(map(repr, values)).most_common(1)[0]
    if count > 1:
        return next(k for k, v in enumerate(values) if repr(v) != common)
    return next(k for k, v in enumerate(values) if v != values[0])


def _misaligned(lines: Sequence[int], values: Sequence[Any], what: str, paths: Sequence[Path], row: int
                ) -> InputError | None:
    odd = _odd_one(values)
    if odd is None:
        return None
    others = ", ".join(f"{Path(paths[k]).name} line {lines[k]}" for k in range(len(values)) if k != odd)
    return InputError(f"row {row + 1} of the release: {what} differs from {others} (a line duplicated, dropped or "
                      f"moved? every file of a system must hold the same inputs in the same order)", paths[odd],
                      lines[odd])


def check_aligned(parsed: Mapping[str, Sequence[Row]], root: StrPath | None) -> None:
    """Refuse ``chatgpt/*.json`` files (``parsed``: aspect -> rows) that disagree line by line on the source, the
    reference or any system's output: the :class:`InputError` names the file and line that differs from the others
    (a duplicated and a dropped line would otherwise move human scores onto other outputs)."""
    aspects = list(parsed)
    if len(aspects) < 2:
        return
    paths = [aspect_path(root, a) for a in aspects]
    for index in range(min(len(parsed[a]) for a in aspects)):
        got = [parsed[a][index] for a in aspects]
        lines = [r.line for r in got]
        fields: list[tuple[str, list[str | None]]] = [("the source", [r.source for r in got]),
                                                      ("the reference", [r.reference for r in got])]
        fields += [(f"system {s!r}'s output", [r.systems[s].output if s in r.systems else None for r in got])
                   for s in got[0].systems]
        for what, values in fields:
            error = _misaligned(lines, values, what, paths, index)
            if error is not None:
                raise error


def check_aligned_txt(folder: Path, upper: str, parsed: Mapping[str, Sequence[Sequence[str]]]) -> None:
    """Refuse ``data/outputs/<SYS>.<kind>.txt`` files (``parsed``: kind -> rows of columns) of one system whose
    first four columns (survey, source, output, reference) disagree line by line; names the file and line."""
    kinds = list(parsed)
    paths = [folder / f"{upper}.{k}.txt" for k in kinds]
    names = ("the survey id (column 0)", "the source (column 1)", "the output (column 2)", "the reference (column 3)")
    for index in range(min(len(parsed[k]) for k in kinds)):
        for column, what in enumerate(names):
            values = [list(parsed[k][index][column:column + 1]) for k in kinds]
            error = _misaligned([index + 1] * len(kinds), values, what, paths, index)
            if error is not None:
                raise error


def surveys(root: StrPath | None) -> list[str] | None:
    """Survey id of each of the 80 rows (column 0 of ``data/outputs/REF.human.txt``; the raters differ between
    surveys), or None without that file."""
    path = dataset_dir(root, "lai2022") / "data" / "outputs" / "REF.human.txt"
    if not path.is_file():
        return None
    return [line.split("\t", 1)[0].strip() for line in read_lines(path, "utf-8") if line]


def _annotator(survey_ids: list[str] | None, index: int, rater: int) -> str:
    return f"rater{rater}" if survey_ids is None else f"survey{survey_ids[index]}/rater{rater}"


def judgments_json(root: StrPath | None) -> JudgmentTables:
    """Human judgments and stored scores of ``chatgpt/*.json`` (see :func:`styleval.meta.datasets.load_lai2022`).

    Human rows: the raters of ``content.src`` (aspect content), ``style`` and ``fluency``; metric rows
    ``<group>:<key>`` with group ``src``, ``ref``, ``style``, ``fluency``. ``extra``: ``sources``,
    ``references`` (row order) and ``outputs`` (``{(system, segment): text}``).
    """
    groups = {"src": ("content.src", "content"), "ref": ("content.ref", None), "style": ("style", "style"),
              "fluency": ("fluency", "fluency")}
    survey_ids = surveys(root)
    human: list[dict[str, Any]] = []
    metrics: list[MetricRow] = []
    texts: dict[tuple[str, str], str] = {}
    sources: list[str] = []
    references: list[str] = []
    parsed = {a: rows(root, a) for a in ASPECT_FILES}
    check_aligned(parsed, root)
    for group, (file_aspect, aspect) in groups.items():
        for row in parsed[file_aspect]:
            seg, direction = str(row.index), direction_of(row.index)
            if group == "src":
                sources.append(row.source)
                references.append(row.reference)
            for system, got in row.systems.items():
                texts[(system, seg)] = got.output
                for key, value in got.values.items():
                    if key in RATERS:
                        if aspect is not None:
                            human.append({"system": system, "segment": seg, "aspect": aspect, "score": value,
                                          "annotator": _annotator(survey_ids, row.index, int(key[-1])),
                                          "direction": direction})
                        continue
                    metrics.append((system, seg, f"{group}:{key}", value, direction))
    extra = {"sources": sources, "references": references, "outputs": texts}
    return JudgmentTables(human, metrics, aspect_path(root, "content.src").parent, extra)


def _txt_rows(outputs: Path, upper: str, kind: str, min_columns: int = 1) -> list[list[str]]:
    path = outputs / f"{upper}.{kind}.txt"
    if not path.is_file():
        raise InputError("file not found", path)
    parsed = [line.split("\t") for line in read_lines(path, "utf-8")]
    if len(parsed) != ROWS:
        raise InputError(f"expected {ROWS} lines, found {len(parsed)}", path)
    for line, parts in enumerate(parsed, start=1):
        if len(parts) < min_columns:
            raise InputError(f"expected at least {min_columns} tab-separated columns, found {len(parts)}", path,
                             line)
    return parsed


def judgments_txt(root: StrPath | None) -> JudgmentTables:
    """Human judgments and stored scores of ``data/outputs/<SYS>.*.txt`` (see
    :func:`styleval.meta.datasets.load_lai2022` with ``source="txt"``).

    Raw rater scores: content at columns 4 and 7, style at 5 and 8, fluency at 6 and 9 (0-indexed), their stored
    z-scores six columns later (``extra["stored_z"]``: rows like ``human``); annotators ``survey<col 0>/rater<k>``.
    """
    folder = dataset_dir(root, "lai2022") / "data" / "outputs"
    human: list[dict[str, Any]] = []
    metrics: list[MetricRow] = []
    stored_z: list[dict[str, Any]] = []
    for upper in [s.upper() for s in SYSTEMS] + [REFERENCE.upper()]:
        system = upper.lower()
        human_path = folder / f"{upper}.content.src.txt"
        check_aligned_txt(folder, upper, {kind: _txt_rows(folder, upper, kind) for kind in TXT_KINDS
                                          if kind != "human" or (folder / f"{upper}.human.txt").is_file()})
        for i, parts in enumerate(_txt_rows(folder, upper, "content.src", 16)):
            seg, direction = str(i), direction_of(i)
            for k, aspect in enumerate(ASPECTS):
                for rater in (1, 2):
                    col = 4 + k + 3 * (rater - 1)
                    annotator = f"survey{parts[0]}/rater{rater}"
                    what = f"column {col} ({aspect}, rater {rater})"
                    score = human_score(number(parts[col], what, human_path, i + 1), what, human_path, i + 1)
                    z = number(parts[col + 6], f"column {col + 6} (z-score)", human_path, i + 1)
                    if not math.isfinite(z):
                        raise InputError(f"column {col + 6} (z-score): {parts[col + 6]!r} is not a finite number",
                                         human_path, i + 1)
                    human.append({"system": system, "segment": seg, "aspect": aspect, "score": score,
                                  "annotator": annotator, "direction": direction})
                    stored_z.append({"system": system, "segment": seg, "aspect": aspect,
                                     "annotator": annotator, "score": z, "direction": direction})
        for group in ("src", "ref"):
            kind = f"content.{group}"
            for i, parts in enumerate(_txt_rows(folder, upper, kind)):
                for name, value in zip(CONTENT_TXT, parts[16:]):
                    metrics.append((system, str(i), f"{group}:{name}",
                                    number(value, name, folder / f"{upper}.{kind}.txt", i + 1), direction_of(i)))
        for kind, label, target in (("cls.xformal", "cls-xformal", True), ("cls.pt16", "cls-pt16", True),
                                    ("reg.pt16", "reg-pt16", False), ("ppl", None, False)):
            for i, parts in enumerate(_txt_rows(folder, upper, kind)):
                score = number(parts[-1], "last column", folder / f"{upper}.{kind}.txt", i + 1)
                direction = direction_of(i)
                metric = "fluency:gpt2_ppl" if label is None else f"style:{label}"
                metrics.append((system, str(i), metric, score, direction))
                if target:
                    p_target = score if i < 40 else 1.0 - score
                    metrics.append((system, str(i), f"style:{label}-target", p_target, direction))
    return JudgmentTables(human, metrics, folder, {"stored_z": stored_z})


def xformal(root: StrPath | None, names: Sequence[str] = XFORMAL_REFERENCES[1:]) -> LabelledData:
    """The files ``names`` of ``data/xformal`` (80 lines each, in the order given) labelled ``formal`` /
    ``informal``: in ``fr.input.80`` rows 0-39 are informal and 40-79 formal, in a rewrite ``fr.80.ref<k>`` the
    other way round. The default, ``fr.80.ref1-3``, is the sample that calibrates and selects the shipped formality
    models (``fr.80.ref0`` is Lai's system ``ref``, ``fr.input.80`` its inputs)."""
    folder = dataset_dir(root, "lai2022") / "data" / "xformal"
    texts: list[str] = []
    labels: list[str] = []
    for name in names:
        if name != XFORMAL_INPUTS and name not in XFORMAL_REFERENCES:
            raise InputError(f"unknown xformal file {name!r}; choose from "
                             f"{', '.join((XFORMAL_INPUTS, *XFORMAL_REFERENCES))}")
        lines = read_lines(folder / name, "utf-8")
        if len(lines) != ROWS:
            raise InputError(f"expected {ROWS} lines, found {len(lines)}", folder / name)
        formal_first = name != XFORMAL_INPUTS
        texts += lines
        labels += ["formal" if (i < 40) == formal_first else "informal" for i in range(ROWS)]
    return LabelledData(texts, labels, f"{folder}/{'+'.join(names)}")
