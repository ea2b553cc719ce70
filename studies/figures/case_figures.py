#!/usr/bin/env python
"""Figures of issue #32 (case counts when the system chose it), each through the style metrics with ``case=auto``.

    STYLEVAL_CACHE=/tmp/stylecache .venv/bin/python studies/figures/case_figures.py [--out case_figures.json]
    ... --only lai robustness own-choice fr80 cards

* ``lai``: Lai et al. 2022 (8 systems), per-input Kendall tau-like / system Pearson of ``style_probability``
  (calibrated P(target style), and uncalibrated) in ``case=auto`` with the human style scores, both directions pooled
  and each direction. Lai is the test: nothing was chosen on it (studies/log.md, issue #32).
* ``robustness``: the whole release lower-cased and tokenized (NLTK's Treebank tokenizer, independent of styleval's
  normaliser: sources, references and outputs); the informal→formal ``style_accuracy`` (auto) of BART, HIGH, IBT, NIU
  and RAO as released and so transformed (target: each moves by ≤ .05).
* ``own-choice``: only those five systems' informal→formal outputs lower-cased (sources and references as released):
  each one's accuracy drop (target: ≥ .10 on average). Also every system and direction as released, REF and INPUT.
* ``fr80``: the 160 ``xformal`` sentences no fit used (``fr.input.80`` + ``fr.80.ref0``): AUC and balanced accuracy of
  the cased model on them as written and lower-cased, of the case-blind model, and of the pair in ``auto`` (the 160
  taken as one corpus: as written it reads as cased, lower-cased and tokenized as a lower-cased release).
* ``cards``: PT16 test AUC and Spearman of both models of the pair (from their cards, scored when they were built).
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

import styleval  # noqa: E402
from styleval.datasets import lai2022  # noqa: E402
from styleval.meta import datasets as md  # noqa: E402
from styleval.meta.conventions import lai2022_tasks  # noqa: E402
from styleval.meta.evaluate import run  # noqa: E402
from styleval.records import Record  # noqa: E402
from styleval.style_models import load_style_model  # noqa: E402

LAI_KENDALL, LAI_PEARSON = lai2022_tasks("style")
BLIND_NAME, CASED_NAME = "formality-classifier-pt16", "formality-classifier-pt16-cased"
CASED_SYSTEMS = ("bart", "high", "ibt", "niu", "rao")
DIRECTIONS = ("both", "informal->formal", "formal->informal")


def lower_tokenized(text: str) -> str:
    """A release's form: NLTK Treebank tokens, lower-cased (not styleval's own normaliser)."""
    from nltk.tokenize import TreebankWordTokenizer

    return " ".join(TreebankWordTokenizer().tokenize(text)).lower()


def lai_records(data: Path) -> list[Record]:
    """Lai's 8 systems and REF: 80 inputs each, the one reference (``fr.80.ref0``) as released."""
    return lai2022.records(data)


def segment_scores(records: list[Record], spec: str) -> tuple[dict[tuple[str, str], float], dict]:
    """``(system, id) -> segment score`` of one metric spec over the records (no bootstrap), and its run facts
    (the casing decision of the first system; every system shares the inputs)."""
    result = styleval.score(records, [spec], bootstrap=0)
    out: dict[tuple[str, str], float] = {}
    facts: dict = {}
    for r in result:
        system = r.system
        out.update({(system, i): float(v) for i, v in zip(r.ids, r.segment_scores)})
        facts.setdefault("case", r.extra.get("case"))
        facts.setdefault("style_model", r.signature.resources.get("style_model"))
    return out, facts


def lai_figures(data: Path) -> dict:
    records = lai_records(data)
    ds = md.load_lai2022(data, source="json")
    rows = []
    facts = {}
    for label, spec in (("P(target), calibrated", "style_probability"),
                        ("P(target), uncalibrated", "style_probability:calibrated=false")):
        scores, facts[label] = segment_scores(records, spec)
        rows += [(s, seg, label, v, str(next(r.direction for r in records if r.system == s and r.id == seg)))
                 for (s, seg), v in scores.items()]
    table = pd.DataFrame(rows, columns=["system", "segment", "metric", "score", "direction"])
    out: dict = {"facts": facts}
    for direction in DIRECTIONS:
        for name, spec in (("kendall", LAI_KENDALL), ("system_pearson", LAI_PEARSON)):
            res = run(spec.with_(direction=direction), ds.judgments, table)
            out[f"{name} [{direction}]"] = {m: round(res.statistic(m), 3) for m in res.metrics}
    return out


def accuracies(records: list[Record]) -> tuple[dict[str, float], dict]:
    """``style_accuracy`` (auto) per ``system [direction]``, and the run facts."""
    scores, facts = segment_scores(records, "style_accuracy")
    direction = {(r.system, r.id): str(r.direction) for r in records}
    frame = pd.DataFrame([(s, direction[(s, i)], v) for (s, i), v in scores.items()], columns=["s", "d", "ok"])
    return {f"{s} [{d}]": round(float(v), 3) for (s, d), v in frame.groupby(["s", "d"])["ok"].mean().items()}, facts


