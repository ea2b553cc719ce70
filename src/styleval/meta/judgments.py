"""Human judgments in long format: one row per (system, segment, annotator, aspect).

Columns: ``system``, ``segment``, ``annotator``, ``aspect`` (all strings), ``score`` (float) and ``direction``
(``"source->target"`` or ``None``). Identifiers are always strings, so a table read back from CSV joins with the
table that was written. A judgment set is valid when every score is a finite number and no
(system, segment, annotator, aspect) appears twice.

Crowd-sourcing exports hold one row per rating, and one worker may rate the same key twice (two systems produced
the same text). :meth:`Judgments.read` with ``repeated=`` aggregates such repeats by a rule of
:data:`REPEATED_RULES` (``mean``, ``median``, ``first``, ``last``; ``error``, the default, refuses them) and counts
them in :attr:`Judgments.repeated`.

Files: CSV (``.csv``), TSV (``.tsv``/``.tab``) with a header row, or JSON lines (``.jsonl``/``.ndjson``), one object
per line with the same keys. ``direction`` may be absent; the other five columns are required.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import pandas as pd

from styleval.errors import InputError
from styleval.readers.text import iter_json_objects, read_text
from styleval.records import NAME_EDGE, Direction, canonical_name, name_problem

KEY = ("system", "segment", "annotator", "aspect")
REQUIRED = KEY + ("score",)
COLUMNS = REQUIRED + ("direction",)

_MISSING = {"", "na", "nan", "none", "null"}
#: how several ratings of one (system, segment, annotator, aspect) key become one (``error``: refuse them)
REPEATED_RULES = ("mean", "median", "first", "last", "error")


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in _MISSING


def _ident(value: Any) -> str:
    """Identifiers as strings in NFC; integral floats (pandas upcasts) lose their ``.0``; ASCII space is stripped
    from the ends (a no-break space is left for :func:`~styleval.records.name_problem` to refuse)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return canonical_name(str(value).strip(NAME_EDGE))


def _parse_score(value: Any, path: str | None, line: int | None) -> float:
    if isinstance(value, bool):
        raise InputError(f"score {value!r} is not a number", path, line)
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise InputError(f"score {value!r} is not a number", path, line) from None
    if not math.isfinite(score):
        raise InputError(f"score {value!r} is not a finite number", path, line)
    return score


def _parse_direction(value: Any, path: str | None, line: int | None) -> str | None:
    if _is_missing(value):
        return None
    try:
        parsed = Direction.parse(str(value))
    except InputError as exc:
        raise InputError(exc.problem, path, line) from None
    return None if parsed is None else str(parsed)


def direction_column(values: Iterable[Any], source: str | Path | None = None) -> list[str | None]:
    """A table's direction cells in their one text form (``informal:formal`` -> ``informal->formal``), blanks as
    None; a cell that is no direction is an :class:`InputError` naming its 1-based row."""
    out: list[str | None] = []
    for row, value in enumerate(values, start=1):
        try:
            out.append(_parse_direction(value, None, None))
        except InputError as exc:
            raise InputError(f"row {row}: {exc.problem}", source) from None
    return out


