"""Figures for the evaluation report, drawn with matplotlib's object API (no global backend) and returned as PNG
bytes (the ``*_figure`` functions return the matplotlib Figure itself); every function reads the JSON form of an
evaluation (``Evaluation.to_dict()``).

Trade-off plots follow Mir et al. 2019, Fig. 2: systems named ``model@setting`` (e.g. ``caae@0.1``,
``caae@0.5``) are drawn as one line per model through its settings, in setting order.
"""
from __future__ import annotations

import base64
import io
import math
import re
from typing import Any, Callable, Mapping

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


#: a clickable mark of a figure: the axes, the point in data coordinates, and what a click on it opens (with
#: ``extent``: ``(x0, y0, x1, y1)`` in data coordinates, a region such as a bar, clickable anywhere inside)
Mark = tuple[Any, float, float, "dict[str, Any]"]


def png_and_points(fig, marks: "list[Mark]") -> "tuple[bytes, list[dict[str, Any]]]":
    """The figure as PNG (cropped as ``bbox_inches="tight"`` crops it) and each mark's position in that PNG's
    pixels (``x`` from the left, ``y`` from the top), with the mark's facts: what the report's explorer needs to
    open the segments behind a clicked point."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.get_tightbbox(renderer).padded(0.1)  # inches, as savefig's default pad_inches
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches=box)
    dpi = fig.dpi
    points = []

    def pixels(ax: Any, x: float, y: float) -> tuple[float, float]:
        px, py = ax.transData.transform((x, y))
        return round(float(px - box.x0 * dpi), 1), round(float(box.y1 * dpi - py), 1)

    for ax, x, y, facts in marks:
        px, py = pixels(ax, x, y)
        if not (np.isfinite(px) and np.isfinite(py)):
            continue
        point = {"x": px, "y": py, **{k: v for k, v in facts.items() if k != "extent"}}
        if "extent" in facts:  # a region (a bar) in data coordinates: its pixel box, left, top, right, bottom
            x0, y0, x1, y1 = facts["extent"]
            (left, bottom), (right, top) = pixels(ax, x0, y0), pixels(ax, x1, y1)
            point["box"] = [min(left, right), min(top, bottom), max(left, right), max(top, bottom)]
        points.append(point)
    return buf.getvalue(), points


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _corpus(data: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(c["metric"], c["system"]): c for c in data["score"]["corpus"]}


# ------------------------------------------------------------------------------------- trade-off plots
#: Separator of a system name's model and setting: ``caae@0.5`` is model ``caae`` at setting ``0.5``.
SETTING_SEPARATOR = "@"


def split_setting(system: str) -> tuple[str, str | None]:
    """``"model@setting"`` -> ``("model", "setting")``; a name without ``@`` (or with an empty part) is a model
    with no setting. The last ``@`` separates, so a model name may itself contain ``@``."""
    model, sep, setting = system.rpartition(SETTING_SEPARATOR)
    if not sep or not model or not setting:
        return system, None
    return model, setting


def _setting_key(settings: list[str]) -> Callable[[str], Any]:
    """Numeric order when every setting of a model is a number, else natural order (``s2`` before ``s10``)."""
    try:
        [float(s) for s in settings]
        return float
    except ValueError:
        return lambda s: [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", s) if p]


def model_curves(systems: list[str]) -> dict[str, list[tuple[str | None, str]]]:
    """Systems grouped by model, in first-seen model order: ``model -> [(setting, system), ...]`` sorted by
    setting (see :func:`split_setting`; a system without a setting is its own model)."""
    groups: dict[str, list[tuple[str | None, str]]] = {}
    for system in systems:
        model, setting = split_setting(system)
        groups.setdefault(model, []).append((setting, system))
    out = {}
    for model, members in groups.items():
        settings = [s for s, _ in members if s is not None]
        if len(settings) == len(members):
            key = _setting_key(settings)
            members = sorted(members, key=lambda m: key(m[0] or ""))
        out[model] = members
    return out


Point = tuple[float, "list[float] | None"]  # (score, [low, high] or None)


def _tradeoff_figure(points_x: Mapping[str, Point], points_y: Mapping[str, Point], systems: list[str], *,
                     xlabel: str, ylabel: str, title: str, ylim: tuple[float, float] | None = None,
                     marks: "list[Mark] | None" = None, metric: str | None = None, anchor: str | None = None):
    """Each system a point with its intervals as error bars; a model with several settings is one line through
    its settings in setting order (``gid="curve:<model>"``), each point labelled with its setting. The ``anchor``
    row of the human references is a black star labelled as the anchor."""
    fig = _figure(5.8, 4.4)
    ax = fig.add_subplot(1, 1, 1)
    for k, (model, members) in enumerate(model_curves(systems).items()):
        colour = f"C{k % 10}"
        xs, ys, labels = [], [], []
        for setting, system in members:
            if system not in points_x or system not in points_y:
                continue
            (x, xci), (y, yci) = points_x[system], points_y[system]
            if x is None or y is None:
                continue
            xerr = None if not xci else [[x - xci[0]], [xci[1] - x]]
            yerr = None if not yci else [[y - yci[0]], [yci[1] - y]]
            is_anchor = system == anchor
            ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="*" if is_anchor else "o", capsize=3,
                        color="k" if is_anchor else colour, alpha=0.9, gid=f"point:{system}",
                        label=(f"{model} (anchor)" if is_anchor else model) if len(members) == 1 else "_nolegend_")
            xs.append(x)
            ys.append(y)
            labels.append(f"{system} (anchor)" if is_anchor else
                          system if setting is None or len(members) == 1 else setting)
            if marks is not None:
                marks.append((ax, x, y, {"label": f"{system}: every segment", "system": system, "metric": metric}))
        if not xs:
            continue
        if len(xs) > 1:
            ax.plot(xs, ys, "-", color=colour, label=model, gid=f"curve:{model}")
        for x, y, label in zip(xs, ys, labels):
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(True, alpha=0.3)
    if len(ax.get_legend_handles_labels()[0]) > 1:
        ax.legend(fontsize=7)
    return fig


def _metric_points(data: Mapping[str, Any], metric: str) -> dict[str, Point]:
    return {system: (c["score"], c.get("ci")) for (m, system), c in _corpus(data).items() if m == metric}


def tradeoff_figure(data: Mapping[str, Any], style: str | None = None, content: str | None = None,
                    marks: "list[Mark] | None" = None):
    """The style–content trade-off as a matplotlib Figure: style (x) against content (y), one point per system
    with its bootstrap intervals, one line per model through its settings (``model@setting`` systems). ``marks``,
    when given, receives each system's point (a click on it opens that system's segments)."""
    style = style or data["roles"]["style"]
    content = content or data["roles"]["content"]
    systems = list(data["score"]["settings"]["systems"])
    xs, ys = _metric_points(data, style), _metric_points(data, content)
    for system in systems:
        if system not in xs or system not in ys:
            raise InputError(f"trade-off plot: no {style!r} or {content!r} score for system {system!r}")
    return _tradeoff_figure(xs, ys, systems, xlabel=f"{style} (style, higher is better)",
                            ylabel=f"{content} (content, higher is better)", title="style–content trade-off",
                            marks=marks, metric=style, anchor=data.get("settings", {}).get("anchor"))


def tradeoff_plot(data: Mapping[str, Any], style: str | None = None, content: str | None = None) -> bytes:
    """:func:`tradeoff_figure` as PNG bytes."""
    return _png(tradeoff_figure(data, style, content))


def naturalness_points(data: Mapping[str, Any]) -> tuple[str, dict[str, Point]] | None:
    """The naturalness metric and its score per system: the first scored metric whose identity is the registered
    ``naturalness`` metric (Mir et al.'s adversarial naturalness, ``evaluate --naturalness``), whatever its label;
    None when there is none."""
    for c in data["score"]["corpus"]:
        ident = c.get("metric_id") or {"name": c["metric"]}  # files written before metric ids: the plain name
        if ident.get("name") == "naturalness":
            return c["metric"], _metric_points(data, c["metric"])
    return None


def intensity_metric(data: Mapping[str, Any]) -> str | None:
    """The style-intensity axis: the direction-corrected EMD when computed (Mir et al. 2019), else the style role
    (None when a score run has no style metric)."""
    metrics = {c["metric"] for c in data["score"]["corpus"]}
    return "style_emd" if "style_emd" in metrics else data["roles"].get("style")


def naturalness_figure(data: Mapping[str, Any], style: str | None = None):
    """Naturalness (y) against style intensity (x), Mir et al. 2019 Fig. 2: one point per system, one line per
    model through its settings. :class:`InputError` when the evaluation has no naturalness scores."""
    found = naturalness_points(data)
    if found is None:
        raise InputError("naturalness plot: the evaluation has no naturalness scores (run `styleval evaluate "
                         "--naturalness`)")
    label, ys = found
    style = style or intensity_metric(data)
    if style is None:
        raise InputError("naturalness plot: the scores have no style metric for the style-intensity axis")
    systems = list(data["score"]["settings"]["systems"])
    xs = _metric_points(data, style)
    share = label == "naturalness"  # the adversarial naturalness is a share in [0, 1]
    return _tradeoff_figure(xs, ys, systems, xlabel=f"{style} (style intensity, higher is better)",
                            ylabel=f"{label} (higher is better)", title="naturalness–style intensity trade-off",
                            ylim=(-0.03, 1.03) if share else None, anchor=data.get("settings", {}).get("anchor"))


def naturalness_plot(data: Mapping[str, Any], style: str | None = None) -> bytes:
    """:func:`naturalness_figure` as PNG bytes."""
    return _png(naturalness_figure(data, style))


#: the report's figures are drawn at most this wide (inches at 100 dpi): the page's column is 1100 px less its
#: padding, so the segment-plot grid fits a 1300 px window without scrolling
MAX_FIGURE_WIDTH = 10.4
#: a metric whose positive segment scores span this factor or more may be drawn on a log scale (perplexity)
LOG_SCALE_RATIO = 100.0


def is_binary(values: "list[np.ndarray]") -> bool:
    """Whether every segment score is 0 or 1 (style accuracy, naturalness): drawn as bars of the mean."""
    pooled = np.concatenate(values) if values else np.array([])
    return pooled.size > 0 and bool(np.isin(pooled, (0.0, 1.0)).all())


def _middle_share(values: np.ndarray) -> float:
    """The share of the axis from the lowest to the highest value that the middle half of the values takes."""
    q1, q3 = np.percentile(values, [25, 75])
    span = values.max() - values.min()
    return float((q3 - q1) / span) if span > 0 else 1.0


def needs_log_scale(values: "list[np.ndarray]") -> bool:
    """Whether the pooled scores are all positive, span :data:`LOG_SCALE_RATIO` or more, and their middle half
    takes more of a log axis than of a linear one: a few large perplexities flatten every box on a linear axis,
    while scores spread evenly from near 0 to 100 (sentence BLEU) stay linear."""
    pooled = np.concatenate(values) if values else np.array([])
    if pooled.size < 2 or not (pooled > 0).all() or pooled.max() / pooled.min() < LOG_SCALE_RATIO:
        return False
    return _middle_share(np.log(pooled)) > _middle_share(pooled)


#: half the width of a bar of :func:`_mean_bars` (matplotlib's default bar width is 0.8)
BAR_HALF_WIDTH = 0.4


def _bar_marks(ax, metric: str, systems: list[str], owners: "list[list[tuple[str, float]]]",
               means: list[float]) -> "list[Mark]":
    """Two clickable regions per bar of a 0/1 metric: the bar itself (its segments scored 1) and the space above it
    up to 1 (its segments scored 0); a region without segments is left out."""
    marks: list[Mark] = []
    for k, (system, kept, mean) in enumerate(zip(systems, owners, means)):
        if not kept:
            continue
        for value, low, high in ((1, 0.0, mean), (0, mean, 1.0)):
            n = sum(1 for _, v in kept if v == value)
            if not n:
                continue
            x = k + 1
            marks.append((ax, x, (low + high) / 2, {
                "label": f"{metric} = {value} ({system}, {n} segment{'s' if n != 1 else ''})", "system": system,
                "metric": metric, "equals": value,
                "extent": (x - BAR_HALF_WIDTH, low, x + BAR_HALF_WIDTH, high)}))
    return marks


def _mean_bars(ax, values: "list[np.ndarray]", corpus: "list[Mapping[str, Any] | None]") -> list[float]:
    """One bar per system at its mean score, with the corpus score's interval when the corpus score is that mean;
    returns the means."""
    means = [float(v.mean()) if v.size else np.nan for v in values]
    low, high = [], []
    for mean, entry in zip(means, corpus):
        ci = entry.get("ci") if entry else None
        same = entry is not None and entry.get("score") is not None and abs(entry["score"] - mean) < 1e-9
        low.append(mean - ci[0] if ci and same else 0.0)
        high.append(ci[1] - mean if ci and same else 0.0)
    ax.bar(range(1, len(values) + 1), means, yerr=[low, high], capsize=4, color="C0", alpha=0.7)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean (share of 1s)", fontsize=8)
    return means


def distribution_figure(data: Mapping[str, Any], metrics: list[str], marks: "list[Mark] | None" = None):
    """Segment-score distributions as a matplotlib Figure: one panel per metric, three a row within
    :data:`MAX_FIGURE_WIDTH`. A box per system; a metric scored 0 or 1 per segment (:func:`is_binary`) gets bars
    of the mean with the interval instead, and one whose scores span orders of magnitude (:func:`needs_log_scale`)
    a log axis. ``marks``, when given, receives every box plot outlier (one mark per system and value, with the
    segments that have it) and every bar's two regions (:func:`_bar_marks`: its segments scored 1, and 0)."""
    if not metrics:
        raise InputError("distribution plot: no metric given")
    systems = list(data["score"]["settings"]["systems"])
    segs = {(s["metric"], s["system"]): s["scores"] for s in data["score"]["segments"]}
    corpus = _corpus(data)
    anchor = data.get("settings", {}).get("anchor")
    n = len(metrics)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig = _figure(MAX_FIGURE_WIDTH / 3 * cols, 3.0 * rows)
    for i, metric in enumerate(metrics):
        ax = fig.add_subplot(rows, cols, i + 1)
        values, owners = [], []
        for system in systems:
            scores = segs.get((metric, system), {})
            kept = [(i, float(v)) for i, v in scores.items() if v is not None and np.isfinite(v)]
            values.append(np.array([v for _, v in kept], dtype=float))
            owners.append(kept)
        if is_binary(values):
            means = _mean_bars(ax, values, [corpus.get((metric, s)) for s in systems])
            if marks is not None:
                marks.extend(_bar_marks(ax, metric, systems, owners, means))
        else:
            drawn = ax.boxplot(values, showmeans=True)
            if needs_log_scale(values):
                ax.set_yscale("log")
            if marks is not None:
                for k, (system, flier) in enumerate(zip(systems, drawn["fliers"])):
                    for value in sorted(set(float(v) for v in flier.get_ydata())):
                        ids = [i for i, v in owners[k] if v == value]
                        marks.append((ax, k + 1, value, {"label": f"{metric} = {value:.4g} ({system}, {len(ids)} "
                                                                  f"segment{'s' if len(ids) != 1 else ''})",
                                                         "system": system, "metric": metric, "ids": ids}))
        ax.set_xticks(range(1, len(systems) + 1))
        ax.set_xticklabels([f"{s} (anchor)" if s == anchor else s for s in systems], rotation=30, ha="right",
                           fontsize=8)
        ax.set_title(metric, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def distribution_plot(data: Mapping[str, Any], metrics: list[str]) -> bytes:
    """:func:`distribution_figure` as PNG bytes."""
    return _png(distribution_figure(data, metrics))


def correlation_heatmap(table: "Mapping[str, Mapping[str, float]]", title: str = "correlation") -> bytes:
    """A heatmap of ``table[row][column]`` (e.g. metric × human aspect correlations)."""
    rows = list(table)
    cols = list(dict.fromkeys(c for r in rows for c in table[r]))
    if not rows or not cols:
        raise InputError("correlation heatmap: empty table")
    mat = np.array([[table[r].get(c, np.nan) for c in cols] for r in rows], dtype=float)
    fig = _figure(min(MAX_FIGURE_WIDTH, 1.2 + 1.1 * len(cols)), 0.8 + 0.45 * len(rows))
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
    fig = _figure(MAX_FIGURE_WIDTH / 2 * cols, 3.8 * rows)
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
