#!/usr/bin/env python
"""How far the local backend (transformers folder converted from the GGUF, float32) and the llama.cpp server (the
same Q4_1 GGUF, computed by llama.cpp with 8-bit activations) are apart on the same prompts: the measurement behind
the tolerances of tests/test_judge_server.py (docs/llm-judges.md).

On Lai et al. 2022's outputs (``--inputs`` inputs of each direction x 9 systems), for the three judge prompts and
LogProp's three contexts, it reports:

* judge: for the tokens in both top-20 lists at the first answer position, |log p_local - log p_server|; the
  probability-weighted ratings of both and how often the two top-20 lists hold different rating tokens;
* LogProp: |log p_local - log p_server| of every scored output token (end of turn included).

Usage::

    .venv/bin/python studies/llm_judges/backend_agreement.py [--inputs 5] [--out agreement.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from styleval.datasets import read_lai2022
from styleval.judges import local, server
from styleval.judges.llamacpp import LlamaCppServer, smollm2_gguf
from styleval.judges.rating import weighted_rating
from styleval.judges.templates import LOGPROP_CONTEXTS, judge_template, logprop_template


def quantiles(values: list[float]) -> dict[str, float]:
    a = np.abs(np.asarray(values, dtype=float))
    return {"n": int(a.size), "median": round(float(np.median(a)), 4), "p99": round(float(np.quantile(a, 0.99)), 4),
            "max": round(float(a.max()), 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=5, help="inputs per direction (Lai rows 0.. and 40..)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    rows = {str(i) for i in list(range(args.inputs)) + list(range(40, 40 + args.inputs))}
    records = [r for r in read_lai2022(None) if r.id in rows]
    model = local.load_local()
    labels = [f"{r.system}/{r.id}" for r in records]
    t0 = time.time()
    with LlamaCppServer(smollm2_gguf(), threads=args.threads) as srv:
        config = server.ServerConfig(base_url=srv.base_url, model=srv.alias, request_cache="none", concurrency=1)
        token_diffs: list[float] = []
        rating_diffs: list[float] = []
        same_set_rating_diffs: list[float] = []
        differing_sets = 0
        for aspect in ("style", "content", "fluency"):
            template = judge_template(aspect)
            messages = [template.messages({"source": r.source, "output": r.output,
                                           "source_style": r.direction.source_style,
                                           "target_style": r.direction.target_style}) for r in records]
            tops = local.first_token_top(model, [model.chat.render(m) for m in messages], 20, labels)
            answers, _ = server.ask(config, srv.alias, [server.Request(server.CHAT, {
                "messages": m, "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": 20}, label)
                for m, label in zip(messages, labels)])
            for (ids, lps), answer in zip(tops, answers):
                mine = {model.token_text(t): float(v) for t, v in zip(ids, lps)}
                theirs = dict(server.first_answer_top(answer) or [])
                token_diffs += [mine[t] - theirs[t] for t in mine.keys() & theirs.keys()]
                r_mine, r_theirs = weighted_rating(mine.items(), template.scale)[0], \
                    weighted_rating(theirs.items(), template.scale)[0]
                rating_diffs.append(r_mine - r_theirs)
                digits = {str(s) for s in template.scale}
                if {t.strip() for t in mine if t.strip() in digits} == {t.strip() for t in theirs
                                                                         if t.strip() in digits}:
                    same_set_rating_diffs.append(r_mine - r_theirs)
                else:
                    differing_sets += 1
        lp_template = logprop_template()
        prompts, outputs = [], []
        for r in records:
            values = {"source": r.source, "target_style": r.direction.target_style}
            for c in LOGPROP_CONTEXTS:
                prompts.append(model.chat.render(lp_template.messages(c, values)))
                outputs.append(r.output + model.chat.eos_token)
        mine_lp = local.continuation_logprobs(model, prompts, outputs, [labels[k // 3] for k in range(len(prompts))])
        counts = model.chat.count_tokens(outputs)
        answers, _ = server.ask(config, srv.alias, [server.Request(server.COMPLETIONS, {
            "prompt": p + o, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}, labels[k // 3])
            for k, (p, o) in enumerate(zip(prompts, outputs))])
        lp_diffs: list[float] = []
        for k, answer in enumerate(answers):
            theirs = server.echoed_logprobs(answer, counts[k], records[k // 3].output, model.chat.eos_token,
                                            labels[k // 3])
            lp_diffs += list(mine_lp[k] - theirs)
    out = {"segments": len(records), "seconds": round(time.time() - t0, 1),
           "judge_token_logprob_abs_diff": quantiles(token_diffs),
           "judge_rating_abs_diff": quantiles(rating_diffs),
           "judge_rating_abs_diff_same_rating_tokens": quantiles(same_set_rating_diffs),
           "judge_prompts_with_different_rating_tokens_in_top20": differing_sets,
           "logprop_token_logprob_abs_diff": quantiles(lp_diffs)}
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
