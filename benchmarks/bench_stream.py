"""Benchmark: the streaming engine at scale, the Ray engine, and resuming a killed run.

Records are synthetic-from-real: yelp-dualrl's 15,000 records (15 systems x 1,000 inputs, four references)
cycled to the size asked for, each copy with its own segment ids. Every measurement runs in its own process
(peak RSS is that process's ``ru_maxrss``); times are wall-clock on this machine's shared cores.

Parts (``--part``):
  scale   the lexical battery (10 metrics x source/references) streamed over each ``--sizes`` (time per 100k
          records, peak RSS), and the in-memory path (read_table + styleval.score) at the first size;
  ray     the same battery on ``--ray-records`` records: local streaming engine, Ray with 1 and 2 worker actors
          (a local Ray started by the run), with the speed-up, Ray's fixed overhead, and a projection to N machines;
  resume  a streamed run with a statistics cache killed (SIGKILL) half-way, then resumed: time saved, identical output;
  lm-pass perplexity's LM pass (shared with slor, mean_logprob, acceptability) against lm.causal.token_nll on
          ``--model-records`` outputs: time and whether the NLL sums are identical (also the first step of model-cache);
  memory  issue #46: peak RSS of the streamed lexical pair (``--metrics``, default bleu,chrf) on two aligned systems
          at each ``--sizes``, with the default statistics (1,000 bootstrap resamples and paired bootstrap tests; then
          approximate randomization) against the same run with ``--bootstrap 0`` and no tests; ``--old-src`` also runs
          the default statistics with another checkout's code (OLD/src: f58ce96, one-shot resampling) for the
          before/after; corpus scores, intervals and p-values are compared between the runs;
  interval  one bootstrap interval and one paired bootstrap test over ``--sizes`` segments of BLEU-like statistics
          (10 integer columns, the statistics alone, no metric computed): peak RSS above the statistics arrays, time;
  model-cache  for each pair of metrics over one model (perplexity then slor on SmolLM2; sentence_cosine against the
          source then against the references on MiniLM), on ``--model-records`` records: the second metric without a
          cache, and with a cache the first metric filled (its model outputs are read, not computed), each run in
          its own process (model loading included); the ratio, and whether the scores are identical.

Run: .venv/bin/python benchmarks/bench_stream.py --part scale --sizes 100000,1000000
     .venv/bin/python benchmarks/bench_stream.py --part memory --sizes 100000,1000000 --metrics bleu,chrf
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "yelp-dualrl"
BATTERY = "bleu,chrf,chrf++,ter,rouge1,rouge2,rougeL,meteor,pinc,levenshtein"  # --metrics changes it
METRICS = BATTERY
WORK = Path(os.environ.get("STYLEVAL_BENCH_DIR", "/tmp/styleval-bench-stream"))


def make_table(n: int) -> Path:
    """yelp-dualrl cycled to ``n`` records (JSON lines), made once and reused."""
    path = WORK / f"yelp-cycled-{n}.jsonl"
    if path.exists():
        return path
    from styleval.datasets import read_yelp_dualrl

    WORK.mkdir(parents=True, exist_ok=True)
    base = read_yelp_dualrl(ROOT)
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as fh:
        for k in range(n):
            r = base[k % len(base)]
            fh.write(json.dumps({"id": f"{r.id}#{k // len(base)}", "system": r.system, "source": r.source,
                                 "output": r.output, "refs": r.references}, ensure_ascii=False) + "\n")
    tmp.rename(path)
    return path


def make_pair_table(n: int) -> Path:
    """Two yelp-dualrl systems (DualRL, UnsuperMT_Zhang), cycled to ``n`` records in all, aligned: both systems have
    the same segment ids in the same order (what paired tests need)."""
    path = WORK / f"yelp-pair-{n}.jsonl"
    if path.exists():
        return path
    from styleval.datasets import read_yelp_dualrl

    WORK.mkdir(parents=True, exist_ok=True)
    base = [r for r in read_yelp_dualrl(ROOT) if r.system in PAIR]
    by_system = {s: [r for r in base if r.system == s] for s in PAIR}
    per = len(by_system[PAIR[0]])
    tmp = path.with_suffix(".partial")
    with open(tmp, "w", encoding="utf-8") as fh:
        for k in range(n // 2):
            for s in PAIR:
                r = by_system[s][k % per]
                fh.write(json.dumps({"id": f"{r.id}#{k // per}", "system": s, "source": r.source, "output": r.output,
                                     "refs": r.references}, ensure_ascii=False) + "\n")
    tmp.rename(path)
    return path


PAIR = ("DualRL", "UnsuperMT_Zhang")


def child(mode: str, table: str, extra: str) -> None:
    """One measured run (in its own process): prints a JSON line with the time and peak RSS."""
    import logging

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    from styleval.resources.wordnet import ensure_wordnet

    ensure_wordnet()
    opts = json.loads(extra)
    facts: dict = {}
    t0 = time.perf_counter()
    if mode == "memory":
        import styleval
        from styleval.readers import read_table

        result = styleval.score(read_table(table), opts["metrics"].split(","), bootstrap=opts.get("bootstrap", 0))
        scores = {f"{r.metric}|{r.system}": r.corpus_score for r in result.results}
    else:
        from styleval.engine import StreamOptions, score_stream

        def tick(desc: str, done: int, total: int) -> None:  # progress on stderr: partial figures survive a cut-off
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"[{time.perf_counter() - t0:8.1f}s] {desc}  peak RSS {rss:.0f} MiB", file=sys.stderr, flush=True)

        stats = {k: opts[k] for k in ("significance", "n_trials") if k in opts}
        out = score_stream(table, opts["metrics"].split(","), bootstrap=opts.get("bootstrap", 0), progress=tick,
                           stream=StreamOptions(chunk_size=opts.get("chunk_size", 10_000),
                                                segments=opts.get("segments"), cache=opts.get("cache"),
                                                engine=opts.get("engine", "local"),
                                                ray_workers=opts.get("workers", 2)), **stats)
        scores = {f"{r.metric}|{r.system}": r.corpus_score for r in out.result.results}
        facts = {"model_cache_hits": out.model_cache_hits, "model_cache_misses": out.model_cache_misses,
                 "intervals": {f"{r.metric}|{r.system}": r.ci for r in out.result.results},
                 "p_values": {f"{c.metric}|{c.system}|{c.baseline}": c.p_value for c in out.result.comparisons}}
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_rss_mib": rss, "scores": scores, **facts}))


def measure(mode: str, table: Path, **opts) -> dict:
    """One run in its own process; its progress lines (elapsed time, peak RSS so far) go to a log under WORK,
    so a run cut off by a deadline still leaves its partial figures."""
    tag = opts.get("metrics", METRICS).replace(",", "+")[:40]
    log = WORK / f"{mode}-{opts.get('engine', 'local')}{opts.get('workers', '')}-{tag}-{table.stem}.log"
    opts.setdefault("metrics", METRICS)
    src = opts.pop("src", None)  # another checkout's code (the before of a before/after)
    env = {**os.environ, "PYTHONPATH": src} if src else None
    cmd = [sys.executable, __file__, "--child", mode, str(table), json.dumps(opts)]
    with open(log, "w", encoding="utf-8") as err:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{mode} run failed; see {log}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def part_scale(sizes: list[int], chunk: int, stream_only: bool = False) -> None:
    rows = []
    for n in sizes:
        table = make_table(n)
        seg = WORK / f"segments-{n}.jsonl"
        r = measure("stream", table, chunk_size=chunk, segments=str(seg))
        rows.append((n, r))
        print(f"stream  {n:>9,} records: {r['seconds']:8.1f} s  ({r['seconds'] / n * 1e5:6.1f} s per 100k)  "
              f"peak RSS {r['peak_rss_mib']:7.0f} MiB", flush=True)
        if n == sizes[0] and not stream_only:
            m = measure("memory", table)
            same = m["scores"] == r["scores"]
            print(f"memory  {n:>9,} records: {m['seconds']:8.1f} s  ({m['seconds'] / n * 1e5:6.1f} s per 100k)  "
                  f"peak RSS {m['peak_rss_mib']:7.0f} MiB   corpus scores identical to stream: {same}", flush=True)


def part_memory(sizes: list[int], chunk: int, repeat: int, old_src: str | None) -> None:
    """Peak RSS with the default statistics against none (medians of ``repeat`` runs, each in its own process)."""
    import statistics

    runs = {"no statistics (--bootstrap 0)": {"bootstrap": 0},
            "default: 1,000 resamples + paired bootstrap": {"bootstrap": 1000, "significance": "paired-bootstrap"},
            "1,000 resamples + approximate randomization": {"bootstrap": 1000, "significance": "approx-randomization"}}
    if old_src:
        runs["default, old code (" + old_src + ")"] = {"bootstrap": 1000, "significance": "paired-bootstrap",
                                                      "src": old_src}
    for n in sizes:
        table = make_pair_table(n)
        found: dict[str, list[dict]] = {}
        for _ in range(repeat):  # alternate the runs, so a busy spell of the shared cores hits them alike
            for name, opts in runs.items():
                found.setdefault(name, []).append(measure("stream", table, chunk_size=chunk, **dict(opts)))
                r = found[name][-1]
                print(f"  ({n:,} records, {name}: peak RSS {r['peak_rss_mib']:.0f} MiB, {r['seconds']:.1f} s)",
                      file=sys.stderr, flush=True)
        base = statistics.median(r["peak_rss_mib"] for r in found["no statistics (--bootstrap 0)"])
        default = found["default: 1,000 resamples + paired bootstrap"][0]
        for name, rs in found.items():
            rss = statistics.median(r["peak_rss_mib"] for r in rs)
            secs = statistics.median(r["seconds"] for r in rs)
            same = ""
            if "old code" in name:
                equal = all(rs[0][k] == default[k] for k in ("scores", "intervals", "p_values"))
                same = f"; corpus scores, intervals and p-values identical to the new code: {equal}"
            print(f"{n:>9,} records, {name:<48} peak RSS {rss:7.0f} MiB ({rss / base:.2f}x no statistics), "
                  f"{secs:7.1f} s (median of {len(rs)}){same}", flush=True)


INTERVAL_CHILD = r"""
import json, resource, sys, time
import numpy as np
from styleval.stats.significance import bootstrap_ci, paired_bootstrap
n = int(sys.argv[1])
rng = np.random.default_rng(0)
a = rng.integers(0, 30, size=(n, 10)).astype(float)
b = rng.integers(0, 30, size=(n, 10)).astype(float)
def score(s):
    return float(s[2] / max(s[6], 1.0))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
