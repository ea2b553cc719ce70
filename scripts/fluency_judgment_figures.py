"""Fluency metrics against human judgments (issue #16): slor, mean_logprob and acceptability next to perplexity.

* Lai et al. 2022 (GYAFC, 8 systems x 80 inputs): per-input Kendall tau-like and system-level Pearson with human
  fluency, the conventions of scripts/fluency_figures.py (mean of the two raters, human ties skipped, metric ties
  discordant, ``orientation=abs``), per direction and both;
* Mir et al. 2019 (Yelp, 9 judged settings x 244 inputs): Pearson of each metric with absolute naturalness (1-5)
  pooled over the settings, and agreement with the relative A/B judgments (output preferred when it scores better
  than its input);
* yelp-dualrl (lower-cased tokenized): share of the four human references that ``acceptability`` passes, and per
  system the acceptability share and J = mean(STA x SIM x FL) with FL = 1[acceptability >= 0.5] (95 % bootstrap
  intervals), on the first ``--dualrl-n`` inputs of each direction; ``humans``: the four human reference sets'
  acceptability on all 1,000 segments (their LM pass is not part of ``--stage lm``).

The LM pass is the costly part, so ``--stage lm`` runs it once for every text (raw and detok+truecase forms) and
stores the token log-probabilities in --work; ``--stage figures`` fills the metrics' per-process cache from that
file and scores with the registered metrics. Perplexity is computed from the same pass (exp of minus the mean
token log-probability; the tests check that token_logprobs and token_nll agree).

    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage lm
    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage figures

Target-style LoRA LMs (``--lora DIR``): ``DIR/lora-{formal,informal}`` (PT16, trained by
scripts/fluency_figures.py) score Lai et al.'s outputs by their direction's target style, and
``DIR/lora-{positive,negative}`` (``--stage lora``: Yelp dev+test sentences of shen's release split by label, Mir et
al.'s inputs and outputs left out) score Mir et al.'s outputs by theirs and each input by its own (source) style.
``--stage lm --lora DIR`` adds those LM passes to the same cache; ``--stage figures --lora DIR`` adds the
``+lora`` rows (slor keeps the generic named-corpus unigram model); ``--lora-control`` adds ``+lora-other`` rows,
each text under the adapter of the other style (domain adaptation without the target style).

    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage lora --lora /tmp/styleval-fluency
    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage lm --mir-raw \
        --lora /tmp/styleval-fluency --lora-control
    STYLEVAL_THREADS=1 .venv/bin/python scripts/fluency_judgment_figures.py --stage figures --only lai,mir \
        --mir-raw --lora /tmp/styleval-fluency --lora-control
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def lai_records():
    from styleval.datasets import read_lai2022_aspect

    return [r for r in read_lai2022_aspect(DATA / "lai2022", "fluency") if r.system != "ref"]


def mir_records():
    from styleval.datasets import read_mir2019

    return read_mir2019(DATA)


def dualrl_records(n: int):
    from styleval.datasets import read_yelp_dualrl

    recs = read_yelp_dualrl(DATA, include_humans_as_systems=True)
    keep = {f"test.{d}/{i}" for d in (0, 1) for i in range(1, n + 1)}
    return [r for r in recs if r.id in keep]


def lm_jobs(n_dualrl: int, mir_raw: bool = False) -> list[tuple[str, list[str]]]:
    """(normalisation, texts) in the order they are scored."""
    lai = [r.output for r in lai_records()]
    mir = mir_records()
    mir_texts = [r.output for r in mir] + sorted({r.source for r in mir})
    dual = [r.output for r in dualrl_records(n_dualrl)]
    jobs = [("none", lai), ("detok+truecase", lai), ("detok+truecase", dual), ("detok+truecase", mir_texts)]
    return jobs + ([("none", mir_texts)] if mir_raw else [])


YELP_STYLES = {"negative": 0, "positive": 1}  # shen's sentiment.*.{0,1}; Mir's directions name these styles


def yelp_lora_sentences() -> tuple[dict[str, list[str]], int]:
    """Yelp dev+test sentences of shen's release by sentiment, without any of Mir et al.'s inputs or outputs
    (their inputs are lines of shen's test split); returns them and how many lines were left out."""
    from styleval.datasets import yelp_shen

    mir = mir_records()
    held = {t.strip() for r in mir for t in (r.source, r.output)}
    out: dict[str, list[str]] = {}
    dropped = 0
    for style, k in YELP_STYLES.items():
        sents = []
        for split in ("dev", "test"):
            for line in yelp_shen.sentences(DATA, split, k):
                if line.strip() in held:
                    dropped += 1
                    continue
                sents.append(line.strip())
        out[style] = sents
    return out, dropped


def stage_lora(lora: Path, steps: int) -> None:
    """Train the Yelp sentiment LoRA LMs with the recipe of scripts/fluency_figures.py (batch 16)."""
    from styleval.training.lm import train_style_lm

    data, dropped = yelp_lora_sentences()
    log(f"yelp LoRA data: {', '.join(f'{k} {len(v)}' for k, v in data.items())}; "
        f"{dropped} lines equal to a Mir et al. input or output left out")
    for style, sents in data.items():
        folder = lora / f"lora-{style}"
        if (folder / "adapter_config.json").is_file():
            continue
        t = time.time()
        train_style_lm(sents, folder, style=style, max_steps=steps, batch_size=16)
        log(f"LoRA {style}: {steps} steps in {time.time() - t:.0f}s")


def lora_lms(lora: Path | None, sets: str = "lai,mir") -> dict[str, dict[str, str]]:
    """Data set (of ``sets``) -> style -> adapter folder; refuses a missing adapter (train it first)."""
    if lora is None:
        return {}
    styles = {"lai": ("formal", "informal"), "mir": tuple(YELP_STYLES)}
    out = {k: {s: str(lora / f"lora-{s}") for s in styles[k]} for k in sets.split(",")}
    for styles in out.values():
        for folder in styles.values():
            if not (Path(folder) / "adapter_config.json").is_file():
                raise SystemExit(f"no LoRA adapter in {folder}: train it first (--stage lora, fluency_figures.py)")
    return out


def lora_jobs(lora: dict[str, dict[str, str]], mir_raw: bool, other: bool = False) -> list[tuple[str, str, list[str]]]:
    """(LM, normalisation, texts) of the LoRA passes: each text under the LM its metric will pick (``other``: under
    the adapter of the other style instead, for the control rows)."""
    from styleval.textnorm.readable import resolve_auto

    def picks(text_style: str, style: str) -> bool:
        return (text_style != style) if other else (text_style == style)

    jobs: list[tuple[str, str, list[str]]] = []
    lai = lai_records() if "lai" in lora else []
    for system in sorted({r.system for r in lai}):
        recs = [r for r in lai if r.system == system]
        for mode in ("none", resolve_auto([r.output for r in recs])):
            for style, lm in lora["lai"].items():
                jobs.append((lm, mode, [r.output for r in recs if picks(r.direction.target_style, style)]))
    mir = mir_records() if "mir" in lora else []
    for mode in (["none"] if mir_raw else []) + ["detok+truecase"]:
        for style, lm in lora.get("mir", {}).items():
            jobs.append((lm, mode, [r.output for r in mir if picks(r.direction.target_style, style)]
                         + sorted({r.source for r in mir if picks(r.direction.source_style, style)})))
    return jobs


def stage_lm(work: Path, n_dualrl: int, mir_raw: bool = False, chunk: int = 200,
             lora: dict[str, dict[str, str]] | None = None, control: bool = False) -> None:
    from styleval.metrics.fluency import _lm

    path = work / "lm_cache.pkl"
    if path.is_file():
        _lm._CACHE.update(pickle.loads(path.read_bytes()))
    jobs = [("smollm2-135m", mode, texts) for mode, texts in lm_jobs(n_dualrl, mir_raw)]
    if lora:
        jobs += lora_jobs(lora, mir_raw) + (lora_jobs(lora, mir_raw, other=True) if control else [])
    for lm, mode, texts in jobs:
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        start = time.time()
        for i in range(0, len(texts), chunk):
            before = len(_lm._CACHE)
            _lm.scored_texts(lm, texts[i:i + chunk], normalize=mode)
            if len(_lm._CACHE) == before:
                continue  # all cached already
            path.write_bytes(pickle.dumps(dict(_lm._CACHE)))
            done = min(i + chunk, len(texts))
            log(f"lm {Path(lm).name} {mode}: {done}/{len(texts)} ({done / (time.time() - start):.1f}/s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/styleval-fluency-judgments")
    ap.add_argument("--stage", choices=["lora", "lm", "figures"], default="figures")
    ap.add_argument("--lora", default=None, help="folder of the target-style LoRA LMs (lora-<style>): adds +lora rows")
    ap.add_argument("--lora-sets", default="lai,mir", help="data sets whose LoRA LMs --lora adds (lai, mir)")
    ap.add_argument("--lora-control", action="store_true",
                    help="also +lora-other rows: each text under the adapter of the other style (a control)")
    ap.add_argument("--lora-steps", type=int, default=100, help="--stage lora: training steps per style")
    ap.add_argument("--dualrl-n", type=int, default=50, help="inputs per direction of yelp-dualrl")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--only", default="lai,dualrl,mir,humans", help="figures to (re)compute, comma-separated")
    ap.add_argument("--mir-raw", action="store_true", help="also the raw-text metrics on Mir et al.'s data")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.stage == "lora":
        if args.lora is None:
            ap.error("--stage lora needs --lora DIR")
        stage_lora(Path(args.lora), args.lora_steps)
        return 0
    args.lora_lms = lora_lms(Path(args.lora) if args.lora else None, args.lora_sets)
    if args.stage == "lm":
        stage_lm(work, args.dualrl_n, args.mir_raw, lora=args.lora_lms, control=args.lora_control)
        return 0
    from figures_fluency_judgments import run_figures  # noqa: E402  (kept apart: scoring and tables)

    run_figures(work, args)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
