"""Inter-annotator agreement statistics.

Pure functions on numpy arrays; bad input raises :class:`styleval.errors.InputError`. Each returns a float; when
the statistic is undefined (e.g. every rating identical, so expected disagreement is 0) it returns NaN rather than
raising, so that agreement over many subsets can be tabulated without special-casing.

Orientation differs between statistics, following the reference implementations:

* :func:`pairwise_pearson`: ``ratings`` is ``(n_items, n_annotators)``.
* :func:`krippendorff_alpha`: ``reliability_data`` is ``(n_annotators, n_items)`` (as the ``krippendorff`` package).
* :func:`fleiss_kappa`: ``(n_items, n_categories)`` counts (as statsmodels) or ``(n_items, n_raters)`` labels.
"""
from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
from scipy import sparse
from scipy import stats as _st

from styleval.errors import InputError

from ._validate import as_float_array, check_choice, describe_positions

__all__ = ["pairwise_pearson", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"]


def pairwise_pearson(ratings: Any, *, method: str = "pearson", nan_policy: str = "omit") -> float:
    """Mean over annotator pairs of the correlation between their ratings.

    ``ratings``: ``(n_items, n_annotators)``, NaN for a missing rating. With ``nan_policy="omit"`` (default)
    each pair uses the items both annotators rated (pairwise complete); ``"raise"`` rejects NaN. ``method`` is
    ``"pearson"`` or ``"spearman"``. Pairs whose correlation is undefined (fewer than 2 common items, or one
    annotator constant on them) are left out of the mean; NaN if no pair is defined.
    """
    check_choice("method", method, ("pearson", "spearman"))
    check_choice("nan_policy", nan_policy, ("raise", "omit"))
    r = as_float_array(ratings, "ratings", ndim=2)
    if r.shape[1] < 2:
        raise InputError(f"pairwise_pearson needs at least 2 annotators (columns); got shape {r.shape}")
    if np.isinf(r).any():
        raise InputError("ratings contain infinite values")
    nan = np.isnan(r)
    if nan_policy == "raise" and nan.any():
        raise InputError(f"ratings has {describe_positions(nan)}; pass nan_policy='omit' for pairwise-complete")
    fn = _st.pearsonr if method == "pearson" else _st.spearmanr
    vals = []
    for i, j in itertools.combinations(range(r.shape[1]), 2):
        ok = ~(nan[:, i] | nan[:, j])
        x, y = r[ok, i], r[ok, j]
        if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            vals.append(float(fn(x, y)[0]))
    return float(np.mean(vals)) if vals else float("nan")


def _labels_1d(values: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (array, missing mask) for label vectors that may be numeric (NaN missing) or objects (None missing)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.dtype.kind in "fc":
        missing = np.isnan(arr)
    elif arr.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in arr], dtype=bool)
    else:
        missing = np.zeros(len(arr), dtype=bool)
    return arr, missing


def cohen_kappa(a: Any, b: Any, *, weights: str | None = None, labels: Any = None,
                nan_policy: str = "raise") -> float:
    """Cohen's kappa between two annotators' labels, optionally weighted (as ``sklearn.metrics.cohen_kappa_score``).

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``O`` the confusion matrix and ``E`` the product of its marginals.
    ``weights``: None (``w = 1`` off the diagonal), ``"linear"`` (``|i - j|``) or ``"quadratic"`` (``(i - j)^2``),
    where ``i, j`` are *positions* in the sorted label set (or in ``labels`` if given), not the label values --
    sklearn's convention; pass ``labels`` to include unused categories or fix the order. Missing labels (NaN or
    None) raise unless ``nan_policy="omit"`` (drops pairs with a missing label). NaN when undefined
    (``sum(w * E) == 0``, e.g. both annotators always give the same single label).
    """
    check_choice("weights", weights, (None, "linear", "quadratic"))  # type: ignore[arg-type]
    check_choice("nan_policy", nan_policy, ("raise", "omit"))
    xa, xm = _labels_1d(a, "a")
    ya, ym = _labels_1d(b, "b")
    if len(xa) != len(ya):
        raise InputError(f"length mismatch: a has {len(xa)} labels, b has {len(ya)}")
    miss = xm | ym
    if miss.any():
        if nan_policy == "raise":
            raise InputError(f"{int(miss.sum())} missing label(s) (first at position {int(np.argmax(miss))}); "
                             f"pass nan_policy='omit' to drop them")
        xa, ya = xa[~miss], ya[~miss]
    if len(xa) == 0:
        raise InputError("cohen_kappa needs at least one labelled item")
    if labels is None:
        try:
            cats = np.unique(np.concatenate([xa, ya]))
        except TypeError as exc:
            raise InputError(f"labels of mixed, unorderable types: {exc}") from None
    else:
        cats = np.asarray(labels)
        if len(set(cats.tolist())) != len(cats):
            raise InputError("labels contains duplicates")
    index = {v: i for i, v in enumerate(cats.tolist())}
    try:
        xi = np.array([index[v] for v in xa.tolist()])
        yi = np.array([index[v] for v in ya.tolist()])
    except KeyError as exc:
        raise InputError(f"label {exc.args[0]!r} is not in labels {cats.tolist()!r}") from None
    k = len(cats)
    conf = np.zeros((k, k))
    np.add.at(conf, (xi, yi), 1)
    expected = np.outer(conf.sum(axis=1), conf.sum(axis=0)) / conf.sum()
    grid = np.arange(k)
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights == "linear":
        w = np.abs(grid[:, None] - grid[None, :]).astype(float)
    else:
        w = (grid[:, None] - grid[None, :]).astype(float) ** 2
    den = float((w * expected).sum())
    if den == 0:
        return float("nan")
    return float(1.0 - (w * conf).sum() / den)


