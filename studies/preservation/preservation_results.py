"""Held-out figures of the shipped preservation models (SGDD-TST never trained on), using public APIs only.

    .venv/bin/python studies/preservation/preservation_results.py [--data ../shared/data] [--json out.json]
        [--skip-sgdd] [--cache DIR] [--model NAME=FOLDER ...] [--only-models]

``preservation`` is the default preservation-minilm, ``preservation-fast`` its feature head alone (the same
weights as preservation-minilm-fast, scored from the same features).

1. SGDD-TST: Spearman with the mean crowd vote of the two shipped preservation models, MiniLM ``sentence_cosine``,
   chrF and BERTScore F1 (MiniLM; computed here) and the stored BLEURT-large-512 column; Williams tests of the
   default against the others.
2. Lai 2022, odd input rows (held out): per-input Kendall tau-like (human ties skipped, metric ties discordant,
   8 systems) and system-level Pearson, with the stored BLEURT and BLEU for comparison; and the Spearman over
   every held-out (input, output) pair, the 8 systems and the reference, against the mean of the two raters.
3. Mir 2019, odd input rows (held out): Pearson per model, pooled over its settings (as Mir et al.); and the
   Spearman over every held-out pair of all 12 settings.
   The pooled Spearman figures have the form of a similarity benchmark (one correlation over all rated pairs of
   a set), which is how the issue's independent similarity sets are judged.
4. Style-shift test (held-out inputs, see styleval.training.preservation_corpus.style_shift_test): share of inputs
   whose human
   style rewrite scores higher than an automatic content change of the input.

``--model NAME=FOLDER`` (repeatable) adds a model folder of one's own (``styleval train-content``) to every table,
with Williams tests on SGDD-TST against the default, cosine and BLEURT.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np
import pandas as pd


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


CACHE: dict[str, Any] = {"dir": None}


def features(model: Any, sources: list[str], outputs: list[str]) -> np.ndarray:
    """The model's pair features, kept in ``--cache`` (keyed by the texts and the featurizer) when given."""
    import hashlib
    from pathlib import Path

    if CACHE["dir"] is None:
        return model.featurizer.features(sources, outputs)
    f = model.featurizer
    # the backend is part of the key: torch and ONNX Runtime features differ in the last bits, enough to move exact
    # ties at the fast head's ceiling (docs/results.md)
    h = hashlib.sha256("\0".join([f.model, f.spacy_model, str(f.max_length), f.backend, *sorted(f.style_words),
                                  *sources, "\1", *outputs]).encode("utf-8")).hexdigest()[:16]
    path = Path(CACHE["dir"]) / f"pairs-{h}.npy"
    if path.is_file():
        return np.load(path)
    x = f.features(sources, outputs)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, x)
    return x


def metric_scorer(name: str, **params: Any) -> Any:
    """``score(sources, outputs)`` of a registered metric against the source (e.g. ``sentence_cosine`` with
    ``model=DIR``)."""
    from styleval.metrics.base import Batch
    from styleval.metrics.registry import create

    m = create(name, against="source", **params)

    def score(sources: list[str], outputs: list[str]) -> np.ndarray:
        n = len(outputs)
        batch = Batch([str(i) for i in range(n)], list(outputs), list(sources), [[] for _ in range(n)], [None] * n)
        return np.asarray(m.score(batch).segment_scores, dtype=float)
    return score


def model_scorer(model: Any) -> Any:
    """``score(sources, outputs)`` of a preservation model, its pair features read from ``--cache``."""
    def score(s: list[str], o: list[str]) -> np.ndarray:
        return model.score(s, o, features=features(model, s, o))
    return score


def scorers() -> dict[str, Any]:
    from styleval.preservation import load_preservation_model

    model = load_preservation_model()
    # preservation-minilm-fast is the feature head of preservation-minilm alone (the same weights)
    return {"preservation": model_scorer(model),
            "preservation-fast": lambda s, o: model.from_features(features(model, s, o)),
            "sentence_cosine": metric_scorer("sentence_cosine"), "chrf": metric_scorer("chrf"),
            "bertscore": metric_scorer("bertscore")}


