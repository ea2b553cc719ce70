"""The figures stage of scripts/fluency_judgment_figures.py (scoring with the registered metrics, tables)."""
from __future__ import annotations

import json
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fluency_judgment_figures import DATA, dualrl_records, lai_records, log, mir_records


def is_perplexity(name: str) -> bool:
    """The ``perplexity`` rows hold mean_logprob scores turned into segment perplexity (lower is better)."""
    return name.split("+")[0].split(":")[0] == "perplexity"


def metrics(lora: dict[str, dict[str, str]] | None = None, control: bool = False) -> dict[str, Any]:
    """Figure label -> metric; ``+norm`` is detok+truecase always, ``auto`` the metrics' default (normalise only a
    lower-cased or tokenized release), no suffix: the raw text; ``+lora``: each output scored by the LoRA LM of its
    direction's target style (one mapping for both data sets: formal/informal, positive/negative); ``+lora-other``
    (``control``): by the adapter of the other style of its data set, the control that separates what the adapters
    learn of the domain and text format from what they learn of the style."""
    from styleval.metrics import registry

    extra: dict[str, Any] = {}
    if lora:
        lms = {style: path for styles in lora.values() for style, path in styles.items()}
        extra = {"perplexity+lora": registry.create("mean_logprob", normalize="none", style_lms=lms),
                 "mean_logprob+lora": registry.create("mean_logprob", normalize="none", style_lms=lms),
                 "slor+lora": registry.create("slor", normalize="none", style_lms=lms),
                 "mean_logprob+lora:auto": registry.create("mean_logprob", style_lms=lms),
                 "slor+lora:auto": registry.create("slor", style_lms=lms)}
        if control:
            other = {a: b for styles in lora.values() for a in styles for b in styles if a != b}
            swapped = {style: lms[o] for style, o in other.items()}
            extra |= {"mean_logprob+lora-other": registry.create("mean_logprob", normalize="none", style_lms=swapped),
                      "slor+lora-other": registry.create("slor", normalize="none", style_lms=swapped),
                      "mean_logprob+lora-other:auto": registry.create("mean_logprob", style_lms=swapped),
                      "slor+lora-other:auto": registry.create("slor", style_lms=swapped)}
    return extra | {"perplexity": registry.create("mean_logprob", normalize="none"),  # as perplexity below, same pass
            "mean_logprob": registry.create("mean_logprob", normalize="none"),
            "slor": registry.create("slor", normalize="none"),
            "mean_logprob+norm": registry.create("mean_logprob", normalize="detok+truecase"),
            "slor+norm": registry.create("slor", normalize="detok+truecase"),
            "mean_logprob:auto": registry.create("mean_logprob"),
            "slor:auto": registry.create("slor"),
            "acceptability+norm": registry.create("acceptability", normalize="detok+truecase"),
            "acceptability:auto": registry.create("acceptability")}


def score_table(records: list, metric: Any, name: str) -> pd.DataFrame:
    from styleval.metrics.base import Batch

    by_sys: dict[str, list] = {}
    for r in records:
        by_sys.setdefault(r.system, []).append(r)
    rows = []
    for system, recs in by_sys.items():
        scores = metric.score(Batch.from_records(recs)).segment_scores
        if is_perplexity(name):
            scores = np.exp(-np.asarray(scores))  # segment perplexity = exp(-mean token log-prob)
        rows += [{"system": system, "segment": r.id, "score": float(s), "direction": str(r.direction),
                  "metric": f"fluency:{name}"} for r, s in zip(recs, scores)]
    return pd.DataFrame(rows)