def fleiss_kappa(data: Any, *, input: str = "counts", method: str = "fleiss") -> float:
    """Fleiss' kappa (``method="fleiss"``) or Randolph's free-marginal kappa (``"randolph"``), as statsmodels.

    ``input="counts"``: ``data[i, c]`` = number of raters who put item i in category c; every row must have the
    same total (the number of raters). ``input="ratings"``: ``data[i, r]`` = category given by rater r to item i
    (any hashable labels, no missing values); converted to counts first. NaN when undefined (expected agreement 1).
    """
    check_choice("input", input, ("counts", "ratings"))
    check_choice("method", method, ("fleiss", "randolph"))
    if input == "ratings":
        arr = np.asarray(data)
        if arr.ndim != 2:
            raise InputError(f"ratings must be 2-D (n_items, n_raters); got shape {arr.shape}")
        if arr.dtype.kind in "fc" and np.isnan(arr).any():
            raise InputError(f"ratings has {describe_positions(np.isnan(arr))}; Fleiss' kappa needs every rater to "
                             f"rate every item (use krippendorff_alpha for missing ratings)")
        cats, inv = np.unique(arr.ravel(), return_inverse=True)
        inv = inv.reshape(arr.shape)
        table = np.zeros((arr.shape[0], len(cats)))
        np.add.at(table, (np.repeat(np.arange(arr.shape[0]), arr.shape[1]), inv.ravel()), 1)
    else:
        table = as_float_array(data, "counts", ndim=2)
        if np.isnan(table).any() or (table < 0).any():
            raise InputError("counts must be non-negative numbers without NaN")
    n_items, n_cat = table.shape
    if n_items == 0 or n_cat == 0:
        raise InputError(f"empty table of shape {table.shape}")
    per_item = table.sum(axis=1)
    n_rat = per_item[0]
    if not np.all(per_item == n_rat):
        bad = int(np.argmax(per_item != n_rat))
        raise InputError(f"every item needs the same number of ratings; item 0 has {n_rat:g}, item {bad} has "
                         f"{per_item[bad]:g}")
    if n_rat < 2:
        raise InputError(f"Fleiss' kappa needs at least 2 ratings per item; got {n_rat:g}")
    p_cat = table.sum(axis=0) / table.sum()
    p_item = ((table * table).sum(axis=1) - n_rat) / (n_rat * (n_rat - 1.0))
    p_mean = p_item.mean()
    p_exp = float((p_cat * p_cat).sum()) if method == "fleiss" else 1.0 / n_cat
    if p_exp == 1.0:
        return float("nan")
    return float((p_mean - p_exp) / (1.0 - p_exp))


_BLOCK = 2_000_000


