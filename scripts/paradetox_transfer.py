#!/usr/bin/env python
"""Neural transfer baselines on ParaDetox (toxic -> neutral): train, rewrite the test inputs, `styleval evaluate`.

    .venv/bin/python scripts/paradetox_transfer.py train [--kinds nmt nmt-copy lora] [--minutes 20]
    .venv/bin/python scripts/paradetox_transfer.py rewrite [--n 200]
    .venv/bin/python scripts/paradetox_transfer.py evaluate [--bootstrap 1000]

Split: ParaDetox's toxic sources shuffled with seed 13 and cut 80/10/10 (train/selection/test) by source, the
split of the shipped toxicity classifier (so its test sources were never trained on by the classifier either).
Models go to out/transfer/paradetox-<kind> (git-ignored), rewrites and the evaluation JSON to
out/transfer/paradetox-eval/. `rewrite --n N` uses the first N test sources (the split's random order), the same
for every system: `copy` (output = input), `human` (ParaDetox's first crowd rewrite) and each trained model.
References for the reference-based metrics are all crowd rewrites of a source (so `human`'s own rewrite is one of
its references: its BLEU/chrF against references are inflated; style, content against the source, fluency and J
use no reference).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "out" / "transfer"
EVAL = OUT / "paradetox-eval"
STYLEVAL = [sys.executable, "-m", "styleval.cli.main"]
KINDS = ("nmt", "nmt-copy", "lora")
LORA_SETTINGS = ["--max-steps", "30", "--lr", "1e-3", "--batch-size", "8"]


def _run(cmd: list[str]) -> float:
    print("$ " + " ".join(cmd[2:] if cmd[:2] == STYLEVAL[:2] else cmd), flush=True)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    return time.perf_counter() - start


def train(args: argparse.Namespace) -> None:
    for kind in args.kinds:
        out = OUT / f"paradetox-{kind}"
        if (out / "transfer-card.json").is_file():
            print(f"{out} exists: skipped")
            continue
        extra = LORA_SETTINGS if kind == "lora" else []
        _run(STYLEVAL + ["train-transfer", "--kind", kind, "--paradetox", str(DATA), "--out", str(out),
                         "--max-minutes", str(args.minutes), "--threads", str(args.threads), "--no-progress",
                         *extra])


def rewrite(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from styleval.transfer.neural.data import load_paradetox_splits

    test = load_paradetox_splits(DATA)["test"]
    groups = test.groups[: args.n] if args.n else test.groups
    EVAL.mkdir(parents=True, exist_ok=True)
    (EVAL / "systems").mkdir(exist_ok=True)
    lines = lambda xs: "".join(x + "\n" for x in xs)  # noqa: E731
    (EVAL / "source.txt").write_text(lines([g.source for g in groups]), encoding="utf-8")
    for k in range(3):
        (EVAL / f"ref{k}.txt").write_text(lines([g.targets[k] if len(g.targets) > k else "" for g in groups]),
                                          encoding="utf-8")
    (EVAL / "systems" / "copy.txt").write_text(lines([g.source for g in groups]), encoding="utf-8")
    (EVAL / "systems" / "human.txt").write_text(lines([g.targets[0] for g in groups]), encoding="utf-8")
    timings_path = EVAL / "timings.json"
    timings = json.loads(timings_path.read_text()) if timings_path.is_file() else {}
    for kind in args.kinds:
        model, target = OUT / f"paradetox-{kind}", EVAL / "systems" / f"{kind}.txt"
        if not (model / "transfer-card.json").is_file():
            print(f"no model {model}: skipped")
            continue
        if target.is_file() and len(target.read_text(encoding="utf-8").splitlines()) == len(groups):
            print(f"{target} exists: skipped")
            continue
        seconds = _run(STYLEVAL + ["transfer", "--model", str(model), str(EVAL / "source.txt"), "-o", str(target),
                                   "--threads", str(args.threads), "--no-progress"])
        timings[kind] = {"seconds": round(seconds, 1), "sentences": len(groups), "threads": args.threads}
    timings_path.write_text(json.dumps(timings, indent=1), encoding="utf-8")
    print(json.dumps({"test_sources": len(groups), "of": len(test), "split": test.split, "timings": timings}))


def evaluate(args: argparse.Namespace) -> None:
    systems = sorted((EVAL / "systems").glob("*.txt"))
    cmd = STYLEVAL + ["evaluate", "--source", str(EVAL / "source.txt"), "--direction", "toxic->neutral",
                      "--bootstrap", str(args.bootstrap), "--json", str(EVAL / "evaluation.json"),
                      "--markdown", str(EVAL / "report.md"), "--no-progress"]
    for k in range(3):
        cmd += ["-r", str(EVAL / f"ref{k}.txt")]
    for s in systems:
        cmd += ["--system", f"{s.stem}={s}"]
    seconds = _run(cmd)
    summarise(seconds)
    record_on_cards()


def record_on_cards() -> None:
    """Add the test figures of each trained model to its card (the split they come from named)."""
    sys.path.insert(0, str(ROOT / "src"))
    from styleval.transfer.neural.model import add_evaluation

    data = json.loads((EVAL / "evaluation.json").read_text(encoding="utf-8"))
    n = len((EVAL / "source.txt").read_text(encoding="utf-8").splitlines())
    for kind in KINDS:
        folder = OUT / f"paradetox-{kind}"
        if not (folder / "transfer-card.json").is_file():
            continue
        figures = {c["metric"]: {"score": c["score"], "ci": c["ci"]} for c in data["score"]["corpus"]
                   if c["system"] == kind}
        figures.update({o["score"]: {"score": o["value"], "ci": o["ci"]} for o in data["overall"]
                        if o["system"] == kind})
        add_evaluation(folder, {"data": "ParaDetox (toxic->neutral)", "split": f"test: the first {n} of the 1,194 "
                                "test sources of the seed-13 80/10/10 split by toxic source (never trained on)",
                                "figures": figures, "command": "scripts/paradetox_transfer.py evaluate"})


def summarise(seconds: float | None = None) -> None:
    data = json.loads((EVAL / "evaluation.json").read_text(encoding="utf-8"))
    corpus = {(c["system"], c["metric"]): c for c in data["score"]["corpus"]}
    overall = {(o["system"], o["score"]): o for o in data["overall"]}
    roles = data["roles"]
    systems = list(dict.fromkeys(c["system"] for c in data["score"]["corpus"]))
    metrics = [roles.get("style"), roles.get("content"), roles.get("fluency")]
    extra = [m for m in ("bleu/ref", "chrf/ref") if any(k[1] == m for k in corpus)]

    def cell(entry: dict | None, key: str = "score", digits: int = 3) -> str:
        if entry is None or entry.get(key if key != "score" else "score", entry.get("value")) is None:
            return "—"
        value = entry.get("score", entry.get("value"))
        ci = entry.get("ci")
        text = f"{value:.{digits}f}"
        return text + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")

    head = ["system"] + [m for m in metrics if m] + extra + ["J"]
    print(f"roles: {json.dumps(roles)}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for s in systems:
        row = [s] + [cell(corpus.get((s, m)), digits=1 if "perplexity" in m or "/ref" in m else 3)
                     for m in metrics + extra if m] + [cell(overall.get((s, "j")))]
        print("| " + " | ".join(row) + " |")
    if seconds is not None:
        print(f"evaluate took {seconds:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=("train", "rewrite", "evaluate", "summary"))
    ap.add_argument("--kinds", nargs="*", default=list(KINDS))
    ap.add_argument("--minutes", type=float, default=20.0, help="training budget per model (wall clock)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1: the machine "
                                                           "is shared, models are trained side by side)")
    ap.add_argument("--n", type=int, default=200, help="first N test sources (0: all 1,194)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    args = ap.parse_args()
    {"train": train, "rewrite": rewrite, "evaluate": evaluate, "summary": lambda a: summarise()}[args.stage](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
