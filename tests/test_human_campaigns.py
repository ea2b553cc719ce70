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


def fill(store: Store, cid: int, answer, seconds: float | None = 8.0) -> None:
    """Answer every assignment with ``answer(protocol, view, annotator_name) -> form``, each ``seconds`` after
    its page was shown (None: no time), one page after the other."""
    protocol = get_protocol(store.campaign(cid).protocol)
    now = 1_700_000_000.0
    for ann in store.annotators(cid):
        while (pos := store.next_position(ann.id)) is not None:
            now += 8.0 if seconds is None else seconds
            view = store.assignment(ann.id, pos)
            store.submit(view.assignment_id, parse_answers(protocol, answer(protocol, view, ann.name),
                                                           len(view.texts)),
                         shown_at=None if seconds is None else now - seconds, now=now)


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


def test_dashboard_flags_default_answers_and_implausible_times(tmp_path: Path) -> None:
    spec = CampaignSpec("flags", "direct-assessment", ["lazy", "fast", "careful"], per_item=1, controls=0,
                        repeats=0, degraded=0)
    store = Store(tmp_path / "f.db")
    cid = store.create_campaign(build_campaign(spec, records(6))).id
    rng = random.Random(5)

    def answer(protocol, view, name):
        # lazy leaves two of three sliders at the start (50); the others answer varied values
        values = [50, 50, rng.randint(0, 100)] if name == "lazy" else [rng.choice([10, 30, 70, 90]) for _ in range(3)]
        return {f"{a.name}.0": str(v) for a, v in zip(protocol.aspects, values)}

    protocol = get_protocol("direct-assessment")
    now = 1_700_000_000.0
    seconds = {"lazy": 9.0, "fast": 0.0, "careful": 12.5}
    for ann in store.annotators(cid):
        while (pos := store.next_position(ann.id)) is not None:
            now += seconds[ann.name]  # one page after the other
            view = store.assignment(ann.id, pos)
            store.submit(view.assignment_id, parse_answers(protocol, answer(protocol, view, ann.name), 1),
                         shown_at=now - seconds[ann.name], now=now)
    q = {r.annotator: r for r in dashboard(store, cid).quality}
    assert q["lazy"].slider_answers == 18 and q["lazy"].default_share >= 2 / 3
    assert q["lazy"].flagged and any("default" in r for r in q["lazy"].reasons)
    assert q["fast"].median_seconds == 0.0  # the audit's case: 0.0 s was shown as "ok"
    assert q["fast"].flagged and any("fast" in r for r in q["fast"].reasons)
    assert not q["careful"].flagged and q["careful"].median_seconds == 12.5, q["careful"].reasons
    store.close()
    # judgments without a time (e.g. written through the library) are flagged as such
    store = Store(tmp_path / "g.db")
    cid = store.create_campaign(build_campaign(CampaignSpec("untimed", "direct-assessment", 1, controls=0, repeats=0,
                                                            degraded=0), records(3))).id
    fill(store, cid, lambda p, v, n: {f"{a.name}.0": "80" for a in p.aspects}, seconds=None)
    (only,) = dashboard(store, cid).quality
    assert only.untimed == 9 and only.flagged and "without a time" in only.reasons[-1]
    store.close()


def test_padded_stamps_do_not_hide_fast_submissions(tmp_path: Path) -> None:
    """Issue 33, finding 7: open every item, wait, then submit them all within a fraction of a second. The time
    from each stamp looks careful; the time between consecutive submissions does not, and is flagged."""
    spec = CampaignSpec("padded", "direct-assessment", ["padder", "careful"], controls=0, repeats=0, degraded=0)
    store = Store(tmp_path / "p.db")
    cid = store.create_campaign(build_campaign(spec, records(6))).id
    protocol = get_protocol("direct-assessment")
    start = 1_700_000_000.0
    for ann in store.annotators(cid):
        now = start
        while (pos := store.next_position(ann.id)) is not None:
            view = store.assignment(ann.id, pos)
            if ann.name == "padder":  # every page shown at start, all answers sent 0.01 s apart after a minute
                shown, now = start, (now + 60.0 if now == start else now + 0.01)
            else:  # one page after the other, 12 s each
                shown, now = now, now + 12.0
            form = {f"{a.name}.0": str(40 + pos) for a in protocol.aspects}
            store.submit(view.assignment_id, parse_answers(protocol, form, 1), shown_at=shown, now=now)
    q = {r.annotator: r for r in dashboard(store, cid).quality}
    padder, careful = q["padder"], q["careful"]
    assert padder.median_seconds is not None and padder.median_seconds > 60  # the stamp alone says "careful"
    assert padder.median_gap_seconds == pytest.approx(0.01, abs=1e-6)
    assert padder.flagged and any("implausibly fast submissions" in r for r in padder.reasons), padder.reasons
    assert careful.median_seconds == 12.0 and careful.median_gap_seconds == 12.0 and not careful.flagged
    store.close()