def _row(raw: Mapping[str, Any], path: str | None, line: int | None,
         scale: tuple[float, float] | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for col in KEY:
        if col not in raw:
            raise InputError(f"missing column {col!r}", path, line)
        if _is_missing(raw[col]):
            raise InputError(f"empty {col!r}", path, line)
        row[col] = _ident(raw[col])
        problem = name_problem(row[col], col)  # a tab or line break in a name breaks every table printed
        if problem:
            raise InputError(problem, path, line)
    if "score" not in raw:
        raise InputError("missing column 'score'", path, line)
    row["score"] = _parse_score(raw["score"], path, line)
    if scale is not None and not scale[0] <= row["score"] <= scale[1]:
        raise InputError(f"score {row['score']:g} is outside the scale {scale[0]:g}..{scale[1]:g} (--scale)", path,
                         line)
    row["direction"] = _parse_direction(raw.get("direction"), path, line)
    return row


class Judgments:
    """Human judgments in long format (see the module docstring); immutable once built."""

    def __init__(self, frame: pd.DataFrame, *, source: str | Path | None = None, _validated: bool = False,
                 repeated: str = "error") -> None:
        self.source = None if source is None else str(source)
        if not _validated:
            frame = self._normalise(frame, self.source)
        #: the repeated ratings aggregated (``rule``, ``keys`` rated more than once, the ``ratings`` they had)
        self.repeated: dict[str, Any] = {"rule": check_repeated(repeated), "keys": 0, "ratings": 0}
        if repeated != "error":
            frame, self.repeated["keys"], self.repeated["ratings"] = aggregate_repeats(frame, repeated)
        self._frame = frame.reset_index(drop=True)
        self._check_duplicates()

    # ---------------------------------------------------------------- construction
    @staticmethod
    def _normalise(frame: pd.DataFrame, source: str | None) -> pd.DataFrame:
        missing = [c for c in REQUIRED if c not in frame.columns]
        if missing:
            raise InputError(f"missing column(s) {', '.join(map(repr, missing))}", source)
        rows = frame.to_dict("records")
        return Judgments._frame_from_rows([_row(r, source, None) for r in rows])

    @staticmethod
    def _frame_from_rows(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
        frame = pd.DataFrame(list(rows), columns=list(COLUMNS))
        for col in KEY:
            frame[col] = frame[col].astype(object)
        frame["score"] = frame["score"].astype(float)
        frame["direction"] = frame["direction"].astype(object).where(frame["direction"].notna(), None)
        return frame

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, source: str | Path | None = None) -> "Judgments":
        """Build from dicts with keys system, segment, annotator, aspect, score and optionally direction."""
        src = None if source is None else str(source)
        rows = [_row(r, src, None) for r in records]
        return cls(cls._frame_from_rows(rows), source=source, _validated=True)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> "Judgments":
        return cls(frame)

    @classmethod
    def read(cls, path: str | Path, *, format: str | None = None,  # noqa: A002
             encoding: str | None = None, scale: tuple[float, float] | None = None,
             repeated: str = "error") -> "Judgments":
        """Read CSV, TSV or JSON lines (chosen by ``format`` or the file suffix); ``encoding``: of the file
        (default: UTF-8, or :func:`~styleval.readers.text.inputs_encoded`'s); ``scale``: ``(low, high)`` of the
        rating scale, a score outside it an :class:`InputError` naming the file and line; ``repeated``: the rule for
        several ratings of one key (:data:`REPEATED_RULES`; ``error`` refuses them)."""
        path = Path(path)
        fmt = (format or path.suffix.lstrip(".")).lower()
        if not path.is_file():
            raise InputError("file not found", path)
        if fmt in ("csv", "tsv", "tab", "txt"):
            rows = list(cls._read_delimited(path, "," if fmt == "csv" else "\t", encoding, scale))
        elif fmt in ("jsonl", "ndjson", "json"):
            rows = list(cls._read_jsonl(path, encoding, scale))
        else:
            raise InputError(f"unknown judgments format {fmt!r} (use csv, tsv or jsonl)", path)
        return cls(cls._frame_from_rows(rows), source=path, _validated=True, repeated=repeated)

    @staticmethod
    def _read_delimited(path: Path, delimiter: str, encoding: str | None,
                        scale: tuple[float, float] | None = None) -> Iterator[dict[str, Any]]:
        reader = csv.DictReader(io.StringIO(read_text(path, encoding), newline=""), delimiter=delimiter)
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        dupes = sorted({h for h in header if header.count(h) > 1})
        if dupes:  # the csv module would keep the last column of a name, silently
            raise InputError(f"duplicate column name(s) in header: {', '.join(map(repr, dupes))}", path, 1)
        for col in REQUIRED:
            if col not in header:
                raise InputError(f"missing column {col!r} (header: {', '.join(header) or 'empty'})", path, 1)
        for raw in reader:
            yield _row(raw, str(path), reader.line_num, scale)

    @staticmethod
    def _read_jsonl(path: Path, encoding: str | None,
                    scale: tuple[float, float] | None = None) -> Iterator[dict[str, Any]]:
        for lineno, obj in iter_json_objects(path, encoding):
            yield _row(obj, str(path), lineno, scale)

    def write(self, path: str | Path, *, format: str | None = None) -> Path:  # noqa: A002
        """Write CSV, TSV or JSON lines (by ``format`` or suffix), atomically; ``read`` gives back an equal
        object."""
        from styleval.outputs import atomic_writer

        path = Path(path)
        fmt = (format or path.suffix.lstrip(".")).lower()
        frame = self._frame
        if fmt not in ("csv", "tsv", "tab", "jsonl", "ndjson", "json"):
            raise InputError(f"unknown judgments format {fmt!r} (use csv, tsv or jsonl)", path)
        with atomic_writer(path) as fh:
            if fmt in ("csv", "tsv", "tab"):
                frame.to_csv(fh, sep="," if fmt == "csv" else "\t", index=False,
                             lineterminator="\n")
            else:
                for rec in frame.to_dict("records"):
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return path

    # ---------------------------------------------------------------- validation
    def _check_duplicates(self) -> None:
        dup = self._frame.duplicated(list(KEY), keep=False)
        if dup.any():
            keys = self._frame.loc[dup, list(KEY)].drop_duplicates()
            shown = "; ".join(
                f"system={r.system!r} segment={r.segment!r} annotator={r.annotator!r} aspect={r.aspect!r}"
                for r in keys.head(5).itertuples())
            more = f" (and {len(keys) - 5} more)" if len(keys) > 5 else ""
            raise InputError(f"duplicate judgment(s) for {len(keys)} key(s): {shown}{more}; several ratings of one "
                             f"key are aggregated when a rule is given ({', '.join(REPEATED_RULES[:-1])})",
                             self.source)

    # ---------------------------------------------------------------- access
    @property
    def frame(self) -> pd.DataFrame:
        """A copy of the long table."""
        return self._frame.copy()

    def __len__(self) -> int:
        return len(self._frame)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Judgments):
            return NotImplemented
        a = self._frame.sort_values(list(KEY)).reset_index(drop=True)
        b = other._frame.sort_values(list(KEY)).reset_index(drop=True)
        return a.equals(b)

    def __repr__(self) -> str:
        return (f"Judgments({len(self)} rows, systems={len(self.systems)}, segments={len(self.segments)}, "
                f"annotators={len(self.annotators)}, aspects={self.aspects})")

    def _unique(self, col: str) -> list[str]:
        return list(dict.fromkeys(self._frame[col]))

    @property
    def systems(self) -> list[str]:
        return self._unique("system")

    @property
    def segments(self) -> list[str]:
        return self._unique("segment")

    @property
    def annotators(self) -> list[str]:
        return self._unique("annotator")

    @property
    def aspects(self) -> list[str]:
        return self._unique("aspect")

    @property
    def directions(self) -> list[str | None]:
        return list(self._unique("direction"))

    def filter(self, *, aspect: str | Sequence[str] | None = None, systems: Sequence[str] | None = None,
               exclude_systems: Sequence[str] = (), direction: str | None = None,
               annotators: Sequence[str] | None = None, segments: Sequence[str] | None = None) -> "Judgments":
        """A subset; ``direction`` is a ``source->target`` string (``"both"``/None keeps all)."""
        f = self._frame
        mask = pd.Series(True, index=f.index)
        if segments is not None:
            mask &= f["segment"].isin([str(s) for s in segments])
        if aspect is not None:
            aspects = [aspect] if isinstance(aspect, str) else list(aspect)
            mask &= f["aspect"].isin(aspects)
        if systems is not None:
            mask &= f["system"].isin([str(s) for s in systems])
        if exclude_systems:
            mask &= ~f["system"].isin([str(s) for s in exclude_systems])
        if direction not in (None, "both"):
            mask &= f["direction"] == str(Direction.parse(direction))
        if annotators is not None:
            mask &= f["annotator"].isin([str(a) for a in annotators])
        return Judgments(f.loc[mask], source=self.source, _validated=True)


