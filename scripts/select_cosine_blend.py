"""Choose, on training data only, whether (and how much) plain MiniLM cosine should be averaged into a
preservation model's score, and measure the choice with a development analogue of the held-out style-shift test.

    .venv/bin/python scripts/select_cosine_blend.py --cache DIR --keep KEEP [--json out.json] [--partners]

Why: on held-out data, the default model's Spearman over all rated pairs is below plain MiniLM cosine on Lai 2022
and Mir 2019 (docs/results.md), the form in which the issue's independent similarity sets are judged. The
learned scores separate "meaning kept" from "meaning changed" well but grade similar pairs coarsely; cosine grades
them finely. A blend ``(1 - a) * model + a * clip(cosine, 0, 1)`` costs the default model nothing (cosine is its
first pair feature).

Development data: the split of scripts/select_cross_encoder.py (training pairs halved by source text). ``KEEP``
holds the recipes that script trained on half A (``--keep KEEP --variants base,bi,layers3``: ``model-NAME.npz``);
the feature head is fitted on half A here. Figures on half B:

* ``lai``, ``mir``: Spearman with the human content ratings of half B's even Lai 2022 / Mir 2019 rows;
* ``style``: the training-side agreement of select_cross_encoder.py (a style rewrite against an automatic
  meaning change *of that rewrite*, so the change has the rewrite's style);
* ``shift``: the held-out test's design on half B's inputs instead: each input's human style rewrite against an
  automatic meaning change *of the input* (keeping the input's style; donors from half B only). Cosine favours
  the latter, as it favours a near-copy, so ``style`` flatters cosine and ``shift`` does not;
* ``dev2`` = mean of lai, mir and shift, the figure the weight is chosen by; ``dev`` (with style) is shown too.

``--partners``: also, for the default's form (head + ``base`` at .5) at a = .2 and .3, other partners instead of the
cosine (the head's token and content-word features, and the cosine of the texts with their style words removed)
and other forms of the average (geometric; ``score * (1 - a + a * cosine)``; head and cross-encoder averaged on
the logit scale).

Nothing held out for docs/results.md is read (no SGDD-TST, no odd Lai/Mir rows, no style-shift test item).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from select_cross_encoder import SCORERS, all_features, dev_figures, halves, head_scores, scorer_kind
from styleval.content import corpus
from styleval.content.data import PairData
from styleval.content.features import FEATURES, PairFeaturizer
from styleval.content.negatives import DonorPool, corrupt
from styleval.content.train import default_style_words
from styleval.models import catalog as cat
from styleval.nlp import parse_many

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)


def shift_items(dev: PairData, seed: int = corpus.SEED + 2) -> list[tuple[str, str, str]]:
    """(source, style rewrite, meaning change of the source) for each half-B source with a style rewrite that
    differs from it: the held-out style-shift test's construction on development inputs."""
    rng = random.Random(seed)
    first: dict[str, str] = {}
    for s, o, g in zip(dev.sources, dev.outputs, dev.groups):
        if g == "style-rewrites" and s.strip() != o.strip():
            first.setdefault(s, o)
    sources = list(first)
    parsed = dict(zip(sources, parse_many(sources)))
    pool = DonorPool.build(list(parsed.values()))
    items = []
    for s in sources:
        got = corrupt(parsed[s], pool, rng, corpus.STYLE_SHIFT_OPERATIONS)
        if got is not None:
            items.append((s, first[s], got[1]))
    return items


def dev_arguments(description: str | None) -> argparse.ArgumentParser:
    """A parser with the arguments every development study takes: --data, --cache, --keep, --json."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--cache", default=None, help="pair-feature cache folder of scripts/train_preservation.py")
    ap.add_argument("--keep", required=True, help="model-NAME.npz files of select_cross_encoder.py --keep")
    ap.add_argument("--json", default=None, help="write every figure here")
    return ap


def stderr_log() -> Callable[[str], None]:
    """A logger to stderr that prefixes each message with the seconds since it was made."""
    t0 = time.time()
    return lambda msg: print(f"[{time.time() - t0:6.0f}s] {msg}", file=sys.stderr, flush=True)


def emit(results: dict[str, Any], path: str | None) -> int:
    """Print the figures as JSON (and write them to ``path`` when given); the script's exit status."""
    text = json.dumps(results, indent=1)
    if path:
        Path(path).write_text(text, encoding="utf-8")
    print(text)
    return 0


