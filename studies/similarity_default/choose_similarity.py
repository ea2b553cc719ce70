"""Pick ``evaluate``'s similarity metric (J's SIM, the content-vs-source headline) by a rule fixed in advance.

    .venv/bin/python studies/similarity_default/choose_similarity.py [--data ../shared/data] [--cache DIR]
        [--json out.json] [--resamples 1000]

The rule (studies/similarity_default/README.md, committed before any figure was computed):

* Candidates, all against the source: chrF, MiniLM sentence cosine, preservation fast head
  (``model=preservation-minilm-fast``), BERTScore F1, BERTScore recall (``component=recall``), preservation default.
* Four figures per candidate: (1) Lai 2022 content per input, the project's segment task
  (``lai2022_tasks("content")[0]``, WMT Kendall tau-like); (2) Lai 2022 content per system (Pearson,
  ``lai2022_tasks("content")[1]``); (3) Mir 2019 content preservation, Pearson over every rated output of the 12
  settings; (4) SGDD-TST, Spearman with the mean crowd vote over every pair. Lai and Mir use their odd input rows
  only (the learned preservation models were trained on the even rows); SGDD-TST is used whole.
* Combination: the plain mean of the four figures; the highest mean is the best.
* Intervals: 1,000 paired bootstrap resamples (seed 12345; Lai inputs, one draw for both Lai figures; Mir inputs;
  SGDD-TST pairs), the same draws for every candidate. A candidate is tied with the best when the 95 % percentile
  interval of (best's mean - its mean) has a lower bound <= 0.
* Choice: the cheapest candidate tied with the best, cost order chrF < sentence cosine < preservation fast <
  BERTScore F1 < BERTScore recall < preservation default (the order is fixed by the work per pair; the seconds
  per 1,000 SGDD-TST pairs printed here are a check, not an input).
* Outside gate (README, "Amendment", written after the first outcome): only candidates whose figures reported
  from the issue's two outside sets are at least cosine's minus .005 are eligible; best, ties and choice are
  taken among them, and the gaps are to the best eligible candidate.
* BERTScore F1 stays in the battery as a second view when the winner is not BERTScore and BERTScore (F1 or
  recall) is tied with the best, or has the highest point figure on one of the four figures.

Scores come from ``styleval.score``; the point figures from ``styleval.meta.run`` with the project's tasks, which
the bootstrap's own statistics are checked against (they must agree to 1e-9). ``--cache DIR`` keeps each
candidate's segment scores (and sets ``STYLEVAL_CACHE`` for the encoders' text caches) so a second run only
recomputes the statistics.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

#: (name, spec), in the rule's order of cost, cheapest first
CANDIDATES: tuple[tuple[str, str], ...] = (
    ("chrf", "chrf"),
    ("sentence_cosine", "sentence_cosine"),
    ("preservation-fast", "preservation:model=preservation-minilm-fast"),
    ("bertscore", "bertscore"),
    ("bertscore-recall", "bertscore:component=recall"),
    ("preservation", "preservation"),
)
FIGURES = ("lai_per_input", "lai_per_system", "mir", "sgdd")
#: The outside gate (README, "Amendment"): figures reported in issue #35 from sets outside the repository --
#: style-shift pairwise agreement and detoxification Spearman with human meaning. Missing = not reported.
OUTSIDE: dict[str, dict[str, float]] = {
    "sentence_cosine": {"style_shift": 0.550, "detox": 0.354},
    "preservation": {"style_shift": 0.534, "detox": 0.352},
    "bertscore": {"style_shift": 0.458, "detox": 0.300},
    "chrf": {"style_shift": 0.307, "detox": 0.167},
}
OUTSIDE_SETS = ("style_shift", "detox")
OUTSIDE_MARGIN = 0.005
SEED = 12345


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def segment_scores(records: Sequence[Any], spec: str, cache: Path | None, label: str) -> tuple[np.ndarray, float]:
    """Segment scores of ``spec`` against the source, in record order, and the seconds they took (0 when read from
    the cache)."""
    from styleval import score

    key = hashlib.sha256("\0".join([spec, *(f"{r.system}\1{r.id}\1{r.source}\1{r.output}" for r in records)])
                         .encode("utf-8")).hexdigest()[:16]
    path = cache / f"{label}-{spec.replace(':', '_').replace('=', '-')}-{key}.npy" if cache else None
    if path is not None and path.is_file():
        return np.load(path), 0.0
    _log(f"{label}: {spec} on {len(records)} outputs")
    start = time.perf_counter()
    frame = score(records, [spec], against=("source",), bootstrap=0).to_dataframe("segment")
    seconds = time.perf_counter() - start
    by_key = {(s, i): v for s, i, v in zip(frame["system"], frame["id"], frame["score"])}
    values = np.array([by_key[(r.system, r.id)] for r in records], dtype=float)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, values)
    return values, seconds


def metric_table(records: Sequence[Any], scores: dict[str, np.ndarray], system: str | None = None) -> pd.DataFrame:
    """The long metric table ``styleval.meta.run`` reads: system (``system`` for all when given), segment, metric,
    score."""
    systems = [system or r.system for r in records]
    return pd.concat([pd.DataFrame({"system": systems, "segment": [r.id for r in records],
                                    "metric": name, "score": values}) for name, values in scores.items()],
                     ignore_index=True)


def matrices(records: Sequence[Any], scores: dict[str, np.ndarray], human: pd.Series,
             systems: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray, list[str]]:
    """(systems x inputs) matrices of each candidate and of the mean human score, inputs in a fixed order."""
    segments = sorted({r.id for r in records}, key=int)
    row = {s: i for i, s in enumerate(systems)}
    col = {s: j for j, s in enumerate(segments)}
    hum = np.full((len(systems), len(segments)), np.nan)
    for (system, segment), value in human.items():
        if system in row and segment in col:
            hum[row[system], col[segment]] = value
    mats = {}
    for name, values in scores.items():
        m = np.full(hum.shape, np.nan)
        for r, v in zip(records, values):
            if r.system in row:
                m[row[r.system], col[r.id]] = v
        mats[name] = m
    return mats, hum, segments


def per_input_tau(m: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Per input (column): WMT Kendall tau-like over the systems, human ties skipped, metric ties discordant;
    NaN where every human pair is tied."""
    out = np.full(m.shape[1], np.nan)
    iu = np.triu_indices(m.shape[0], 1)
    for j in range(m.shape[1]):
        dh = (h[:, j][:, None] - h[:, j][None, :])[iu]
        dm = (m[:, j][:, None] - m[:, j][None, :])[iu]
        keep = dh != 0
        if not keep.any():
            continue
        conc = int(np.sum(np.sign(dh[keep]) == np.sign(dm[keep])))
        out[j] = (2 * conc - int(keep.sum())) / int(keep.sum())
    return out


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import rankdata

    return pearson(rankdata(x), rankdata(y))


