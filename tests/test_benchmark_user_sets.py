"""A researcher's own human study as a benchmark set (issue #55), on small sets built here from the bundled example:
scores that do not depend on the other rows of their system, one row per rating with repeats, several conventions
(system-level Spearman and Kendall), per-input completeness, degenerate tasks, PINC's orientation.

Every figure is checked against scipy on the same numbers: human means computed here, metric scores from a direct
``styleval.score`` run on the same outputs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import styleval
from styleval.benchmark import benchmark, user_set
from styleval.benchmark.render import format_text, to_latex
from styleval.cli import main as cli_main
from styleval.errors import InputError
from styleval.readers.tabular import read_table

SYSTEMS = ("copy", "tidy", "rewrite")
HEADER = ["id", "system", "direction", "source", "output", "ref0", "ref1"]


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> pd.DataFrame:
    """The bundled formality example's outputs table (30 inputs x copy, tidy, rewrite)."""
    folder = tmp_path_factory.mktemp("example")
    assert cli_main.main(["data", "example", "formality", str(folder), "-q"]) == 0
    return pd.read_csv(folder / "outputs.tsv", sep="\t", dtype=str, keep_default_na=False)


def content_rating(system: str, segment: int) -> float:
    """A made-up meaning judgment on 1-5: the formal rewrite best, the copy worst, varied per input."""
    return float({"copy": 1, "tidy": 2, "rewrite": 3}[system] + segment % 3)


