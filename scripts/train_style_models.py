#!/usr/bin/env python
"""Rebuild the style models shipped in src/styleval/style/pretrained/ from ../shared/data.

    .venv/bin/python scripts/train_style_models.py                    # all four models
    .venv/bin/python scripts/train_style_models.py --only formality-regressor-pt16
    .venv/bin/python scripts/train_style_models.py --compare pt16     # feature sets, chosen on the tune split
    .venv/bin/python scripts/train_style_models.py --only formality-regressor-pt16 --linear   # no fine-tuning

The PT16 regressor is MiniLM fine-tuned with low-rank adapters (as Lai et al.'s R-PT16 is a fine-tuned
transformer): about 10 minutes on 2 CPU cores, under one on a GPU (``--device cuda``). ``--linear`` trains the
earlier ridge model on TF-IDF + MiniLM + hand features instead.

Held-out splits are scored once, after model selection, and never used to choose anything:
PT16 test (selection on tune), Yelp test (selection on 10% of dev; the train split is absent), ParaDetox
test (split by toxic source sentence, selection on the dev part). Set STYLEVAL_CACHE to keep sentence
embeddings between runs.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from styleval.style import (StyleModel, evaluate, finetune_style_model, load_paradetox, load_pt16,  # noqa: E402
                            load_yelp_shen, train_style_model)

FORMALITY_ALIASES = {"formality": "formal", "informality": "informal"}
PT16_FEATURES = "tfidf+embedding+hand"
PT16_OPTIONS = {"tfidf": {"max_word_features": 20000, "max_char_features": 30000},
                "embedding": {"scale": 1.0}, "hand": {"scale": 0.5}}
# Fine-tuning of the PT16 regressor, chosen on the tune split (Spearman) in a scratch sweep on a lent GPU over
# learning rate, epochs, rank and batch size (the sweep script was not kept): lr 3e-4, 5 epochs, rank 8, batch 32
# (tune .726; rank 32 gave .727, a tie at four times the size). The epoch kept is the best on tune.
PT16_FINETUNE = {"rank": 8, "alpha": 16.0, "lr": 3e-4, "epochs": 5, "batch_size": 32}


def relative_origins(card: dict, data: Path) -> dict:
    """Data paths in a card written relative to the data root (``shared/data/...``), not this machine's."""
    root = str(data.resolve())
    for part in ("training", "selection", "held_out"):
        entry = card.get(part)
        if isinstance(entry, dict) and isinstance(entry.get("data"), str) and entry["data"].startswith(root):
            entry["data"] = "shared/data" + entry["data"][len(root):]
    return card


def progress_printer(every: int = 50):
    def report(what: str, done: int, total: int) -> None:
        if done % every == 0 or done == total:
            print(f"  {what}: step {done}/{total}", flush=True)
    return report


def pt16_models(data: Path, command: str, features: str = PT16_FEATURES, options=None, *, linear: bool = False,
                device: str | None = None) -> list[StyleModel]:
    options = options or PT16_OPTIONS
    train, tune, test = (load_pt16(data, s) for s in ("train", "tune", "test"))
    note = ("PT16 test is shifted against train (mean score +0.17 vs -0.73); it is held out, and choices were "
            "made on the tune split only")
    reg_args = dict(kind="regressor", selection=tune, held_out=test, poles=("informal", "formal"),
                    aliases=FORMALITY_ALIASES, name="formality-regressor-pt16",
                    description="Sentence formality score (Pavlick & Tetreault 2016 scale, -3 informal .. 3 "
                    "formal), as Lai et al.'s R-PT16.", command=command)
    if linear:
        reg = train_style_model(train, features=features, feature_options=options, notes=[note], **reg_args)
    else:
        family = ("The model family (a fine-tuned transformer, as Lai et al.'s R-PT16) was fixed beforehand; on "
                  "tune the linear TF-IDF+MiniLM+hand ridge is as good (Spearman .737; this model's epochs are "
                  "in 'selection'), so tune alone does not prefer it")
        reg = finetune_style_model(train, device=device, notes=[note, family], progress=progress_printer(),
                                   **PT16_FINETUNE, **reg_args)
    btrain, btune, btest = (load_pt16(data, s, binary=True) for s in ("train", "tune", "test"))

    def spearman_with_scores(model: StyleModel) -> dict[str, float]:
        p = model.predict_proba(test.texts)[:, model.style_index("formal")]
        return {"spearman_p_formal_vs_score": float(spearmanr(test.labels, p)[0])}

    clf = train_style_model(btrain, kind="classifier", features=features, feature_options=options, selection=btune,
                            held_out=btest, aliases=FORMALITY_ALIASES, name="formality-classifier-pt16",
                            description="Formal vs informal sentence classifier (PT16 score > 0 is formal), as Lai "
                            "et al.'s C-PT16.", command=command, notes=[note], extra_held_out=spearman_with_scores)
    return [reg, clf]


# Yelp fine-tuning, fixed beforehand (no sweep): MiniLM with rank-8 adapters, 2 epochs, the epoch kept chosen on
# the same 10% of dev that chooses C for the linear model; the fine-tuned model ships only if it is better there.
YELP_FINETUNE = {"rank": 8, "alpha": 16.0, "lr": 5e-4, "epochs": 2, "batch_size": 32}
YELP_ALIASES = {"neg": "negative", "pos": "positive", "0": "negative", "1": "positive"}


