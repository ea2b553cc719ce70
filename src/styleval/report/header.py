"""The top of the HTML report: the run it shows (command, input files with hashes, date), a short summary of who
leads on what and where the differences are significant, and the note beside perplexity for a lower-cased or
tokenized release."""
from __future__ import annotations

import html
from typing import Any, Mapping

from ..evaluation.anchor import anchor_line
from ..evaluation.summary import TABLE_ASPECTS, beaten_letters, system_letters, systems_of
from ..textnorm.casing import release_case


def run_html(data: Mapping[str, Any]) -> str:
    """The command, date and input files (``settings["run"]``, written by ``styleval evaluate``)."""
    run = data.get("settings", {}).get("run")
    verb, command = (("Scored", "score") if data.get("settings", {}).get("source") == "score"
                     else ("Evaluated", "evaluate"))
    if not run:
        return (f"<p class=\"run\">{verb} through the Python API: no command or input files were recorded "
                f"(<code>styleval {command} --json</code> records them).</p>")
    rows = "".join(f"<tr><td>{html.escape(f['option'])}</td><td><code>{html.escape(f['path'])}</code></td>"
                   f"<td><code title=\"sha256 {html.escape(f['sha256'])}\">{html.escape(f['sha256'][:16])}…</code>"
                   f"</td><td>{f['bytes']:,}</td></tr>" for f in run.get("inputs", []))
    files = (f"<details><summary>{len(run.get('inputs', []))} input file(s) with their SHA-256</summary>"
             f"<table class=\"inputs\"><tr><th>option</th><th>file</th><th>sha256</th><th>bytes</th></tr>{rows}"
             "</table></details>") if rows else "<p>No input file (built-in example or records in memory).</p>"
    return (f"<p class=\"run\">{verb} on <time>{html.escape(run.get('date', '?'))}</time> with "
            f"<code>{html.escape(run.get('command', '?'))}</code></p>{files}")


def _leaders(data: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(metric label, leading system, significance phrase)`` for every table row with scores."""
    systems = systems_of(data)
    letters = system_letters(systems)
    by_letter = {v: k for k, v in letters.items()}
    corpus = {(c["metric"], c["system"]): c for c in data["score"]["corpus"]}
    baseline = data["score"]["settings"].get("baseline")
    rows: list[tuple[str, dict[str, float], bool, list[Any]]] = []
    for aspect in TABLE_ASPECTS:
        for metric in data["aspects"].get(aspect, []):
            scores = {s: corpus[(metric, s)]["score"] for s in systems if (metric, s) in corpus}
            hib = next((corpus[(metric, s)]["higher_is_better"] for s in systems if (metric, s) in corpus), True)
            rows.append((metric, scores, hib, data["score"].get("comparisons", [])))
    for name in dict.fromkeys(o["score"] for o in data.get("overall", [])):
        scores = {o["system"]: o["value"] for o in data["overall"] if o["score"] == name}
        rows.append((name, scores, True, data.get("overall_comparisons", [])))
    anchor = data.get("settings", {}).get("anchor")
    out = []
    for metric, scores, hib, comparisons in rows:
        valid = {s: v for s, v in scores.items() if v is not None and s != anchor}
        if len(valid) < 2:
            continue
        best = max(valid, key=lambda s: valid[s] if hib else -valid[s])
        if baseline:
            phrase = "" if best == baseline else (
                "significantly better than the baseline" if beaten_letters(comparisons, letters, metric, best, hib)
                else "not significantly better than the baseline")
        else:
            beaten = [by_letter[c] for c in beaten_letters(comparisons, letters, metric, best, hib)
                      if by_letter[c] != anchor]
            others = [s for s in valid if s != best]
            if not comparisons or not any(c["metric"] == metric for c in comparisons):
                phrase = "untested"
            elif len(beaten) == len(others):
                phrase = "significantly ahead of every other system"
            elif beaten:
                phrase = (f"significantly ahead of {', '.join(beaten)}; not of "
                          f"{', '.join(s for s in others if s not in beaten)}")
            else:
                phrase = "no significant lead"
        out.append((metric, best, phrase))
    return out


def summary_html(data: Mapping[str, Any]) -> str:
    """One line per leading system: the metrics it leads on, grouped by whether its lead is significant."""
    grouped: dict[str, dict[str, list[str]]] = {}
    for metric, system, phrase in _leaders(data):
        grouped.setdefault(system, {}).setdefault(phrase, []).append(f"<b>{html.escape(metric)}</b>")
    items = "".join(
        f"<li>{html.escape(system)} leads on "
        + "; ".join(", ".join(metrics) + (f" ({html.escape(phrase)})" if phrase else "")
                    for phrase, metrics in by_phrase.items()) + "</li>"
        for system, by_phrase in grouped.items())
    line = anchor_line(data.get("settings", {}))
    if not (items or line):
        return ""
    note = f"<p class=\"anchor\">{html.escape(line)}</p>" if line else ""
    return f"<h2>Summary</h2><ul class=\"summary\">{items}</ul>{note}"


def perplexity_labels(data: Mapping[str, Any]) -> list[str]:
    """The labels of the perplexity metrics of the evaluation."""
    return [c["metric"] for c in data["score"]["corpus"]
            if (c.get("metric_id") or {"name": c["metric"]}).get("name") == "perplexity"]


def case_note(data: Mapping[str, Any]) -> str:
    """The note beside perplexity when the inputs look lower-cased or tokenized ("" otherwise, or without texts):
    the LM reads such text as unlikely, so every system's perplexity is high."""
    texts = data.get("texts")
    if not texts or not perplexity_labels(data):
        return ""
    evidence = release_case(texts["source"], texts["references"])
    if not (evidence.lowercased or evidence.tokenized):
        return ""
    done = " and ".join(w for w, on in (("lower-cased", evidence.lowercased), ("tokenized", evidence.tokenized))
                        if on)
    return (f"The inputs look {done} ({evidence.no_capital_share:.0%} of {evidence.n_texts} sources and references "
            f"have no capital letter, {evidence.tokenized_share:.0%} show tokenization): a language model reads such "
            "text as unlikely, so perplexity is high for every system; compare the systems with each other, not with "
            "figures on cased text (the metric's normalize=detok+truecase rewrites the outputs first).")
