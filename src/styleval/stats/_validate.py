"""Shared input checks for :mod:`styleval.stats` (private).

Every public function in the statistics layer funnels its inputs through these helpers so that bad data fails the
same way everywhere: with :class:`styleval.errors.InputError` and a message that says what was wrong and where.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from styleval.errors import InputError
from styleval.errors import check_choice as check_choice  # re-exported for the statistics modules

NAN_POLICIES = ("raise", "omit")
_MAX_POSITIONS = 10


def as_float_array(values: Any, name: str, *, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Convert to a float ndarray (no copy when already float) and check its number of dimensions."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise InputError(f"{name} must be {want}; got an array of shape {arr.shape}")
    return arr


def describe_positions(mask: np.ndarray) -> str:
    """'3 NaN values (at positions [1, 4, 9])' style description of where ``mask`` is true."""
    where = np.argwhere(mask)
    count = len(where)
    shown: list[int] | list[tuple[int, ...]]
    if mask.ndim == 1:
        shown = [int(w[0]) for w in where[:_MAX_POSITIONS]]
    else:
        shown = [tuple(int(v) for v in w) for w in where[:_MAX_POSITIONS]]
    more = f", ... {count - _MAX_POSITIONS} more" if count > _MAX_POSITIONS else ""
    listed = ", ".join(str(s) for s in shown)
    return f"{count} NaN value{'s' if count != 1 else ''} (at position{'s' if count != 1 else ''} [{listed}{more}])"


def check_finite_or_nan(arr: np.ndarray, name: str) -> None:
    """Infinite values are always an error (NaN is handled by the nan_policy)."""
    inf = np.isinf(arr)
    if inf.any():
        first = tuple(int(v) for v in np.argwhere(inf)[0])
        raise InputError(f"{name} contains {int(inf.sum())} infinite value(s), first at position {first}")


def paired(x: Any, y: Any, *, nan_policy: str = "raise", names: tuple[str, str] = ("x", "y"),
           ndim: int | tuple[int, ...] = 1) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate two equally shaped arrays; apply the NaN policy.

    Returns ``(x, y, n_omitted)``. With ``nan_policy="omit"`` and 1-D input, positions where either array is NaN are
    dropped; with 2-D input the arrays are returned unchanged (callers drop NaN cells group by group) and
    ``n_omitted`` counts the cells where either is NaN.
    """
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    xa = as_float_array(x, names[0], ndim=ndim)
    ya = as_float_array(y, names[1], ndim=ndim)
    if xa.shape != ya.shape:
        if xa.ndim == 1 and ya.ndim == 1:
            raise InputError(f"length mismatch: {names[0]} has {len(xa)} values, {names[1]} has {len(ya)}")
        raise InputError(f"shape mismatch: {names[0]} has shape {xa.shape}, {names[1]} has shape {ya.shape}")
    check_finite_or_nan(xa, names[0])
    check_finite_or_nan(ya, names[1])
    nx, ny = np.isnan(xa), np.isnan(ya)
    either = nx | ny
    if not either.any():
        return xa, ya, 0
    if nan_policy == "raise":
        parts = []
        if nx.any():
            parts.append(f"{names[0]} has {describe_positions(nx)}")
        if ny.any():
            parts.append(f"{names[1]} has {describe_positions(ny)}")
        raise InputError("; ".join(parts) + "; pass nan_policy='omit' to drop those positions")
    n_omitted = int(either.sum())
    if xa.ndim == 1:
        keep = ~either
        return xa[keep], ya[keep], n_omitted
    return xa, ya, n_omitted