def krippendorff_alpha(reliability_data: Any, *, level: str = "interval") -> float:
    """Krippendorff's alpha for ``(n_annotators, n_items)`` data with NaN for missing ratings.

    ``alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck`` with the coincidence
    matrix ``o_ck = sum_u (#c-k pairs in unit u) / (m_u - 1)`` over units with ``m_u >= 2`` ratings, ``n_c`` its
    marginals and ``n = sum n_c``. ``level`` picks the distance ``d2``: ``"nominal"`` (``c != k``), ``"ordinal"``
    (``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2`` over the sorted observed values), ``"interval"`` (``(c - k)^2``) or
    ``"ratio"`` (``((c - k)/(c + k))^2``, 0 when ``c + k = 0``). Matches the ``krippendorff`` package (default
    ``level="interval"`` as there). Units with fewer than 2 ratings are ignored. NaN when undefined (fewer than 2
    pairable values, or expected disagreement 0 because only one value occurs).
    """
    check_choice("level", level, ("nominal", "ordinal", "interval", "ratio"))
    data = as_float_array(reliability_data, "reliability_data", ndim=2)
    if np.isinf(data).any():
        raise InputError("reliability_data contains infinite values")
    if level == "ratio" and (data[~np.isnan(data)] < 0).any():
        raise InputError("level='ratio' needs non-negative values")
    ok = ~np.isnan(data)
    m_u = ok.sum(axis=0)
    pairable = m_u >= 2
    data, ok, m_u = data[:, pairable], ok[:, pairable], m_u[pairable]
    if data.shape[1] == 0:
        return float("nan")
    if level == "interval":
        # closed form, O(number of ratings): sum over ordered pairs i != j of (x_i - x_j)^2 = 2 m sum x^2 - 2 (sum x)^2
        x = np.where(ok, data, 0.0)
        s1, s2 = x.sum(axis=0), (x * x).sum(axis=0)
        d_o = float(np.sum((2 * m_u * s2 - 2 * s1 * s1) / (m_u - 1)))
        n = float(m_u.sum())
        t1, t2 = float(s1.sum()), float(s2.sum())
        d_e = 2 * n * t2 - 2 * t1 * t1
        if d_e <= 0:
            return float("nan")
        return float(1.0 - (n - 1) * d_o / d_e)
    values, inv = np.unique(data[ok], return_inverse=True)
    n_values = len(values)
    unit_of = np.broadcast_to(np.arange(data.shape[1])[None, :], data.shape)[ok]
    counts = sparse.csr_matrix((np.ones(len(inv)), (unit_of, inv)), shape=(data.shape[1], n_values))
    n_v = np.asarray(counts.sum(axis=0)).ravel()
    n = float(n_v.sum())
    if n_values < 2:
        return float("nan")
    if level == "nominal":
        sq = np.asarray(counts.multiply(counts).sum(axis=1)).ravel()
        d_o = float(np.sum((m_u.astype(float) ** 2 - sq) / (m_u - 1)))
        d_e = n * n - float((n_v * n_v).sum())
        return float(1.0 - (n - 1) * d_o / d_e) if d_e > 0 else float("nan")
    scaled = sparse.diags(1.0 / (m_u - 1.0)) @ counts  # rows of units weighted by 1/(m_u - 1)
    cum = np.concatenate([[0.0], np.cumsum(n_v)])
    d_o = d_e = 0.0
    block = max(1, _BLOCK // n_values)
    all_idx = np.arange(n_values)
    for start in range(0, n_values, block):
        rows = all_idx[start:start + block]
        w = np.asarray((counts[:, rows].T @ scaled).todense())  # (block, V): sum_u N_uc N_uk / (m_u - 1)
        if level == "ordinal":
            lo = np.minimum(rows[:, None], all_idx[None, :])
            hi = np.maximum(rows[:, None], all_idx[None, :])
            d2 = (cum[hi + 1] - cum[lo] - (n_v[rows][:, None] + n_v[None, :]) / 2.0) ** 2
        else:  # ratio
            c, k = values[rows][:, None], values[None, :]
            tot = c + k
            d2 = np.divide(c - k, tot, out=np.zeros(np.broadcast(c, k).shape), where=tot != 0) ** 2
        d2[np.arange(len(rows)), rows] = 0.0  # a value's distance to itself (the o_cc diagonal carries no weight)
        d_o += float((w * d2).sum())
        d_e += float((n_v[rows][:, None] * n_v[None, :] * d2).sum())
    if d_e <= 0:
        return float("nan")
    return float(1.0 - (n - 1) * d_o / d_e)
