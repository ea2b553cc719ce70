"""GPU benchmark (issue #46), prepared to run in one short call on a machine with a GPU: the full ``evaluate`` battery
on yelp-dualrl's 10 systems x ``--inputs`` outputs, on the GPU and beside it on the CPU, with the time per aspect.

Each run is its own process: ``gpu`` as the machine is, ``cpu`` with ``CUDA_VISIBLE_DEVICES=""`` (torch then sees no
GPU). Of the models, SmolLM2 moves to the GPU when torch sees one (``lm/loading.py``) and sentence-transformers puts
the MiniLM sentence encoder there by itself; BERTScore's token encoder and the style classifier stay on the CPU.
Do not set ``STYLEVAL_CACHE`` for a timing: it turns on the disk cache of embeddings, and a later run then reads
what an earlier one encoded. Per aspect: the seconds of the metrics of that aspect from ``Evaluation.timing``
(each metric's statistics, its model passes included), the model passes on their own, and the intervals and tests.
Prints one JSON line per run and a table; ``--out FILE`` keeps the JSON lines.

Before timing, ``--warm-up`` converts SmolLM2's GGUF into the cached transformers folder (a one-off ~30 s that
would otherwise fall on the first timed run). ``--runs`` orders the runs, each ``DEVICE:INPUTS`` (inputs per system),
so that a short device lease gets the comparable pair first: ``gpu:200,cpu:200,gpu:1000``.

Run: .venv/bin/python benchmarks/gpu_battery.py --warm-up --runs gpu:200,cpu:200,gpu:1000 --out gpu_battery.jsonl
On a bare machine without the models: ``benchmarks/gpu_payload.sh`` (how the figures in docs/results.md were taken).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(os.environ.get("STYLEVAL_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data") \
    / "yelp-dualrl"

CHILD = r"""
import json, sys, time
import torch
from styleval.datasets import read_yelp_dualrl
from styleval.evaluation import evaluate
n = int(sys.argv[1])
records = read_yelp_dualrl(sys.argv[2])
systems = list(dict.fromkeys(r.system for r in records))[:10]
records = [r for s in systems for r in [x for x in records if x.system == s][:n]]
t0 = time.perf_counter()
ev = evaluate(records, anchor=False)  # the 10 systems only, as the recorded figures were measured
seconds = time.perf_counter() - t0
aspect_of = {m: a for a, ms in ev.aspects.items() for m in ms}
per_aspect = {}
for metric, t in ev.timing["metrics"].items():
    a = aspect_of.get(metric, "overall")
    per_aspect[a] = per_aspect.get(a, 0.0) + t["seconds"]
print(json.dumps({"device": "cuda" if torch.cuda.is_available() else "cpu",
                  "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                  "outputs": len(records), "systems": systems, "seconds": seconds,
                  "outputs_per_s": len(records) / seconds, "per_aspect_s": per_aspect, "timing": ev.timing}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="gpu:1000,cpu:1000",
                        help="comma-separated DEVICE:INPUTS runs in order, DEVICE gpu or cpu, INPUTS per system")
    parser.add_argument("--out", default=None, help="write the JSON lines here too")
    parser.add_argument("--warm-up", action="store_true", help="convert the LM's GGUF before any timed run")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"data not found: {DATA}", file=sys.stderr)
        return 1
    runs = [(kind, int(n)) for kind, n in (part.split(":") for part in args.runs.split(","))]
    if any(kind not in ("gpu", "cpu") for kind, _ in runs):
        print(f"--runs: each run is gpu:N or cpu:N, got {args.runs!r}", file=sys.stderr)
        return 2
    if args.warm_up:
        subprocess.run([sys.executable, "-c", "from styleval.lm.loading import ensure_converted, resolve_causal_lm; "
                        "ensure_converted(resolve_causal_lm())"], check=True)
    rows = []
    for kind, inputs in runs:
        env = dict(os.environ)
        if kind == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        out = subprocess.run([sys.executable, "-c", CHILD, str(inputs), str(DATA)], stdout=subprocess.PIPE,
                             text=True, env=env)
        if out.returncode != 0:
            print(f"{kind} run failed (exit {out.returncode})", file=sys.stderr)
            return 1
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
    for row in rows:
        aspects = ", ".join(f"{a} {s:.1f} s" for a, s in sorted(row["per_aspect_s"].items()))
        passes = ", ".join(f"{m} {t['seconds']:.1f} s" for m, t in row["timing"]["model_passes"].items())
        print(f"{row['device']:<4} {row['outputs']:,} outputs: {row['seconds']:.1f} s, {row['outputs_per_s']:.1f} "
              f"outputs/s; per aspect: {aspects}; model passes: {passes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