def development_split(data_dir: str | None, cache: str | None) -> tuple[PairData, list[int], list[int], np.ndarray,
                                                                      list[tuple[str, str, str]]]:
    """(training pairs, half-A and half-B indices, every pair's features, half B's style-shift items)."""
    data = corpus.training_pairs(data_dir)
    ia, ib = halves(data)
    return data, ia, ib, all_features(data, cache), shift_items(data.subset(ib))


def three_ways(score: Any, dev: PairData,
               items: list[tuple[str, str, str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A scorer's (half-B, style-rewrite, meaning-change) scores; ``score(comparisons, outputs)``."""
    src = [s for s, _, _ in items]
    return (score(dev.sources, dev.outputs), score(src, [r for _, r, _ in items]),
            score(src, [c for _, _, c in items]))


def item_origins(items: list[tuple[str, str, str]], data_dir: str | None) -> np.ndarray:
    """Where each style-shift item's source comes from: ``yelp``, ``paradetox``, ``lai`` or ``pt16`` (a PT16
    sentence whose rewrite was made by styleval's formality rules, not by a person)."""
    where: dict[str, str] = {}
    for name, part in (("pt16", corpus.pt16_rewrites(data_dir)), ("lai", corpus.lai_references(data_dir)),
                       ("paradetox", corpus.paradetox_rewrites(data_dir)), ("yelp", corpus.yelp_rewrites(data_dir))):
        where.update({s: name for s, _, _ in part})
    return np.asarray([where.get(s, "other") for s, _, _ in items])


def dev2_figures(parts: tuple[np.ndarray, ...], dev: PairData,
                 origins: np.ndarray | None = None) -> dict[str, float]:
    """lai, mir, style and dev of dev_figures on the half-B scores, shift on the items and dev2 (lai, mir, shift).
    With the items' ``origins``, also ``shift_human``: shift on the items whose style rewrite a person wrote (not
    PT16's rule rewrites), the only kind in the held-out test, with yelp-dualrl and ParaDetox weighted equally as
    there (400 items each)."""
    out = dev_figures(parts[0], dev)
    out["shift"] = round(corpus.agreement(parts[1], parts[2]), 4)
    out["dev2"] = round(float(np.mean([out["lai"], out["mir"], out["shift"]])), 4)
    if origins is not None:
        by = {o: corpus.agreement(parts[1][origins == o], parts[2][origins == o])
              for o in ("yelp", "paradetox", "lai", "pt16") if np.any(origins == o)}
        out.update({f"shift_{o}": round(v, 4) for o, v in by.items()})
        out["shift_human"] = round(float(np.mean([by["yelp"], by["paradetox"]])), 4)
    return out


def clip(v: np.ndarray) -> np.ndarray:
    """Scores (a cosine) clipped to 0-1, the range of the scores they are averaged with."""
    return np.clip(v, 0.0, 1.0)


def style_masked(text: str, style_words: set[str]) -> str:
    """The text without its style words (word and punctuation tokens joined by spaces); the text itself when
    nothing would be left."""
    kept = [w for w in re.findall(r"\w+|[^\w\s]", text) if w.lower() not in style_words]
    return " ".join(kept) if kept else text


def partner_study(scored: dict[str, tuple[np.ndarray, ...]], feats: tuple[np.ndarray, ...],
                  masked_cosine: tuple[np.ndarray, ...], figures: Any) -> dict[str, Any]:
    """The default's form averaged with other partners than the cosine, and other forms of the average."""
    def logit(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))

    col = {name: tuple(f[:, FEATURES.index(name)] for f in feats)
           for name in ("token_p", "token_r", "content_r", "content_p", "soft_r", "soft_p")}
    partners = {**col, "token_f": tuple(2 * p * r / np.maximum(p + r, 1e-9)
                                        for p, r in zip(col["token_p"], col["token_r"])),
                "soft mean": tuple((r + p) / 2 for r, p in zip(col["soft_r"], col["soft_p"])),
                "style-masked cosine": masked_cosine, "cosine": scored["cosine"]}
    form = tuple(0.5 * h + 0.5 * b for h, b in zip(scored["head"], scored["base"]))
    out: dict[str, Any] = {}
    for name, part in partners.items():
        out[f"partner {name}"] = {f"a={a:g}": figures(tuple((1 - a) * m + a * clip(c) for m, c in zip(form, part)))
                                  for a in (0.2, 0.3)}
    cos = scored["cosine"]
    out["form geometric"] = {f"a={a:g}": figures(tuple(np.clip(m, 1e-6, 1) ** (1 - a) * np.maximum(c, 1e-6) ** a
                                                       for m, c in zip(form, cos))) for a in (0.2, 0.3)}
    out["form gated"] = {f"a={a:g}": figures(tuple(m * (1 - a + a * clip(c)) for m, c in zip(form, cos)))
                         for a in (0.2, 0.3)}
    logit_form = tuple(1 / (1 + np.exp(-(0.5 * logit(h) + 0.5 * logit(b))))
                       for h, b in zip(scored["head"], scored["base"]))
    out["form logit-scale head + base"] = {f"a={a:g}": figures(tuple((1 - a) * m + a * clip(c)
                                                                     for m, c in zip(logit_form, cos)))
                                           for a in (0.0, 0.1, 0.2, 0.3)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = dev_arguments(__doc__)
    ap.add_argument("--partners", action="store_true", help="also other partners and forms of the average (needs "
                    "model-base.npz in KEEP)")
    ap.add_argument("--save", default=None, help="keep every scorer's half-B and style-shift scores in this .npz")
    args = ap.parse_args(argv)
    log = stderr_log()
    data, ia, ib, x, items = development_split(args.data, args.cache)
    fit, dev = data.subset(ia), data.subset(ib)
    log(f"half B: {len(dev)} pairs, {len(items)} style-shift items")
    src = [s for s, _, _ in items]
    featurizer = PairFeaturizer(style_words=default_style_words())
    x_rewrite = featurizer.features(src, [r for _, r, _ in items])
    x_change = featurizer.features(src, [c for _, _, c in items])
    # every scorer gives (half-B scores, style-rewrite scores, meaning-change scores)
    scored: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {
        "cosine": (x[ib][:, 0], x_rewrite[:, 0], x_change[:, 0]),
        "head": tuple(head_scores(x[ia], fit, part) for part in (x[ib], x_rewrite, x_change)),  # type: ignore
    }
    for path in sorted(Path(args.keep).glob("model-*.npz")):
        name = path.stem.removeprefix("model-")
        model = SCORERS[scorer_kind(name)][0].load(path, cat.DEFAULT_ENCODER, backend="torch")
        scored[name] = three_ways(model.score, dev, items)
        log(f"scored {name}")

    def mix(parts: dict[str, float]) -> tuple[np.ndarray, ...]:
        return tuple(sum(w * scored[k][i] for k, w in parts.items()) for i in range(3))  # type: ignore

    if "base" in scored:
        scored["head + base (.5), the default's form"] = mix({"head": 0.5, "base": 0.5})
    if "bi" in scored and "layers3" in scored:
        scored["bi (.75) + layers3 (.25)"] = mix({"bi": 0.75, "layers3": 0.25})

    def figures(parts: tuple[np.ndarray, ...]) -> dict[str, float]:
        return dev2_figures(parts, dev)

    if args.save:
        np.savez(args.save, **{f"{name}|{i}": parts[i] for name, parts in scored.items() for i in range(3)},
                 **{f"features|{i}": part for i, part in enumerate((x[ib], x_rewrite, x_change))})

    results: dict[str, Any] = {"items": len(items), "cosine alone": figures(tuple(clip(v) for v in scored["cosine"]))}
    for name, parts in scored.items():
        if name == "cosine":
            continue
        results[name] = {f"a={a:g}": figures(tuple((1 - a) * p + a * clip(c) for p, c in zip(parts, scored["cosine"])))
                         for a in WEIGHTS}
        log(f"{name}: " + "; ".join(f"{k} {v}" for k, v in results[name].items()))
    if args.partners:
        if "base" not in scored:
            ap.error("--partners needs model-base.npz in --keep")
        words = set(default_style_words())
        pairs = ((dev.sources, dev.outputs), (src, [r for _, r, _ in items]), (src, [c for _, _, c in items]))
        masked = tuple(featurizer.sentence_cosines([style_masked(t, words) for t in a],
                                                   [style_masked(t, words) for t in b]) for a, b in pairs)
        results["partners and forms"] = partner_study(scored, (x[ib], x_rewrite, x_change), masked, figures)
        for name, row in results["partners and forms"].items():
            log(f"{name}: " + "; ".join(f"{k} {v}" for k, v in row.items()))
    return emit(results, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
