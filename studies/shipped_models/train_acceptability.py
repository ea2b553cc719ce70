"""Train the shipped acceptability classifier (styleval/acceptability/pretrained/acceptability-smollm2).

Stages (each cached in --work, so a later stage re-runs without the LM):
  1. examples: human-written sentences of four registers (studies/shipped_models/fluency_data.py: PT16, Yelp dev,
     ParaDetox neutral rewrites and toxic originals) in random forms (as is, lower-cased tokenized, normalised) plus one
     corrupted copy each (styleval.training.corrupt), for the train / select / test splits;
  2. lm: SmolLM2-135M token log-probabilities of every example after detok+truecase normalisation;
  3. fit: logistic regression on the LM features (styleval.acceptability.features), C chosen on the selection split by
     ROC AUC; the decision threshold chosen on the selection split (the highest one that passes >= 90 % of the
     human sentences of every register) and folded into the intercept, so acceptable <=> score >= 0.5; the test
     split is scored once and its figures written to the model card.

    STYLEVAL_THREADS=1 .venv/bin/python studies/shipped_models/train_acceptability.py --work /tmp/styleval-acceptability
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fluency_data  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def stage_examples(work: Path) -> dict:
    from styleval.training.acceptability_examples import make_examples

    path = work / "examples.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    out = {}
    for i, (split, real) in enumerate(fluency_data.splits().items()):
        out[split] = make_examples(real, seed=100 + i)
        log(f"{split}: {len(out[split])} examples")
    path.write_bytes(pickle.dumps(out))
    return out


def stage_lm(work: Path, examples: dict, chunk: int = 200) -> dict:
    """text -> (token ids, log-probs, end log-prob) of its normalised form, saved after every chunk."""
    from styleval.textnorm.readable import normalize
    from styleval.lm.causal import token_logprobs
    from styleval.lm.loading import load_causal_lm

    path = work / "lm.pkl"
    done = pickle.loads(path.read_bytes()) if path.is_file() else {}
    todo = [t for t in dict.fromkeys(t for ex in examples.values() for t in ex.texts) if t not in done]
    lm = load_causal_lm()
    start = time.time()
    for i in range(0, len(todo), chunk):
        part = todo[i:i + chunk]
        res = token_logprobs(lm, [normalize(t) for t in part], with_end=True)
        for t, ids, lp, end in zip(part, res.token_ids, res.logprobs, res.end_logprob):
            done[t] = (ids, lp, float(end))
        path.write_bytes(pickle.dumps(done))
        rate = (i + len(part)) / (time.time() - start)
        log(f"lm: {i + len(part)}/{len(todo)} ({rate:.1f} texts/s)")
    return done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/styleval-acceptability")
    ap.add_argument("--stage", choices=["lm", "fit"], default="fit")
    ap.add_argument("--out", default=None, help="model folder (default: the shipped one)")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    examples = stage_examples(work)
    lm_out = stage_lm(work, examples)
    if args.stage == "lm":
        return 0
    from styleval.training.acceptability import fit_acceptability

    out = Path(args.out) if args.out else None
    card = fit_acceptability(examples, lm_out, out=out, data_note=fluency_data.__doc__, log=log)
    print(json.dumps(card["test"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
