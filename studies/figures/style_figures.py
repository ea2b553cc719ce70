#!/usr/bin/env python
"""Figures for the style-strength report (slow: spaCy and sentence embeddings over the Lai/Mir outputs).

    STYLEVAL_CACHE=/tmp/stylecache .venv/bin/python studies/figures/style_figures.py [--out figures.json]

1. held-out quality of each shipped style model (read from the model cards);
2. Lai et al. 2022: per-input Kendall tau-like and system-level Pearson of our formality scorers against human
   style scores (conventions of docs/meta-conventions.md), both directions and per direction, next to the
   paper's XFORMAL classifier recomputed from the stored scores (``--model LABEL=FOLDER`` adds a model);
   ``lai-accuracy``: style accuracy of each system, of REF and of the INPUT rows per direction, as released and
   lower-cased + tokenized (NLTK's Treebank tokenizer); ``gyafc``: AUC / balanced accuracy on xformal/fr.80.*
   (calibration and selection data of the formality models: diagnostics, not test figures);
   ``lai-case``: what Lai's human style scores follow: each system's mean human style per direction next to the
   share of its outputs that start lower-case, and the Lai figures of ``acceptability`` alone and of P(target style)
   x acceptability (shipped classifier and any ``--model``);
3. Mir et al. 2019: Pearson of our direction-corrected EMD (shipped Yelp classifier) with human style intensity,
   each model's settings pooled, next to the stored TextCNN EMD;
4. Mir et al. 2019: sentence BLEU unmasked / style-masked / style-removed (Mir's lexicon) against human content.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from styleval.datasets import lai2022  # noqa: E402
from styleval.meta import datasets as md  # noqa: E402
from styleval.meta.conventions import lai2022_tasks  # noqa: E402
from styleval.meta.evaluate import MetaTask, run  # noqa: E402
from styleval.records import Direction  # noqa: E402
from styleval.style_models import load_style_model, shipped_models  # noqa: E402
from styleval.style_models.distance import direction_corrected_emd  # noqa: E402
from styleval.style_models.fscore import fscores  # noqa: E402

LAI_KENDALL, LAI_PEARSON = lai2022_tasks("style")


def model_cards() -> dict:
    return {name: load_style_model(name).card.get("held_out", {}).get("scores") for name in shipped_models()}


def lai_texts(data: Path):
    """Lai et al.'s 8 systems + REF outputs with their directions, and the 80 inputs (the INPUT rows)."""
    ds = md.load_lai2022(data, source="json")
    outputs = ds.extra["outputs"]  # (system, segment) -> text
    keys = sorted(outputs)
    directions = [Direction.parse(lai2022.direction_of(int(seg))) for _, seg in keys]
    inputs = lai2022.xformal(data, [lai2022.XFORMAL_INPUTS]).texts
    return ds, keys, [outputs[k] for k in keys], directions, inputs


def lower_tokenized(texts: list[str]) -> list[str]:
    """What many style-transfer releases look like: NLTK's Treebank tokenizer (independent of styleval's own
    normalisation), lower-cased."""
    from nltk.tokenize import TreebankWordTokenizer

    tok = TreebankWordTokenizer()
    return [" ".join(tok.tokenize(t)).lower() for t in texts]


def oriented(model, texts: list[str], target_formal: np.ndarray, calibrated: bool = True,
             probability: bool = False) -> np.ndarray:
    """Higher = further toward the target: a classifier's (calibrated) probability of the target style, or a
    regressor's score from its (calibrated) decision point, negated for informal targets."""
    if model.kind == "classifier":
        _, p = model.decide(texts, calibrated=calibrated)
        p_formal = p[:, model.style_index("formal")]
        return np.where(target_formal, p_formal, 1 - p_formal)
    cal = model.calibration if calibrated else None
    if probability and cal is not None:
        p_high = cal.probability(model.raw_score(texts, cal.positive))
        p_formal = p_high if cal.positive == "formal" else 1 - p_high
        return np.where(target_formal, p_formal, 1 - p_formal)
    centre = 0.0 if cal is None else (cal.threshold if model.style_index(cal.positive) == 1 else -cal.threshold)
    return np.where(target_formal, 1.0, -1.0) * (model.regress(texts) - centre)


