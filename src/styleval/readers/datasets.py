"""Readers of published style-transfer data, from a folder the caller gives (nothing is bundled).

Each takes the dataset's folder (e.g. ``../shared/data/lai2022``) or its parent (``../shared/data``). Segment
ids and system names match :mod:`styleval.meta.datasets` where both read the same data.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..records import Direction, Record
from .plain import build_records
from .tabular import iter_delimited
from .text import StrPath, iter_json_objects, read_lines, read_lines_with_fallback


def dataset_dir(root: StrPath, name: str) -> Path:
    """``root/name`` if that is a folder, else ``root`` itself; :class:`InputError` if neither exists."""
    base = Path(root)
    path = base / name if (base / name).is_dir() else base
    if not path.is_dir():
        raise InputError("dataset folder does not exist", path)
    return path


def _float(value: Any, what: str, path: Path, line: int) -> float:
    if isinstance(value, bool):
        raise InputError(f"{what} must be a number, got {value!r}", path, line)
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}", path, line) from None


# ---------------------------------------------------------------------------------------------------- Lai 2022
LAI_ASPECT_FILES = {"content.src": "content.src.json", "content.ref": "content.ref.json", "style": "style.json",
                    "fluency": "fluency.json"}
LAI_DIRECTIONS = ("informal->formal", "formal->informal")  # rows 0-39, rows 40-79


def read_lai2022(root: StrPath) -> list[Record]:
    """Lai et al. (2022), GYAFC Family & Relationships: :func:`read_lai2022_aspect` with ``content.src``."""
    return read_lai2022_aspect(root, "content.src")


def read_lai2022_aspect(root: StrPath, aspect: str) -> list[Record]:
    """Records of ``<root>/chatgpt/<aspect>.json`` (aspect ``content.src``, ``content.ref``, ``style``, ``fluency``).

    One JSON object per line: ``{"src", "ref", "sys": {system: {"out", "human_1", "human_2", <metrics>}}}``.
    Returns 80 rows x 9 systems (the 8 published systems ``bart high ibt luo niu rao yi zhou`` and ``ref``, the
    human reference as a system; drop ``system == "ref"`` for the paper's 8), system by system in the file's
    order. Ids are row indices ``"0"``..``"79"``; rows 0-39 are informal->formal, 40-79 formal->informal.
    ``references == [ref]``; ``meta`` holds every stored value but ``out`` as a float: the two raters' scores
    for that aspect (``human_1``, ``human_2``, 0-100) and the stored metric scores (``bleu``, ``bleurt``, ...).
    """
    if aspect not in LAI_ASPECT_FILES:
        raise InputError(f"unknown lai2022 aspect {aspect!r}; choose from {', '.join(LAI_ASPECT_FILES)}")
    path = dataset_dir(root, "lai2022") / "chatgpt" / LAI_ASPECT_FILES[aspect]
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, obj in iter_json_objects(path):
        if not {"src", "ref", "sys"} <= obj.keys() or not isinstance(obj["sys"], dict):
            raise InputError("expected an object with keys 'src', 'ref' and 'sys'", path, number)
        rows.append((number, obj))
    if len(rows) != 80:
        raise InputError(f"expected 80 rows (40 per direction), found {len(rows)}", path)
    systems = list(rows[0][1]["sys"])
    by_system: dict[str, list[Record]] = {s: [] for s in systems}
    for index, (number, obj) in enumerate(rows):
        if set(obj["sys"]) != set(systems):
            raise InputError(f"systems {sorted(obj['sys'])} differ from the first row's {sorted(systems)}",
                             path, number)
        source, ref = obj["src"], obj["ref"]
        if not isinstance(source, str) or not source.strip():
            raise InputError("empty or non-string 'src'", path, number)
        if not isinstance(ref, str):
            raise InputError("non-string 'ref'", path, number)
        for system in systems:
            values = obj["sys"][system]
            if not isinstance(values, dict) or not isinstance(values.get("out"), str):
                raise InputError(f"system {system!r}: expected an object with a string 'out'", path, number)
            meta: dict[str, Any] = {k: _float(v, f"{system}.{k}", path, number)
                                    for k, v in values.items() if k != "out"}
            if not ref.strip():
                meta["missing_references"] = [str(path)]
            by_system[system].append(Record(id=str(index), source=source, output=values["out"],
                                            references=[ref] if ref.strip() else [], system=system,
                                            direction=Direction.parse(LAI_DIRECTIONS[0 if index < 40 else 1]),
                                            meta=meta))
    return [rec for recs in by_system.values() for rec in recs]


# ---------------------------------------------------------------------------------------------------- Mir 2019
MIR_DIRECTIONS = ("negative->positive", "positive->negative")  # sentiment.test.0, sentiment.test.1


def read_mir2019(root: StrPath) -> list[Record]:
    """Mir et al. (2019), Yelp sentiment transfer: 244 inputs x 12 settings of ARAE, CAAE and DAR.

    Sources: ``data/sentiment.test.0`` (negative, negative->positive) then ``data/sentiment.test.1`` (positive,
    positive->negative); outputs: ``transfer_model_outputs/<MODEL>/<setting>/sentiment.test.{0,1}.tsf``.
    System ``"<MODEL>_<setting>"`` (``ARAE_lambda_1``: the names of the files under ``evaluations/``), ids
    ``"0"``..``"243"``: 0-121 are test.0 lines 1-122, 122-243 are test.1 lines 1-122 -- the order of the
    ``evaluations/`` arrays (checked against the stored sentence BLEU: exactly 100 where output == source at the
    same index). No references. ``meta`` holds ``model`` and ``setting``. Systems in name order.
    """
    base = dataset_dir(root, "mir2019")
    sources = [(str(p), read_lines(p)) for p in (base / "data" / f"sentiment.test.{k}" for k in (0, 1))]
    offset = len(sources[0][1])
    out_root = base / "transfer_model_outputs"
    if not out_root.is_dir():
        raise InputError("folder does not exist", out_root)
    settings = sorted((m.name, s.name) for m in out_root.iterdir() if m.is_dir() and not m.name.startswith(".")
                      for s in m.iterdir() if s.is_dir() and not s.name.startswith("."))
    if not settings:
        raise InputError("no <MODEL>/<setting> folders", out_root)
    records: list[Record] = []
    for model, setting in settings:
        for k, (src, direction) in enumerate(zip(sources, MIR_DIRECTIONS)):
            out = out_root / model / setting / f"sentiment.test.{k}.tsf"
            start = 0 if k == 0 else offset
            records += build_records((str(out), read_lines(out)), src, system=f"{model}_{setting}",
                                     direction=direction, ids=[str(start + i) for i in range(len(src[1]))],
                                     meta={"model": model, "setting": setting})
    return records


# ---------------------------------------------------------------------------------------------------- SGDD-TST
SGDD_FILE = Path("metric") / "SGDD-TST_with_metrics.csv"


def read_sgdd_tst(root: StrPath, system: str = "sgdd") -> list[Record]:
    """SGDD-TST (Babakov et al.): 10,287 (original, formality-rewritten) dialogue utterances.

    From ``metric/SGDD-TST_with_metrics.csv`` (a quoted CSV): ``text1`` is the source, ``text2`` the output,
    one system (``system``, default ``"sgdd"``), no references, no direction (formality rewriting both ways).
    Ids are 0-based row indices ``"0"``..``"10286"`` (the same segments as :func:`styleval.meta.datasets.
    load_sgdd_tst`, which calls the system ``rewrite``). ``meta`` holds ``human`` (mean crowd vote, 1-3) and every
    metric column as floats, NaN where the cell is empty.
    """
    path = dataset_dir(root, "sgdd-tst") / SGDD_FILE
    header, rows = iter_delimited(path, "csv")
    for col in ("text1", "text2", "human"):
        if col not in header:
            raise InputError(f"missing column {col!r}; columns present: {', '.join(map(repr, header))}", path)
    numeric = [c for c in header if c not in ("text1", "text2")]
    records: list[Record] = []
    for index, (line, fields) in enumerate(rows):
        row = dict(zip(header, fields))
        if not row["text1"].strip():
            raise InputError("empty source (text1)", path, line)
        meta = {c: _float(row[c], f"column {c!r}", path, line) for c in numeric}
        records.append(Record(id=str(index), source=row["text1"], output=row["text2"], system=system, meta=meta))
    return records


# ---------------------------------------------------------------------------------------------------- DualRL Yelp
YELP_DIRECTIONS = ("negative->positive", "positive->negative")  # test.0, test.1
_HUMAN = re.compile(r"^Human\d+$")
#: Human2/test.0.tsf line 29 has "décor" with the "é" in GBK (bytes a8 a6), the only non-UTF-8 text in the data
YELP_FALLBACK_ENCODING = "gbk"


def read_yelp_dualrl(root: StrPath, systems: Sequence[str] | None = None,
                     include_humans_as_systems: bool = True) -> list[Record]:
    """Yelp test set with the outputs released with DualRL (Luo et al., 2019): 500 + 500 inputs.

    Sources ``data/yelp/test.0`` (negative->positive) and ``test.1`` (positive->negative); outputs
    ``outputs/yelp/<System>/test.{0,1}.tsf``; references the four human rewrites ``outputs/yelp/Human0..3``.
    Ids ``"test.0/1"``..``"test.0/500"``, ``"test.1/1"``..``"test.1/500"``.

    Systems: the 11 non-human folders in name order (``systems`` selects some of them, in the order given),
    then, when ``include_humans_as_systems``, ``Human0``..``Human3``. A human "system" is scored against the
    *other three* humans only (its own rewrite is left out of its references: with it, it would match a
    reference exactly); every other system has all four references, in the order Human0..3.

    Some files end without a newline (``wc -l`` says 499): their last line is read as a normal line, and every
    file must have exactly as many lines as its source file, otherwise :class:`InputError`.
    One line is not UTF-8: ``Human2/test.0.tsf`` line 29 has a GBK-encoded "é"; lines that are not valid UTF-8
    are decoded as GBK and named (``"<file>:<line> (gbk)"``) in ``meta["encoding_repaired"]`` of every record
    that uses them (as output or reference).
    """
    base = dataset_dir(root, "yelp-dualrl")
    out_root = base / "outputs" / "yelp"
    if not out_root.is_dir():
        raise InputError("folder does not exist", out_root)
    folders = sorted(p.name for p in out_root.iterdir() if p.is_dir() and not p.name.startswith("."))
    humans = [f for f in folders if _HUMAN.match(f)]
    machines = [f for f in folders if not _HUMAN.match(f)]
    if not humans:
        raise InputError("no Human0..Human3 reference folders", out_root)
    available = machines + humans if include_humans_as_systems else machines
    if systems is None:
        chosen = available
    else:
        unknown = [s for s in systems if s not in available]
        if unknown:
            raise InputError(f"unknown system(s) {', '.join(map(repr, unknown))}; available: {', '.join(available)}",
                             out_root)
        chosen = list(systems)

    records: list[Record] = []
    for k, direction in enumerate(YELP_DIRECTIONS):
        src_path = base / "data" / "yelp" / f"test.{k}"
        src = (str(src_path), read_lines(src_path))
        files = {f: out_root / f / f"test.{k}.tsf" for f in dict.fromkeys([*chosen, *humans])}
        read = {f: read_lines_with_fallback(p, YELP_FALLBACK_ENCODING) for f, p in files.items()}
        ids = [f"test.{k}/{i}" for i in range(1, len(src[1]) + 1)]
        for system in chosen:
            ref_folders = [h for h in humans if h != system]
            recs = build_records((str(files[system]), read[system][0]), src,
                                 [(str(files[h]), read[h][0]) for h in ref_folders], system=system,
                                 direction=direction, ids=ids)
            for folder in (system, *ref_folders):
                for line in read[folder][1]:
                    recs[line - 1].meta.setdefault("encoding_repaired", []).append(
                        f"{files[folder]}:{line} ({YELP_FALLBACK_ENCODING})")
            records += recs
    # system by system, test.0 before test.1 within a system
    order = {s: i for i, s in enumerate(chosen)}
    records.sort(key=lambda r: order[r.system])  # stable: keeps test.0 then test.1, line order
    return records
