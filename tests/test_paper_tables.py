"""Paper tables (``--latex``, ``--markdown`` / ``--markdown-table``) from ``score``, ``evaluate`` and ``report``.

Every cell is read back from the produced source and checked against the run itself: the printed score rounds the
corpus score, the bold cell is the best system in the metric's direction (found here from the scores), and the
significance letters or daggers are the pairs the run's paired tests found significant (read from
``to_dataframe("comparisons")``). The LaTeX goes through pdflatex with booktabs when Debian's
texlive-latex-base and texlive-latex-recommended are installed (scripts/install.sh), and always through a syntax
check: balanced braces and environments, and every tabular row with as many cells as the column specification.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from styleval import score
from styleval.cli import main as cli_main
from styleval.cli.score_cmd import load_records
from styleval.errors import InputError
from styleval.evaluation import evaluate
from styleval.report.paper import latex_paper_table, markdown_paper_table

CELL = re.compile(r"^(?:\\textbf\{(?P<bold>[-\d.]+)\}|(?P<plain>[-\d.]+))"
                  r"(?:\{\\scriptsize\\,\$\\pm\$(?P<half>[\d.]+)\})?"
                  r"(?:\\textsuperscript\{(?P<mark>[a-z\d]+|\\dag\{\}|\\ddag\{\})\})?$")
SYSTEMS = ["copy", "rewrite", "tidy"]


def _records():
    ns = argparse.Namespace(example="formality", input=[], gyafc=None, system=[], systems_dir=None, source=None,
                            reference=[], direction=None)
    return load_records(ns)


@pytest.fixture(scope="module")
def scored():
    return score(_records(), ["bleu", "chrf", "pinc", "ter"], bootstrap=200, significance="paired-bootstrap")


@pytest.fixture(scope="module")
def evaluated():
    return evaluate(_records(), fast=True, bootstrap=100)


# ------------------------------------------------------------------------------------------------- checks
def _strip_escaped(tex: str) -> str:
    return re.sub(r"\\[{}%&$#_]", "", tex)


def check_latex_syntax(tex: str) -> None:
    """Balanced braces, matching \\begin/\\end, and every row of every tabular with the number of columns its
    specification gives (a \\multicolumn{k} counting k)."""
    body = _strip_escaped(tex)
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a closing brace without its opening one"
    assert depth == 0, "unbalanced braces"
    stack = []
    for kind, name in re.findall(r"\\(begin|end)\{(\w+)\}", body):
        if kind == "begin":
            stack.append(name)
        else:
            assert stack and stack.pop() == name, f"\\end{{{name}}} does not close the open environment"
    assert not stack, f"unclosed environments: {stack}"
    for spec, content in re.findall(r"\\begin\{tabular\}\{([lrc]+)\}(.*?)\\end\{tabular\}", tex, re.S):
        for line in content.splitlines():
            line = line.strip()
            if not line.endswith(r"\\"):
                continue
            cells = _strip_escaped(line[:-2]).split("&")
            width = sum(int(m) if m else 1 for m in
                        (re.match(r"\s*\\multicolumn\{(\d+)\}", c) for c in cells) for m in [m and m.group(1)])
            assert width == len(spec), f"row with {width} columns in a {len(spec)}-column tabular: {line[:80]}"


def compile_latex(tex: str, folder: Path) -> None:
    """pdflatex over a minimal document holding the table (booktabs only); skipped without an engine."""
    engine = shutil.which("pdflatex")
    if engine is None:
        pytest.skip("no LaTeX engine (Debian: texlive-latex-base texlive-latex-recommended, scripts/install.sh)")
    kpse = shutil.which("kpsewhich")
    if kpse is None or not subprocess.run([kpse, "booktabs.sty"], capture_output=True, text=True).stdout.strip():
        pytest.skip("booktabs is not installed (Debian: texlive-latex-recommended)")
    (folder / "table.tex").write_text(tex, encoding="utf-8")
    (folder / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                    "\\input{table.tex}\n\\end{document}\n", encoding="utf-8")
    run = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=folder,
                         capture_output=True, text=True, timeout=120)
    log = (folder / "doc.log").read_text(encoding="latin-1")
    assert run.returncode == 0, log[-3000:]
    assert "Undefined control sequence" not in log and "Missing" not in log
    assert (folder / "doc.pdf").stat().st_size > 0


def _rows(tex: str) -> dict[str, list[str]]:
    """Metric label -> its cells, from a table with one column per system."""
    body = tex.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
    out = {}
    for line in body.splitlines():
        line = line.strip()
        if not line.endswith(r"\\") or line.startswith(r"\multicolumn"):
            continue
        cells = [c.strip() for c in line[:-2].split(" & ")]
        out[cells[0]] = cells[1:]
    return out


def _expected_beaten(result) -> dict[tuple[str, str], set[str]]:
    """(metric, system) -> the systems it is significantly better than, from the paired tests."""
    frame = result.to_dataframe("comparisons")
    out: dict[tuple[str, str], set[str]] = {}
    for row in frame.itertuples(index=False):
        if row.better is not None:
            worse = row.baseline if row.better == row.system else row.system
            out.setdefault((row.metric, row.better), set()).add(worse)
    return out


# ------------------------------------------------------------------------------------------------- tests
def test_latex_cells_are_the_runs_scores_bold_best_and_letters(scored, tmp_path):
    tex = latex_paper_table(scored)
    check_latex_syntax(tex)
    rows = _rows(tex)
    letters = dict(zip(SYSTEMS, "abc"))
    beaten = _expected_beaten(scored)
    assert len(beaten) >= 6  # the example's systems differ: most cells carry letters
    assert r"copy (a) & rewrite (b) & tidy (c) \\" in tex
    for metric in scored.metrics:
        hib = scored.get(metric, SYSTEMS[0]).higher_is_better
        label = metric.replace("_", r"\_") + (r" $\uparrow$" if hib else r" $\downarrow$")
        cells = rows[label]
        scores = {s: scored.get(metric, s).corpus_score for s in SYSTEMS}
        best = max(scores.values()) if hib else min(scores.values())
        for system, cell in zip(SYSTEMS, cells):
            m = CELL.match(cell)
            assert m, cell
            printed = m.group("bold") or m.group("plain")
            decimals = len(printed.split(".")[1]) if "." in printed else 0
            assert abs(float(printed) - scores[system]) <= 0.5 * 10 ** -decimals + 1e-12
            ci = scored.get(metric, system).ci
            assert float(m.group("half")) == pytest.approx((ci[1] - ci[0]) / 2, abs=0.5 * 10 ** -decimals + 1e-12)
            assert bool(m.group("bold")) == (scores[system] == best), (metric, system)
            expected = "".join(sorted(letters[s] for s in beaten.get((metric, system), set())))
            assert (m.group("mark") or "") == expected, (metric, system)
    assert "Superscript letters: significantly better than the systems with those letters" in tex
    assert r"\begin{itemize}" in tex and r"\texttt{bleu/ref}" in tex  # the signatures block
    compile_latex(tex, tmp_path)


def test_daggers_against_a_baseline_and_the_metric_columns_layout(tmp_path):
    result = score(_records(), ["bleu", "pinc"], bootstrap=200, significance="paired-bootstrap", baseline="copy")
    tex = latex_paper_table(result, columns="metrics", marks="daggers", signatures="footnote")
    check_latex_syntax(tex)
    frame = result.to_dataframe("comparisons")
    assert frame["better"].eq("copy").any() and frame["better"].ne("copy").any()  # both marks occur
    body = tex.split("System &", 1)[1].split(r"\bottomrule")[0]
    lines = {line.split(" & ")[0].strip(): line for line in body.splitlines() if line.strip().endswith(r"\\")}
    metrics = result.metrics
    for row in frame.itertuples(index=False):
        cell = lines[row.system].rstrip(" \\").split(" & ")[1 + metrics.index(row.metric)]
        mark = CELL.match(cell).group("mark")
        if row.better is None:
            assert mark is None, (row.metric, row.system, cell)
        else:
            assert mark == (r"\dag{}" if row.better == row.system else r"\ddag{}"), (row.metric, row.system)
    assert "significantly better/worse than the baseline copy" in tex
    assert r"\cmidrule(lr){2-" in tex and r"\parbox{\linewidth}" in tex  # aspect spans; signatures as a footnote
    compile_latex(tex, tmp_path)


def test_evaluate_table_groups_aspects_and_never_bolds_the_anchor(evaluated, tmp_path):
    data = evaluated.to_dict()
    tex = latex_paper_table(evaluated, caption="Formality transfer on the bundled example")
    check_latex_syntax(tex)
    assert data["settings"]["anchor"] == "human-reference"
    for title in ("Style", "Content", "Overall"):
        assert f"\\multicolumn{{5}}{{l}}{{\\textit{{{title}}}}}" in tex
    rows = _rows(tex)
    emd = {c["system"]: c["score"] for c in data["score"]["corpus"] if c["metric"] == "style_emd"}
    assert emd["human-reference"] > max(emd[s] for s in SYSTEMS)  # the anchor leads, but is not a system
    cells = rows[r"style\_emd $\uparrow$"]
    assert [bool(CELL.match(c).group("bold")) for c in cells] == [False, True, False, False]
    j = {o["system"]: o["value"] for o in data["overall"] if o["score"] == "j"}
    j_cells = rows[r"J (STA$\cdot$SIM$\cdot$FL) $\uparrow$"]
    best = max(SYSTEMS, key=lambda s: j[s])
    assert [bool(CELL.match(c).group("bold")) for c in j_cells[:3]] == [s == best for s in SYSTEMS]
    assert tex.count(r"\caption{Formality transfer on the bundled example. ") == 1
    compile_latex(tex, tmp_path)


def _md_cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_markdown_table_matches_the_latex_one(scored):
    md = markdown_paper_table(scored, signatures="footnote")
    lines = [line for line in md.splitlines() if line.startswith("|")]
    assert all(len(_md_cells(line)) == 1 + len(SYSTEMS) for line in lines)
    tex_rows = _rows(latex_paper_table(scored))
    for line in lines[3:]:
        cells = _md_cells(line)
        label = re.sub(r"\[\^\d+\]$", "", cells[0])
        metric, arrow = label.rsplit(" ", 1)
        tex_cells = tex_rows[metric.replace("_", r"\_") + (r" $\uparrow$" if arrow == "↑" else r" $\downarrow$")]
        for md_cell, tex_cell in zip(cells[1:], tex_cells):
            m = CELL.match(tex_cell)
            value = m.group("bold") or m.group("plain")
            assert md_cell.startswith(f"**{value}**" if m.group("bold") else value)
            assert (f"<sup>{m.group('mark')}</sup>" in md_cell) == bool(m.group("mark"))
    footnotes = re.findall(r"^\[\^(\d+)\]: `([^`]+)`$", md, re.M)
    assert [int(n) for n, _ in footnotes] == list(range(1, len(scored.metrics) + 1))
    assert [sig for _, sig in footnotes] == list(scored.signatures().values())


def test_bad_layout_is_one_line(scored):
    with pytest.raises(InputError, match="columns must be one of systems, metrics, not 'rows'"):
        latex_paper_table(scored, columns="rows")


def test_cli_score_evaluate_and_report_write_tables_that_compile(tmp_path, capsys):
    out = tmp_path
    assert cli_main.main(["score", "--example", "formality", "-m", "bleu,chrf", "--bootstrap", "100",
                          "--significance", "paired-bootstrap", "--json", str(out / "s.json"),
                          "--latex", str(out / "s.tex"), "--markdown", str(out / "s.md"), "--no-progress"]) == 0
    assert cli_main.main(["evaluate", "--example", "formality", "--fast", "--bootstrap", "100", "-q",
                          "--json", str(out / "ev.json"), "--latex", str(out / "ev.tex"),
                          "--markdown-table", str(out / "ev.md"), "--table-marks", "daggers"]) == 0
    assert cli_main.main(["report", str(out / "s.json"), "--latex", str(out / "r.tex"), "--table-columns",
                          "metrics"]) == 0
    capsys.readouterr()
    saved = json.loads((out / "s.json").read_text(encoding="utf-8"))
    assert (out / "r.tex").read_text(encoding="utf-8") == latex_paper_table(saved, columns="metrics")
    assert "| *Overall* |" in (out / "ev.md").read_text(encoding="utf-8")
    for name in ("s.tex", "ev.tex", "r.tex"):
        tex = (out / name).read_text(encoding="utf-8")
        check_latex_syntax(tex)
        folder = out / name.replace(".", "_")
        folder.mkdir()
        compile_latex(tex, folder)


def test_the_syntax_check_catches_broken_tables():
    good = "\\begin{table}\\begin{tabular}{lr}\na & b \\\\\n\\end{tabular}\\end{table}"
    check_latex_syntax(good)
    for broken in (good.replace("a & b", "a & b & c"), good.replace("\\end{table}", ""), good + "}"):
        with pytest.raises(AssertionError):
            check_latex_syntax(broken)


def test_a_streamed_run_writes_the_same_table(tmp_path, capsys):
    """`score --stream --latex` (the scale engine) writes the table of the in-memory run on the same table."""
    assert cli_main.main(["data", "example", "formality", str(tmp_path), "-q"]) == 0
    table = str(tmp_path / "outputs.tsv")
    for mode, extra in (("memory", []), ("stream", ["--stream"])):
        assert cli_main.main(["score", "--input", table, *extra, "-m", "bleu,chrf", "--bootstrap", "100",
                              "--significance", "paired-bootstrap", "--latex", str(tmp_path / f"{mode}.tex"),
                              "--markdown", str(tmp_path / f"{mode}.md"), "-q", "--no-progress"]) == 0
    capsys.readouterr()
    for ext in ("tex", "md"):
        assert (tmp_path / f"stream.{ext}").read_text(encoding="utf-8") == \
            (tmp_path / f"memory.{ext}").read_text(encoding="utf-8")
    assert "Superscript letters" in (tmp_path / "stream.tex").read_text(encoding="utf-8")