def lai_figures(data: Path, models: dict[str, str] | None = None) -> dict:
    """Per-input Kendall tau-like and system Pearson with Lai's human style scores, pooled and per direction, for
    the shipped formality models (calibrated and not) and any ``models`` given as {label: folder}."""
    ds, keys, texts, directions, _ = lai_texts(data)
    txt = md.load_lai2022(data, source="txt")
    target_formal = np.array([d.target_style == "formal" for d in directions])
    scores = {"ours:fscore": np.where(target_formal, 1, -1) * (fscores(texts) - 50.0)}
    named = {"regressor-pt16": "formality-regressor-pt16", "classifier-pt16": "formality-classifier-pt16",
             **(models or {})}
    for label, name in named.items():
        model = load_style_model(name)
        scores[f"ours:{label}"] = oriented(model, texts, target_formal)
        if model.calibration is not None:
            scores[f"ours:{label} (uncalibrated)"] = oriented(model, texts, target_formal, calibrated=False)
            if model.kind == "regressor":
                scores[f"ours:{label} (calibrated probability)"] = oriented(model, texts, target_formal,
                                                                            probability=True)
    rows = [(s, seg, m, float(v), str(d)) for m, vals in scores.items()
            for (s, seg), v, d in zip(keys, vals, directions)]
    table = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    stored = txt.metrics[txt.metrics["metric"].isin(["style:cls-xformal-target", "style:cls-pt16-target",
                                                     "style:reg-pt16"])].copy()
    # the stored R-PT16 score is the raw formality score: orient it as ours
    flip = (stored["metric"] == "style:reg-pt16") & (stored["direction"] == "formal->informal")
    stored.loc[flip, "score"] = -stored.loc[flip, "score"]
    table = pd.concat([table, stored[table.columns]], ignore_index=True)
    out = {}
    for direction in ("both", "informal->formal", "formal->informal"):
        for label, spec in (("kendall", LAI_KENDALL), ("system_pearson", LAI_PEARSON)):
            res = run(spec.with_(direction=direction), ds.judgments, table)
            out[f"{label} [{direction}]"] = {m: round(res.statistic(m), 3) for m in res.metrics}
    return out


def lai_case(data: Path, models: dict[str, str] | None = None) -> dict:
    """Why Lai's pooled style figures reward case: mean human style per system and direction with the share of
    outputs starting lower-case; per-input Kendall / system Pearson of acceptability alone and of a classifier's
    P(target style) times acceptability (the shipped acceptability model, its default ``auto`` normalisation,
    scored per system as the metric does)."""
    from styleval.acceptability.model import load_acceptability

    ds, keys, texts, directions, _ = lai_texts(data)
    systems = [s for s, _ in keys]
    frame = ds.judgments.frame
    human = frame[frame["aspect"] == "style"].groupby(["system", "direction"])["score"].mean()
    lower = pd.DataFrame({"system": systems, "direction": [str(d) for d in directions],
                          "lower": [t[:1].islower() for t in texts]}).groupby(["system", "direction"])["lower"].mean()
    out: dict = {"human style mean / share starting lower-case": {
        f"{s} [{d}]": [round(float(human[(s, d)]), 1), round(float(lower[(s, d)]), 3)] for s, d in human.index}}
    am = load_acceptability()
    acc = np.zeros(len(texts))
    for system in sorted(set(systems)):
        idx = [i for i, s in enumerate(systems) if s == system]
        acc[idx] = am.predict([texts[i] for i in idx])  # the model's own normalisation, per system
    target_formal = np.array([d.target_style == "formal" for d in directions])
    scores = {"ours:acceptability": acc}  # every score here is oriented already: higher = better in either direction
    for label, name in {"classifier-pt16": "formality-classifier-pt16", **(models or {})}.items():
        model = load_style_model(name)
        _, p = model.decide(texts, calibrated=False)
        p_formal = p[:, model.style_index("formal")]
        p_target = np.where(target_formal, p_formal, 1 - p_formal)
        scores[f"ours:{label} P(target)"] = p_target
        scores[f"ours:{label} P(target) x acceptability"] = p_target * acc
        if name in (models or {}).values():  # a cased model given with --model: how far its decisions move
            out[f"accuracy moves, {label} on cased releases"] = case_routes(data, model, keys, texts, directions)
    rows = [(s, seg, m, float(v), str(d)) for m, vals in scores.items()
            for (s, seg), v, d in zip(keys, vals, directions)]
    table = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    for direction in ("both", "informal->formal", "formal->informal"):
        for label, spec in (("kendall", LAI_KENDALL), ("system_pearson", LAI_PEARSON)):
            res = run(spec.with_(direction=direction), ds.judgments, table)
            out[f"{label} [{direction}]"] = {m: round(res.statistic(m), 3) for m in res.metrics}
    return out


