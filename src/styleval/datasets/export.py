"""The shipped datasets' system outputs as one table that ``styleval score --input`` reads back.

:data:`OUTPUT_VIEWS` names each dataset with an outputs view (its records) and :func:`write_records_table`
writes records as a TSV, CSV or JSON-lines table with the columns :func:`styleval.readers.tabular.read_table`
knows: ``id``, ``system``, ``direction``, ``source``, ``output``, ``ref0``..``refN``. Ids and system names are the
ones the dataset's human judgments use (:mod:`styleval.meta.datasets`), so scores of the table join with them.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError
from ..outputs import atomic_writer
from ..readers.tabular import table_format
from ..readers.text import StrPath
from ..records import Record
from . import lai2022, mir2019, sgdd_tst, yelp_dualrl

#: The system name of SGDD-TST's rewrites in its human judgments (``styleval.meta.datasets.SGDD_SYSTEM``).
SGDD_SYSTEM = "rewrite"

#: Dataset (its folder name in ``../shared/data``) -> the records of its system outputs.
OUTPUT_VIEWS: dict[str, Callable[[StrPath | None], list[Record]]] = {
    "lai2022": lambda root: lai2022.records(root, "content.src"),
    "mir2019": mir2019.records,
    "sgdd-tst": lambda root: sgdd_tst.records(root, system=SGDD_SYSTEM),
    "yelp-dualrl": yelp_dualrl.records,
}


def dataset_name(name: str) -> str:
    """A dataset's folder name from what a user typed (``sgdd_tst`` and ``SGDD-TST`` are ``sgdd-tst``)."""
    return name.strip().lower().replace("_", "-")


def dataset_records(name: str, root: StrPath | None = None) -> list[Record]:
    """The system outputs of dataset ``name`` as records (:class:`InputError` for an unknown name)."""
    key = dataset_name(name)
    if key not in OUTPUT_VIEWS:
        raise InputError(f"no outputs view for dataset {name!r}; datasets with one: {', '.join(OUTPUT_VIEWS)}")
    return OUTPUT_VIEWS[key](root)


def _columns(records: Sequence[Record]) -> list[str]:
    n_refs = max((len(r.references) for r in records), default=0)
    return ["id", "system", "direction", "source", "output"] + [f"ref{k}" for k in range(n_refs)]


def _row(record: Record, n_refs: int) -> list[str]:
    refs = list(record.references) + [""] * (n_refs - len(record.references))
    direction = "" if record.direction is None else str(record.direction)
    return [record.id, record.system, direction, record.source, record.output, *refs]


def write_records_table(records: Sequence[Record], path: StrPath, *, format: str | None = None  # noqa: A002
                        ) -> Path:
    """Write ``records`` as a table (TSV, CSV or JSON lines, by ``format`` or the suffix), atomically.

    A record with fewer references than the most any record has gets empty reference cells (the reader leaves
    them out). TSV has no quoting, so a text holding a tab or a line break is an :class:`InputError` that names
    the record and suggests CSV or JSON lines."""
    path = Path(path)
    fmt = table_format(path, format)
    columns = _columns(records)
    n_refs = len(columns) - 5
    rows = [_row(r, n_refs) for r in records]
    if fmt == "tsv":
        for record, row in zip(records, rows):
            if any("\t" in cell or "\n" in cell or "\r" in cell for cell in row):
                raise InputError(f"system {record.system!r} segment {record.id!r} has a text with a tab or a "
                                 "line break, which TSV cannot hold: write a .csv or .jsonl table instead", path)
    with atomic_writer(path) as fh:
        if fmt == "jsonl":
            for record, row in zip(records, rows):
                obj: dict[str, object] = dict(zip(columns[:5], row[:5]))
                obj["references"] = list(record.references)
                fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        elif fmt == "tsv":
            fh.writelines("\t".join(row) + "\n" for row in [columns, *rows])
        else:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows(rows)
    return path