def sgdd(root: Any, score: dict[str, Any]) -> dict[str, Any]:
    from scipy.stats import spearmanr

    from styleval.meta.datasets import load_sgdd_tst
    from styleval.stats.significance import williams_test

    frame = load_sgdd_tst(root).extra["frame"]
    src, out = frame["text1"].astype(str).tolist(), frame["text2"].fillna("").astype(str).tolist()
    human = frame["human"].astype(float).to_numpy()
    from styleval.preservation import load_preservation_model

    # One featurizer pass gives both the preservation score and MiniLM's sentence cosine (feature 0: the same
    # model, mean pooling and normalisation as sentence_cosine); checked against the metric on a sample below.
    model = load_preservation_model()
    _log(f"SGDD-TST: features of {len(src)} pairs")
    feats = features(model, src, out)
    _log(f"SGDD-TST: cross-encoder on {len(src)} pairs")
    cols: dict[str, np.ndarray] = {"preservation": model.score(src, out, features=feats),
                                   "preservation-fast": model.from_features(feats), "sentence_cosine": feats[:, 0]}
    extra = [k for k in score if k.startswith("model:")]
    for name in extra:
        _log(f"SGDD-TST: {name} on {len(src)} pairs")
        cols[name] = score[name](src, out)
    sample = np.random.default_rng(0).choice(len(src), 300, replace=False)
    check = score["sentence_cosine"]([src[i] for i in sample], [out[i] for i in sample])
    cosine_check = float(np.max(np.abs(check - feats[sample, 0])))
    for name in ("chrf", "bertscore"):
        if name in score:
            _log(f"SGDD-TST: {name}")
            cols[name] = score[name](src, out)
    cols["bleurt (stored)"] = frame["Elron/bleurt-large-512"].astype(float).to_numpy()
    ok = np.all([np.isfinite(v) for v in cols.values()], axis=0) & np.isfinite(human)
    rho = {k: float(spearmanr(v[ok], human[ok])[0]) for k, v in cols.items()}
    tests = {}
    for name in extra:
        for other in ("preservation", "sentence_cosine", "bleurt (stored)"):
            r23 = float(spearmanr(cols[name][ok], cols[other][ok])[0])
            t, p = williams_test(rho[name], rho[other], r23, int(ok.sum()))
            tests[f"{name} vs {other}"] = {"t": t, "p_one_sided": p, "r23": r23}
    for other in ("preservation-fast", "sentence_cosine", "chrf", "bertscore", "bleurt (stored)"):
        if other not in cols:
            continue
        r23 = float(spearmanr(cols["preservation"][ok], cols[other][ok])[0])
        t, p = williams_test(rho["preservation"], rho[other], r23, int(ok.sum()))
        tests[f"preservation vs {other}"] = {"t": t, "p_one_sided": p, "r23": r23}
    return {"n": int(ok.sum()), "spearman": rho, "williams": tests,
            "sentence_cosine_max_abs_diff_vs_metric_on_300": cosine_check}


def pooled_spearman(table: pd.DataFrame, judgments: pd.DataFrame, aspect: str, names: list[str]) -> dict[str, Any]:
    """Spearman between each metric and the mean human rating of ``aspect``, over every rated (system, segment)
    pair of ``table`` (no averaging per input or per system)."""
    from scipy.stats import spearmanr

    human = judgments[judgments["aspect"] == aspect].groupby(["system", "segment"])["score"].mean()
    out: dict[str, Any] = {}
    pairs = set()
    for name in names:
        m = table[table["metric"] == name].set_index(["system", "segment"])["score"]
        both = pd.concat([m.rename("metric"), human.rename("human")], axis=1, join="inner").dropna()
        out[name] = float(spearmanr(both["metric"], both["human"])[0])
        pairs.add(len(both))
    # every metric scores the same rated pairs here; a metric with missing scores would show as a second count
    out["pairs"] = sorted(pairs) if len(pairs) > 1 else pairs.pop()
    return out


