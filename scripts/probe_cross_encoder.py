"""Probe (issue #15): does a MiniLM cross-encoder fine-tuned on CPU beat the shipped feature model?

Trains a cross-encoder (``[CLS] source [SEP] output [SEP]`` -> mean-pooled MiniLM -> linear -> sigmoid) on the
*same* training pairs as ``preservation-minilm`` (``styleval.content.corpus.training_pairs``: even Lai/Mir rows,
style rewrites, automatic meaning changes, unrelated pairs; never SGDD-TST), with soft targets and every group
weighted equally, for a fixed number of epochs chosen before looking at any held-out figure. Then scores the
held-out sets of ``scripts/preservation_results.py`` (style-shift test, Lai and Mir odd rows, SGDD-TST) next to
the feature head (``preservation-minilm-fast``) and their average. Nothing is shipped by this script; it answers
whether the direction is worth shipping.

    .venv/bin/python scripts/probe_cross_encoder.py [--epochs 2] [--json out.json] [--save DIR | --load DIR]

Every weight is fine-tuned here; the shipped model trains LoRA adapters instead
(``styleval.content.cross_encoder.train_cross_encoder``, run by ``scripts/train_preservation.py``).
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import preservation_results as pr  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class CrossEncoder:
    def __init__(self, max_length: int = 128) -> None:
        import torch

        from styleval.content.features import _load_encoder
        from styleval.models import catalog as cat
        from styleval.models.pool import configure_torch

        configure_torch()
        tok, enc = _load_encoder(cat.DEFAULT_ENCODER)
        import copy

        self.tok, self.enc = tok, copy.deepcopy(enc)
        torch.manual_seed(13)
        self.head = torch.nn.Linear(self.enc.config.hidden_size, 1)
        self.max_length = max_length

    def params(self) -> list[Any]:
        return [p for p in self.enc.parameters() if p.requires_grad] + list(self.head.parameters())

    def logits(self, a: list[str], b: list[str]) -> Any:
        x = self.tok(a, b, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        hidden = self.enc(**x).last_hidden_state
        mask = x["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return self.head(pooled).squeeze(-1)

    def score(self, a: list[str], b: list[str], batch: int = 64) -> np.ndarray:
        import torch

        self.enc.eval()
        out = np.zeros(len(a))
        order = sorted(range(len(a)), key=lambda i: len(a[i]) + len(b[i]))
        with torch.inference_mode():
            for s in range(0, len(order), batch):
                idx = order[s:s + batch]
                z = self.logits([a[i] for i in idx], [b[i] or "" for i in idx])
                out[idx] = torch.sigmoid(z).numpy()
        return out


def train(model: CrossEncoder, data: Any, epochs: int, lr: float, batch: int = 32) -> None:
    import torch

    groups = list(data.groups)
    counts = {g: groups.count(g) for g in set(groups)}
    weight = np.array([1.0 / (len(counts) * counts[g]) for g in groups]) * len(groups)
    n = len(groups)
    steps = epochs * math.ceil(n / batch)
    opt = torch.optim.AdamW(model.params(), lr=lr, weight_decay=0.01)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm))))
    rng = random.Random(13)
    step, t0 = 0, time.time()
    for ep in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        model.enc.train()
        total = 0.0
        for s in range(0, n, batch):
            idx = order[s:s + batch]
            z = model.logits([data.sources[i] for i in idx], [data.outputs[i] for i in idx])
            y = torch.tensor([float(data.scores[i]) for i in idx])
            w = torch.tensor(weight[idx], dtype=torch.float32)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(z, y, reduction="none") * w).sum() / w.sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.params(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += float(loss.detach()) * len(idx)
            step += 1
            if step % 50 == 0:
                log(f"epoch {ep + 1} step {step}/{steps} loss {total / (s + len(idx)):.4f} ({time.time() - t0:.0f} s)")
        log(f"epoch {ep + 1} done, mean loss {total / n:.4f}")


def sgdd(root: Any, scores: dict[str, Any]) -> dict[str, Any]:
    from scipy.stats import spearmanr

    from styleval.meta.datasets import load_sgdd_tst
    from styleval.stats.significance import williams_test

    frame = load_sgdd_tst(root).extra["frame"]
    src, out = frame["text1"].astype(str).tolist(), frame["text2"].fillna("").astype(str).tolist()
    human = frame["human"].astype(float).to_numpy()
    cols = {name: np.asarray(fn(src, out), dtype=float) for name, fn in scores.items()}
    cols["bleurt (stored)"] = frame["Elron/bleurt-large-512"].astype(float).to_numpy()
    ok = np.all([np.isfinite(v) for v in cols.values()], axis=0) & np.isfinite(human)
    rho = {k: float(spearmanr(v[ok], human[ok])[0]) for k, v in cols.items()}
    tests = {}
    for other in [k for k in cols if k != "cross_encoder"]:  # and the mean against each
        r23 = float(spearmanr(cols["cross_encoder"][ok], cols[other][ok])[0])
        t, p = williams_test(rho["cross_encoder"], rho[other], r23, int(ok.sum()))
        tests[f"cross_encoder vs {other}"] = {"t": t, "p_one_sided": p, "r23": r23}
    if "mean" in cols:
        for other in ("preservation-fast", "bleurt (stored)"):
            r23 = float(spearmanr(cols["mean"][ok], cols[other][ok])[0])
            t, p = williams_test(rho["mean"], rho[other], r23, int(ok.sum()))
            tests[f"mean vs {other}"] = {"t": t, "p_one_sided": p, "r23": r23}
    return {"n": int(ok.sum()), "spearman": rho, "williams": tests}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=None)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--cache", help="preservation feature cache of scripts/preservation_results.py")
    ap.add_argument("--json")
    ap.add_argument("--save", help="folder to save the fine-tuned encoder and head in")
    ap.add_argument("--load", help="a folder written by --save: score with it instead of training")
    args = ap.parse_args(argv)
    from styleval.content import corpus, load_preservation_model
    from styleval.content.pretrained import FAST_MODEL
    from styleval.datasets import default_root

    root = args.data or default_root()
    pr.CACHE["dir"] = args.cache
    data = corpus.training_pairs(root)
    log(f"{len(data.groups)} training pairs: {data.group_counts()}")
    model = CrossEncoder()
    if args.load:
        import torch

        state = torch.load(Path(args.load) / "probe.pt")
        model.enc.load_state_dict(state["enc"])
        model.head.load_state_dict(state["head"])
    else:
        train(model, data, args.epochs, args.lr)
    if args.save and not args.load:
        import torch

        Path(args.save).mkdir(parents=True, exist_ok=True)
        torch.save({"enc": model.enc.state_dict(), "head": model.head.state_dict()}, Path(args.save) / "probe.pt")
    shipped = load_preservation_model(FAST_MODEL)  # the feature head alone, as the probe compared it
    memo: dict[tuple[str, ...], np.ndarray] = {}

    def cross(s: list[str], o: list[str]) -> np.ndarray:
        key = ("ce", *s, "\1", *o)
        if key not in memo:
            memo[key] = model.score(s, o)
        return memo[key]

    def kept(s: list[str], o: list[str]) -> np.ndarray:
        return shipped.from_features(pr.features(shipped, s, o))

    # "mean": the two scores averaged with equal weights, a combination fixed before any held-out figure was seen
    scores = {"cross_encoder": cross, "preservation-fast": kept,
              "mean": lambda s, o: (cross(s, o) + kept(s, o)) / 2.0}
    results: dict[str, Any] = {"epochs": args.epochs, "pairs": len(data.groups)}
    for name, fn in (("style_shift", pr.style_shift), ("lai2022_heldout", pr.lai), ("mir2019_heldout", pr.mir),
                     ("sgdd_tst", sgdd)):
        log(f"{name} ...")
        results[name] = fn(root, scores)
        print(json.dumps({name: results[name]}, indent=1, default=float), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=float), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