def case_routes(data: Path, model, keys, texts: list[str], directions) -> dict:
    """Mean |change of style accuracy| over the 8 systems x 2 directions between the outputs as released and
    lower-cased + tokenized, when a (cased) ``model`` decides the released outputs with the threshold that maximises
    balanced accuracy on fr.80.ref1-3, and the lower-cased ones go (a) to the shipped normalised classifier or (b)
    through the fluency metrics' ``auto`` normalisation (detokenize, true-case) to the same cased model."""
    from styleval.textnorm.readable import normalize_all, resolve_auto

    sample = lai2022.xformal(data, ("fr.80.ref1", "fr.80.ref2", "fr.80.ref3"))
    sel = sample.texts
    y = np.array([label == "formal" for label in sample.labels])
    raw = model.raw_score(sel, "formal")
    cuts = np.unique(raw)
    bal = [0.5 * ((raw[y] >= c).mean() + (raw[~y] < c).mean()) for c in cuts]
    cut = cuts[int(np.argmax(bal))]
    systems = np.array([s for s, _ in keys])
    target_formal = np.array([d.target_style == "formal" for d in directions])
    low = lower_tokenized(texts)

    def auto(batch_texts: list[str]) -> list[str]:
        out = list(batch_texts)
        for system in set(systems):
            idx = np.where(systems == system)[0]
            mode = resolve_auto([batch_texts[i] for i in idx])
            if mode != "none":
                for i, t in zip(idx, normalize_all([batch_texts[i] for i in idx], mode)):
                    out[i] = t
        return out

    shipped = load_style_model("formality-classifier-pt16")
    released = model.raw_score(texts, "formal") >= cut
    label, _ = shipped.decide(low)
    routes = {"lower-cased to the shipped normalised classifier": label == shipped.style_index("formal"),
              "lower-cased true-cased (auto) to the same model": model.raw_score(auto(low), "formal") >= cut}
    keep = systems != "ref"
    result = {}
    for name, formal in routes.items():
        a = pd.DataFrame({"s": systems, "d": target_formal, "ok": np.where(target_formal, released, ~released)})
        b = np.where(target_formal, formal, ~formal)
        a["ok2"] = b
        g = a[keep].groupby(["s", "d"])[["ok", "ok2"]].mean()
        result[name] = round(float((g["ok"] - g["ok2"]).abs().mean()), 3)
    return result


def lai_accuracy(data: Path, model_name: str = "formality-classifier-pt16") -> dict:
    """Style accuracy (the share of outputs decided to be in the target style) of each Lai system, of REF (human
    rewrites) and of the INPUT rows taken as outputs, per direction; as released and lower-cased + tokenized."""
    _, keys, texts, directions, inputs = lai_texts(data)
    model = load_style_model(model_name)
    systems = [s for s, _ in keys] + ["input"] * len(inputs)
    all_texts = texts + inputs
    dirs = [str(d) for d in directions] + [lai2022.direction_of(i) for i in range(len(inputs))]
    target = np.array([model.style_index(Direction.parse(d).target_style) for d in dirs])
    out: dict = {"model": model_name, "calibration": model.resources().get("style_calibration")}
    for variant, variant_texts in (("as released", all_texts), ("lower-cased tokenized", lower_tokenized(all_texts))):
        label, _ = model.decide(variant_texts)
        frame = pd.DataFrame({"system": systems, "direction": dirs, "correct": label == target})
        out[variant] = {f"{s} [{d}]": round(float(v), 3)
                        for (s, d), v in frame.groupby(["system", "direction"])["correct"].mean().items()}
    sys_keys = [k for k in out["as released"] if not k.startswith(("ref", "input"))]
    deltas = [abs(out["as released"][k] - out["lower-cased tokenized"][k]) for k in sys_keys]
    out["mean |delta| over the 8 systems x 2 directions"] = round(float(np.mean(deltas)), 4)
    out["max |delta|"] = round(float(np.max(deltas)), 4)
    return out


def gyafc_selection(data: Path, model_name: str = "formality-classifier-pt16") -> dict:
    """AUC and balanced accuracy on the 400 GYAFC sentences of xformal/fr.80.* (inputs and four references), cased
    and lower-cased + tokenized. These sentences calibrate / select the shipped formality models: the figures are
    in-sample diagnostics, not test figures."""
    from sklearn.metrics import roc_auc_score

    sample = lai2022.xformal(data, (lai2022.XFORMAL_INPUTS, *lai2022.XFORMAL_REFERENCES))
    texts = sample.texts
    y = np.array([label == "formal" for label in sample.labels])
    model = load_style_model(model_name)
    out = {}
    for variant, vt in (("cased", texts), ("lower-cased tokenized", lower_tokenized(texts))):
        raw = model.raw_score(vt, "formal")
        label, _ = model.decide(vt)
        pred = label == model.style_index("formal")
        out[variant] = {"auc": round(float(roc_auc_score(y, raw)), 3),
                        "balanced_accuracy": round(float(0.5 * (pred[y].mean() + (~pred[~y]).mean())), 3)}
    return out


