"""Benchmark: the time `styleval benchmark` takes, for a cheap metric on every set and for an LLM judge on a server.

* ``bleu``: ``styleval benchmark -m bleu`` on every built-in set (lai2022, mir2019, sgdd-tst: 25 tasks) with the
  default resamples (``--ci 200 --permutations 200``) and a fresh cache folder, as a user runs it (a new process:
  start-up, reading the sets, scoring BLEU on 13,855 outputs, every task's figures, intervals and cluster tests);
  then ``bleu cached``: the same command again on the warm cache (no scoring);
* ``judge``: ``styleval benchmark -m llm_judge:aspect=content;base_url=...`` against llama-cpp-python's server
  serving the installed SmolLM2-135M-Instruct GGUF (``--threads`` threads, request cache off so every request is
  sent) on a subset: ``--sets lai2022 --inputs N``, the first N of Lai's 80 inputs (8 systems each), default
  resamples. Its dry run (``--dry-run``: requests and tokens, nothing sent) is printed first. The subset is named in
  every task of that run (``lai2022[first N of 80 inputs]``); its figures are not the whole set's.
* ``--peer``: also ``benchmark(["bleu"])`` in this process (``library``; then ``library cached``, again on its
  cache) against the same figures made by hand with ``styleval.score`` and one ``meta.run`` per task (``peer``:
  ``significance="permutation"`` against the best metric only, fewer tests than the clusters need), with
  ``--peer-ci``/``--peer-permutations`` resamples; the figures of both must agree. ``--skip-bleu --skip-judge
  --peer --peer-ci 0 --peer-permutations 0`` times the figures alone.

Each timing is the median of ``--repeat`` runs (wall clock). Run:
    .venv/bin/python benchmarks/bench_benchmark.py [--repeat 1] [--judge-inputs 5] [--threads 2] [--skip-judge]
    [--peer]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

STYLEVAL = str(Path(sys.executable).with_name("styleval"))


def cli(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Run ``styleval ARGS`` in a new process; (wall seconds, standard output). A failure ends the benchmark."""
    t = time.perf_counter()
    done = subprocess.run([STYLEVAL, *args], capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"styleval {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return took, done.stdout


def figure(bench_json: Path, label_start: str, metric: str) -> tuple[str, dict]:
    data = json.loads(bench_json.read_text(encoding="utf-8"))
    for task in data["tasks"]:
        if task["label"].startswith(label_start):
            for row in task["rows"]:
                if row["metric"] == metric:
                    return task["label"], row
    raise SystemExit(f"no {metric} row in a task {label_start!r} of {bench_json}")


def bench_bleu(repeat: int, env: dict[str, str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"bleu": [], "bleu cached": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "bench.json"
            args = ["benchmark", "-m", "bleu", "--cache", str(Path(tmp) / "cache"), "--json", str(out), "-q"]
            times["bleu"].append(cli(args, env)[0])
            times["bleu cached"].append(cli(args, env)[0])
            data = json.loads(out.read_text(encoding="utf-8"))
            label, row = figure(out, "lai2022 content segment", "bleu/src")
    print(f"bleu: {len(data['tasks'])} tasks on {', '.join(data['settings']['sets'])}; ci={data['settings']['ci']}, "
          f"permutations={data['settings']['n_permutations']}; {label}: bleu/src {row['statistic']:.3f} "
          f"[{row['ci'][0]:.3f}, {row['ci'][1]:.3f}]")
    return times


def bench_judge(repeat: int, inputs: int, threads: int, env: dict[str, str]) -> dict[str, list[float]]:
    from styleval.judges.llamacpp import LlamaCppServer, smollm2_gguf

    times: dict[str, list[float]] = {"judge": []}
    with LlamaCppServer(smollm2_gguf(), threads=threads) as srv:
        spec = f"llm_judge:aspect=content;base_url={srv.base_url};model={srv.alias};request_cache=none"
        subset = ["--sets", "lai2022", "--inputs", str(inputs)]
        print("dry run: " + cli(["benchmark", "-m", spec, *subset, "--dry-run"], env)[1].strip().replace("\n", " | "))
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "bench.json"
                args = ["benchmark", "-m", spec, *subset, "--cache", str(Path(tmp) / "cache"), "--json", str(out),
                        "-q"]
                times["judge"].append(cli(args, env)[0])
                label, row = figure(out, "lai2022[", "llm_judge")
    print(f"judge: {label}: llm_judge {row['statistic']:.3f} (n={row['n']}; failed: {row['failed']}); SmolLM2-135M "
          f"GGUF on llama.cpp, {threads} thread(s)")
    return times


def peer(ci: int, permutations: int) -> dict[tuple[str, str], float]:
    import styleval
    from styleval.benchmark.sets import BUILTIN
    from styleval.meta import run as meta_run
    from styleval.meta.evaluate import MetaRunOptions

    figures = {}
    for make in BUILTIN.values():
        bench_set = make(None)
        result = styleval.score(bench_set.records(), ["bleu"], bootstrap=0)
        frame = result.to_dataframe("segment")
        scored = pd.DataFrame({"system": frame["system"], "segment": frame["id"], "metric": frame["metric"],
                               "score": frame["score"]})
        table = pd.concat([scored, bench_set.stored], ignore_index=True)
        kinds = {**{m: "content" for m in scored["metric"].unique()}, **bench_set.stored_kinds}
        for bt in bench_set.tasks:
            names = [m for m in dict.fromkeys(table["metric"]) if kinds.get(m) == bt.kind]
            if not names:
                continue
            res = meta_run(bt.task, bench_set.judgments, table, metrics=names,
                           lower_is_better=bench_set.lower_is_better,
                           options=MetaRunOptions(unmatched="report", ci=ci,
                                                  significance="permutation" if permutations else "none",
                                                  n_permutations=max(permutations, 1)))
            for m in names:
                figures[(bt.name, m)] = res.statistic(m)
    return figures


def bench_peer(repeat: int, ci: int, permutations: int) -> dict[str, list[float]]:
    """``benchmark(["bleu"])`` in this process against the same figures by hand (fewer tests than the clusters)."""
    from styleval.benchmark import benchmark

    times: dict[str, list[float]] = {"library": [], "library cached": [], "peer": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            t = time.perf_counter()
            result = benchmark(["bleu"], cache_dir=cache, ci=ci, n_permutations=permutations)
            times["library"].append(time.perf_counter() - t)
            t = time.perf_counter()
            benchmark(["bleu"], cache_dir=cache, ci=ci, n_permutations=permutations)
            times["library cached"].append(time.perf_counter() - t)
        t = time.perf_counter()
        figures = peer(ci, permutations)
        times["peer"].append(time.perf_counter() - t)
    ours = {(t.task.name, r.metric): r.statistic for t in result.tasks for r in t.rows}
    worst = max(abs(ours[k] - v) for k, v in figures.items())
    assert worst < 1e-9, f"benchmark and peer disagree by {worst}"
    print(f"peer: {len(figures)} (task, metric) figures equal (worst difference {worst:.1e}); ci={ci}, "
          f"permutations={permutations}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--judge-inputs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-judge", action="store_true")
    parser.add_argument("--skip-bleu", action="store_true")
    parser.add_argument("--peer", action="store_true")
    parser.add_argument("--peer-ci", type=int, default=100)
    parser.add_argument("--peer-permutations", type=int, default=100)
    args = parser.parse_args()
    env = {**os.environ, "STYLEVAL_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    times: dict[str, list[float]] = {}
    if not args.skip_bleu:
        times.update(bench_bleu(args.repeat, env))
    if not args.skip_judge:
        times.update(bench_judge(args.repeat, args.judge_inputs, args.threads, env))
    if args.peer:
        times.update(bench_peer(args.repeat, args.peer_ci, args.peer_permutations))
    print(f"wall seconds, median of {args.repeat} (load average at the end: "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}):")
    for key, values in times.items():
        print(f"  {key:12s} {statistics.median(values):8.1f} s")
    if "library" in times:
        print(f"  library / peer: {statistics.median(times['library']) / statistics.median(times['peer']):.2f}")


if __name__ == "__main__":
    main()
