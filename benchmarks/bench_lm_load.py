"""Benchmark: time to load the default LM (SmolLM2-135M, already converted from GGUF) in a fresh process.

Each measurement runs in a new Python process (so nothing is imported or cached in memory beforehand; the files
are in the page cache after the first run), repeated ``--repeat`` times (default 5), and the median is printed.
The contenders, each timed after ``import torch`` (whose time is printed separately):

* ``styleval``: ``load_causal_lm()`` (tokenizer and model, native loader), including styleval's own imports, the
  resolution of the catalog name and the content-hash check; ``+ 1st sentence`` adds scoring one sentence (the
  weights are memory-mapped, so the first forward pass also pages them in);
* ``styleval (transformers)``: ``load_causal_lm(backend="transformers")``;
* ``plain transformers``: ``AutoTokenizer`` and ``AutoModelForCausalLM.from_pretrained(folder)``, what a user writes,
  with the import of those classes (the model class alone is also printed).

Run: .venv/bin/python benchmarks/bench_lm_load.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
T = time.perf_counter
out = {}
t = T(); import torch; out["import torch"] = T() - t
kind, folder = sys.argv[1], sys.argv[2]
t = T()
if kind == "plain":
    from transformers import AutoModelForCausalLM, AutoTokenizer
    out["import transformers classes"] = T() - t
    t1 = T()
    tok = AutoTokenizer.from_pretrained(folder)
    out["tokenizer"] = T() - t1
    t1 = T()
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    out["model"] = T() - t1
else:
    from styleval.lm.loading import load_causal_lm
    lm = load_causal_lm(backend="auto" if kind == "styleval" else "transformers")
    out["backend"] = lm.backend
out["load"] = T() - t
if kind != "plain":
    from styleval.lm.causal import token_nll
    t1 = T(); token_nll(lm, ["The food was great and the staff were friendly."]); out["first sentence"] = T() - t1
print(json.dumps(out))
"""


def run_child(kind: str, folder: str) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"}
    res = subprocess.run([sys.executable, "-c", CHILD, kind, folder], capture_output=True, text=True, env=env,
                         timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from styleval.lm.loading import ensure_converted, resolve_causal_lm

    folder = str(ensure_converted(resolve_causal_lm()))  # converts once if needed, outside the timings
    kinds = ("styleval", "transformers", "plain")
    runs: dict[str, list[dict]] = {k: [] for k in kinds}
    run_child("styleval", folder)  # warm the page cache
    for _ in range(args.repeat):
        for kind in kinds:  # interleaved, so a busy spell on a shared machine hits every contender
            runs[kind].append(run_child(kind, folder))

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kind])

    torch_s = statistics.median(r["import torch"] for rs in runs.values() for r in rs)
    print(f"folder: {folder}")
    print(f"median of {args.repeat} fresh processes; import torch: {torch_s:.2f} s (every contender pays it)")
    print(f"{'contender':<34}{'load (after torch)':>20}{'with torch':>12}")
    rows = [("styleval (native)", "styleval", "load"),
            ("styleval (transformers backend)", "transformers", "load"),
            ("plain transformers tok+model", "plain", "load")]
    for label, kind, key in rows:
        load = med(kind, key)
        tot = statistics.median(r[key] + r["import torch"] for r in runs[kind])
        print(f"{label:<34}{load:>18.2f} s{tot:>10.2f} s")
    first = sorted(r["first sentence"] for r in runs["styleval"])
    print(f"styleval native + 1st sentence    {med('styleval', 'load') + med('styleval', 'first sentence'):>18.2f} s"
          f"   (1st sentence alone: median {statistics.median(first):.2f} s, min {first[0]:.2f}, max {first[-1]:.2f})")
    print(f"plain: import classes {med('plain', 'import transformers classes'):.2f} s, tokenizer "
          f"{med('plain', 'tokenizer'):.2f} s, model from_pretrained {med('plain', 'model'):.2f} s")
    print(f"speed-up of the load (after torch): {med('plain', 'load') / med('styleval', 'load'):.1f}x vs plain "
          f"transformers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