def lai(root: Any, cache: Path | None) -> dict[str, Any]:
    from styleval.datasets import read_lai2022
    from styleval.meta import run
    from styleval.meta.conventions import lai2022_tasks
    from styleval.meta.datasets import load_lai2022
    from styleval.meta.judgments import Judgments

    recs = [r for r in read_lai2022(root) if int(r.id) % 2 == 1]
    scores = {name: segment_scores(recs, spec, cache, "lai2022")[0] for name, spec in CANDIDATES}
    held = {r.id for r in recs}
    jf = load_lai2022(root, source="json").judgments.frame
    jf = jf[jf["segment"].isin(held)].reset_index(drop=True)
    seg_task, sys_task = lai2022_tasks("content")
    table = metric_table(recs, scores)
    seg = run(seg_task, Judgments(jf), table, metrics=list(scores))
    sys_ = run(sys_task, Judgments(jf), table, metrics=list(scores))
    systems = sorted({r.system for r in recs} - set(seg_task.exclude))
    human = jf[jf["aspect"] == "content"].groupby(["system", "segment"])["score"].mean()
    mats, hum, segments = matrices(recs, scores, human, systems)
    taus = {name: per_input_tau(m, hum) for name, m in mats.items()}
    for name in scores:  # the bootstrap's statistics are the project's tasks' statistics
        assert abs(float(np.nanmean(taus[name])) - seg.statistic(name)) < 1e-9, name
        assert abs(pearson(mats[name].mean(axis=1), hum.mean(axis=1)) - sys_.statistic(name)) < 1e-9, name
    return {"n_inputs": len(segments), "systems": systems, "taus": taus, "mats": mats, "human": hum,
            "point": {"lai_per_input": {n: seg.statistic(n) for n in scores},
                      "lai_per_system": {n: sys_.statistic(n) for n in scores}}}