def check_repeated(rule: str) -> str:
    """``rule`` when it is one of :data:`REPEATED_RULES`, else an :class:`InputError` naming them."""
    if rule not in REPEATED_RULES:
        raise InputError(f"repeated ratings: the rule must be one of {', '.join(REPEATED_RULES)}, not {rule!r}")
    return rule


def aggregate_repeats(frame: pd.DataFrame, rule: str) -> tuple[pd.DataFrame, int, int]:
    """``frame`` with the ratings of each (system, segment, annotator, aspect) key made one by ``rule``
    (``mean``, ``median``, ``first`` or ``last`` in file order; the key keeps its first row's direction), the
    number of keys rated more than once and the number of ratings they had."""
    check_repeated(rule)
    counts = frame.groupby(list(KEY), sort=False)["score"].transform("size")
    repeated = counts > 1
    if not repeated.any():
        return frame, 0, 0
    n_keys = int(frame.loc[repeated, list(KEY)].drop_duplicates().shape[0])
    n_ratings = int(repeated.sum())
    grouped = frame.groupby(list(KEY), sort=False)
    if rule in ("first", "last"):
        out = grouped.nth(0 if rule == "first" else -1)
    else:
        out = grouped.agg(score=("score", rule), direction=("direction", "first")).reset_index()
    return out[list(COLUMNS)].reset_index(drop=True), n_keys, n_ratings