def lai(ms: dict[str, Any]) -> pd.DataFrame:
    from styleval.meta import run
    from styleval.meta.conventions import lai2022_tasks
    from styleval.meta.datasets import load_lai2022

    ds = load_lai2022(DATA / "lai2022")
    records = lai_records()
    ours = pd.concat([score_table(records, m, n) for n, m in ms.items()], ignore_index=True)
    stored = ds.metrics[ds.metrics["metric"] == "fluency:gpt2_ppl"]
    table = pd.concat([stored[ours.columns], ours], ignore_index=True)
    lower = {"fluency:gpt2_ppl"} | {f"fluency:{n}" for n in ms if is_perplexity(n)}
    seg, sys_ = lai2022_tasks("fluency")
    rows = []
    for direction in ("informal->formal", "formal->informal", "both"):
        for label, task in (("kendall", seg), ("system_pearson", sys_)):
            res = run(task.with_(direction=direction), ds.judgments, table, lower_is_better=lower)
            for m in sorted(table["metric"].unique()):
                rows.append({"direction": direction, "figure": label, "metric": m, "value": round(res.statistic(m), 3)})
    return pd.DataFrame(rows)


def mir(ms: dict[str, Any]) -> pd.DataFrame:
    from scipy.stats import pearsonr, spearmanr

    from styleval.meta.datasets import load_mir2019
    from styleval.metrics.base import Batch
    from styleval.naturalness import agreement
    from styleval.records import Direction

    ds = load_mir2019(DATA / "mir2019")
    rel = ds.extra["naturalness_relative"]
    nat = ds.judgments.frame
    nat = nat[nat["aspect"] == "naturalness"]
    records = mir_records()
    judged = sorted(set(nat["system"]) - {"input"})
    # each input scored as a text of its own (source) style: by that style's LoRA LM in the +lora rows
    inputs = sorted({(r.id, r.source, r.direction.source_style) for r in records}, key=lambda x: int(x[0]))
    in_batch = Batch(ids=[i for i, _, _ in inputs], outputs=[s for _, s, _ in inputs], sources=[""] * len(inputs),
                     references=[[] for _ in inputs], directions=[Direction(st, st) for _, _, st in inputs])
    rows = []
    for name, m in ms.items():
        sign = -1.0 if is_perplexity(name) else 1.0  # perplexity column holds mean log-prob: higher = better
        in_scores = dict(zip(in_batch.ids, m.score(in_batch).segment_scores))
        xs, hs, hits = [], [], [0, 0]
        per_sys = []
        for system in judged:
            recs = [r for r in records if r.system == system]
            out = np.asarray(m.score(Batch.from_records(recs)).segment_scores, dtype=float)
            human = nat[nat["system"] == system].set_index("segment")["score"].reindex([r.id for r in recs])
            ok = human.notna().to_numpy() & np.isfinite(out)
            xs += list(out[ok])
            hs += list(human.to_numpy()[ok])
            per_sys.append(float(pearsonr(out[ok], human.to_numpy()[ok])[0]))
            choice = rel[rel["system"] == system].set_index("segment")["choice"].reindex([r.id for r in recs])

            class _P:  # higher metric score = more natural
                p_input = np.array([in_scores[r.id] for r in recs])
                p_output = out

            a, n = agreement(_P, [c if isinstance(c, str) else None for c in choice])  # type: ignore[arg-type]
            hits[0] += a * n
            hits[1] += n
        rows.append({"metric": name,
                     "pooled_pearson_abs": round(float(pearsonr(xs, hs)[0]) * sign, 3),
                     "pooled_spearman_abs": round(float(spearmanr(xs, hs)[0]) * sign, 3),
                     "per_system_pearson_min": round(min(per_sys) * sign, 3) if sign > 0 else
                     round(-max(per_sys), 3),
                     "per_system_pearson_max": round(max(per_sys) * sign, 3) if sign > 0 else
                     round(-min(per_sys), 3),
                     "ab_agreement": round(hits[0] / hits[1], 3), "n_ab": hits[1], "n_abs": len(xs)})
        log(f"mir {name}: {rows[-1]}")
    return pd.DataFrame(rows)


