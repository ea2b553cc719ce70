"""Benchmark (issue #46): the full ``evaluate`` battery on yelp-dualrl outputs, before and after, against its floor.

Records: the first ``--inputs`` inputs of ``--systems`` (default DualRL and UnsuperMT_Zhang: 2 x 1,000 = 2,000
outputs, four references each), the issue's profile. Each measurement runs in its own process, alternating:

* ``after``: this checkout's ``evaluate`` (default statistics: 1,000 resamples, paired bootstrap), outputs per second
  and its own account of where the time went (``Evaluation.timing``: passes, loads, metrics, statistics);
* ``before``: the same with ``--old-src`` on ``PYTHONPATH`` (``OLD/src``: an older checkout);
* ``floor``: each model's forward pass over the distinct texts it must read in the battery, timed alone: SmolLM2
  over the normalised outputs, the style classifier, MiniLM sentence embeddings and MiniLM token embeddings
  (BERTScore) over outputs and sources (the style classifier after the sentence embeddings, which it reads from the
  same cache in ``evaluate`` too). The floor is their sum.

What makes the floor fair (checked for issue #46, where an earlier version was not even-handed):
* the same texts: ``tests/test_evaluate_passes.py`` and ``tests/test_evaluate_lm_pass.py`` count, with forward hooks,
  that ``evaluate`` runs each of these models once per distinct text of exactly these sets (outputs and sources;
  the normalised non-empty outputs for the LM), and ``evaluate``'s own timing prints the text counts beside the
  floor's;
* the same functions with the same batch sizes (the metrics' defaults: 64 texts, LM batches of 4,096 tokens). Only
  the grouping differs: ``evaluate`` passes each system's batch (the first system's outputs with the sources, then
  the next system's new outputs), the floor all texts at once; measured in one process on 739 texts, the style
  classifier took 4.13 / 4.15 CPU-seconds grouped one way or the other;
* warm-up excluded for all four (before this, the LM and the token encoder were timed cold and the other two warm):
  models are loaded and run once on two short texts before the clock starts, and their caches are empty. The floor
  is thus the steady-state cost of the passes; ``evaluate`` pays loading, imports and first batches on top, which
  its timing lists under ``loads``.

Wall-clock seconds on a shared machine move with the load, so each run also reports its process CPU seconds
(``time.process_time``: with ``STYLEVAL_THREADS=1`` the models run on the calling thread) and the ratio after / floor
in both.

Prints medians of ``--repeat`` runs of each, the speed-up after/before and the ratio after/floor, all from this run.

Run: STYLEVAL_THREADS=1 .venv/bin/python benchmarks/bench_evaluate.py --inputs 250 --repeat 1 --old-src OLD/src
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "yelp-dualrl"

CHILD_EVALUATE = r"""
import json, sys, time
from styleval.datasets import read_yelp_dualrl
from styleval.evaluation import evaluate
systems, n = json.loads(sys.argv[1]), int(sys.argv[2])
records = [r for s in systems for r in [x for x in read_yelp_dualrl(sys.argv[3]) if x.system == s][:n]]
import inspect
# the systems only, as before #45 added the human references' anchor row by default (older checkouts lack it)
off = {"anchor": False} if "anchor" in inspect.signature(evaluate).parameters else {}
t0, c0 = time.perf_counter(), time.process_time()
ev = evaluate(records, **off)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"seconds": seconds, "cpu": cpu, "outputs": len(records), "timing": getattr(ev, "timing", {}),
                  "j": {s: ev.overall_score(s, "j") for s in ev.systems}}))
"""

CHILD_FLOOR = r"""
import json, sys, time
from styleval.datasets import read_yelp_dualrl
from styleval.evaluation.battery import style_model_facts
from styleval.evaluation.plan import CorpusFacts
from styleval.lm.causal import token_logprobs
from styleval.lm.loading import load_causal_lm
from styleval.metrics import registry
from styleval.style_models.pretrained import load_style_model
from styleval.textnorm.readable import normalize_all
systems, n = json.loads(sys.argv[1]), int(sys.argv[2])
records = [r for s in systems for r in [x for x in read_yelp_dualrl(sys.argv[3]) if x.system == s][:n]]
outputs = {s: [r.output for r in records if r.system == s] for s in systems}
lm_texts = list(dict.fromkeys(t for s in systems for t in normalize_all(outputs[s], "auto") if t.strip()))
both = list(dict.fromkeys([r.output for r in records] + [r.source for r in records]))
corpus = CorpusFacts.of(records)
style = style_model_facts("auto", corpus.styles)
name = style.cased_slot if style.cased_slot and corpus.case.decision != "blind" else style.name
passes, cpu = {}, {}
def clock(label, run):
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    passes[label], cpu[label] = time.perf_counter() - t0, time.process_time() - c0
warm = ["warm up", "the second one"]  # loads what is lazy and runs the first batches before any clock starts
lm = load_causal_lm()
token_logprobs(lm, warm, with_end=True)
clock("lm", lambda: token_logprobs(lm, lm_texts, with_end=True))
cos = registry.create("sentence_cosine", against="source")
from styleval.models.encoder import encode_sentences, sentence_encoder
encode_sentences(sentence_encoder(cos.model), warm, 64)
clock("sentence encoder", lambda: cos.embed(both))
model = load_style_model(name)
model._decision(warm)  # lazy resources (the adapted encoder) loaded before timing
clock("style classifier", lambda: model._decision(both))
bert = registry.create("bertscore", against="source")
emb = bert.embedder
emb.embed(warm)
clock("token encoder", lambda: emb.embed(both))
print(json.dumps({"passes": passes, "floor": sum(passes.values()), "cpu_passes": cpu, "cpu": sum(cpu.values()),
                  "lm_texts": len(lm_texts), "texts": len(both),
                  "style_model": name}))
