"""Benchmark: what a hostile judge server costs, in wall time and peak memory, each case in a fresh process.

The project's fault-injecting OpenAI-compatible server (:mod:`styleval.judges.testing`) runs in a child process on
127.0.0.1; ``styleval score -m llm_judge:base_url=...`` runs in another, and this script reports its wall time,
exit code, peak resident memory (its own ``ru_maxrss``) and the size of its request cache:

* ``drip``: headers at once, then the body one byte a second, with a Content-Length (``timeout=5``);
* ``drip-chunked``: the same, chunked;
* ``huge``: every reply padded to 100 MB (30 segments; ``timeout=60`` here and below);
* ``gzip-bomb``: a reply of about 1 MB gzip that inflates to 1 GB (the server compresses it for each request);
* ``normal``: the same 30 segments answered normally (the peer: what a run costs without the fault).

Run:
    .venv/bin/python benchmarks/bench_judge_bounds.py [--cases drip,huge,gzip-bomb,normal]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCORE = """
import resource, sys
from styleval.cli.main import main
code = main(sys.argv[1:])
print("peak_rss_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""
SERVER = """
import sys, time
from styleval.judges.testing import FaultServer, Reply
case = sys.argv[1]
replies = {"drip": Reply(drip=1.0), "drip-chunked": Reply(drip=1.0, chunked=True), "huge": Reply(pad=100_000_000),
           "gzip-bomb": Reply(pad=1_000_000_000, gzip=True), "normal": None}
with FaultServer() as srv:
    if replies[case] is not None:
        srv.on("RATE", replies[case])
    print(srv.base_url, flush=True)
    time.sleep(3600)
"""


def run(case: str, folder: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    server = subprocess.Popen([sys.executable, "-c", SERVER, case], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        table = folder / f"{case}.tsv"
        table.write_text("id\tsystem\tdirection\tsource\toutput\n" + "".join(
            f"{i}\tA\tinformal->formal\tsource {i}\tRATE {i % 5 + 1} (output {i})\n" for i in range(1, 31)),
            encoding="utf-8")
        cache = folder / f"{case}.sqlite"
        timeout = 5 if case.startswith("drip") else 60
        spec = f"llm_judge:base_url={base_url};request_cache={cache};timeout={timeout};retries=0"
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", SCORE, "score", "--input", str(table), "-m", spec,
                               "--bootstrap", "0", "--no-progress"], capture_output=True, text=True, env=env,
                              timeout=900)
        wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait()
    lines = done.stderr.strip().splitlines()
    peak = next(int(line.split()[1]) for line in lines if line.startswith("peak_rss_kb"))
    said = [line for line in lines if not line.startswith("peak_rss_kb")]
    return {"case": case, "exit": done.returncode, "wall_s": round(wall, 1), "peak_rss_mb": round(peak / 1024, 1),
            "cache_bytes": cache.stat().st_size if cache.exists() else 0, "stderr": said[-1][:220] if said else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="normal,drip,drip-chunked,huge,gzip-bomb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            print(json.dumps(run(case, Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
