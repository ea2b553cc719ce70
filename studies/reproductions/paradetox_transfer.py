#!/usr/bin/env python
"""Neural transfer baselines on ParaDetox (toxic -> neutral): train, rewrite the test inputs, `styleval evaluate`.

    .venv/bin/python studies/reproductions/paradetox_transfer.py train [--kinds nmt nmt-copy lora] [--minutes 20]
    .venv/bin/python studies/reproductions/paradetox_transfer.py rewrite [--n 200]
    .venv/bin/python studies/reproductions/paradetox_transfer.py evaluate [--bootstrap 1000]

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

ROOT = Path(__file__).resolve().parents[2]
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
    from styleval.datasets.paradetox import parallel_splits as load_paradetox_splits

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
    """One `styleval evaluate` run over the chosen systems (default: all rewrites), written to
    evaluation-<tag>.json; a system's figures do not depend on which other systems share the run."""
    files = sorted((EVAL / "systems").glob("*.txt"))
    if args.systems:
        files = [f for f in files if f.stem in args.systems]
    tag = args.tag or "all"
    cmd = STYLEVAL + ["evaluate", "--source", str(EVAL / "source.txt"), "--direction", "toxic->neutral",
                      "--bootstrap", str(args.bootstrap), "--json", str(EVAL / f"evaluation-{tag}.json"),
                      "--no-progress"]
    for k in range(3):
        cmd += ["-r", str(EVAL / f"ref{k}.txt")]
    for f in files:
        cmd += ["--system", f"{f.stem}={f}"]
    seconds = _run(cmd)
    timings_path = EVAL / "timings.json"
    timings = json.loads(timings_path.read_text()) if timings_path.is_file() else {}
    timings[f"evaluate-{tag}"] = {"seconds": round(seconds, 1), "systems": [f.stem for f in files]}
    timings_path.write_text(json.dumps(timings, indent=1), encoding="utf-8")
    summarise()
    record_on_cards()


def _evaluations() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EVAL.glob("evaluation-*.json"))]


def record_on_cards() -> None:
    """Add the test figures of each trained model to its card (the split they come from named)."""
    sys.path.insert(0, str(ROOT / "src"))
    from styleval.training.transfer.neural.model import add_evaluation

    runs = _evaluations()
    n = len((EVAL / "source.txt").read_text(encoding="utf-8").splitlines())
    for kind in KINDS:
        data = next((d for d in runs if any(c["system"] == kind for c in d["score"]["corpus"])), None)
        if data is None:
            continue
        folder = OUT / f"paradetox-{kind}"
        if not (folder / "transfer-card.json").is_file():
            continue
        figures = {c["metric"]: {"score": c["score"], "ci": c["ci"]} for c in data["score"]["corpus"]
                   if c["system"] == kind}
        figures.update({o["score"]: {"score": o["value"], "ci": o["ci"]} for o in data["overall"]
                        if o["system"] == kind})
        add_evaluation(folder, {"data": "ParaDetox (toxic->neutral)", "split": f"test: the first {n} of the 1,194 "
                                "test sources of the seed-13 80/10/10 split by toxic source (never trained on)",
                                "figures": figures, "command": "studies/reproductions/paradetox_transfer.py evaluate"})


def summarise() -> None:
    """The table of docs/results.md: style, similarity to the source, fluency, BLEU/ref, J, with 95 % intervals."""
    runs = _evaluations()
    corpus = {(c["system"], c["metric"]): (c["score"], c["ci"]) for d in runs for c in d["score"]["corpus"]}
    overall = {(o["system"], o["score"]): (o["value"], o["ci"]) for d in runs for o in d["overall"]}
    roles = runs[0]["roles"]
    if any(d["roles"] != roles for d in runs):
        raise SystemExit("the evaluation runs gave different metric roles: re-run them with the same settings")
    systems = list(dict.fromkeys(c["system"] for d in runs for c in d["score"]["corpus"]))
    columns = [roles["style"], roles["similarity"], roles["fluency"], "perplexity", "bleu/ref"]

    def cell(entry: tuple | None, digits: int = 3) -> str:
        if entry is None or entry[0] is None:
            return "—"
        value, ci = entry
        return f"{value:.{digits}f}" + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else "")

    print(f"roles: {json.dumps(roles)}")
    head = ["system"] + columns + ["J"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for s in systems:
        row = [s] + [cell(corpus.get((s, m)), 1 if m in ("perplexity", "bleu/ref") else 3) for m in columns]
        row.append(cell(overall.get((s, "j"))))
        print("| " + " | ".join(row) + " |")
    timings = EVAL / "timings.json"
    if timings.is_file():
        print(timings.read_text(encoding="utf-8"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=("train", "rewrite", "evaluate", "summary"))
    ap.add_argument("--kinds", nargs="*", default=list(KINDS))
    ap.add_argument("--minutes", type=float, default=20.0, help="training budget per model (wall clock)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process (default 1: the machine "
                                                           "is shared, models are trained side by side)")
    ap.add_argument("--n", type=int, default=200, help="first N test sources (0: all 1,194)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--systems", nargs="*", help="evaluate: only these systems (file stems under systems/)")
    ap.add_argument("--tag", help="evaluate: name of this run's JSON (evaluation-<tag>.json; default all)")
    args = ap.parse_args()
    {"train": train, "rewrite": rewrite, "evaluate": evaluate, "summary": lambda a: summarise()}[args.stage](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