def mir(root: Any, cache: Path | None) -> dict[str, Any]:
    from styleval.datasets import read_mir2019
    from styleval.meta import MetaTask, run
    from styleval.meta.datasets import load_mir2019
    from styleval.meta.judgments import Judgments

    data = load_mir2019(root)
    recs = [r for r in read_mir2019(root) if int(r.id) % 2 == 1]
    scores = {name: segment_scores(recs, spec, cache, "mir2019")[0] for name, spec in CANDIDATES}
    held = {r.id for r in recs}
    jf = data.judgments.frame
    jf = jf[jf["segment"].isin(held)].reset_index(drop=True)
    systems = [s for v in data.extra["models"].values() for s in v]
    task = MetaTask("content_preservation", level="segment", method="pearson", average_by="none",
                    orientation="signed", systems=tuple(systems))
    res = run(task, Judgments(jf), metric_table(recs, scores), metrics=list(scores))
    human = jf[jf["aspect"] == "content_preservation"].groupby(["system", "segment"])["score"].mean()
    mats, hum, segments = matrices(recs, scores, human, systems)
    ok = ~np.isnan(hum)
    for name in scores:
        assert abs(pearson(mats[name][ok], hum[ok]) - res.statistic(name)) < 1e-9, name
    return {"n_inputs": len(segments), "mats": mats, "human": hum,
            "point": {"mir": {n: res.statistic(n) for n in scores}}}


def sgdd(root: Any, cache: Path | None, seconds: dict[str, float]) -> dict[str, Any]:
    from styleval.datasets import read_sgdd_tst
    from styleval.meta import MetaTask, run
    from styleval.meta.datasets import load_sgdd_tst

    recs = read_sgdd_tst(root)
    scores = {}
    for name, spec in CANDIDATES:
        scores[name], took = segment_scores(recs, spec, cache, "sgdd_tst")
        if took:
            seconds[name] = 1000 * took / len(recs)
    data = load_sgdd_tst(root)
    task = MetaTask("content", level="segment", method="spearman", average_by="none", orientation="signed")
    # the meta view names the one system "rewrite"
    res = run(task, data.judgments, metric_table(recs, scores, system="rewrite"), metrics=list(scores))
    human = np.array([r.meta["human"] for r in recs], dtype=float)
    for name in scores:
        assert abs(spearman(scores[name], human) - res.statistic(name)) < 1e-9, name
    return {"n_pairs": len(recs), "scores": scores, "human": human,
            "point": {"sgdd": {n: res.statistic(n) for n in scores}}}


def bootstrap(lai_d: dict[str, Any], mir_d: dict[str, Any], sgdd_d: dict[str, Any], n: int,
              names: Sequence[str]) -> dict[str, np.ndarray]:
    """Per candidate, an (n x 4) array of the four figures in each paired resample (the same draws for all)."""
    rng = np.random.default_rng(SEED)
    out = {name: np.empty((n, len(FIGURES))) for name in names}
    n_lai, n_mir, n_sgdd = lai_d["human"].shape[1], mir_d["human"].shape[1], len(sgdd_d["human"])
    for b in range(n):
        i_lai, i_mir, i_sgdd = (rng.integers(0, k, k) for k in (n_lai, n_mir, n_sgdd))
        h_lai = lai_d["human"][:, i_lai].mean(axis=1)
        h_mir = mir_d["human"][:, i_mir]
        ok_mir = ~np.isnan(h_mir)
        h_sgdd = sgdd_d["human"][i_sgdd]
        for name in names:
            out[name][b] = (float(np.nanmean(lai_d["taus"][name][i_lai])),
                            pearson(lai_d["mats"][name][:, i_lai].mean(axis=1), h_lai),
                            pearson(mir_d["mats"][name][:, i_mir][ok_mir], h_mir[ok_mir]),
                            spearman(sgdd_d["scores"][name][i_sgdd], h_sgdd))
    return out


def eligible(name: str) -> bool:
    """The outside gate: every named outside figure reported and at least cosine's minus the margin."""
    if name == "sentence_cosine":
        return True
    got, ref = OUTSIDE.get(name, {}), OUTSIDE["sentence_cosine"]
    return all(s in got and got[s] >= ref[s] - OUTSIDE_MARGIN for s in OUTSIDE_SETS)


