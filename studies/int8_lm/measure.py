"""Issue #46, item 4: does an int8 LM (torch dynamic quantisation of the decoder's linear layers) keep SmolLM2's
figures close enough to float32 to be used? The rule was written in studies/log.md before this ran.

Texts: the first ``--n`` outputs of DualRL and of UnsuperMT_Zhang on yelp-dualrl, normalised as acceptability reads
them. Figures: the LM pass's time (float32 vs int8, medians of alternating runs in this process), the absolute
difference of token log-probabilities (median, 99th percentile), the Spearman correlation of per-segment perplexity
and of acceptability P, and the share of J's fluency decisions (acceptability >= 0.5) that change.

Run: STYLEVAL_THREADS=1 .venv/bin/python studies/int8_lm/measure.py --n 150 --repeat 3 [--scheme per-channel]
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "yelp-dualrl"


def int8_model(model, scheme: str = "per-tensor"):
    """A copy of a native Llama whose decoder linear layers are dynamically quantised to int8 (weights int8 per
    tensor or per output channel, activations quantised per batch); embeddings, norms and the vocabulary projection
    stay float32. ``scheme="float"`` makes the same copy without quantising (a check of the copying itself)."""
    import torch
    from torch import nn
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    q = copy.deepcopy(model)
    for layer in q.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name, child in list(parent.named_children()):
                if type(child).__name__ == "Linear":
                    plain = nn.Linear(child.weight.shape[1], child.weight.shape[0], bias=False)
                    plain.weight = nn.Parameter(child.weight.detach().clone(), requires_grad=False)
                    setattr(parent, name, plain)
    if scheme == "float":
        return q
    spec = {nn.Linear: per_channel_dynamic_qconfig} if scheme == "per-channel" else {nn.Linear}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for layer in q.model.layers:
            quantize_dynamic(layer, spec, dtype=torch.qint8, inplace=True)
    return q


def select_texts(n: int) -> list[str]:
    """The rule's texts: the first ``n`` outputs of DualRL and of UnsuperMT_Zhang on yelp-dualrl, normalised as
    acceptability reads them, duplicates and empty texts left out."""
    from styleval.datasets import read_yelp_dualrl
    from styleval.textnorm.readable import normalize_all

    records = read_yelp_dualrl(DATA)
    texts: list[str] = []
    for system in ("DualRL", "UnsuperMT_Zhang"):
        outs = [r.output for r in records if r.system == system][:n]
        texts += normalize_all(outs, "auto")
    return [t for t in dict.fromkeys(texts) if t.strip()]


def agreement(f, q) -> dict:
    """The rule's agreement figures of ``q`` against the float32 reference ``f`` (both ``TokenLogprobs`` of the
    same texts): token log-probability |diff| median and p99, Spearman of segment perplexity and of acceptability
    P, and the share of J's fluency decisions (acceptability >= 0.5) that change."""
    from scipy.stats import spearmanr

    from styleval.acceptability.model import load_acceptability

    diff = np.abs(np.concatenate([a - b for a, b in zip(f.logprobs, q.logprobs)]))
    ppl = [np.array([np.exp(-lp.mean()) if len(lp) else np.nan for lp in r.logprobs]) for r in (f, q)]
    acc = load_acceptability("acceptability-smollm2")
    p = [acc.predict_scored(r) for r in (f, q)]
    return {"logprob_abs_diff_median": float(np.median(diff)),
            "logprob_abs_diff_p99": float(np.quantile(diff, .99)),
            "spearman_perplexity": float(spearmanr(ppl[0], ppl[1], nan_policy="omit").statistic),
            "spearman_acceptability": float(spearmanr(p[0], p[1]).statistic),
            "fluency_decisions_changed": float(np.mean((p[0] >= 0.5) != (p[1] >= 0.5)))}


def rule(out: dict) -> dict[str, bool]:
    """Each criterion of the rule (studies/log.md, "int8 rule") on ``out`` (agreement figures plus ``speedup``)."""
    return {"median<=0.02": out["logprob_abs_diff_median"] <= 0.02, "p99<=0.25": out["logprob_abs_diff_p99"] <= 0.25,
            "spearman_ppl>=0.99": out["spearman_perplexity"] >= 0.99,
            "spearman_acc>=0.98": out["spearman_acceptability"] >= 0.98,
            "flips<=2%": out["fluency_decisions_changed"] <= 0.02, "speedup>=1.7": out["speedup"] >= 1.7}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scheme", choices=("per-tensor", "per-channel", "float"), default="per-tensor")
    args = parser.parse_args()

    from styleval.lm.causal import token_logprobs
    from styleval.lm.loading import load_causal_lm

    texts = select_texts(args.n)
    lm = load_causal_lm()
    assert lm.backend == "native", lm.backend
    lm8 = dataclasses.replace(lm, model=int8_model(lm.model, args.scheme))
    times: dict[str, list[float]] = {"float32": [], "int8": []}
    res = {}
    for _ in range(args.repeat):
        for name, model in (("float32", lm), ("int8", lm8)):
            t0 = time.perf_counter()
            res[name] = token_logprobs(model, texts, with_end=True)
            times[name].append(time.perf_counter() - t0)
    f, q = res["float32"], res["int8"]
    tf, tq = statistics.median(times["float32"]), statistics.median(times["int8"])
    out = {"texts": len(texts), "tokens": int(sum(len(lp) for lp in f.logprobs)),
           "seconds_float32": round(tf, 2), "seconds_int8": round(tq, 2), "speedup": round(tf / tq, 3),
           **agreement(f, q), "repeat": args.repeat, "scheme": args.scheme}
    checks = rule(out)
    print(json.dumps({**out, "rule": checks, "passes": all(checks.values())}, indent=1))


if __name__ == "__main__":
    main()
