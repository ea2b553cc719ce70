"""Fluency metrics against human judgments (issue #16): slor, mean_logprob and acceptability next to perplexity.

* Lai et al. 2022 (GYAFC, 8 systems x 80 inputs): per-input Kendall tau-like and system-level Pearson with human
  fluency, the conventions of scripts/fluency_figures.py (mean of the two raters, human ties skipped, metric ties
  discordant, ``orientation=abs``), per direction and both;
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

    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage lm
    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage figures
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def lai_records():
    from styleval.readers.datasets import read_lai2022_aspect

    return [r for r in read_lai2022_aspect(DATA / "lai2022", "fluency") if r.system != "ref"]


def mir_records():
    from styleval.readers.datasets import read_mir2019

    return read_mir2019(DATA)


def dualrl_records(n: int):
    from styleval.readers import read_yelp_dualrl

    recs = read_yelp_dualrl(DATA, include_humans_as_systems=True)
    keep = {f"test.{d}/{i}" for d in (0, 1) for i in range(1, n + 1)}
    return [r for r in recs if r.id in keep]


def lm_jobs(n_dualrl: int, mir_raw: bool = False) -> list[tuple[str, list[str]]]:
    """(normalisation, texts) in the order they are scored."""
    lai = [r.output for r in lai_records()]
    mir = mir_records()
    mir_texts = [r.output for r in mir] + sorted({r.source for r in mir})
    dual = [r.output for r in dualrl_records(n_dualrl)]
    jobs = [("none", lai), ("detok+truecase", lai), ("detok+truecase", dual), ("detok+truecase", mir_texts)]
    return jobs + ([("none", mir_texts)] if mir_raw else [])


def stage_lm(work: Path, n_dualrl: int, mir_raw: bool = False, chunk: int = 200) -> None:
    from styleval.metrics.fluency import _lm

    path = work / "lm_cache.pkl"
    if path.is_file():
        _lm._CACHE.update(pickle.loads(path.read_bytes()))
    for mode, texts in lm_jobs(n_dualrl, mir_raw):
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        start = time.time()
        for i in range(0, len(texts), chunk):
            _lm.scored_texts("smollm2-135m", texts[i:i + chunk], normalize=mode)
            path.write_bytes(pickle.dumps(dict(_lm._CACHE)))
            log(f"lm {mode}: {min(i + chunk, len(texts))}/{len(texts)} ({(i + chunk) / (time.time() - start):.1f}/s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/styleval-fluency-judgments")
    ap.add_argument("--stage", choices=["lm", "figures"], default="figures")
    ap.add_argument("--dualrl-n", type=int, default=50, help="inputs per direction of yelp-dualrl")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--only", default="lai,dualrl,mir,humans", help="figures to (re)compute, comma-separated")
    ap.add_argument("--mir-raw", action="store_true", help="also the raw-text metrics on Mir et al.'s data")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.stage == "lm":
        stage_lm(work, args.dualrl_n, args.mir_raw)
        return 0
    from figures_fluency_judgments import run_figures  # noqa: E402  (kept apart: scoring and tables)

    run_figures(work, args)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
