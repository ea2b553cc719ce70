"""What a researcher meets building a campaign from published outputs: files named alike in different folders
(every yelp-dualrl system's test.0.tsf) need names, NAME=FILE gives them as `score` does, a failed create leaves no
database, create counts judgments as `status` does, and alpha over one unit says it is undefined."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from styleval.cli.main import main  # noqa: E402
from styleval.human import CampaignSpec, Store, build_campaign, get_protocol  # noqa: E402
from styleval.human.analysis import dashboard  # noqa: E402
from styleval.human.protocols import parse_answers  # noqa: E402
from styleval.records import Record  # noqa: E402
from styleval.stats.agreement import krippendorff_alpha  # noqa: E402


def _alike(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Two systems' outputs in the yelp-dualrl layout: <system>/test.0.tsf."""
    src = tmp_path / "test.0"
    src.write_text("the food was cold\nrude staff\nlong wait\n", encoding="utf-8")
    outs = []
    for system, words in (("DualRL", "warm"), ("CrossAlignment_Shen", "great")):
        (tmp_path / system).mkdir()
        out = tmp_path / system / "test.0.tsf"
        out.write_text(f"the food was {words}\nkind staff\nno wait\n", encoding="utf-8")
        outs.append(out)
    return src, outs


def _create(db: Path, src: Path, outputs: list[str], *extra: str) -> int:
    return main(["campaign", "create", "--db", str(db), "--name", "yelp", "--protocol", "direct-assessment",
                 "--sources", str(src), "--outputs", *outputs, "--direction", "negative:positive",
                 "--annotators", "ann,bob", "--controls", "0", "--repeats", "1", "--degraded", "1", *extra])


def test_outputs_named_alike_need_names_and_nothing_is_left_behind(tmp_path: Path, capsys) -> None:
    src, (a, b) = _alike(tmp_path)
    db = tmp_path / "human.db"
    assert _create(db, src, [str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("styleval: error: "), err
    assert f"--outputs {a} and {b} both give system 'test.0'" in err[0] and "stem" in err[0]
    assert f"--outputs DualRL={a} CrossAlignment_Shen={b}" in err[0]  # a command line to paste
    assert not db.exists()


def test_a_create_that_fails_after_reading_leaves_no_database(tmp_path: Path, capsys) -> None:
    src, (a, _) = _alike(tmp_path)
    db = tmp_path / "human.db"
    # the relative protocol compares pairs of systems: one system is refused after the files were read
    assert main(["campaign", "create", "--db", str(db), "--name", "x", "--protocol", "relative", "--sources",
                 str(src), "--outputs", f"DualRL={a}"]) == 2
    assert "at least two systems" in capsys.readouterr().err and not db.exists()


def test_named_outputs_and_counts_that_agree_with_status(tmp_path: Path, capsys) -> None:
    src, (a, b) = _alike(tmp_path)
    db = tmp_path / "human.db"
    assert _create(db, src, [f"DualRL={a}", f"CrossAlignment_Shen={b}"]) == 0
    err = capsys.readouterr().err
    # 3 segments x 2 systems = 6 items, each judged once; per annotator 1 repeat and 1 degraded item
    assert "6 items and 4 quality-control items; 10 judgments to collect from 2 annotators" in err
    assert "systems CrossAlignment_Shen, DualRL" in err
    assert main(["campaign", "status", "--db", str(db), "yelp"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "yelp: 0/10 judgments (direct-assessment)"
    store = Store(db)
    try:
        assert store.campaign("yelp").config["directions"] == ["negative->positive"]
    finally:
        store.close()


def test_alpha_over_one_unit_is_undefined_not_zero(tmp_path: Path, capsys) -> None:
    records = [Record(id=str(i), source=f"source {i}", output=f"output {i}", system="A",
                      direction="negative->positive") for i in (1,)]
    store = Store(tmp_path / "a.db")
    spec = CampaignSpec("one", "direct-assessment", ["ann", "bob"], per_item=2, controls=0, repeats=0, degraded=0)
    cid = store.create_campaign(build_campaign(spec, records)).id
    protocol = get_protocol("direct-assessment")
    for k, ann in enumerate(store.annotators(cid)):  # both judge the one item: one shared unit
        view = store.assignment(ann.id, store.next_position(ann.id))
        form = {f"{a.name}.0": str(30 + 40 * k) for a in protocol.aspects}
        store.submit(view.assignment_id, parse_answers(protocol, form, 1), shown_at=1.0, now=9.0)
    rows = dashboard(store, cid).agreement
    store.close()
    assert [r.units for r in rows] == [1, 1, 1]
    # the formula gives 0 here whatever the two ratings are: its expected disagreement comes from that unit alone
    assert krippendorff_alpha([[30.0], [70.0]]) == 0.0 and krippendorff_alpha([[30.0], [31.0]]) == 0.0
    for row in rows:
        assert row.alpha != row.alpha  # NaN
        assert row.note == "undefined: 1 unit(s) rated by two or more annotators, at least 2 needed"
    assert main(["campaign", "status", "--db", str(tmp_path / "a.db"), "one"]) == 0
    out = capsys.readouterr().out
    assert "style\tinterval\tundefined: 1 unit(s) rated by two or more annotators, at least 2 needed\t1" in out
    assert not [line for line in out.splitlines() if "\tinterval\t0.000" in line]


def test_guidelines_show_the_examples_of_the_campaign_direction() -> None:
    protocol = get_protocol("direct-assessment")
    sentiment = protocol.examples_for({"negative", "positive"})
    formality = protocol.examples_for({"informal", "formal"})
    assert sentiment and formality and not set(sentiment) & set(formality)
    assert not any("formal" in ex.judgment for ex in sentiment)
    assert all("formal" not in ex.judgment or ex in formality for ex in protocol.examples)
    assert protocol.examples_for(set()) == protocol.examples  # a campaign without a direction: all of them
    assert get_protocol("likert-ranking").examples_for({"negative", "positive"}) == ()