def lai(root: Any, score: dict[str, Any]) -> dict[str, Any]:
    from styleval.meta import run
    from styleval.meta.conventions import lai2022_tasks
    from styleval.meta.datasets import load_lai2022
    from styleval.meta.judgments import Judgments
    from styleval.datasets import read_lai2022

    data = load_lai2022(root, source="json")
    recs = [r for r in read_lai2022(root) if int(r.id) % 2 == 1]
    rows = []
    for name, fn in score.items():
        values = fn([r.source for r in recs], [r.output for r in recs])
        rows += [(r.system, r.id, name, float(v), r.direction) for r, v in zip(recs, values)]
    held = {r.id for r in recs}
    stored = data.metrics[data.metrics["metric"].isin(["src:bleurt", "src:bleu"]) & data.metrics["segment"].isin(held)]
    table = pd.concat([pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"]), stored])
    jf = data.judgments.frame
    judg = Judgments(jf[jf["segment"].isin(held)].reset_index(drop=True))
    seg, sys_ = lai2022_tasks("content")
    names = [*score, "src:bleurt", "src:bleu"]
    s, y = run(seg, judg, table, metrics=names), run(sys_, judg, table, metrics=names)
    return {"inputs": len(held), "kendall_per_input": {m: s.statistic(m) for m in names},
            "system_pearson": {m: y.statistic(m) for m in names},
            "spearman_pooled": pooled_spearman(table, judg.frame, "content", names)}


def mir(root: Any, score: dict[str, Any]) -> dict[str, Any]:
    from styleval.meta import MetaTask, run
    from styleval.meta.datasets import load_mir2019
    from styleval.meta.judgments import Judgments
    from styleval.datasets import read_mir2019

    data = load_mir2019(root)
    recs = [r for r in read_mir2019(root) if int(r.id) % 2 == 1]
    rows = []
    for name, fn in score.items():
        values = fn([r.source for r in recs], [r.output for r in recs])
        rows += [(r.system, r.id, name, float(v), r.direction) for r, v in zip(recs, values)]
    held = {r.id for r in recs}
    extra = ["unmasked:BLEU", "style_masked:WMD"]
    stored = data.metrics[data.metrics["metric"].isin(extra) & data.metrics["segment"].isin(held)]
    table = pd.concat([pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"]), stored])
    jf = data.judgments.frame
    judg = Judgments(jf[jf["segment"].isin(held)].reset_index(drop=True))
    task = MetaTask("content_preservation", level="segment", method="pearson", average_by="none",
                    orientation="signed")
    names = [*score, *extra]
    out: dict[str, Any] = {"inputs": len(held)}
    for model, systems in data.extra["models"].items():
        res = run(task.with_(systems=tuple(systems)), judg, table, metrics=names,
                  lower_is_better=data.lower_is_better)
        out[model] = {m: res.statistic(m) for m in names}
    res = run(task.with_(systems=tuple(s for v in data.extra["models"].values() for s in v)), judg, table,
              metrics=names, lower_is_better=data.lower_is_better)
    out["all"] = {m: res.statistic(m) for m in names}
    out["spearman_pooled"] = pooled_spearman(table, judg.frame, "content_preservation", names)
    return out


def style_shift(root: Any, score: dict[str, Any]) -> dict[str, Any]:
    from styleval.training.preservation_corpus import agreement, style_shift_test

    items = style_shift_test(root)
    src = [it["source"] for it in items]
    out: dict[str, Any] = {"n": len(items), "agreement": {}, "by_operation": {}, "by_origin": {}}
    ops = np.asarray([it["operation"] for it in items])
    origins = np.asarray([it["origin"] for it in items])
    for name, fn in score.items():
        a = fn(src, [it["style_rewrite"] for it in items])
        b = fn(src, [it["content_change"] for it in items])
        out["agreement"][name] = agreement(a, b)
        out["by_operation"][name] = {op: agreement(a[ops == op], b[ops == op]) for op in sorted(set(ops))}
        out["by_origin"][name] = {o: agreement(a[origins == o], b[origins == o]) for o in sorted(set(origins))}
    out["counts"] = {"operation": {op: int((ops == op).sum()) for op in sorted(set(ops))},
                     "origin": {o: int((origins == o).sum()) for o in sorted(set(origins))}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--json", help="write the figures to this JSON file")
    ap.add_argument("--skip-sgdd", action="store_true", help="leave out SGDD-TST (the slowest part)")
    ap.add_argument("--cache", help="folder to keep pair features in (a second run skips encoding)")
    ap.add_argument("--model", action="append", default=[], metavar="NAME=FOLDER",
                    help="also score the model in FOLDER, shown as model:NAME (repeatable)")
    ap.add_argument("--only-models", action="store_true", help="with --model: score only the given models, "
                    "the default and sentence_cosine (quicker)")
    args = ap.parse_args(argv)
    given = [m.partition("=") for m in args.model]
    if any(not name or not sep or not folder for name, sep, folder in given):
        ap.error("--model takes NAME=FOLDER")
    from styleval.datasets import default_root

    root = args.data or default_root()
    CACHE["dir"] = args.cache
    score = scorers()
    if args.only_models:
        score = {k: v for k, v in score.items() if k in ("preservation", "sentence_cosine", "chrf")}
    from styleval.preservation import load_preservation_model

    score.update({f"model:{name}": model_scorer(load_preservation_model(folder)) for name, _, folder in given})
    results: dict[str, Any] = {}
    for name, fn in (("style_shift", style_shift), ("lai2022_heldout", lai), ("mir2019_heldout", mir),
                     *(() if args.skip_sgdd else (("sgdd_tst", sgdd),))):
        _log(f"{name} ...")
        results[name] = fn(root, score)
        print(json.dumps({name: results[name]}, indent=1, default=float), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