def yelp_model(data: Path, command: str, *, linear: bool = False, device: str | None = None) -> StyleModel:
    dev, test = load_yelp_shen(data, "dev"), load_yelp_shen(data, "test")
    common = dict(kind="classifier", held_out=test, aliases=YELP_ALIASES, name="sentiment-classifier-yelp",
                  description="Negative vs positive Yelp review sentences (Shen et al. 2017 data).", command=command)
    lin = train_style_model(dev, features="tfidf",
                            feature_options={"tfidf": {"word_ngrams": (1, 3), "max_word_features": 60000,
                                                       "max_char_features": 60000}},
                            grid=[1.0, 4.0, 16.0, 64.0],
                            notes=["trained on the dev split (the train split is absent); C chosen on 10% of dev, "
                                   "then refitted on all of dev; test held out"], **common)
    if linear:
        return lin
    lin_sel = max(lin.card["selection"]["grid"]["scores"].values())
    ft = finetune_style_model(dev, device=device, progress=progress_printer(200), **YELP_FINETUNE, **common,
                              notes=["trained on 90% of the dev split (the train split is absent); the epoch kept "
                                     "is the best on the other 10% (seed 13); test held out",
                                     f"chosen over the TF-IDF logistic regression on that 10% (accuracy "
                                     f"{{ft_sel:.4f}} vs {lin_sel:.4f})"])
    ft_sel = max(e["selection"] for e in ft.card["selection"]["epochs"])
    ft.card["notes"][-1] = ft.card["notes"][-1].format(ft_sel=ft_sel)
    print(f"  yelp selection accuracy: fine-tuned {ft_sel:.4f}, linear {lin_sel:.4f}", flush=True)
    return ft if ft_sel > lin_sel else lin


def paradetox_model(data: Path, command: str) -> StyleModel:
    parts = load_paradetox(data)
    return train_style_model(parts["train"], kind="classifier", features="tfidf", selection=parts["dev"],
                             held_out=parts["test"], grid=[1.0, 4.0, 16.0, 64.0],
                             feature_options={"tfidf": {"max_word_features": 40000, "max_char_features": 60000}},
                             aliases={"non-toxic": "neutral", "nontoxic": "neutral", "detoxified": "neutral",
                                      "polite": "neutral"},
                             name="toxicity-classifier-paradetox", description="Toxic vs neutral sentences "
                             "(ParaDetox toxic inputs and their crowd-verified rewrites).", command=command,
                             notes=["80/10/10 split by toxic source sentence (seed 13): no rewrite of a test "
                                    "sentence is seen in training"])


def compare_pt16(data: Path) -> None:
    """Feature sets for the PT16 regressor: selection Spearman on tune (the choice) and test (reported)."""
    sets = ["tfidf", "hand", "embedding", "tfidf+hand", "embedding+hand", "tfidf+embedding", "tfidf+embedding+hand"]
    train, tune, test = (load_pt16(data, s) for s in ("train", "tune", "test"))
    for fs in sets:
        t0 = time.time()
        m = train_style_model(train, kind="regressor", features=fs, feature_options=PT16_OPTIONS, selection=tune,
                              poles=("informal", "formal"))
        sel = max(m.card["selection"]["grid"]["scores"].values())
        te = evaluate(m, test)["spearman"]
        print(f"{fs:24s} tune {sel:.3f}  test {te:.3f}  ({time.time() - t0:.0f}s)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "src" / "styleval" / "style" / "pretrained"))
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--compare", choices=["pt16"], default=None)
    ap.add_argument("--linear", action="store_true", help="PT16 regressor and Yelp classifier: linear models only, no fine-tuning")
    ap.add_argument("--device", default=None, help="torch device for fine-tuning (default: cuda if available)")
    args = ap.parse_args()
    data = Path(args.data)
    if args.compare:
        compare_pt16(data)
        return 0
    command = ("python scripts/train_style_models.py" + (" --only " + " ".join(args.only) if args.only else "")
               + (" --linear" if args.linear else ""))
    builders = {"formality-regressor-pt16": "pt16", "formality-classifier-pt16": "pt16",
                "sentiment-classifier-yelp": "yelp", "toxicity-classifier-paradetox": "paradetox"}
    wanted = args.only or list(builders)
    groups = list(dict.fromkeys(builders[w] for w in wanted))
    for group in groups:
        t0 = time.time()
        models = {"pt16": lambda: pt16_models(data, command, linear=args.linear, device=args.device), "yelp": lambda: [yelp_model(data, command, linear=args.linear, device=args.device)],
                  "paradetox": lambda: [paradetox_model(data, command)]}[group]()
        for m in models:
            if m.card["name"] not in wanted:
                continue
            relative_origins(m.card, data)
            folder = m.save(Path(args.out) / m.card["name"])
            print(f"{m.card['name']}: held-out {json.dumps(m.card['held_out']['scores'])} "
                  f"chosen {m.card['selection']['chosen']} -> {folder} ({time.time() - t0:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