def mir_figures(data: Path) -> dict:
    from styleval.metrics import registry
    from styleval.metrics.base import Batch
    from styleval.metrics.style import StyleMask, StyleRemove
    from styleval.datasets import read_mir2019

    ds = md.load_mir2019(data)
    records = read_mir2019(data)
    clf = load_style_model("sentiment-classifier-yelp")
    lexicon = str(data / "mir2019" / "style_lexicon" / "style_words_and_weights.json")
    rows = []
    by_system: dict[str, list] = {}
    for r in records:
        by_system.setdefault(r.system, []).append(r)
    for system, recs in by_system.items():
        src = clf.predict_proba([r.source for r in recs])
        out = clf.predict_proba([r.output for r in recs])
        target = [clf.style_index(r.direction.target_style) for r in recs]
        emd = direction_corrected_emd(src, out, target)
        rows += [(system, r.id, "emd:ours-yelp", float(v), str(r.direction)) for r, v in zip(recs, emd)]
        rows += [(system, r.id, "target:ours-yelp", float(o[t]), str(r.direction))
                 for r, o, t in zip(recs, out, target)]
        batch = Batch.from_records(recs)
        for label, metric in (("unmasked:sentBLEU", registry.create("bleu", against="source")),
                              ("style_masked:sentBLEU", StyleMask(inner=registry.create("bleu", against="source"),
                                                                  lexicon=lexicon)),
                              ("style_removed:sentBLEU", StyleRemove(inner=registry.create("bleu", against="source"),
                                                                     lexicon=lexicon))):
            res = metric.score(batch)
            rows += [(system, i, label, float(v), str(r.direction))
                     for i, v, r in zip(res.ids, res.segment_scores, recs)]
    ours = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    table = pd.concat([ours, ds.metrics[ds.metrics["metric"].isin(["emd:textcnn", "target:textcnn", "unmasked:BLEU",
                                                                   "style_masked:BLEU", "style_removed:BLEU"])]],
                      ignore_index=True)
    out = {}
    for model, systems in ds.extra["models"].items():
        common = dict(level="segment", method="pearson", average_by="none", orientation="signed",
                      systems=tuple(systems), human="mean")
        sti = run(MetaTask(aspect="style_transfer_intensity", **common), ds.judgments, table,
                  metrics=["emd:ours-yelp", "target:ours-yelp", "emd:textcnn", "target:textcnn"])
        cp = run(MetaTask(aspect="content_preservation", **common), ds.judgments, table,
                 metrics=["unmasked:sentBLEU", "style_masked:sentBLEU", "style_removed:sentBLEU", "unmasked:BLEU",
                          "style_masked:BLEU", "style_removed:BLEU"])
        out[model] = {"style_intensity": {m: round(sti.statistic(m), 3) for m in sti.metrics},
                      "content": {m: round(cp.statistic(m), 3) for m in cp.metrics}}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", choices=["cards", "lai", "lai-case", "lai-accuracy", "gyafc", "mir"], nargs="*")
    ap.add_argument("--model", action="append", default=[], metavar="LABEL=FOLDER",
                    help="another formality model to put in the Lai table")
    ap.add_argument("--accuracy-model", default="formality-classifier-pt16",
                    help="the classifier of the style-accuracy and GYAFC figures")
    args = ap.parse_args()
    data = Path(args.data)
    parts = args.only or ["cards", "lai", "lai-accuracy", "gyafc", "mir"]
    extra = dict(m.split("=", 1) for m in args.model)
    figures = {}
    for part, fn in (("cards", lambda: model_cards()), ("lai", lambda: lai_figures(data, extra)),
                     ("lai-case", lambda: lai_case(data, extra)),
                     ("lai-accuracy", lambda: lai_accuracy(data, args.accuracy_model)),
                     ("gyafc", lambda: gyafc_selection(data, args.accuracy_model)),
                     ("mir", lambda: mir_figures(data))):
        if part in parts:
            figures[part] = fn()
            print(json.dumps({part: figures[part]}, indent=1), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