def transformed(records: list[Record], fn, which=lambda r: True, inputs: bool = True) -> list[Record]:
    out = []
    for r in records:
        out.append(Record(id=r.id, system=r.system, direction=r.direction,
                          source=fn(r.source) if inputs else r.source,
                          references=[fn(x) for x in r.references] if inputs else list(r.references),
                          output=fn(r.output) if which(r) else r.output))
    return out


def with_inputs(data: Path, records: list[Record]) -> list[Record]:
    """The records plus the inputs taken as a system's outputs (``input``)."""
    first = [r for r in records if r.system == records[0].system]
    return records + [Record(id=r.id, system="input", direction=r.direction, source=r.source,
                             references=list(r.references), output=r.source) for r in first]


def robustness(data: Path) -> dict:
    records = with_inputs(data, lai_records(data))
    released, facts = accuracies(records)
    lowered, low_facts = accuracies(transformed(records, lower_tokenized))
    keys = [f"{s} [informal->formal]" for s in CASED_SYSTEMS]
    deltas = {k: round(lowered[k] - released[k], 3) for k in keys}
    return {"as released": released, "lower-cased tokenized release": lowered,
            "delta, five cased systems informal->formal": deltas,
            "max |delta|": round(max(abs(v) for v in deltas.values()), 3),
            "case decided": {"as released": facts["case"], "lower-cased tokenized": low_facts["case"]}}


def own_choice(data: Path) -> dict:
    records = lai_records(data)
    released, _ = accuracies(records)

    def chosen(r: Record) -> bool:
        return r.system in CASED_SYSTEMS and r.direction is not None and r.direction.target_style == "formal"

    lowered, facts = accuracies(transformed(records, str.lower, chosen, inputs=False))
    keys = [f"{s} [informal->formal]" for s in CASED_SYSTEMS]
    drops = {k: round(released[k] - lowered[k], 3) for k in keys}
    return {"as released": {k: released[k] for k in keys}, "outputs lower-cased": {k: lowered[k] for k in keys},
            "drop": drops, "mean drop": round(float(np.mean(list(drops.values()))), 3),
            "case decided": facts["case"]}


def fr80(data: Path) -> dict:
    """The 160 sentences no fit used, each scored as the output of its own direction would be."""
    from sklearn.metrics import roc_auc_score

    sample = lai2022.xformal(data, (lai2022.XFORMAL_INPUTS, lai2022.XFORMAL_REFERENCES[0]))
    y = np.array([label == "formal" for label in sample.labels])
    out: dict = {}

    def figures(model_name: str, texts: list[str]) -> dict:
        model = load_style_model(model_name)
        raw = model.raw_score(texts, "formal")
        label, _ = model.decide(texts)
        pred = label == model.style_index("formal")
        return {"auc": round(float(roc_auc_score(y, raw)), 3),
                "balanced_accuracy": round(float(0.5 * (pred[y].mean() + (~pred[~y]).mean())), 3)}

    cased, lowered = sample.texts, [t.lower() for t in sample.texts]
    low_tok = [lower_tokenized(t) for t in sample.texts]
    out["cased model"] = {"as written": figures(CASED_NAME, cased), "lower-cased": figures(CASED_NAME, lowered)}
    out["case-blind model"] = {"as written": figures(BLIND_NAME, cased),
                               "lower-cased tokenized": figures(BLIND_NAME, low_tok)}
    # auto: the 160 as one corpus (sources = the sentences): cased -> the cased model, lower-cased tokenized -> blind
    from styleval.textnorm.casing import case_evidence

    out["auto"] = {"as written": case_evidence(cased).decision,
                   "lower-cased tokenized": case_evidence(low_tok).decision,
                   "lower-cased only": case_evidence(lowered).decision}
    return out


def cards() -> dict:
    out = {}
    for name in (BLIND_NAME, CASED_NAME):
        scores = load_style_model(name).card.get("held_out", {}).get("scores", {})
        out[name] = {k: round(v, 3) for k, v in scores.items() if k != "n"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", nargs="*", choices=["lai", "robustness", "own-choice", "fr80", "cards"])
    args = ap.parse_args()
    data = Path(args.data)
    parts = args.only or ["cards", "fr80", "robustness", "own-choice", "lai"]
    figures = {}
    for part, fn in (("cards", cards), ("fr80", lambda: fr80(data)), ("robustness", lambda: robustness(data)),
                     ("own-choice", lambda: own_choice(data)), ("lai", lambda: lai_figures(data))):
        if part in parts:
            figures[part] = fn()
            print(json.dumps({part: figures[part]}, indent=1), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
