"""Where the public datasets lie and the number rule every dataset module shares.

Nothing is bundled: each dataset is read from the folder the caller gives, by default ``../shared/data`` next to
a source checkout (``STYLEVAL_SHARED_DATA`` overrides it), else the folder ``styleval data fetch`` downloads into
(:func:`data_home`).
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..readers.text import StrPath

# ../shared/data next to a source checkout (src/styleval/datasets/paths.py -> parents[3] is the checkout)
DEFAULT_ROOT = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def default_root() -> Path:
    """``$STYLEVAL_SHARED_DATA`` if set, else ``../shared/data`` next to the source checkout."""
    env = os.environ.get("STYLEVAL_SHARED_DATA")
    return Path(env) if env else DEFAULT_ROOT


def data_home() -> Path:
    """Where ``styleval data fetch`` puts datasets: ``$STYLEVAL_DATA_DIR``, else ``$XDG_CACHE_HOME/styleval/data``,
    else ``~/.cache/styleval/data``."""
    env = os.environ.get("STYLEVAL_DATA_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "styleval" / "data"


def dataset_dir(root: StrPath | None, name: str) -> Path:
    """``root/name`` if that is a folder, else ``root`` itself; with ``root=None``, ``name`` under
    :func:`default_root`, else under :func:`data_home` (the fetched copy); :class:`InputError` if none exists."""
    if root is None and not (default_root() / name).is_dir() and (data_home() / name).is_dir():
        check_fetched(data_home() / name, name)
        return data_home() / name
    base = Path(root) if root is not None else default_root()
    path = base / name if (base / name).is_dir() else base
    if not path.is_dir():
        hint = f" (download it with `styleval data fetch {name}`)" if root is None else ""
        raise InputError(f"dataset folder does not exist{hint}", path)
    check_fetched(path, name)
    return path


def check_fetched(path: Path, name: str) -> None:
    """Refuse a fetched set (a folder with a stamp beside it, :mod:`.verify`) one of whose files is no longer what
    the manifest says: sizes and modification times against the stamp, sha256 of the files that differ."""
    from .verify import failed_stamped

    bad = failed_stamped(path)
    if bad:
        f, why = bad[0]
        more = f" (and {len(bad) - 1} more files)" if len(bad) > 1 else ""
        raise InputError(f"changed since `styleval data fetch` checked it: {why}{more}; run `styleval data fetch "
                         f"{name} --dir {path.parent}` to download the files that changed again", path / f.path)


def number(value: Any, what: str, path: StrPath, line: int | None) -> float:
    """A stored score as a float: NaN for an empty cell or ``null``, :class:`InputError` for anything else that is
    not a number (booleans included)."""
    if isinstance(value, bool):
        raise InputError(f"{what} must be a number, got {value!r}", path, line)
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}", path, line) from None