"""


def run(code: str, args: list[str], src: str | None) -> dict:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    out = subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", default="DualRL,UnsuperMT_Zhang")
    parser.add_argument("--inputs", type=int, default=1000, help="inputs per system")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--old-src", default=None, help="the before: a src/ folder put on PYTHONPATH")
    parser.add_argument("--skip", default="", help="comma-separated: before, after, floor")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"data not found: {DATA}", file=sys.stderr)
        return 1
    child_args = [json.dumps(args.systems.split(",")), str(args.inputs), str(DATA)]
    new_src = str(Path(__file__).resolve().parents[1] / "src")
    kinds = {"after": (CHILD_EVALUATE, new_src), "floor": (CHILD_FLOOR, new_src)}
    if args.old_src:
        kinds = {"before": (CHILD_EVALUATE, args.old_src), **kinds}
    kinds = {k: v for k, v in kinds.items() if k not in args.skip.split(",")}
    found: dict[str, list[dict]] = {k: [] for k in kinds}
    for _ in range(args.repeat):
        for kind, (code, src) in kinds.items():
            found[kind].append(run(code, child_args, src))
            print(f"{kind}: {json.dumps(found[kind][-1])}", file=sys.stderr, flush=True)
    med = {k: statistics.median(r["seconds"] if "seconds" in r else r["floor"] for r in rs) for k, rs in found.items()}
    med_cpu = {k: statistics.median(r.get("cpu", float("nan")) for r in rs) for k, rs in found.items()}
    n = found["after"][0]["outputs"] if "after" in found else None
    for kind, seconds in med.items():
        rate = f", {n / seconds:.1f} outputs/s" if n and kind != "floor" else ""
        print(f"{kind:<7} {seconds:8.1f} s, {med_cpu[kind]:8.1f} CPU-s (median of {args.repeat}){rate}")
    if "after" in med and "before" in med:
        print(f"speed-up after / before: {med['before'] / med['after']:.2f}x wall, "
              f"{med_cpu['before'] / med_cpu['after']:.2f}x CPU; J identical: "
              f"{found['after'][0]['j'] == found['before'][0]['j']}")
    if "after" in med and "floor" in med:
        f = found["floor"][0]
        parts = ", ".join(f"{k} {v:.1f} s / {f['cpu_passes'][k]:.1f} CPU-s" for k, v in f["passes"].items())
        print(f"floor {med['floor']:.1f} s ({parts}; {f['lm_texts']:,} LM texts, {f['texts']:,} texts for the "
              f"encoders and the style model {f['style_model']})")
        print(f"after / floor: {med['after'] / med['floor']:.2f}x wall, {med_cpu['after'] / med_cpu['floor']:.2f}x CPU")
        timing = found["after"][0].get("timing") or {}
        for key in ("model_passes", "loads", "statistics"):
            for name, t in (timing.get(key) or {}).items():
                texts = f" over {t['texts']:,} texts" if key == "model_passes" else ""
                cpu = f" / {t['cpu_seconds']:.1f} CPU-s" if "cpu_seconds" in t else ""
                print(f"  after, inside evaluate, {key}: {name}: {t['seconds']:.1f} s{cpu}{texts}")
        metrics = timing.get("metrics") or {}
        for name, t in metrics.items():
            if not any(name.startswith(m) for m in ("style_", "sentence_cosine", "bertscore", "perplexity")):
                print(f"  after, inside evaluate, metric {name}: {t['seconds']:.1f} s"
                      + (f" / {t['cpu_seconds']:.1f} CPU-s" if "cpu_seconds" in t else "") + " (loads included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