def make_set(folder: Path, outputs: pd.DataFrame, manifest: dict[str, Any], ratings: Sequence[tuple[Any, ...]],
             aspect: str = "meaning") -> Path:
    """A set folder: ``outputs`` as outputs.tsv, ``ratings`` (system, segment, annotator, score) as human.csv."""
    folder.mkdir(parents=True, exist_ok=True)
    outputs[HEADER].to_csv(folder / "outputs.tsv", sep="\t", index=False)
    rows = ["system,segment,annotator,aspect,score"] + [f"{s},{g},{a},{aspect},{v}" for s, g, a, v in ratings]
    (folder / "human.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "benchmark.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def pick(example: pd.DataFrame, systems: Sequence[str] = SYSTEMS, inputs: int = 10) -> pd.DataFrame:
    return example[example["system"].isin(systems) & (example["id"].astype(int) <= inputs)].reset_index(drop=True)


def one_rating_each(outputs: pd.DataFrame, rating: Callable[[str, int], float] = content_rating) -> list[tuple]:
    return [(r.system, r.id, "a1", rating(r.system, int(r.id))) for r in outputs.itertuples()]


def direct_scores(outputs: pd.DataFrame, spec: str, column: str) -> pd.Series:
    """``styleval score`` of the outputs, segment scores of one column, indexed by (system, segment)."""
    path = outputs.attrs.get("path")
    records = read_table(path) if path else None
    assert records is not None
    frame = styleval.score(records, [spec], bootstrap=0).to_dataframe("segment")
    frame = frame[frame["metric"] == column].assign(id=lambda f: f["id"].astype(str))  # the judgments' ids are text
    return frame.set_index(["system", "id"])["score"].astype(float)


def written(outputs: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``outputs`` written to ``path`` (a table ``score --input`` reads), remembered for :func:`direct_scores`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    outputs[HEADER].to_csv(path, sep="\t", index=False)
    out = outputs.copy()
    out.attrs["path"] = str(path)
    return out


def human_means(folder: Path) -> pd.Series:
    frame = pd.read_csv(folder / "human.csv", dtype={"segment": str})
    return frame.groupby(["system", "segment"])["score"].mean()


# ------------------------------------------------------------------------------ 1. scores that ignore neighbours
def _fluency(system: str, segment: int) -> float:
    return float({"copy": 2, "tidy": 4, "rewrite": 5}[system] - (segment % 2))


def test_a_user_set_figure_equals_styleval_score_with_and_without_cased_rows_in_one_system(example, tmp_path,
                                                                                           smollm):
    """acceptability (normalize=auto: per text) on a set whose 'copy' system is lower-cased: the segment Pearson
    equals scipy's over the scores of a direct ``styleval score`` run (1e-9), and adding cased rows to 'copy'
    (inputs nobody judged) leaves it unchanged. The per-corpus choice (auto-corpus) moves, and its signature names
    the mode each system got."""
    outputs = written(pick(example), tmp_path / "direct.tsv")
    ratings = one_rating_each(outputs, _fluency)
    manifest = {"aspects": {"fluency": "fluency"}, "scale": [1, 5], "convention": "pearson"}
    plain = make_set(tmp_path / "plain", outputs, manifest, ratings, aspect="fluency")
    extra = outputs[outputs["system"] == "copy"].head(4).copy()
    extra["id"] = [str(100 + k) for k in range(len(extra))]
    extra["output"] = ["This Sentence Was Written With Care.", "We Will Meet On Monday, As Agreed.",
                       "Thank You For The Report.", "Please Send It Today."]
    extended = make_set(tmp_path / "extended", pd.concat([outputs, extra], ignore_index=True), manifest, ratings,
                        aspect="fluency")

    direct = direct_scores(outputs, "acceptability", "acceptability")
    human = human_means(plain)
    keys = list(human.index)
    expected = scipy.stats.pearsonr([direct[k] for k in keys], [human[k] for k in keys]).statistic
    figures = {}
    for name, folder in (("plain", plain), ("extended", extended)):
        result = benchmark(["acceptability"], [user_set(name, folder)], stored=False, ci=0, n_permutations=0)
        row = result.task(name, "fluency", "segment").row("acceptability")
        figures[name] = row.statistic
        assert row.n == len(keys)
        assert "per text" in result.signatures["acceptability"] and "normalized_as" not in \
            result.signatures["acceptability"]
    assert figures["plain"] == pytest.approx(expected, abs=1e-9)
    assert figures["extended"] == pytest.approx(expected, abs=1e-9)

    corpus = {}
    for name, folder in (("plain", plain), ("extended", extended)):
        result = benchmark(["acceptability:normalize=auto-corpus"], [user_set(name, folder)], stored=False, ci=0,
                           n_permutations=0)
        corpus[name] = result.task(name, "fluency", "segment").row("acceptability").statistic
        signature = result.signatures["acceptability"]
        if name == "plain":  # every system is read alike: copy is lower-cased, the others cased
            assert "[copy] " in signature and "normalized_as:truecase" in signature
        else:  # the cased rows flip copy's decision: the signature says what each system got
            assert "normalized_as:truecase" not in signature and "normalized_as:none" in signature
    assert abs(corpus["plain"] - corpus["extended"]) > 1e-6  # the per-corpus decision moves a neighbour's scores
    both = benchmark(["acceptability:normalize=auto-corpus"],
                     [user_set("plain", plain), user_set("extended", extended)], stored=False, ci=0, n_permutations=0)
    assert "normalized_as:truecase" in both.signatures["acceptability"]  # each set's own, system by system
    assert "normalized_as:truecase" not in both.signatures["extended:acceptability"]


# ------------------------------------------------------------------------------ 2. one row per rating
def test_repeated_ratings_are_aggregated_by_the_documented_rule_and_counted(example, tmp_path):
    outputs = written(pick(example), tmp_path / "direct.tsv")
    ratings = one_rating_each(outputs)
    # a crowd worker rated three (system, segment) texts twice, as exports with one row per rating hold them
    repeats = [("copy", "1", "a1", 5.0), ("tidy", "2", "a1", 1.0), ("tidy", "2", "a1", 1.0)]
    manifest = {"aspects": {"meaning": "content"}, "scale": [1, 5], "convention": "pearson"}
    folder = make_set(tmp_path / "crowd", outputs, manifest, ratings + repeats)
    first = {("copy", "1"): content_rating("copy", 1), ("tidy", "2"): content_rating("tidy", 2)}
    expected = {
        "mean": {("copy", "1"): (first[("copy", "1")] + 5) / 2, ("tidy", "2"): (first[("tidy", "2")] + 2) / 3},
        "median": {("copy", "1"): (first[("copy", "1")] + 5) / 2, ("tidy", "2"): 1.0},
        "first": first,
        "last": {("copy", "1"): 5.0, ("tidy", "2"): 1.0},
    }
    direct = direct_scores(outputs, "bleu:against=references", "bleu/ref")
    for rule, values in expected.items():
        manifest = {"aspects": {"meaning": "content"}, "convention": "pearson"}
        if rule != "mean":  # mean is the default
            manifest["repeated_ratings"] = rule
        (folder / "benchmark.json").write_text(json.dumps(manifest), encoding="utf-8")
        bench = user_set("crowd", folder)
        frame = bench.judgments.frame.set_index(["system", "segment"])["score"]
        for key, value in values.items():
            assert frame[key] == pytest.approx(value, abs=1e-12), (rule, key)
        assert bench.repeated == {"rule": rule, "keys": 2, "ratings": 5}
        result = benchmark(["bleu:against=references"], [bench], stored=False, ci=0, n_permutations=0)
        human = frame.sort_index()
        figure = scipy.stats.pearsonr([direct[k] for k in human.index], human.to_numpy()).statistic
        assert result.task("crowd", "meaning", "segment").row("bleu/ref").statistic == pytest.approx(figure, abs=1e-12)
        text = format_text(result)
        assert f"crowd: 5 ratings of 2 (system, segment, annotator, aspect) key(s) rated more than once, " \
               f"aggregated by rule '{rule}'" in text
        assert result.to_dict()["settings"]["repeated_ratings"]["crowd"] == bench.repeated

    manifest["repeated_ratings"] = "error"
    (folder / "benchmark.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InputError) as error:
        user_set("crowd", folder)
    assert "human.csv" in str(error.value) and "duplicate judgment(s) for 2 key(s)" in str(error.value)
    manifest["repeated_ratings"] = "average"
    (folder / "benchmark.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InputError) as error:
        user_set("crowd", folder)
    message = str(error.value)
    assert "benchmark.json" in message and "mean, median, first, last, error" in message and "\n" not in message


# ------------------------------------------------------------------------------ 3. several conventions
def test_a_list_of_conventions_gives_each_task_with_system_spearman_and_kendall(example, tmp_path):
    outputs = written(pick(example), tmp_path / "direct.tsv")
    manifest = {"aspects": {"meaning": "content"}, "scale": [1, 5],
                "convention": ["spearman", "lai2022", "system-pearson", "system-spearman", "system-kendall"]}
    folder = make_set(tmp_path / "many", outputs, manifest, one_rating_each(outputs))
    bench = user_set("many", folder)
    shown = sorted((t.task.level, t.task.method) for t in bench.tasks)
    assert shown == [("segment", "kendall_tau_like"), ("segment", "spearman"), ("system", "kendall"),
                     ("system", "pearson"), ("system", "spearman")]  # lai2022's system Pearson once
    result = benchmark(["bleu:against=references"], [bench], stored=False, ci=0, n_permutations=0)
    direct = direct_scores(outputs, "bleu:against=references", "bleu/ref")
    human = human_means(folder)
    per_system_metric = direct.groupby(level=0).mean().sort_index()
    per_system_human = human.groupby(level=0).mean().sort_index()
    expected = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr,
                "kendall": scipy.stats.kendalltau}
    for task in result.tasks:
        t = task.task.task
        figure = task.row("bleu/ref").statistic
        if t.level == "system":
            want = expected[t.method](per_system_metric.to_numpy(), per_system_human.to_numpy()).statistic
        elif t.method == "spearman":
            want = scipy.stats.spearmanr([direct[k] for k in human.index], human.to_numpy()).statistic
        else:
            continue  # Lai et al.'s tau-like: tests/test_benchmark.py and the meta tests check it
        assert figure == pytest.approx(want, abs=1e-12), t.name

    for bad, problem in (("spearmann", "unknown convention 'spearmann'"), (["spearman", 3], "or a list of them")):
        (folder / "benchmark.json").write_text(json.dumps({**manifest, "convention": bad}), encoding="utf-8")
        with pytest.raises(InputError) as error:
            user_set("many", folder)
        assert problem in str(error.value) and "benchmark.json" in str(error.value)


# ------------------------------------------------------------------------------ 4. per-input completeness
def test_per_input_tasks_state_the_inputs_kept_and_name_the_systems_lacking_them(example, tmp_path):
    outputs = pick(example)
    lacking = outputs[~((outputs["system"] == "tidy") & (outputs["id"].astype(int) <= 3))]
    manifest = {"aspects": {"meaning": "content"}, "scale": [1, 5], "convention": ["lai2022", "pearson"]}
    folder = make_set(tmp_path / "holes", lacking, manifest, one_rating_each(outputs))  # tidy 1-3 judged only
    result = benchmark(["bleu:against=references"], [user_set("holes", folder)], stored=False, ci=0,
                       n_permutations=0)
    per_input = next(t for t in result.tasks if t.task.task.average_by == "item")
    assert per_input.inputs == ("per input: 7 of 10 inputs kept, 3 dropped (an input counts only when every "
                                "system has a judgment and a score on it); lacking inputs: tidy 3")
    assert per_input.inputs in format_text(result)
    assert per_input.row("bleu/ref").n == 7
    pooled = next(t for t in result.tasks if t.task.task.method == "pearson" and t.task.task.level == "segment")
    assert pooled.inputs == "" and pooled.row("bleu/ref").n == len(lacking)  # a pooled task keeps every pair
    assert pooled.row("bleu/ref").partial  # 3 judged pairs without a score: a * and the header that explains it
    assert "notes (* = some scores missing, left out):" in format_text(result)

    apart = outputs[~(((outputs["system"] == "tidy") & (outputs["id"].astype(int) <= 5))
                      | ((outputs["system"] == "copy") & (outputs["id"].astype(int) > 5)))]
    folder = make_set(tmp_path / "apart", apart, manifest, one_rating_each(apart))
    result = benchmark(["bleu:against=references"], [user_set("apart", folder)], stored=False, ci=0,
                       n_permutations=0)
    per_input = next(t for t in result.tasks if t.task.task.average_by == "item")
    reason = per_input.row("bleu/ref").failed
    assert "no input of the 10 has all 3 systems (copy lacks 5 of 10, tidy lacks 5 of 10)" in reason
    assert "\n" not in reason


# ------------------------------------------------------------------------------ 5. degenerate tasks
def test_a_two_system_task_is_shown_but_not_ranked_bolded_or_averaged(example, tmp_path):
    outputs = pick(example, systems=("copy", "rewrite"))
    manifest = {"aspects": {"meaning": "content"}, "scale": [1, 5], "convention": "lai2022"}
    folder = make_set(tmp_path / "two", outputs, manifest, one_rating_each(outputs))
    result = benchmark(["bleu", "chrf"], [user_set("two", folder)], stored=False, ci=0, n_permutations=50)
    system = result.task("two", "meaning", "system")
    segment = result.task("two", "meaning", "segment")
    assert "only 2 system(s) (fewer than 3)" in system.degenerate and not segment.degenerate
    assert all(abs(abs(r.statistic) - 1) < 1e-12 for r in system.rows)  # two points: always +-1
    assert all(r.rank is None for r in system.rows) and not system.clusters.ranks
    assert all(r.rank is not None for r in segment.rows)
    assert any("only 2 systems" in n for r in system.rows for n in r.notes)  # the note stays
    for s in result.summary():  # the mean is the segment task's figure alone
        assert s.n_tasks == 1 and s.mean == pytest.approx(segment.row(s.metric).statistic, abs=1e-12)
    text = format_text(result)
    assert "NOT RANKED (only 2 system(s)" in text
    assert "notes:\n" in text and "notes (* =" not in text  # no figure carries a *: the header says nothing of it
    assert f"left out of the summary (too few systems or inputs to rank metrics): {system.task.label}: " in text
    latex = to_latex(result)
    bold_rows = [line for line in latex.splitlines() if "\\textbf" in line]
    assert bold_rows and all(line.count("\\textbf") == 1 for line in bold_rows)  # bold in the ranked task only
    assert result.to_dict()["left_out_of_summary"] == result.left_out()

    few = pick(example, inputs=4)
    folder = make_set(tmp_path / "few", few, manifest, one_rating_each(few))
    result = benchmark(["bleu"], [user_set("few", folder)], stored=False, ci=0, n_permutations=0)
    assert "only 4 judged input(s) (fewer than 5)" in result.task("few", "meaning", "segment").degenerate
    assert not result.task("few", "meaning", "system").degenerate


# ------------------------------------------------------------------------------ 6. orientation
def test_pinc_is_negated_so_a_positive_figure_means_agreement(example, tmp_path, capsys):
    from styleval.metrics import registry

    assert registry.metric_class("pinc").measures_novelty and not registry.metric_class("bleu").measures_novelty
    outputs = written(pick(example), tmp_path / "direct.tsv")

    def kept_meaning(system: str, segment: int) -> float:  # how much of the source's meaning is kept
        return float({"copy": 5, "tidy": 4, "rewrite": 2}[system] - segment % 2)

    manifest = {"aspects": {"kept": "content"}, "scale": [1, 5], "convention": "pearson"}
    folder = make_set(tmp_path / "kept", outputs, manifest, one_rating_each(outputs, kept_meaning), aspect="kept")
    result = benchmark(["pinc", "bleu:against=source"], [user_set("kept", folder)], stored=False, ci=0,
                       n_permutations=0)
    task = result.task("kept", "kept", "segment")
    human = human_means(folder)
    raw = direct_scores(outputs, "pinc", "pinc/src")
    negated = -scipy.stats.pearsonr([raw[k] for k in human.index], human.to_numpy()).statistic
    assert negated > 0.5  # copying keeps the meaning: low novelty agrees with the judges
    assert task.row("pinc/src").statistic == pytest.approx(negated, abs=1e-12)
    assert task.row("bleu/src").statistic > 0
    assert cli_main.main(["metrics", "pinc"]) == 0
    assert "novelty measure (higher = further from what it compares against), negated" in " ".join(
        capsys.readouterr().out.split())


def test_the_benchmark_counts_its_work_in_outputs_scored(example, tmp_path):
    """The benchmark's own progress counts outputs x metric specs to score (a cached spec counts nothing), so its
    time left comes from the work done, not from the number of sets."""
    outputs = pick(example)
    manifest = {"aspects": {"meaning": "content"}, "convention": "pearson"}
    small = make_set(tmp_path / "small", pick(example, inputs=5), manifest,
                     one_rating_each(pick(example, inputs=5)))
    big = make_set(tmp_path / "big", outputs, manifest, one_rating_each(outputs))
    heard: list[tuple[str, int, int]] = []
    cache = tmp_path / "cache"
    benchmark(["bleu"], [user_set("small", small)], stored=False, ci=0, n_permutations=0, cache_dir=cache)
    benchmark(["bleu", "chrf"], [user_set("small", small), user_set("big", big)], stored=False, ci=0,
              n_permutations=0, cache_dir=cache, progress=lambda d, k, n: heard.append((d, k, n)))
    ours = [(d, k, n) for d, k, n in heard if d.startswith("benchmark")]
    # bleu on small is cached: chrf on small (15 outputs), bleu and chrf on big (30 each)
    assert [(k, n) for _, k, n in ours] == [(0, 75), (0, 75), (15, 75), (45, 75), (75, 75)]
    assert ours[0][0] == "benchmark: scoring bleu on small [outputs x metrics]"
    assert np.all(np.diff([k for _, k, _ in ours]) >= 0)
