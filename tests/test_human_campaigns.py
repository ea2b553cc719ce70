"""Protocols, campaign building, quality control, export and dashboard numbers (no web server)."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from styleval.errors import InputError, UnknownNameError  # noqa: E402
from styleval.human import PROTOCOLS, CampaignSpec, Store, build_campaign, get_protocol  # noqa: E402
from styleval.human.analysis import dashboard, export_path, judgments, write_export  # noqa: E402
from styleval.human.protocols import AnswerError, mask_style, parse_answers  # noqa: E402
from styleval.human.quality import paired_degradation_test  # noqa: E402
from styleval.meta.judgments import Judgments  # noqa: E402
from styleval.records import Record  # noqa: E402


def records(n_segments: int = 12, systems: tuple[str, ...] = ("a", "b", "c")) -> list[Record]:
    return [Record(id=str(i), source=f"the food here was really good number {i}",
                   output=f"version {systems.index(s)} rewrote sentence {i} with several words", system=s,
                   direction="positive->negative") for s in systems for i in range(n_segments)]


def fill(store: Store, cid: int, answer) -> None:
    """Answer every assignment with ``answer(protocol, view, annotator_name) -> form``."""
    protocol = get_protocol(store.campaign(cid).protocol)
    for ann in store.annotators(cid):
        while (pos := store.next_position(ann.id)) is not None:
            view = store.assignment(ann.id, pos)
            store.submit(view.assignment_id, parse_answers(protocol, answer(protocol, view, ann.name),
                                                           len(view.texts)), shown_at=None)


def random_form(rng: random.Random):
    def answer(protocol, view, _name):
        form, k = {}, len(view.texts)
        for a in protocol.aspects:
            if a.kind == "choice":
                form[a.name] = str(rng.randrange(k))
            for s in range(k if a.per_candidate else 0):
                form[f"{a.name}.{s}"] = str(rng.randint(1, k) if a.kind == "rank" else rng.choice(a.points()))
        return form
    return answer


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_every_protocol_builds_assigns_and_exports(name: str, tmp_path: Path) -> None:
    spec = CampaignSpec(f"c-{name}", name, annotators=4, per_item=2, controls=2, repeats=2, degraded=5)
    built = build_campaign(spec, records())
    protocol = get_protocol(name)
    normal = [it for it in built.items if it.kind == "normal"]
    counts = Counter(k for keys in built.assignments.values() for k in keys)
    assert all(counts[it.key] == 2 for it in normal)  # N distinct annotators per item
    for keys in built.assignments.values():
        assert len(keys) == len(set(keys))
        kinds = Counter(k.split("|")[0] for k in keys)
        assert kinds["control"] == 2 and kinds["repeat"] == 2 and kinds["degraded"] == 5
        assert kinds["training"] == (3 if protocol.training else 0)
        assert all(k.startswith("training") for k in keys[:kinds["training"]])  # training first
    if protocol.layout == "pair":
        assert all(len(it.candidates) == 2 for it in normal)
    store = Store(tmp_path / "c.db")
    cid = store.create_campaign(built).id
    fill(store, cid, random_form(random.Random(1)))
    j = judgments(store, cid)
    assert set(j.aspects) == {a.name for a in protocol.aspects}
    assert set(j.systems) == {"a", "b", "c"}
    assert j.directions == ["positive->negative"]
    path = write_export(store, cid, tmp_path / "out", "j.tsv")
    assert Judgments.read(path) == j
    d = dashboard(store, cid)
    assert d.done == d.total == d.n_judgments
    assert {r.aspect for r in d.agreement} == {a.name for a in protocol.aspects}
    store.close()


def test_system_names_never_reach_the_annotator_view(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    built = build_campaign(CampaignSpec("x", "likert-ranking", 2, degraded=3), records(3, ("secret_a", "secret_b")))
    created = store.create_campaign(built)
    ann = store.annotator_by_token(created.tokens["annotator-01"])
    for pos in range(1, len(built.assignments["annotator-01"]) + 1):
        assert "secret_" not in repr(store.assignment(ann.id, pos))
    assert store.annotator_by_token("not-a-token") is None
    store.close()


def test_parse_answers_validates_ranges() -> None:
    da, rt = get_protocol("direct-assessment"), get_protocol("likert-ranking")
    ok = parse_answers(da, {"style.0": "100", "content.0": "0", "fluency.0": "55"}, 1)
    assert ok == {"style": [100], "content": [0], "fluency": [55]}
    for bad in ({"style.0": "101", "content.0": "0", "fluency.0": "1"}, {"style.0": "5"},
                {"style.0": "nan", "content.0": "0", "fluency.0": "1"}):
        with pytest.raises(AnswerError):
            parse_answers(da, bad, 1)
    form = {"formality.0": "-3", "formality.1": "3", "fluency.0": "1", "fluency.1": "5", "meaning.0": "6",
            "meaning.1": "1", "overall.0": "1", "overall.1": "1"}
    assert parse_answers(rt, form, 2)["overall"] == [1, 1]  # ties allowed
    with pytest.raises(AnswerError):
        parse_answers(rt, {**form, "overall.1": "3"}, 2)
    with pytest.raises(AnswerError):
        parse_answers(rt, {**form, "formality.0": "-4"}, 2)
    rel = get_protocol("relative")
    with pytest.raises(AnswerError):
        parse_answers(rel, {"naturalness": "2"}, 2)
    with pytest.raises(UnknownNameError):
        get_protocol("nope")


def test_masking() -> None:
    assert mask_style("The food was GREAT, lol") == "The food was [\u2026], [\u2026]"
    assert mask_style("a nice day", ["day"]) == "a nice [\u2026]"


def test_degradation_test_and_quality_report(tmp_path: Path) -> None:
    assert paired_degradation_test([0.9] * 6, [0.9] * 6) == 1.0
    assert paired_degradation_test([0.9, 0.8, 0.7, 0.9, 0.8, 0.6], [0.1, 0.2, 0.1, 0.3, 0.0, 0.2]) < 0.05
    spec = CampaignSpec("qc", "direct-assessment", ["careful", "random"], per_item=2, controls=4, repeats=3,
                        degraded=8)
    store = Store(tmp_path / "q.db")
    cid = store.create_campaign(build_campaign(spec, records(15))).id
    rng = random.Random(3)

    def answer(protocol, view, name):
        if name == "random":
            return {f"{a.name}.0": str(rng.randint(0, 100)) for a in protocol.aspects}
        text = view.texts[0]
        damaged = view.kind == "degraded" or text == view.source or "rewrote" not in text
        value = 10 if damaged and text != view.source else 90
        return {f"{a.name}.0": str(value) for a in protocol.aspects}

    fill(store, cid, answer)
    q = {r.annotator: r for r in dashboard(store, cid).quality}
    assert q["careful"].degraded_passed and q["careful"].degraded_p < 0.01
    assert q["careful"].controls_passed == q["careful"].controls_total == 4
    assert q["careful"].repeat_mean_abs_diff == 0
    assert not q["careful"].flagged
    assert q["random"].degraded_pairs == 8 and q["random"].repeat_mean_abs_diff > 0
    store.close()


@pytest.mark.parametrize("name", ["../x.csv", "/etc/passwd.csv", "a/b.csv", ".hidden.csv", "x.exe", "..csv", "",
                                  "x.csv\x00", "x\\..\\y.csv"])
def test_export_path_refuses_escapes(name: str, tmp_path: Path) -> None:
    with pytest.raises(InputError):
        export_path(tmp_path, name)


def test_export_path_refuses_symlink(tmp_path: Path) -> None:
    (tmp_path / "outside.csv").write_text("")
    (tmp_path / "exports").mkdir()
    (tmp_path / "exports" / "link.csv").symlink_to(tmp_path / "outside.csv")
    with pytest.raises(InputError):
        export_path(tmp_path / "exports", "link.csv")
    assert export_path(tmp_path / "exports", "ok-1.jsonl") == (tmp_path / "exports" / "ok-1.jsonl").resolve()


def test_building_refuses_bad_specs() -> None:
    with pytest.raises(InputError):
        build_campaign(CampaignSpec("x", "direct-assessment", 2, per_item=3), records(2))
    with pytest.raises(InputError):
        build_campaign(CampaignSpec("x", "relative", 2), records(2, systems=("only",)))
    with pytest.raises(InputError):
        build_campaign(CampaignSpec("x", "direct-assessment", ["a", "a"]), records(2))


def test_duplicate_campaign_name_and_idempotent_submit(tmp_path: Path) -> None:
    store = Store(tmp_path / "d.db")
    spec = CampaignSpec("same", "similarity", 1, controls=0, repeats=0, degraded=0, training=0)
    created = store.create_campaign(build_campaign(spec, records(2)))
    with pytest.raises(InputError):
        store.create_campaign(build_campaign(spec, records(2)))
    ann = store.annotator_by_token(created.tokens["annotator-01"])
    view = store.assignment(ann.id, 1)
    assert store.submit(view.assignment_id, {"similarity": [2]}) is True
    assert store.submit(view.assignment_id, {"similarity": [0]}) is False
    assert store.assignment(ann.id, 1).answers == {"similarity": [2]}
    assert store.judgment_count() == 1
    store.close()
