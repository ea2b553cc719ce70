"""``styleval data fetch``: the real download code against a local mirror of ../shared/data on 127.0.0.1 (no other
network): files and hashes equal, a tampered file refused, a cut download resumed with HTTP Range."""
from __future__ import annotations

import filecmp
import json

import pytest

from mirror_server import Mirror
from styleval.cli import main as cli_main
from styleval.datasets import fetch, paths
from styleval.errors import InputError

pytestmark = pytest.mark.shared_data
SGDD_CSV = "sgdd-tst/metric/SGDD-TST_with_metrics.csv"


@pytest.fixture
def mirror(shared_data):
    with Mirror(shared_data) as server:
        yield server


def _same_tree(got, want) -> None:
    files = sorted(p.relative_to(want) for p in want.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(got) for p in got.rglob("*") if p.is_file())
    _, mismatch, errors = filecmp.cmpfiles(want, got, [str(f) for f in files], shallow=False)
    assert mismatch == [] and errors == []


def test_shipped_manifest_is_computed_from_shared_data(shared_data):
    shipped = json.loads((fetch.Path(fetch.__file__).with_name(fetch.MANIFEST)).read_text(encoding="utf-8"))
    assert shipped == fetch.build_manifest(shared_data)
    manifest = fetch.load_manifest()
    for name in ("lai2022", "mir2019", "sgdd-tst", "yelp-dualrl", "pt16", "paradetox"):
        assert manifest[name].files and len(manifest[name].commit) == 40
    assert manifest["pt16"].prefix == "best-practices/Formality/PT16_for_huggingface/"
    assert fetch.file_url(manifest["lai2022"], manifest["lai2022"].files[0], None).startswith(
        "https://raw.githubusercontent.com/laihuiyuan/eval-formality-transfer/ac47a0882926902fa79a59bbe3ba0eb4c9717")


def test_fetch_three_sets_from_the_mirror(shared_data, mirror, tmp_path, capsys):
    assert cli_main.main(["data", "fetch", "lai2022", "mir2019", "sgdd-tst", "--dir", str(tmp_path),
                          "--mirror", mirror.url]) == 0
    out = capsys.readouterr().out
    for name in ("lai2022", "mir2019", "sgdd-tst"):
        _same_tree(tmp_path / name, shared_data / name)
        entry = fetch.load_manifest()[name]
        for f in entry.files:
            assert fetch.sha256_file(tmp_path / name / f.path) == f.sha256
        assert f"licence: {entry.licence}" in out and f"cite: {entry.citation}" in out
    assert not list(tmp_path.glob("*.partial"))
    # a second call finds them complete and downloads nothing
    before = len(mirror.requests)
    assert cli_main.main(["data", "fetch", "lai2022", "--dir", str(tmp_path), "--mirror", mirror.url]) == 0
    assert len(mirror.requests) == before and "already complete" in capsys.readouterr().out


def test_tampered_file_is_refused(shared_data, mirror, tmp_path, capsys):
    mirror.tamper.add("lai2022/chatgpt/style.json")
    assert cli_main.main(["data", "fetch", "lai2022", "--dir", str(tmp_path), "--mirror", mirror.url]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "style.json" in err and "refused" in err and "sha256" in err
    assert not (tmp_path / "lai2022").exists()  # nothing partial looks complete
    assert not list((tmp_path / "lai2022.partial").rglob("style.json*"))  # the bad file is gone
    with pytest.raises(InputError, match="refused"):
        fetch.fetch("lai2022", tmp_path, mirror=mirror.url)


def test_cut_download_is_resumed_with_range(shared_data, mirror, tmp_path, monkeypatch):
    monkeypatch.setenv(fetch.MIRROR_ENV, mirror.url)  # the documented environment variable instead of --mirror
    mirror.cut[SGDD_CSV] = 1_000_000
    report = fetch.fetch("sgdd-tst", tmp_path)
    assert "metric/SGDD-TST_with_metrics.csv" in report.resumed
    ranges = [r for p, r in mirror.requests if p == SGDD_CSV]
    assert ranges == [None, "bytes=1000000-"]
    _same_tree(tmp_path / "sgdd-tst", shared_data / "sgdd-tst")


def test_interrupted_run_resumes_on_the_next_call(shared_data, mirror, tmp_path):
    mirror.cut[SGDD_CSV] = 500_000
    with pytest.raises(fetch.FetchError, match="stopped after 500,000"):
        fetch.fetch("sgdd-tst", tmp_path, mirror=mirror.url, retries=0)
    assert not (tmp_path / "sgdd-tst").exists()
    part = tmp_path / "sgdd-tst.partial" / "metric" / "SGDD-TST_with_metrics.csv.part"
    assert part.stat().st_size == 500_000
    report = fetch.fetch("sgdd-tst", tmp_path, mirror=mirror.url, retries=0)
    assert report.resumed == ["metric/SGDD-TST_with_metrics.csv"]
    assert [r for p, r in mirror.requests if p == SGDD_CSV][-1] == "bytes=500000-"
    _same_tree(tmp_path / "sgdd-tst", shared_data / "sgdd-tst")


def test_readers_find_the_fetched_copy(shared_data, mirror, tmp_path, monkeypatch):
    from styleval.meta.datasets import load_sgdd_tst

    fetch.fetch("sgdd-tst", tmp_path / "data", mirror=mirror.url)
    monkeypatch.setenv("STYLEVAL_SHARED_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("STYLEVAL_DATA_DIR", str(tmp_path / "data"))
    assert paths.dataset_dir(None, "sgdd-tst") == tmp_path / "data" / "sgdd-tst"
    assert len(load_sgdd_tst().judgments.frame) == 10287
    from styleval.datasets import paradetox

    fetch.fetch("paradetox", tmp_path / "data", mirror=mirror.url)
    assert paradetox.path(None) == tmp_path / "data" / "paradetox" / "paradetox" / "paradetox.tsv"
    assert len(paradetox.rows(None)[1]) == len(paradetox.rows(shared_data)[1])
    with pytest.raises(InputError, match="styleval data fetch lai2022"):
        paths.dataset_dir(None, "lai2022")


def test_unknown_name_is_one_line(tmp_path, capsys):
    assert cli_main.main(["data", "fetch", "lai2023", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown dataset 'lai2023'" in err and len(err.splitlines()) == 1
