"""``styleval train-content`` end to end on tiny data, and its errors."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("spacy")
pytest.importorskip("transformers")

KEPT = [
    ("The train to Berlin leaves at nine.", "Yo, the Berlin train leaves at nine!"),
    ("I lost my keys in the park yesterday.", "Yesterday I unfortunately lost my keys in the park."),
    ("Anna bought a red bike for her son.", "Anna purchased a red bicycle for her son."),
    ("The soup was cold and the bread was stale.", "The soup was cold, and the bread was stale, sadly."),
    ("We moved to Lisbon in 2019.", "In 2019 we relocated to Lisbon."),
    ("Call the doctor before Friday.", "Please call the doctor before Friday."),
    ("The museum closes early on Sundays.", "On Sundays the museum closes early."),
    ("My brother fixed the old radio.", "My bro fixed the old radio lol"),
]
CHANGED = [
    ("The train to Berlin leaves at nine.", "The train to Paris leaves at nine."),
    ("I lost my keys in the park yesterday.", "I lost my wallet in the park yesterday."),
    ("Anna bought a red bike for her son.", "Anna bought a red bike."),
    ("The soup was cold and the bread was stale.", "The soup was cold."),
    ("We moved to Lisbon in 2019.", "We moved to Lisbon in 2004."),
    ("Call the doctor before Friday.", "Call the plumber before Friday."),
    ("The museum closes early on Sundays.", "The museum closes early on Sundays and serves free coffee."),
    ("My brother fixed the old radio.", "My sister sold the old radio."),
]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "styleval.cli.main", *args], capture_output=True, text=True,
                          timeout=600)


def test_train_content_end_to_end(tmp_path):
    rows = ["source\toutput\tscore\tgroup"]
    rows += [f"{a}\t{b}\t1\tkept" for a, b in KEPT] + [f"{a}\t{b}\t0\tchanged" for a, b in CHANGED]
    table = tmp_path / "pairs.tsv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "model"
    proc = _cli("train-content", str(table), "-o", str(out), "--selection", str(table), "--name", "tiny",
                "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout
    card = json.loads((out / "model_card.json").read_text())
    assert card["name"] == "tiny" and card["training"]["n"] == 16
    assert card["training"]["label_counts"] == {"changed": 8, "kept": 8}
    assert len(card["selection"]["grid"]) == 5 and "train-content" in card["command"]
    assert (out / "README.md").is_file() and (out / "weights.npz").stat().st_size < 10_000

    from styleval.preservation import PreservationModel
    model = PreservationModel.load(out)
    kept = model.score([a for a, _ in KEPT], [b for _, b in KEPT])
    changed = model.score([a for a, _ in CHANGED], [b for _, b in CHANGED])
    assert np.mean(kept) > np.mean(changed)
    assert card["selection"]["chosen"]["C"] in [g["C"] for g in card["selection"]["grid"]]

    # the trained folder is usable as the metric's model in `styleval score`, with its hash in the signature
    src, hyp = tmp_path / "src.txt", tmp_path / "hyp.txt"
    src.write_text("\n".join(a for a, _ in KEPT[:3]) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(b for _, b in KEPT[:3]) + "\n", encoding="utf-8")
    res = tmp_path / "res.json"
    proc = _cli("score", "--source", str(src), "--system", str(hyp), "-m", f"preservation:model={out}",
                "--against", "source", "--json", str(res), "--no-progress", "-q")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(res.read_text())
    corpus = [c for c in result["corpus"] if c["metric"] == "preservation/src"]
    assert len(corpus) == 1 and corpus[0]["signature"]["resources"]["preservation_model"] == "tiny"
    seg = next(s for s in result["segments"] if s["metric"] == "preservation/src")["scores"]
    np.testing.assert_allclose([seg[k] for k in sorted(seg, key=int)], kept[:3], rtol=1e-6)


def test_train_content_cosine_weight(tmp_path):
    """--cosine-weight A stores A as the cosine part's weight and the card says so; the folder scores
    (1 - A) * the head + A * the plain cosine; a weight outside [0, 1) is refused before anything is trained."""
    rows = ["source\toutput\tscore"] + [f"{a}\t{b}\t1" for a, b in KEPT] + [f"{a}\t{b}\t0" for a, b in CHANGED]
    table = tmp_path / "pairs.tsv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    plain, blended = tmp_path / "plain", tmp_path / "blended"
    for out, extra in ((plain, []), (blended, ["--cosine-weight", "0.25"])):
        proc = _cli("train-content", str(table), "-o", str(out), "--no-progress", *extra)
        assert proc.returncode == 0, proc.stderr
    card = json.loads((blended / "model_card.json").read_text())
    assert card["parameters"]["cosine"]["weight"] == 0.25
    config = json.loads((blended / "model.json").read_text())
    assert config["format"] == "styleval-preservation/6"
    assert [(p["kind"], p["weight"]) for p in config["parts"]] == [("head", 0.75), ("cosine", 0.25)]

    from styleval.preservation import PreservationModel
    a, b = PreservationModel.load(plain), PreservationModel.load(blended)
    src, out = [x for x, _ in KEPT + CHANGED], [y for _, y in KEPT + CHANGED]
    cosine = a.featurizer.features(src, out)[:, 0]
    np.testing.assert_allclose(b.score(src, out), 0.75 * a.score(src, out) + 0.25 * np.clip(cosine, 0, 1),
                               atol=1e-9)
    proc = _cli("train-content", str(table), "-o", str(tmp_path / "bad"), "--no-progress", "--cosine-weight", "1")
    assert proc.returncode != 0 and "the cosine's in [0, 1) (the head keeps the rest), got None and 1.0" in proc.stderr
    assert not (tmp_path / "bad").exists()


def test_train_content_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("source\toutput\tscore\nA cat sat.\tA dog sat.\t1.5\n", encoding="utf-8")
    proc = _cli("train-content", str(bad), "-o", str(tmp_path / "m"), "--no-progress")
    assert proc.returncode != 0 and f"{bad}:2: score 1.5 is outside [0, 1]" in proc.stderr
    same = tmp_path / "same.tsv"
    same.write_text("source\toutput\tscore\n" + "".join(f"A cat sat {i}.\tA cat sat.\t1\n" for i in range(12)),
                    encoding="utf-8")
    proc = _cli("train-content", str(same), "-o", str(tmp_path / "m"), "--no-progress")
    assert proc.returncode != 0 and "every training score is 1.0" in proc.stderr
    proc = _cli("train-content", str(tmp_path / "missing.tsv"), "-o", str(tmp_path / "m"))
    assert proc.returncode != 0 and "pair file not found" in proc.stderr


def test_train_content_refuses_a_model_without_a_head_before_training(tmp_path):
    """The head keeps a share of every model: --cross-weight 1 is refused before anything is encoded, and the
    options of the bi-encoder and late-interaction variants, which left the package, are gone."""
    rows = ["source\toutput\tscore"] + [f"{a}\t{b}\t1" for a, b in KEPT] + [f"{a}\t{b}\t0" for a, b in CHANGED]
    table = tmp_path / "pairs.tsv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = _cli("train-content", str(table), "-o", str(tmp_path / "x"), "--cross-epochs", "1", "--cross-weight", "1",
                "--no-progress")
    assert proc.returncode != 0 and "cross-encoder's weight must be in (0, 1)" in proc.stderr
    assert not (tmp_path / "x").exists()
    proc = _cli("train-content", str(table), "-o", str(tmp_path / "x"), "--bi-epochs", "1")
    assert proc.returncode != 0 and "unrecognized arguments: --bi-epochs" in proc.stderr
