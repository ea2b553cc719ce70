"""Figures for the evaluation report, drawn with matplotlib's object API (no global backend) and returned as PNG
bytes; every function reads the JSON form of an evaluation (``Evaluation.to_dict()``)."""
from __future__ import annotations

import base64
import io
import math
from typing import Any, Mapping

import numpy as np

from ..errors import InputError


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _corpus(data: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(c["metric"], c["system"]): c for c in data["score"]["corpus"]}


def tradeoff_plot(data: Mapping[str, Any], style: str | None = None, content: str | None = None) -> bytes:
    """Style (x) against content (y) per system, with the bootstrap intervals as error bars."""
    style = style or data["roles"]["style"]
    content = content or data["roles"]["content"]
    corpus = _corpus(data)
    systems = list(data["score"]["settings"]["systems"])
    fig = _figure(5.5, 4.2)
    ax = fig.add_subplot(1, 1, 1)
    for system in systems:
        s, c = corpus.get((style, system)), corpus.get((content, system))
        if s is None or c is None:
            raise InputError(f"trade-off plot: no {style!r} or {content!r} score for system {system!r}")
        x, y = s["score"], c["score"]
        if x is None or y is None:
            continue
        xerr = None if not s.get("ci") else [[x - s["ci"][0]], [s["ci"][1] - x]]
        yerr = None if not c.get("ci") else [[y - c["ci"][0]], [c["ci"][1] - y]]
        ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="o", capsize=3, label=system)
        ax.annotate(system, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=9)
    ax.set_xlabel(f"{style} (style, higher is better)")
    ax.set_ylabel(f"{content} (content, higher is better)")
    ax.set_title("style–content trade-off")
    ax.grid(True, alpha=0.3)
    return _png(fig)


def distribution_plot(data: Mapping[str, Any], metrics: list[str]) -> bytes:
    """Segment-score distributions: one panel per metric, one box per system."""
    if not metrics:
        raise InputError("distribution plot: no metric given")
    systems = list(data["score"]["settings"]["systems"])
    segs = {(s["metric"], s["system"]): s["scores"] for s in data["score"]["segments"]}
    n = len(metrics)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig = _figure(4.0 * cols, 3.0 * rows)
    for i, metric in enumerate(metrics):
        ax = fig.add_subplot(rows, cols, i + 1)
        values = []
        for system in systems:
            scores = segs.get((metric, system), {})
            arr = np.array([v for v in scores.values() if v is not None], dtype=float)
            values.append(arr[np.isfinite(arr)])
        ax.boxplot(values, showmeans=True)
        ax.set_xticks(range(1, len(systems) + 1))
        ax.set_xticklabels(systems, rotation=30, ha="right", fontsize=8)
        ax.set_title(metric, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return _png(fig)


def correlation_heatmap(table: "Mapping[str, Mapping[str, float]]", title: str = "correlation") -> bytes:
    """A heatmap of ``table[row][column]`` (e.g. metric × human aspect correlations)."""
    rows = list(table)
    cols = list(dict.fromkeys(c for r in rows for c in table[r]))
    if not rows or not cols:
        raise InputError("correlation heatmap: empty table")
    mat = np.array([[table[r].get(c, np.nan) for c in cols] for r in rows], dtype=float)
    fig = _figure(1.2 + 1.1 * len(cols), 0.8 + 0.45 * len(rows))
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(mat, vmin=-1, vmax=1, cmap="RdBu_r", aspect="auto")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if np.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax)
    ax.set_title(title)
    return _png(fig)


def top_n_curves_plot(curves: "Mapping[str, Mapping[str, Mapping[str, Any]]]", *, ylabel: str = "Pearson r"
                      ) -> bytes:
    """Top-N / last-N correlation curves: one panel per human aspect, one colour per metric; solid lines are the
    N best systems by human score, dashed lines the N worst. ``curves[aspect][metric] = {"top": [(N, r)...],
    "last": [(N, r)...]}`` (``MetaResult.curves`` per aspect)."""
    aspects = [a for a in curves if curves[a]]
    if not aspects:
        raise InputError("top-N curves: no curve to draw")
    cols = min(2, len(aspects))
    rows = math.ceil(len(aspects) / cols)
    fig = _figure(5.5 * cols, 3.8 * rows)
    for i, aspect in enumerate(aspects):
        ax = fig.add_subplot(rows, cols, i + 1)
        for k, (metric, curve) in enumerate(curves[aspect].items()):
            colour = f"C{k % 10}"
            for kind, style in (("top", "-"), ("last", "--")):
                points = list(curve.get(kind) or [])
                if not points:
                    continue
                xs = [n for n, _ in points]
                ys = [np.nan if r is None else r for _, r in points]
                ax.plot(xs, ys, style, marker="o", color=colour,
                        label=f"{metric} ({'top' if kind == 'top' else 'last'}-N)")
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("N systems (sorted by human score)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(-1.05, 1.05)
        ax.set_title(f"human {aspect}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return _png(fig)
