"""Benchmark: BERTScore and WMD on every yelp-dualrl system, styleval vs the libraries called directly.

Every system output (11 systems + 4 human rewrites, 1,000 inputs each) is scored against its source and
against its human references (four; three for a human system, whose own rewrite is left out):

* BERTScore, MiniLM layer 6 (styleval's default). styleval: ``styleval.score(records, ["bertscore"])``.
  Direct: ``bert_score.BERTScorer(model_type=<MiniLM folder>, num_layers=6)`` built once, then
  ``.score(outputs, sources)`` and ``.score(outputs, references)`` (list of lists) per system.
* WMD, GloVe 6B 50d. styleval: ``styleval.score(records, ["wmd"])``. Direct: a plain loop with ``ot.emd2`` per
  (output, comparison) pair over unit-normalized GloVe vectors, NLTK treebank tokens, lowercased, nBOW of
  the in-vocabulary tokens, minimum over references (what styleval's ``wmd`` documents).

Each path runs in its own child process of this script (the same run), so that its peak memory
(``ru_maxrss``) is its own; model loading and a small warm-up are done before timing, and styleval's
in-memory embedding cache is emptied before every timed run (``STYLEVAL_CACHE`` is unset for the children,
so nothing comes from disk). Times are the median of ``--repeat`` runs.

Also printed: the raw forward-pass throughput of MiniLM on this machine (one pass over the distinct texts
the styleval path must encode: a floor for any exact BERTScore), and a check of styleval's BERTScore
against ``bert_score`` with ``batch_size=1`` on ~``--sample`` pairs (half random, half those where the
batched call differs most). bert_score's batched call pads each batch and multiplies similarities by the
mask, so a token whose real similarities are all negative gets 0 (see styleval's bertscore docstring);
that is why the batched comparison reports the share of segments within 1e-6 and the max difference,
and the batch_size=1 comparison must be within 1e-6.

Threads: both paths use the same torch thread count, ``--threads`` (default 1; 0 leaves each library's
default, all cores). On a 2-core machine that another process keeps busy, 2 threads were 3x slower than 1
(MiniLM forward: 61 vs 197 sentences/s; OpenMP threads wait on each other when one is descheduled); on
an idle machine use ``--threads 0`` or the core count.

Run (default: 4 systems, 1 repeat, 1 thread; about 5 minutes on 2 shared cores):
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/bench_neural.py
Full run (all 15 systems; about 15 minutes on 2 shared cores):
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/bench_neural.py --systems 15 --repeat 1
Exit status 0 when the batch_size=1 check is within 1e-6 and WMD agrees within 1e-9.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "yelp-dualrl"
SIDES = ("src", "ref")


# -- shared helpers (children) -------------------------------------------------------------------
def load_groups(n_systems: int):
    """``{system: [Record]}`` for the first ``n_systems`` systems (0: all)."""
    from styleval.datasets import read_yelp_dualrl
    from styleval.records import group_by_system

    groups = group_by_system(read_yelp_dualrl(ROOT))
    keep = list(groups)[: n_systems] if n_systems else list(groups)
    return {k: groups[k] for k in keep}


def comparisons(recs, side: str) -> list[list[str]]:
    return [[r.source] for r in recs] if side == "src" else [list(r.references) for r in recs]


def rss_now() -> int:
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except ImportError:  # pragma: no cover
        return 0


def peak_rss() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # KiB on Linux


def minilm_dir() -> str:
    from styleval.models.encoder import transformers_dir
    from styleval.models.spec import model_spec

    return str(transformers_dir(model_spec("minilm")))


def glove_dir() -> Path:
    from styleval.models.spec import model_spec

    return Path(model_spec("glove-6b-50d").path)


# -- children ------------------------------------------------------------------------------------
def child_bertscore_styleval(groups, repeat: int) -> dict:
    import styleval
    from styleval.models.pool import embedding_cache

    records = [r for recs in groups.values() for r in recs]
    first = next(iter(groups.values()))
    styleval.score(first[:20], ["bertscore"], bootstrap=0)  # loads MiniLM into the pool
    embedding_cache().clear()
    import torch

    setup_rss = rss_now()
    times = []
    for _ in range(repeat):
        embedding_cache().clear()  # every run encodes every text
        t0 = time.perf_counter()
        res = styleval.score(records, ["bertscore"], bootstrap=0)
        times.append(time.perf_counter() - t0)
    f1 = {(s, side): np.asarray(res.get(f"bertscore/{side}", s).segment_scores, dtype=np.float64)
          for s in groups for side in SIDES}
    return {"times": times, "f1": f1, "setup_rss": setup_rss, "peak_rss": peak_rss(),
            "threads": torch.get_num_threads()}


def make_scorer(batch_size: int = 64):
    from bert_score import BERTScorer

    return BERTScorer(model_type=minilm_dir(), num_layers=6, batch_size=batch_size, device="cpu")


def child_bertscore_direct(groups, repeat: int) -> dict:
    import torch

    t0 = time.perf_counter()
    scorer = make_scorer()
    build = time.perf_counter() - t0
    first = next(iter(groups.values()))
    scorer.score([r.output for r in first[:20]], [r.source for r in first[:20]])  # warm-up
    setup_rss = rss_now()
    times = []
    for _ in range(repeat):
        f1 = {}
        t0 = time.perf_counter()
        for system, recs in groups.items():
            cands = [r.output for r in recs]
            _, _, f = scorer.score(cands, [r.source for r in recs])
            f1[(system, "src")] = f.numpy().astype(np.float64)
            _, _, f = scorer.score(cands, [list(r.references) for r in recs])
            f1[(system, "ref")] = f.numpy().astype(np.float64)
        times.append(time.perf_counter() - t0)
    return {"times": times, "f1": f1, "setup_rss": setup_rss, "peak_rss": peak_rss(), "build_s": build,
            "threads": torch.get_num_threads()}


def child_encoder_and_b1(groups, sample: list) -> dict:
    """MiniLM forward throughput over the distinct texts, then bert_score batch_size=1 on the sample."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    texts = set()
    for recs in groups.values():
        for r in recs:
            texts.add(r.output)
            texts.add(r.source)
            texts.update(r.references)
    texts = sorted(texts)
    path = minilm_dir()
    tok = AutoTokenizer.from_pretrained(path, use_fast=False, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    t0 = time.perf_counter()
    ids = [tok.encode(t.strip(), add_special_tokens=True, truncation=True, max_length=512) for t in texts]
    tok_s = time.perf_counter() - t0
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
    batches = []
    for start in range(0, len(order), 64):
        chunk = [ids[i] for i in order[start:start + 64]]
        width = max(len(c) for c in chunk)
        x = torch.zeros((len(chunk), width), dtype=torch.long)
        m = torch.zeros((len(chunk), width), dtype=torch.long)
        for i, c in enumerate(chunk):
            x[i, :len(c)] = torch.tensor(c)
            m[i, :len(c)] = 1
        batches.append((x, m))
    with torch.inference_mode():
        model(*batches[-1])  # warm-up
        t0 = time.perf_counter()
        for x, m in batches:
            model(x, attention_mask=m)
        fwd_s = time.perf_counter() - t0
    del model

    scorer = make_scorer(batch_size=1)
    cands, refs = [], []
    for system, side, i in sample:
        rec = groups[system][i]
        cands.append(rec.output)
        refs.append(comparisons([rec], side)[0])
    t0 = time.perf_counter()
    _, _, f = scorer.score(cands, refs, batch_size=1)  # .score's own batch_size (default 64) is the one used
    b1_s = time.perf_counter() - t0
    return {"n_texts": len(texts), "n_tokens": int(sum(len(i) for i in ids)), "tokenize_s": tok_s,
            "forward_s": fwd_s, "b1_f1": f.numpy().astype(np.float64), "b1_s": b1_s,
            "threads": torch.get_num_threads()}


def child_wmd_styleval(groups, repeat: int) -> dict:
    import warnings

    import styleval

    records = [r for recs in groups.values() for r in recs]
    first = next(iter(groups.values()))
    warnings.simplefilter("ignore")  # OOV / NaN notes
    styleval.score(first[:20], ["wmd"], bootstrap=0)  # loads GloVe, POT, NLTK
    setup_rss = rss_now()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = styleval.score(records, ["wmd"], bootstrap=0)
        times.append(time.perf_counter() - t0)
    scores = {(s, side): np.asarray(res.get(f"wmd/{side}", s).segment_scores, dtype=np.float64)
              for s in groups for side in SIDES}
    return {"times": times, "scores": scores, "setup_rss": setup_rss, "peak_rss": peak_rss()}


def child_wmd_direct(groups, repeat: int) -> dict:
    """What a user writes: GloVe loaded once, then per pair tokenize, nBOW, cost matrix, ot.emd2."""
    from collections import Counter

    import ot
    import pyarrow.parquet as pq
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from scipy.spatial.distance import cdist

    folder = glove_dir()
    words = pq.read_table(next(folder.glob("*_index.parquet")), columns=["index"]).column(0).to_pylist()
    matrix = np.load(next(folder.glob("*_emb.npy")), mmap_mode="r")
    vocab: dict[str, int] = {}
    for i, w in enumerate(words):
        vocab.setdefault(str(w), i)  # first occurrence wins (as gensim)
    tokenize = NLTKWordTokenizer().tokenize

    def nbow(text: str):
        counts = Counter(vocab[t] for t in (w.lower() for w in tokenize(text.strip())) if t in vocab)
        if not counts:
            return None
        rows = np.array(sorted(counts), dtype=np.int64)
        weights = np.array([counts[r] for r in rows], dtype=np.float64)
        vecs = np.asarray(matrix[rows], dtype=np.float64)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.where(norms == 0, 1.0, norms)
        return weights / weights.sum(), vecs

    def run(groups) -> dict:
        out = {}
        for system, recs in groups.items():
            for side in SIDES:
                values = []
                for rec, comps in zip(recs, comparisons(recs, side)):
                    a = nbow(rec.output)
                    dists = []
                    for c in comps:
                        b = nbow(c)
                        if a is not None and b is not None:
                            dists.append(float(ot.emd2(a[0], b[0], cdist(a[1], b[1]))))
                    values.append(min(dists) if dists else float("nan"))
                out[(system, side)] = np.asarray(values)
        return out

    run({k: v[:20] for k, v in list(groups.items())[:1]})  # warm-up
    setup_rss = rss_now()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        scores = run(groups)
        times.append(time.perf_counter() - t0)
    return {"times": times, "scores": scores, "setup_rss": setup_rss, "peak_rss": peak_rss()}


def child_main(role: str, spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    if spec["threads"] > 0 and role in ("bs-styleval", "bs-direct", "encoder"):
        import torch

        torch.set_num_threads(spec["threads"])  # the direct paths; styleval reads STYLEVAL_THREADS (same value)
    groups = load_groups(spec["systems"])
    if role == "bs-styleval":
        result = child_bertscore_styleval(groups, spec["repeat"])
    elif role == "bs-direct":
        result = child_bertscore_direct(groups, spec["repeat"])
    elif role == "encoder":
        result = child_encoder_and_b1(groups, [tuple(x) for x in spec["sample"]])
    elif role == "wmd-styleval":
        result = child_wmd_styleval(groups, spec["repeat"])
    elif role == "wmd-direct":
        result = child_wmd_direct(groups, spec["repeat"])
    else:
        raise SystemExit(f"unknown role {role}")
    with open(out_path, "wb") as fh:
        pickle.dump(result, fh)
    return 0


# -- parent --------------------------------------------------------------------------------------
def spawn(role: str, spec: dict, tmp: Path) -> dict:
    spec_path, out_path = tmp / f"{role}.json", tmp / f"{role}.pkl"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               HF_HUB_DISABLE_PROGRESS_BARS="1", TRANSFORMERS_VERBOSITY="error")
    env.pop("STYLEVAL_CACHE", None)
    if spec["threads"] > 0:
        env.update(STYLEVAL_THREADS=str(spec["threads"]), OMP_NUM_THREADS=str(spec["threads"]),
                   MKL_NUM_THREADS=str(spec["threads"]))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", role, "--spec", str(spec_path), "--out", str(out_path)],
                   env=env, check=True)
    with open(out_path, "rb") as fh:
        result = pickle.load(fh)
    result["wall_s"] = time.perf_counter() - t0
    return result


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def runs(ts: list[float]) -> str:
    return f"median {statistics.median(ts):.2f} s  runs {[round(t, 2) for t in ts]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=4, help="only the first N systems (0 or 15: all)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for both paths (0: each library's default, all cores)")
    parser.add_argument("--sample", type=int, default=200, help="pairs for the bert_score batch_size=1 check")
    parser.add_argument("--no-wmd", action="store_true", help="skip the WMD part")
    parser.add_argument("--wmd-only", action="store_true", help="only the WMD part (skips BERTScore)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child_main(args.child, args.spec, args.out)
    if not ROOT.is_dir():
        print(f"data not found: {ROOT}", file=sys.stderr)
        return 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    groups = load_groups(args.systems)
    n_seg = sum(len(v) for v in groups.values())
    n_pairs = sum(1 + len(r.references) for v in groups.values() for r in v)
    spec = {"systems": args.systems, "repeat": args.repeat, "threads": args.threads}
    print(f"systems: {len(groups)}, segments: {n_seg}, text pairs: {n_pairs} (each output vs its source and vs its "
          f"references), repeat: {args.repeat}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench_neural_") as tmpdir:
        tmp = Path(tmpdir)
        if not args.wmd_only:
            ours = spawn("bs-styleval", spec, tmp)
            theirs = spawn("bs-direct", spec, tmp)

            # agreement with the batched bert_score call
            diffs = {k: np.abs(ours["f1"][k] - theirs["f1"][k]) for k in ours["f1"]}
            all_d = np.concatenate(list(diffs.values()))
            within = float(np.mean(all_d <= 1e-6))
            # the sample: half random, half the largest differences
            rng = np.random.default_rng(12345)
            keys = list(diffs)
            flat = [(s, side, i) for (s, side) in keys for i in range(len(diffs[(s, side)]))]
            n_rand = args.sample // 2
            picked = {tuple(flat[j]) for j in rng.choice(len(flat), size=min(n_rand, len(flat)), replace=False)}
            for j in np.argsort(-all_d, kind="stable"):
                if len(picked) >= args.sample:
                    break
                picked.add(tuple(flat[j]))
            sample = sorted(picked, key=lambda x: (list(groups).index(x[0]), x[1], x[2]))
            enc = spawn("encoder", {**spec, "sample": sample}, tmp)
            ours_s = np.array([ours["f1"][(s, side)][i] for s, side, i in sample])
            theirs_s = np.array([theirs["f1"][(s, side)][i] for s, side, i in sample])
            b1_d = np.abs(ours_s - enc["b1_f1"])
            batched_d = np.abs(theirs_s - enc["b1_f1"])

        if not args.no_wmd:
            w_ours = spawn("wmd-styleval", spec, tmp)
            w_theirs = spawn("wmd-direct", spec, tmp)

    ok = True
    if not args.wmd_only:
        to, tt = statistics.median(ours["times"]), statistics.median(theirs["times"])
        print("\nBERTScore F1, MiniLM layer 6 (both sides; torch threads: styleval "
              f"{ours['threads']}, bert_score {theirs['threads']})")
        print(f"  bert_score, BERTScorer per system: {runs(theirs['times'])}  {n_seg / tt:,.0f} segments/s  "
              f"{n_pairs / tt:,.0f} pairs/s  (BERTScorer built in {theirs['build_s']:.1f} s, not timed)")
        print(f"  styleval.score:                    {runs(ours['times'])}  {n_seg / to:,.0f} segments/s  "
              f"{n_pairs / to:,.0f} pairs/s")
        print(f"  ratio bert_score/styleval: {tt / to:.2f}x  (target >= 1.5)")
        print(f"  peak RSS (own process): bert_score {mib(theirs['peak_rss'])} (after model load + warm-up "
              f"{mib(theirs['setup_rss'])}, +{mib(theirs['peak_rss'] - theirs['setup_rss'])} scoring); styleval "
              f"{mib(ours['peak_rss'])} (after load {mib(ours['setup_rss'])}, "
              f"+{mib(ours['peak_rss'] - ours['setup_rss'])} scoring)")
        fwd_rate = enc["n_texts"] / enc["forward_s"]
        print(f"  MiniLM forward pass alone: {enc['n_texts']:,} distinct texts ({enc['n_tokens']:,} tokens) in "
              f"{enc['forward_s']:.2f} s = {fwd_rate:,.0f} sentences/s (batch 64, length-sorted; slow tokenizer "
              f"{enc['tokenize_s']:.2f} s more); styleval time / forward floor: {to / enc['forward_s']:.2f}")
        print(f"  styleval vs bert_score batched: max |F1 difference| {all_d.max():.2e}; segments within 1e-6: "
              f"{within:.2%} ({int((all_d <= 1e-6).sum())} of {len(all_d)}); differing by > 1e-4: "
              f"{int((all_d > 1e-4).sum())}")
        print(f"  vs bert_score batch_size=1 on {len(sample)} pairs ({n_rand} random + the largest batched "
              f"differences; {enc['b1_s']:.1f} s): styleval max |diff| {b1_d.max():.2e}; "
              f"batched bert_score max |diff| {batched_d.max():.2e}")
        ok = bool(b1_d.max() <= 1e-6)

    if not args.no_wmd:
        a = np.concatenate([w_ours["scores"][k] for k in sorted(w_ours["scores"])])
        b = np.concatenate([w_theirs["scores"][k] for k in sorted(w_ours["scores"])])
        nan_same = bool(np.array_equal(np.isnan(a), np.isnan(b)))
        fin = ~np.isnan(a) & ~np.isnan(b)
        w_d = float(np.max(np.abs(a[fin] - b[fin]))) if fin.any() else 0.0
        wo, wt = statistics.median(w_ours["times"]), statistics.median(w_theirs["times"])
        print("\nWMD, GloVe 6B 50d (both sides)")
        print(f"  direct loop, ot.emd2 per pair:     {runs(w_theirs['times'])}  {n_seg / wt:,.0f} segments/s")
        print(f"  styleval.score:                    {runs(w_ours['times'])}  {n_seg / wo:,.0f} segments/s")
        print(f"  ratio direct/styleval: {wt / wo:.2f}x   max |difference|: {w_d:.2e}; NaN segments "
              f"{int(np.isnan(a).sum())} (same in both: {nan_same})")
        print(f"  peak RSS: direct {mib(w_theirs['peak_rss'])} (+{mib(w_theirs['peak_rss'] - w_theirs['setup_rss'])}"
              f" scoring); styleval {mib(w_ours['peak_rss'])} "
              f"(+{mib(w_ours['peak_rss'] - w_ours['setup_rss'])} scoring)")
        ok = ok and nan_same and w_d <= 1e-9
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