def dualrl(ms: dict[str, Any], n: int, bootstrap: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from styleval import score
    from styleval.metrics.base import Batch

    records = dualrl_records(n)
    acc = ms["acceptability:auto"]
    rows = []
    for system in sorted({r.system for r in records}):
        recs = [r for r in records if r.system == system]
        res = acc.score(Batch.from_records(recs))
        slor = ms["slor+norm"].score(Batch.from_records(recs))
        rows.append({"system": system, "n": len(recs), "acceptable_share": round(res.corpus_score, 3),
                     "mean_p": round(float(np.mean(res.segment_scores)), 3),
                     "slor_norm": round(slor.corpus_score, 3)})
    shares = pd.DataFrame(rows)
    machines = [r for r in records if not r.system.startswith("Human")]
    j = "j:style=style_accuracy,similarity=bertscore/src,fluency=acceptability,fluency_threshold=0.5"
    t = time.time()
    res = score(machines, ["style_accuracy", "bertscore:against=source", "acceptability", j], bootstrap=bootstrap)
    log(f"dualrl J scored in {time.time() - t:.0f}s")
    jrows = []
    for system in res.systems:
        r = res.get("j", system)
        jrows.append({"system": system, "j": round(r.corpus_score, 3),
                      "ci_low": round(r.ci[0], 3) if r.ci else None, "ci_high": round(r.ci[1], 3) if r.ci else None,
                      "style_accuracy": round(res.get("style_accuracy", system).corpus_score, 3),
                      "bertscore_src": round(res.get("bertscore/src", system).corpus_score, 3),
                      "acceptability": round(res.get("acceptability", system).corpus_score, 3)})
    return shares, pd.DataFrame(jrows)


def human_references() -> pd.DataFrame:
    """acceptability of each of yelp-dualrl's four human reference sets on all 1,000 segments."""
    from styleval.metrics import registry
    from styleval.metrics.base import Batch
    from styleval.datasets import read_yelp_dualrl

    recs = [r for r in read_yelp_dualrl(DATA, include_humans_as_systems=True) if r.system.startswith("Human")]
    metric = registry.create("acceptability")
    rows = []
    for system in sorted({r.system for r in recs}):
        res = metric.score(Batch.from_records([r for r in recs if r.system == system]))
        rows.append({"system": system, "n": len(res.ids), "acceptable_share": round(res.corpus_score, 3),
                     "normalized_as": res.signature.to_dict()["resources"].get("normalized_as")})
    return pd.DataFrame(rows)


def run_figures(work: Path, args: Any) -> None:
    from styleval.metrics.fluency import _lm

    _lm._CACHE.update(pickle.loads((work / "lm_cache.pkl").read_bytes()))
    log(f"{len(_lm._CACHE)} cached LM passes")
    ms = metrics(getattr(args, "lora_lms", None), getattr(args, "lora_control", False))
    path = work / "figures.json"
    out: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    parts = set(args.only.split(","))
    if "lai" in parts:
        tab = lai(ms)
        tab.to_csv(work / "lai2022.csv", index=False)
        print(tab.pivot_table(index="metric", columns=["direction", "figure"], values="value").to_string())
        out["lai2022"] = tab.to_dict(orient="records")
    if "dualrl" in parts:
        shares, jtab = dualrl(ms, args.dualrl_n, args.bootstrap)
        print(shares.to_string(index=False))
        print(jtab.to_string(index=False))
        out["dualrl_shares"], out["dualrl_j"] = shares.to_dict(orient="records"), jtab.to_dict(orient="records")
    if "humans" in parts:  # LM pass over 4,000 texts when not cached (minutes)
        h = human_references()
        print(h.to_string(index=False))
        out["dualrl_humans_all"] = h.to_dict(orient="records")
    if "mir" in parts:
        # Mir et al.: the normalised pass (and the raw one with --mir-raw; it doubles the LM time)
        m = mir({k: v for k, v in ms.items() if args.mir_raw or k.endswith(("+norm", ":auto"))})
        print(m.to_string(index=False))
        out["mir2019"] = m.to_dict(orient="records")
    path.write_text(json.dumps(out, indent=1), encoding="utf-8")