def test_untouched_sliders_are_refused_when_required() -> None:
    protocol = get_protocol("direct-assessment")
    form = {"style.0": "50", "content.0": "50", "fluency.0": "50"}
    assert parse_answers(protocol, form, 1) == {"style": [50], "content": [50], "fluency": [50]}
    with pytest.raises(AnswerError, match="move the slider"):
        parse_answers(protocol, form, 1, require_moved=True)
    moved = {**form, "style.0.set": "1", "content.0.set": "1", "fluency.0.set": "1"}
    assert parse_answers(protocol, moved, 1, require_moved=True)["style"] == [50]
    with pytest.raises(AnswerError, match="How fluent"):
        parse_answers(protocol, {**moved, "fluency.0.set": "0"}, 1, require_moved=True)
    # radio scales have no starting value: nothing to move
    sim = get_protocol("similarity")
    assert parse_answers(sim, {"similarity.0": "1"}, 1, require_moved=True) == {"similarity": [1]}
    # every slider question says what its ends mean
    for aspect in protocol.aspects:
        (low, lo_text), (high, hi_text) = aspect.ends()
        assert (low, high) == ("0", "100") and lo_text and hi_text and lo_text != hi_text


@pytest.mark.parametrize("field,value", [("controls", -1), ("degraded", -3), ("controls", 100_000),
                                         ("repeats", 101), ("training", -1), ("per_item", 0)])
def test_campaign_counts_are_bounded(field: str, value: int) -> None:
    spec = CampaignSpec("bounded", "direct-assessment", 2, **{field: value})
    with pytest.raises(InputError, match=field):
        build_campaign(spec, records(2))


def test_campaign_names_and_assignment_totals_are_bounded(tmp_path: Path, monkeypatch) -> None:
    from styleval.human.campaigns import builder

    with pytest.raises(InputError, match="at most 200"):
        build_campaign(CampaignSpec("n" * 300, "direct-assessment", 1), records(2))
    assert build_campaign(CampaignSpec("n" * 200, "direct-assessment", 1), records(2)).spec.name == "n" * 200
    with pytest.raises(InputError, match="1 to 1000 annotators"):
        build_campaign(CampaignSpec("many", "direct-assessment", 5000), records(2))
    monkeypatch.setattr(builder, "LIMITS", builder.CampaignLimits(assignments=50))
    with pytest.raises(InputError, match="assignments"):
        build_campaign(CampaignSpec("big", "direct-assessment", 4, controls=20, repeats=0, degraded=0), records(2))
    # the store checks column lengths itself, so SQLite refuses what PostgreSQL could not hold
    store = Store(tmp_path / "len.db")
    built = build_campaign(CampaignSpec("long-segment", "similarity", 1, controls=0, repeats=0, degraded=0,
                                        training=0),
                           [Record(id="s" * 250, source="a", output="b", system="x")])
    with pytest.raises(InputError, match="segment"):
        store.create_campaign(built)
    assert store.campaigns() == []
    store.close()


def test_revoking_a_link_keeps_the_judgments(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.db")
    spec = CampaignSpec("revoke", "similarity", ["ann"], controls=0, repeats=0, degraded=0, training=0)
    created = store.create_campaign(build_campaign(spec, records(3)))
    old = created.tokens["ann"]
    ann = store.annotator_by_token(old)
    store.submit(store.assignment(ann.id, 1).assignment_id, {"similarity": [2]})
    new = store.reset_token(store.annotator("revoke", "ann").id)
    assert store.annotator_by_token(old) is None
    assert store.annotator_by_token(new) == ann
    assert store.progress(ann.id) == (1, 9) and store.assignment(ann.id, 1).answers == {"similarity": [2]}
    with pytest.raises(UnknownNameError):
        store.annotator("revoke", "nobody")
    # positions beyond what the databases can hold are simply not there
    assert store.assignment(ann.id, 2**31) is None and store.assignment(ann.id, 10**30) is None
    store.close()


def test_export_is_atomic(tmp_path: Path, monkeypatch) -> None:
    store = Store(tmp_path / "e.db")
    cid = store.create_campaign(build_campaign(CampaignSpec("atomic", "similarity", 1, controls=0, repeats=0,
                                                            degraded=0, training=0), records(3))).id
    fill(store, cid, lambda p, v, n: {"similarity.0": "2"})
    out = tmp_path / "out"
    first = write_export(store, cid, out, "j.csv")
    before = first.read_bytes()
    assert len(before) > 0

    def full_disk(self, path, format=None):  # writes a little, then the disk is full
        Path(path).write_text("system,seg")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Judgments, "write", full_disk)
    with pytest.raises(InputError, match="No space left"):
        write_export(store, cid, out, "j.csv")
    with pytest.raises(InputError, match="nothing was written"):
        write_export(store, cid, out, "new.csv")
    assert first.read_bytes() == before  # the previous export is intact
    assert sorted(p.name for p in out.iterdir()) == ["j.csv"]  # no partial or empty file left behind
    store.close()


def test_database_file_is_private_and_faults_are_one_line(tmp_path: Path) -> None:
    import os
    import stat

    from styleval.human.storage import StorageError

    db = tmp_path / "private.db"
    Store(db).close()
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StorageError) as info:
        Store(corrupt)
    message = str(info.value)
    assert "\n" not in message and "corrupt" in message and str(corrupt) in message and "backup" in message
    missing = tmp_path / "no-such-folder" / "x.db"
    with pytest.raises(StorageError, match="cannot be opened"):
        Store(missing)
    # read-only: opened through SQLite's read-only mode (a chmod would not stop root)
    with pytest.raises(StorageError, match="read-only") as info:
        Store(f"sqlite:///file:{db}?mode=ro&uri=true")
    assert "writable" in str(info.value) and "\n" not in str(info.value)
    assert not any(p.name.startswith("file:") for p in tmp_path.iterdir())
    if os.geteuid() != 0:  # root may write anyway
        os.chmod(db, 0o400)
        with pytest.raises(StorageError, match="read-only"):
            Store(db)
