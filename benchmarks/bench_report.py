"""Benchmark: size and opening time of the HTML report with its segment explorer, in headless Chromium.

Four reports: the bundled example (3 systems x 30 inputs), yelp-dualrl's 10 first machine systems x 1,000 inputs
(``evaluate --fast``), and a synthetic 20 systems x 5,000 inputs built from that yelp evaluation (its texts and
segment scores repeated under new ids and system names, each system's scores shuffled over the inputs) to
exercise the explorer's budget (above it the report embeds a documented sample), and that one again with every
input embedded (the budget raised), to show what the sample saves. Each report is written once;
the time is Chromium's, from navigation start to the explorer's first page drawn (``data-explorer-ms``, read
after ``driver.get`` returns) and to the load event; median of --repeat loads in one browser.

The "peer" of each figure is the same page without its explorer (the report as it was before the explorer):
the ratio says what the explorer adds. Run: .venv/bin/python benchmarks/bench_report.py [--repeat 5]
[--yelp-json yelp.ev.json] (the yelp evaluation is kept there and reused).
"""
from __future__ import annotations

import argparse
import copy
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from styleval.datasets import read_yelp_dualrl
from styleval.evaluation import evaluate, load_evaluation
from styleval.examples import get
from styleval.readers import read_system_dir
from styleval.report.explorer import MAX_OUTPUTS
from styleval.report.html import render_html

ROOT = Path(__file__).resolve().parents[2] / "shared" / "data"


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="bench-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1300,1000", "--no-first-run",
                 "--disable-background-networking", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=opts)


def open_times(driver, path: Path, repeat: int) -> tuple[float, float]:
    """Median milliseconds to the explorer drawn and to the load event."""
    ready, load = [], []
    for _ in range(repeat):
        driver.get("about:blank")
        driver.get(path.as_uri())
        ms = driver.execute_script("return document.documentElement.getAttribute('data-explorer-ms')")
        nav = driver.execute_script("const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd")
        ready.append(float(ms) if ms is not None else float("nan"))
        load.append(float(nav))
    return statistics.median(ready), statistics.median(load)


def scaled(data: dict[str, Any], systems: int, inputs: int, seed: int = 0) -> dict[str, Any]:
    """A synthetic evaluation of ``systems`` x ``inputs`` from a real one: texts and segment scores repeated under
    new ids (``<id>#k``) and system names (``<system>~k``); each copy's scores are shuffled over its inputs."""
    rng = np.random.default_rng(seed)
    base_sys = list(data["score"]["settings"]["systems"])
    texts = data["texts"]
    n0 = len(texts["ids"])
    reps = -(-inputs // n0)
    ids = [f"{i}#{k}" for k in range(reps) for i in texts["ids"]][:inputs]
    pick = [j % n0 for j in range(inputs)]
    new_sys = [(f"{s}~{k}", s) for k in range(-(-systems // len(base_sys))) for s in base_sys][:systems]
    out = copy.deepcopy({k: v for k, v in data.items() if k not in ("texts", "score", "overall_segments")})
    out["texts"] = {"ids": ids, "source": [texts["source"][j] for j in pick],
                    "references": [texts["references"][j] for j in pick],
                    "direction": [texts["direction"][j] for j in pick],
                    "outputs": {n: [texts["outputs"][s][j] for j in pick] for n, s in new_sys}}
    score = {k: v for k, v in data["score"].items() if k not in ("corpus", "segments", "comparisons")}
    score["settings"] = {**score["settings"], "systems": [n for n, _ in new_sys]}
    score["corpus"] = [{**c, "system": n} for n, s in new_sys for c in data["score"]["corpus"] if c["system"] == s]
    score["comparisons"] = []
    score["segments"] = []
    for n, s in new_sys:
        for seg in data["score"]["segments"]:
            if seg["system"] == s:
                values = [seg["scores"][texts["ids"][j]] for j in pick]
                values = [values[k] for k in rng.permutation(len(values))]
                score["segments"].append({"system": n, "metric": seg["metric"], "scores": dict(zip(ids, values))})
    out["score"] = score
    out["overall"] = [{**o, "system": n} for n, s in new_sys for o in data["overall"] if o["system"] == s]
    out["overall_comparisons"] = []
    out["overall_segments"] = []
    return out


def without_explorer(page: str) -> str:
    """The same report with its explorer section and data removed (the peer)."""
    page = re.sub(r'<section id="explorer">.*?</section>', "", page, flags=re.S)
    return re.sub(r'<script type="application/json" id="sv-data">.*?</script>', "", page, flags=re.S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="bench-report-")))
    parser.add_argument("--yelp-json", type=Path, default=None,
                        help="reuse (or write, when absent) the yelp-dualrl evaluation as this JSON file")
    args = parser.parse_args()
    ex = get("formality")
    cases: list[tuple[str, Any]] = []
    t = time.perf_counter()
    # the systems only (anchor=False): the figures in docs/results.md were measured before the human references'
    # anchor row came by default, and the cases are named by their systems
    example = evaluate(read_system_dir(ex.systems_dir, ex.source, ex.references, direction=ex.direction), fast=True,
                       anchor=False)
    cases.append(("bundled example, 3 systems x 30 inputs", example.to_dict()))
    if args.yelp_json is not None and args.yelp_json.exists():
        yelp = load_evaluation(args.yelp_json)
    else:
        systems = [s for s in sorted(p.name for p in (ROOT / "yelp-dualrl/outputs/yelp").iterdir())
                   if not s.startswith("Human")][:10]
        evaluation = evaluate(read_yelp_dualrl(ROOT, systems=systems, include_humans_as_systems=False), fast=True,
                              anchor=False)
        if args.yelp_json is not None:
            evaluation.write_json(args.yelp_json)
        yelp = evaluation.to_dict()
    print(f"evaluations: {time.perf_counter() - t:.0f} s")
    cases.append(("yelp-dualrl, 10 systems x 1,000 inputs", yelp))
    big = scaled(yelp, 20, 5000)
    cases.append(("synthetic from yelp-dualrl, 20 systems x 5,000 inputs", big))
    cases.append(("the same, every input embedded (max_outputs=100,000)", (big, 100_000)))
    driver = _browser()
    try:
        print("| report | file | explorer data | opens (explorer drawn) | load event | peer file | peer load |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for k, (name, case) in enumerate(cases):
            data, budget = case if isinstance(case, tuple) else (case, MAX_OUTPUTS)
            t = time.perf_counter()
            page = render_html(data, max_outputs=budget)
            render_s = time.perf_counter() - t
            path, peer = args.out / f"report{k}.html", args.out / f"peer{k}.html"
            path.write_text(page, encoding="utf-8")
            peer.write_text(without_explorer(page), encoding="utf-8")
            payload = re.search(r'id="sv-data">(.*?)</script>', page, re.S).group(1)
            ready, load = open_times(driver, path, args.repeat)
            _, peer_load = open_times(driver, peer, args.repeat)
            sample = " (sampled)" if '"sample":{' in payload else ""
            print(f"| {name}{sample} | {path.stat().st_size / 1e6:.2f} MB | {len(payload.encode()) / 1e6:.2f} MB | "
                  f"{ready:.0f} ms | {load:.0f} ms | {peer.stat().st_size / 1e6:.2f} MB | {peer_load:.0f} ms |"
                  f"  (written in {render_s:.1f} s)")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