def apply_rule(point: dict[str, dict[str, float]], draws: dict[str, np.ndarray]) -> dict[str, Any]:
    """The rule of the module docstring, with the README's outside gate, on the point figures and the draws."""
    names = [name for name, _ in CANDIDATES]
    gate = {n: eligible(n) for n in names}
    mean = {n: float(np.mean([point[f][n] for f in FIGURES])) for n in names}
    best_all = max(names, key=lambda n: mean[n])
    best = max((n for n in names if gate[n]), key=lambda n: mean[n])
    diff = {n: np.percentile(draws[best].mean(axis=1) - draws[n].mean(axis=1), [2.5, 97.5]) for n in names}
    tied = [n for n in names if gate[n] and (n == best or diff[n][0] <= 0)]
    winner = next(n for n in names if n in tied)  # names are in order of cost
    top_on = {f: max(names, key=lambda n: point[f][n]) for f in FIGURES}
    keep_bertscore = not winner.startswith("bertscore") and (
        any(n.startswith("bertscore") for n in tied) or any(t.startswith("bertscore") for t in top_on.values()))
    return {"mean": mean, "eligible": gate, "best_of_all": best_all, "best": best,
            "diff_ci": {n: [float(v) for v in diff[n]] for n in names},
            "tied": tied, "winner": winner, "top_on": top_on, "keep_bertscore_as_second_view": keep_bertscore}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--cache", help="folder for segment scores and encoder caches (a second run skips scoring)")
    ap.add_argument("--json", help="write the figures and the outcome to this JSON file")
    ap.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples (the rule: 1000)")
    args = ap.parse_args(argv)
    from styleval.datasets import default_root

    root = args.data or default_root()
    cache = Path(args.cache) if args.cache else None
    if cache is not None:
        os.environ.setdefault("STYLEVAL_CACHE", str(cache / "encoders"))
    seconds: dict[str, float] = {}
    sgdd_d = sgdd(root, cache, seconds)  # first: its timings are on a cold cache when nothing was kept yet
    lai_d = lai(root, cache)
    mir_d = mir(root, cache)
    point: dict[str, dict[str, float]] = {**lai_d["point"], **mir_d["point"], **sgdd_d["point"]}
    names = [name for name, _ in CANDIDATES]
    _log(f"bootstrap: {args.resamples} paired resamples")
    draws = bootstrap(lai_d, mir_d, sgdd_d, args.resamples, names)
    outcome = apply_rule(point, draws)
    ci = {n: {f: [float(v) for v in np.percentile(draws[n][:, k], [2.5, 97.5])] for k, f in enumerate(FIGURES)}
          for n in names}
    head = (f"{'candidate':18} {'Lai per input':>20} {'Lai per system':>20} {'Mir 2019':>20} {'SGDD-TST':>20} "
            f"{'mean':>6} {'best-it 95% CI':>16} {'s/1k pairs':>10} {'eligible':>8}")
    print(f"Lai 2022 odd inputs: {lai_d['n_inputs']}, Mir 2019 odd inputs: {mir_d['n_inputs']}, "
          f"SGDD-TST pairs: {sgdd_d['n_pairs']}; {args.resamples} paired resamples, seed {SEED}")
    print(head)
    for n in names:
        cells = " ".join(f"{point[f][n]:.3f} [{ci[n][f][0]:.3f},{ci[n][f][1]:.3f}]" for f in FIGURES)
        lo, hi = outcome["diff_ci"][n]
        took = f"{seconds[n]:.1f}" if n in seconds else "cached"
        gate = "yes" if outcome["eligible"][n] else "no"
        print(f"{n:18} {cells} {outcome['mean'][n]:6.3f} {f'[{lo:+.3f},{hi:+.3f}]':>16} {took:>10} {gate:>8}")
    print(f"best mean of all: {outcome['best_of_all']}; best eligible: {outcome['best']}; "
          f"tied with it (eligible): {', '.join(outcome['tied'])}")
    print(f"winner (cheapest tied): {outcome['winner']}")
    print(f"BERTScore kept as a second view: {'yes' if outcome['keep_bertscore_as_second_view'] else 'no'} "
          f"(top per figure: {outcome['top_on']})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"point": point, "ci": ci, "seconds_per_1000_sgdd_pairs": seconds, **outcome,
                       "resamples": args.resamples, "seed": SEED}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
