"""Fluency metrics against human judgments (issue #16): slor, mean_logprob and acceptability next to perplexity.

* Lai et al. 2022 (GYAFC, 8 systems x 80 inputs): per-input Kendall tau-like and system-level Pearson with human
  fluency, the conventions of studies/figures/fluency_figures.py (mean of the two raters, human ties skipped,
  metric ties discordant, ``orientation=abs``), per direction and both;
* Mir et al. 2019 (Yelp, 9 judged settings x 244 inputs): Pearson of each metric with absolute naturalness (1-5)
  pooled over the settings, and agreement with the relative A/B judgments (output preferred when it scores better
  than its input);
* yelp-dualrl (lower-cased tokenized): share of the four human references that ``acceptability`` passes, and per
  system the acceptability share and J = mean(STA x SIM x FL) with FL = 1[acceptability >= 0.5] (95 % bootstrap
  intervals), on the first ``--dualrl-n`` inputs of each direction; ``humans``: the four human reference sets'
  acceptability on all 1,000 segments (their LM pass is not part of ``--stage lm``).

The LM pass is the costly part, so ``--stage lm`` runs it once for every text (raw and detok+truecase forms) and
stores the token log-probabilities in --work; ``--stage figures`` fills the metrics' per-process cache from that
file and scores with the registered metrics. Perplexity is computed from the same pass (exp of minus the mean
token log-probability; the tests check that token_logprobs and token_nll agree).

    STYLEVAL_THREADS=1 .venv/bin/python studies/figures/fluency_judgment_figures.py --stage lm
    STYLEVAL_THREADS=1 .venv/bin/python studies/figures/fluency_judgment_figures.py --stage figures

Target-style LoRA LMs (``--lora DIR``): ``DIR/lora-{formal,informal}`` (PT16, trained by
studies/figures/fluency_figures.py) score Lai et al.'s outputs by their direction's target style, and
``DIR/lora-{positive,negative}`` (``--stage lora``: Yelp dev+test sentences of shen's release split by label, Mir et
al.'s inputs and outputs left out) score Mir et al.'s outputs by theirs and each input by its own (source) style.
``--stage lm --lora DIR`` adds those LM passes to the same cache; ``--stage figures --lora DIR`` adds the
``+lora`` rows (slor keeps the generic named-corpus unigram model); ``--lora-control`` adds ``+lora-other`` rows,
each text under the adapter of the other style (domain adaptation without the target style).

    STYLEVAL_THREADS=1 .venv/bin/python studies/figures/fluency_judgment_figures.py --stage lora \
        --lora /tmp/styleval-fluency
    STYLEVAL_THREADS=1 .venv/bin/python studies/figures/fluency_judgment_figures.py --stage lm --mir-raw \
        --lora /tmp/styleval-fluency --lora-control
    STYLEVAL_THREADS=1 .venv/bin/python studies/figures/fluency_judgment_figures.py --stage figures --only lai,mir \
        --mir-raw --lora /tmp/styleval-fluency --lora-control
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def lai_records():
    from styleval.datasets import read_lai2022_aspect

    return [r for r in read_lai2022_aspect(DATA / "lai2022", "fluency") if r.system != "ref"]


def mir_records():
    from styleval.datasets import read_mir2019

    return read_mir2019(DATA)


def dualrl_records(n: int):
    from styleval.datasets import read_yelp_dualrl

    recs = read_yelp_dualrl(DATA, include_humans_as_systems=True)
    keep = {f"test.{d}/{i}" for d in (0, 1) for i in range(1, n + 1)}
    return [r for r in recs if r.id in keep]


def lm_jobs(n_dualrl: int, mir_raw: bool = False) -> list[tuple[str, list[str]]]:
    """(normalisation, texts) in the order they are scored."""
    lai = [r.output for r in lai_records()]
    mir = mir_records()
    mir_texts = [r.output for r in mir] + sorted({r.source for r in mir})
    dual = [r.output for r in dualrl_records(n_dualrl)]
    jobs = [("none", lai), ("detok+truecase", lai), ("auto", lai), ("detok+truecase", dual), ("auto", dual),
            ("detok+truecase", mir_texts), ("auto", mir_texts)]  # auto: per text, the metrics' default
    return jobs + ([("none", mir_texts)] if mir_raw else [])


YELP_STYLES = {"negative": 0, "positive": 1}  # shen's sentiment.*.{0,1}; Mir's directions name these styles


def yelp_lora_sentences() -> tuple[dict[str, list[str]], int]:
    """Yelp dev+test sentences of shen's release by sentiment, without any of Mir et al.'s inputs or outputs
    (their inputs are lines of shen's test split); returns them and how many lines were left out."""
    from styleval.datasets import yelp_shen

    mir = mir_records()
    held = {t.strip() for r in mir for t in (r.source, r.output)}
    out: dict[str, list[str]] = {}
    dropped = 0
    for style, k in YELP_STYLES.items():
        sents = []
        for split in ("dev", "test"):
            for line in yelp_shen.sentences(DATA, split, k):
                if line.strip() in held:
                    dropped += 1
                    continue
                sents.append(line.strip())
        out[style] = sents
    return out, dropped


def stage_lora(lora: Path, steps: int) -> None:
    """Train the Yelp sentiment LoRA LMs with the recipe of studies/figures/fluency_figures.py (batch 16)."""
    from styleval.training.lm import train_style_lm
    from styleval.training.options import LMAdapterOptions

    data, dropped = yelp_lora_sentences()
    log(f"yelp LoRA data: {', '.join(f'{k} {len(v)}' for k, v in data.items())}; "
        f"{dropped} lines equal to a Mir et al. input or output left out")
    for style, sents in data.items():
        folder = lora / f"lora-{style}"
        if (folder / "adapter_config.json").is_file():
            continue
        t = time.time()
        train_style_lm(sents, folder, style=style, options=LMAdapterOptions(max_steps=steps, batch_size=16))
        log(f"LoRA {style}: {steps} steps in {time.time() - t:.0f}s")


def lora_lms(lora: Path | None, sets: str = "lai,mir") -> dict[str, dict[str, str]]:
    """Data set (of ``sets``) -> style -> adapter folder; refuses a missing adapter (train it first)."""
    if lora is None:
        return {}
    styles = {"lai": ("formal", "informal"), "mir": tuple(YELP_STYLES)}
    out = {k: {s: str(lora / f"lora-{s}") for s in styles[k]} for k in sets.split(",")}
    for styles in out.values():
        for folder in styles.values():
            if not (Path(folder) / "adapter_config.json").is_file():
                raise SystemExit(f"no LoRA adapter in {folder}: train it first (--stage lora, fluency_figures.py)")
    return out


def lora_jobs(lora: dict[str, dict[str, str]], mir_raw: bool, other: bool = False) -> list[tuple[str, str, list[str]]]:
    """(LM, normalisation, texts) of the LoRA passes: each text under the LM its metric will pick (``other``: under
    the adapter of the other style instead, for the control rows)."""
    from styleval.textnorm.readable import resolve_auto

    def picks(text_style: str, style: str) -> bool:
        return (text_style != style) if other else (text_style == style)

    jobs: list[tuple[str, str, list[str]]] = []
    lai = lai_records() if "lai" in lora else []
    for system in sorted({r.system for r in lai}):
        recs = [r for r in lai if r.system == system]
        for mode in ("none", resolve_auto([r.output for r in recs])):
            for style, lm in lora["lai"].items():
                jobs.append((lm, mode, [r.output for r in recs if picks(r.direction.target_style, style)]))
    mir = mir_records() if "mir" in lora else []
    for mode in (["none"] if mir_raw else []) + ["detok+truecase"]:
        for style, lm in lora.get("mir", {}).items():
            jobs.append((lm, mode, [r.output for r in mir if picks(r.direction.target_style, style)]
                         + sorted({r.source for r in mir if picks(r.direction.source_style, style)})))
    return jobs


def stage_lm(work: Path, n_dualrl: int, mir_raw: bool = False, chunk: int = 200,
             lora: dict[str, dict[str, str]] | None = None, control: bool = False) -> None:
    from styleval.metrics.fluency import lm_shared
    from styleval.models import DEFAULT_CAUSAL_LM

    path = work / "lm_cache.pkl"
    if path.is_file():
        lm_shared.restore_cache(pickle.loads(path.read_bytes()))
    jobs = [(DEFAULT_CAUSAL_LM, mode, texts) for mode, texts in lm_jobs(n_dualrl, mir_raw)]
    if lora:
        jobs += lora_jobs(lora, mir_raw) + (lora_jobs(lora, mir_raw, other=True) if control else [])
    for lm, mode, texts in jobs:
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        start = time.time()
        for i in range(0, len(texts), chunk):
            before = lm_shared.cache_size()
            lm_shared.scored_texts(lm, texts[i:i + chunk], normalize=mode)
            if lm_shared.cache_size() == before:
                continue  # all cached already
            path.write_bytes(pickle.dumps(lm_shared.cache_snapshot()))
            done = min(i + chunk, len(texts))
            log(f"lm {Path(lm).name} {mode}: {done}/{len(texts)} ({done / (time.time() - start):.1f}/s)")


# ---- the figures stage: scoring with the registered metrics, tables

def is_perplexity(name: str) -> bool:
    """The ``perplexity`` rows hold mean_logprob scores turned into segment perplexity (lower is better)."""
    return name.split("+")[0].split(":")[0] == "perplexity"


def metrics(lora: dict[str, dict[str, str]] | None = None, control: bool = False) -> dict[str, Any]:
    """Figure label -> metric; ``+norm`` is detok+truecase always, ``auto`` the metrics' default (per text: a text
    without capitals true-cased, a tokenized one detokenized), no suffix: the raw text; ``+lora``: each output
    scored by the LoRA LM of its direction's target style (one mapping for both data sets: formal/informal,
    positive/negative); ``+lora-other`` (``control``): by the adapter of the other style of its data set, the control
    that separates what the adapters learn of the domain and text format from what they learn of the style."""
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
    from styleval.metrics.fluency import lm_shared

    lm_shared.restore_cache(pickle.loads((work / "lm_cache.pkl").read_bytes()))
    log(f"{lm_shared.cache_size()} cached LM passes")
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/styleval-fluency-judgments")
    ap.add_argument("--stage", choices=["lora", "lm", "figures"], default="figures")
    ap.add_argument("--lora", default=None, help="folder of the target-style LoRA LMs (lora-<style>): adds +lora rows")
    ap.add_argument("--lora-sets", default="lai,mir", help="data sets whose LoRA LMs --lora adds (lai, mir)")
    ap.add_argument("--lora-control", action="store_true",
                    help="also +lora-other rows: each text under the adapter of the other style (a control)")
    ap.add_argument("--lora-steps", type=int, default=100, help="--stage lora: training steps per style")
    ap.add_argument("--dualrl-n", type=int, default=50, help="inputs per direction of yelp-dualrl")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--only", default="lai,dualrl,mir,humans", help="figures to (re)compute, comma-separated")
    ap.add_argument("--mir-raw", action="store_true", help="also the raw-text metrics on Mir et al.'s data")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.stage == "lora":
        if args.lora is None:
            ap.error("--stage lora needs --lora DIR")
        stage_lora(Path(args.lora), args.lora_steps)
        return 0
    args.lora_lms = lora_lms(Path(args.lora) if args.lora else None, args.lora_sets)
    if args.stage == "lm":
        stage_lm(work, args.dualrl_n, args.mir_raw, lora=args.lora_lms, control=args.lora_control)
        return 0
    run_figures(work, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
