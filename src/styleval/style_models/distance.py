"""Earth Mover's Distance between style distributions, with Mir et al.'s (2019, §4.2) direction correction.

``ground="unit"`` (Mir et al.'s choice: moving mass between any two different classes costs 1) makes EMD the
total variation distance, ``0.5 * sum |p - q|`` (for two classes ``|p1 - q1|``). ``"ordinal"`` treats the
classes as ordered with cost ``|i - j|`` (EMD = sum of absolute differences of the cumulative
distributions). Any other ground distance is a square matrix, solved as a transport problem.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError

GROUNDS = ("unit", "ordinal")


def parse_ground(ground: str | Sequence[Sequence[float]] | np.ndarray, k: int) -> str | np.ndarray:
    """``"unit"``, ``"ordinal"``, a (k, k) matrix, or a matrix written ``"0 1 2; 1 0 1; 2 1 0"``."""
    if isinstance(ground, str):
        if ground in GROUNDS:
            return ground
        try:
            ground = [[float(v) for v in row.replace(",", " ").split()] for row in ground.split(";")]
        except ValueError:
            raise InputError(f"ground distance must be {' or '.join(GROUNDS)} or a matrix like '0 1; 1 0', "
                             f"got {ground!r}") from None
    m = np.asarray(ground, dtype=float)
    if m.shape != (k, k):
        raise InputError(f"ground distance matrix of shape {m.shape} for {k} classes")
    if np.any(m < 0) or np.any(np.abs(np.diag(m)) > 0):
        raise InputError("ground distances must be non-negative with a zero diagonal")
    return m


def emd(p: np.ndarray, q: np.ndarray, ground: str | np.ndarray = "unit") -> np.ndarray:
    """EMD between rows of ``p`` and ``q`` (shape (n, k) or (k,)); each row is normalised to sum 1."""
    p = np.atleast_2d(np.asarray(p, dtype=float))
    q = np.atleast_2d(np.asarray(q, dtype=float))
    if p.shape != q.shape:
        raise InputError(f"style distributions of different shapes {p.shape} and {q.shape}")
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    g = parse_ground(ground, p.shape[1]) if isinstance(ground, str) else ground
    if isinstance(g, str) and g == "unit":
        return 0.5 * np.abs(p - q).sum(axis=1)
    if isinstance(g, str) and g == "ordinal":
        return np.abs(np.cumsum(p - q, axis=1)).sum(axis=1)
    return np.array([_transport(a, b, np.asarray(g, dtype=float)) for a, b in zip(p, q)])


def _transport(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> float:
    from scipy.optimize import linprog

    k = len(a)
    rows = np.zeros((2 * k, k * k))
    for i in range(k):
        rows[i, i * k:(i + 1) * k] = 1.0  # mass leaving class i of a
        rows[k + i, i::k] = 1.0  # mass arriving at class i of b
    res = linprog(cost.ravel(), A_eq=rows[:-1], b_eq=np.concatenate([a, b])[:-1], bounds=(0, None), method="highs")
    if not res.success:  # pragma: no cover - a feasible transport always exists
        raise RuntimeError(f"transport problem failed: {res.message}")
    return float(res.fun)


def direction_corrected_emd(source: np.ndarray, output: np.ndarray, target: Sequence[int] | np.ndarray,
                            ground: str | np.ndarray = "unit") -> np.ndarray:
    """EMD between source and output distributions, negated where the output gives the target class (index per
    row) less probability than the source did (Mir et al.: ties count as the right direction)."""
    source = np.atleast_2d(np.asarray(source, dtype=float))
    output = np.atleast_2d(np.asarray(output, dtype=float))
    t = np.asarray(target, dtype=int)
    rows = np.arange(len(t))
    sign = np.where(output[rows, t] >= source[rows, t], 1.0, -1.0)
    return emd(source, output, ground) * sign