ci = bootstrap_ci(a, sum_then=score, n_resamples=1000, seed=12345)
t1 = time.perf_counter()
test = paired_bootstrap(a, b, sum_then=score, n_resamples=1000, seed=12345)
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"before_mib": before, "peak_mib": peak, "interval_s": t1 - t0, "test_s": t2 - t1,
                  "ci": [ci.low, ci.high], "p": test.pvalue}))
"""


def part_interval(sizes: list[int]) -> None:
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", INTERVAL_CHILD, str(n)], stdout=subprocess.PIPE, text=True,
                             check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{n:>10,} segments: peak RSS {r['peak_mib']:7.0f} MiB, {r['peak_mib'] - r['before_mib']:6.0f} MiB above "
              f"the process with its two statistics arrays ({2 * n * 10 * 8 / 2**20:.0f} MiB); interval "
              f"{r['interval_s']:.1f} s, paired test {r['test_s']:.1f} s (1,000 resamples)", flush=True)


def part_ray(n: int, chunk: int) -> None:
    table = make_table(n)
    local = measure("stream", table, chunk_size=chunk)
    print(f"local engine      {n:,} records: {local['seconds']:7.1f} s", flush=True)
    times = {}
    for workers in (1, 2):
        r = measure("stream", table, chunk_size=chunk, engine="ray", workers=workers)
        times[workers] = r["seconds"]
        print(f"ray, {workers} worker(s)  {n:,} records: {r['seconds']:7.1f} s   identical scores: "
              f"{r['scores'] == local['scores']}", flush=True)
    # A model, not a measurement: reading/validating and the driver's reduce stay serial (measured here as the
    # reader's time alone); metric compute (local time minus reading) divides over the workers; Ray adds a fixed
    # overhead (its 1-worker time minus the local time: start-up, scheduling, transfers).
    from styleval.engine.source import iter_chunks

    t0 = time.perf_counter()
    for _ in iter_chunks([table], chunk):
        pass
    serial = (time.perf_counter() - t0) / n
    compute = local["seconds"] / n - serial
    overhead = times[1] - local["seconds"]
    print(f"speed-up 2 vs 1 worker: {times[1] / times[2]:.2f}x; "
          f"Ray (1 worker) vs local: {times[1] / local['seconds']:.2f}x "
          f"the time; serial read {serial * 1e3:.3f} ms/record, compute {compute * 1e3:.3f} ms/record, "
          f"Ray overhead {overhead:.1f} s")
    for machines in (1, 4, 16, 64):
        workers = 2 * machines
        print(f"  projection (not measured), {machines} machine(s) x 2 workers, 10M records: "
              f"{overhead + 1e7 * serial + 1e7 * compute / workers:,.0f} s "
              f"(serial floor {1e7 * serial:,.0f} s)", flush=True)


def part_resume(n: int, chunk: int) -> None:
    table = make_table(n)
    cache = WORK / f"resume-{n}.sqlite"
    for p in (cache, Path(str(cache) + "-wal"), Path(str(cache) + "-shm")):
        p.unlink(missing_ok=True)
    full = measure("stream", table, chunk_size=chunk)
    print(f"uninterrupted run, no cache: {full['seconds']:.1f} s", flush=True)
    cmd = [sys.executable, __file__, "--child", "stream", str(table),
           json.dumps({"chunk_size": chunk, "cache": str(cache), "metrics": METRICS})]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(full["seconds"] / 2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_after = time.perf_counter() - t0
    resumed = measure("stream", table, chunk_size=chunk, cache=str(cache))
    print(f"killed (SIGKILL) after {killed_after:.1f} s; resumed run: {resumed['seconds']:.1f} s "
          f"(vs {full['seconds']:.1f} s from scratch: {full['seconds'] - resumed['seconds']:.1f} s saved); "
          f"corpus scores identical: {resumed['scores'] == full['scores']}", flush=True)


MODEL_PAIRS = (("perplexity", "slor:normalize=none"),
               ("sentence_cosine:against=source", "sentence_cosine:against=references"))


def perplexity_pass_check(table: Path, repeat: int = 1) -> None:
    """perplexity's LM pass (the one slor, mean_logprob and acceptability share, with the end-of-text token) against
    ``lm.causal.token_nll`` (perplexity's own pass before it shared one): medians of alternating runs in this
    process, memos emptied before each, and whether the NLL sums are identical."""
    import statistics

    import numpy as np

    from styleval.lm.causal import token_nll
    from styleval.metrics.fluency import lm_shared
    from styleval.lm.loading import load_causal_lm
    from styleval.readers import read_table

    texts = [r.output for r in read_table(table)]
    lm = load_causal_lm()
    own, shared = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        nll = token_nll(lm, texts).nll
        own.append(time.perf_counter() - t0)
        lm_shared.clear_cache()
        t0 = time.perf_counter()
        scored, _ = lm_shared.scored_texts(lm.spec.name, texts)
        shared.append(time.perf_counter() - t0)
        lm_shared.clear_cache()
    shared_nll = np.array([-float(lp.sum()) for lp in scored.logprobs])
    same = np.array_equal(nll, shared_nll)
    rel = float(np.max(np.abs(nll - shared_nll) / np.maximum(np.abs(nll), 1e-300)))
    a, b = statistics.median(own), statistics.median(shared)
    n_tok = sum(len(lp) for lp in scored.logprobs)
    ppl = (float(np.exp(nll.sum() / n_tok)), float(np.exp(shared_nll.sum() / n_tok)))
    n_diff = int((nll != shared_nll).sum())
    print(f"perplexity's LM pass, {len(texts):,} outputs: token_nll {a:.1f} s, shared pass {b:.1f} s (median of "
          f"{repeat} alternating run(s); ratio {b / a:.2f}); NLL sums identical: {same} ({n_diff} differ, largest "
          f"relative difference {rel:.2g}; corpus perplexity {ppl[0]:.8g} vs {ppl[1]:.8g}: batches are packed by "
          "length, and the end-of-text token lengthens every text by one)", flush=True)


def part_model_cache(n: int, chunk: int) -> None:
    table = make_table(n)
    perplexity_pass_check(table)
    for first, second in MODEL_PAIRS:
        cache = WORK / f"model-cache-{n}-{first.split(':')[0]}.sqlite"
        for p in (cache, Path(str(cache) + "-wal"), Path(str(cache) + "-shm")):
            p.unlink(missing_ok=True)
        a_plain = measure("stream", table, chunk_size=chunk, metrics=first)
        a_cold = measure("stream", table, chunk_size=chunk, metrics=first, cache=str(cache))
        b_plain = measure("stream", table, chunk_size=chunk, metrics=second)
        b_warm = measure("stream", table, chunk_size=chunk, metrics=second, cache=str(cache))
        diff = max(abs(b_warm["scores"][k] - v) for k, v in b_plain["scores"].items())
        print(f"{first:<32} no cache {a_plain['seconds']:7.1f} s | fresh cache (filling it) "
              f"{a_cold['seconds']:7.1f} s ({a_cold['seconds'] / a_plain['seconds']:.2f}x)", flush=True)
        print(f"{second:<32} no cache {b_plain['seconds']:7.1f} s | cache warm from the first "
              f"{b_warm['seconds']:7.1f} s -> {b_plain['seconds'] / b_warm['seconds']:.2f}x faster; model outputs read "
              f"{b_warm.get('model_cache_hits', 0):,}, computed {b_warm.get('model_cache_misses', 0):,}; "
              f"corpus scores identical: {b_warm['scores'] == b_plain['scores']} (max difference {diff:.2g})",
              flush=True)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("scale", "ray", "resume", "lm-pass", "model-cache", "memory", "interval"),
                        required=True)
    parser.add_argument("--repeat", type=int, default=1, help="memory: runs of each kind (medians)")
    parser.add_argument("--old-src", default=None, help="memory: also run the default statistics with this src/")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--ray-records", type=int, default=15000)
    parser.add_argument("--resume-records", type=int, default=15000)
    parser.add_argument("--model-records", type=int, default=2000)
    parser.add_argument("--chunk-size", type=int, default=10000)
    parser.add_argument("--metrics", default=BATTERY, help="comma-separated specs (default: the lexical battery)")
    parser.add_argument("--stream-only", action="store_true", help="scale: skip the in-memory run at the first size")
    args = parser.parse_args()
    global METRICS
    METRICS = args.metrics
    if not ROOT.is_dir():
        print(f"data not found: {ROOT}", file=sys.stderr)
        return 1
    if args.part == "scale":
        part_scale([int(s) for s in args.sizes.split(",")], args.chunk_size, args.stream_only)
    elif args.part == "ray":
        part_ray(args.ray_records, min(args.chunk_size, 1000))
    elif args.part == "interval":
        part_interval([int(s) for s in args.sizes.split(",")])
    elif args.part == "memory":
        part_memory([int(s) for s in args.sizes.split(",")], args.chunk_size, args.repeat, args.old_src)
    elif args.part == "lm-pass":
        perplexity_pass_check(make_table(args.model_records))
    elif args.part == "model-cache":
        part_model_cache(args.model_records, min(args.chunk_size, 1000))
    else:
        part_resume(args.resume_records, min(args.chunk_size, 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
