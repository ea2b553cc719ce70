"""Download the public datasets styleval reads, pinned to a commit and checked by sha256.

The shipped manifest (``manifest.json`` beside this module) names, per dataset, its repository, the commit, the
licence and citation, and every file with its size and sha256 (computed from ``../shared/data`` by
:func:`build_manifest`). :func:`fetch` downloads a set's files into ``DIR/<name>.partial/`` and renames that folder
to ``DIR/<name>`` only once every file is there with its hash, so a set folder is complete or absent. A cut
connection leaves the ``.part`` file, which the next try (in the same call, or a later call) resumes with an HTTP
``Range`` request; a file whose hash differs is deleted and refused.

A set folder already there is checked before it is called complete (:mod:`.verify`): by the size and modification
time each file had when it was fetched, or by every sha256 with ``verify=True``; files that fail are downloaded
again. URLs in messages are shown without credentials (:func:`~styleval.urls.shown_url`).

Sources: by default each repository's raw files at the pinned commit on GitHub; a mirror (``mirror=URL`` or
``$STYLEVAL_DATA_MIRROR``) serves the same files as ``URL/<name>/<path>``, the layout of ``../shared/data``.
"""
from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import InputError, OutputError, StyleEvalError
from ..readers.text import StrPath
from ..urls import shown_url
from .paths import data_home
from .verify import Expected, failed_files, sha256_file, write_stamp

MANIFEST = "manifest.json"
MIRROR_ENV = "STYLEVAL_DATA_MIRROR"
RAW_URL = "https://raw.githubusercontent.com/{repository}/{commit}/{prefix}{path}"
CHUNK = 1 << 16
#: what each dataset is, its licence as its repository states it, and how to cite it (written for styleval)
ABOUT: dict[str, dict[str, str]] = {
    "lai2022": {"licence": "MIT (code); the text is GYAFC, under the Yahoo Answers L6 licence (not redistributable)",
                "citation": "Huiyuan Lai, Jiali Mao, Antonio Toral, Malvina Nissim. Human Judgement as a Compass to "
                            "Navigate Automatic Metrics for Formality Transfer. HumEval 2022."},
    "mir2019": {"licence": "none stated; Yelp text under Yelp's dataset terms",
                "citation": "Remi Mir, Bjarke Felbo, Nick Obradovich, Iyad Rahwan. Evaluating Style Transfer for "
                            "Text. NAACL 2019."},
    "sgdd-tst": {"licence": "none stated",
                 "citation": "Nikolay Babakov, David Dale, Varvara Logacheva, Alexander Panchenko. A large-scale "
                             "computational study of content preservation measures for text style transfer and "
                             "paraphrase generation. ACL Student Research Workshop 2022."},
    "pt16": {"licence": "none stated",
             "citation": "Ellie Pavlick, Joel Tetreault. An Empirical Analysis of Formality in Online "
                         "Communication. TACL 2016 (files from Elbria/xformal-FoST-meta)."},
    "yelp-dualrl": {"licence": "MIT; Yelp text under Yelp's dataset terms",
                    "citation": "Fuli Luo, Peng Li, Jie Zhou, Pengcheng Yang, Baobao Chang, Zhifang Sui, Xu Sun. A "
                                "Dual Reinforcement Learning Framework for Unsupervised Text Style Transfer. IJCAI "
                                "2019."},
    "paradetox": {"licence": "CC0 1.0",
                  "citation": "Varvara Logacheva, Daryna Dementieva, Sergey Ustyantsev, Daniil Moskovskiy, David "
                              "Dale, Irina Krotova, Nikita Semenov, Alexander Panchenko. ParaDetox: Detoxification "
                              "with Parallel Data. ACL 2022."},
    "yelp-shen": {"licence": "Apache-2.0 (code); Yelp text under Yelp's dataset terms",
                  "citation": "Tianxiao Shen, Tao Lei, Regina Barzilay, Tommi Jaakkola. Style Transfer from "
                              "Non-Parallel Text by Cross-Alignment. NeurIPS 2017."},
}
#: repository, pinned commit and the folder inside the repository that the dataset folder mirrors
SOURCES: dict[str, tuple[str, str, str]] = {
    "lai2022": ("laihuiyuan/eval-formality-transfer", "ac47a0882926902fa79a59bbe3ba0eb4c97176f5", ""),
    "mir2019": ("passeul/style-transfer-model-evaluation", "4ca376d34d2aa554c4d4aeb35dc0b6246b983213", ""),
    "sgdd-tst": ("skoltech-nlp/SGDD-TST", "bbf4c4913881b1bf01a32780e41fb95cb9bf6412", ""),
    "pt16": ("Elbria/xformal-FoST-meta", "5b2fa2e1cede0d9d4dcb81fc08b9ea0ce3423386",
             "best-practices/Formality/PT16_for_huggingface/"),
    "yelp-dualrl": ("luofuli/DualRL", "f412d903de683cf00ca471a1e413f916911a811c", ""),
    "paradetox": ("s-nlp/paradetox", "d97b17d0813539cf05c74f9cdb5e66372704ca57", ""),
    "yelp-shen": ("shentianxiao/language-style-transfer", "f078a9d342705ea62b04dd3ac5926d3467c2ac63", ""),
}


class FetchError(StyleEvalError, OSError):
    """A download that could not finish (network, server): what is done is kept and a new call resumes it."""


@dataclass(frozen=True)
class FileEntry:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class DatasetEntry:
    name: str
    repository: str
    commit: str
    prefix: str
    licence: str
    citation: str
    files: tuple[FileEntry, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    def expected(self) -> list[Expected]:
        return [Expected(f.path, f.size, f.sha256) for f in self.files]


@dataclass
class FetchReport:
    """What :func:`fetch` did for one dataset: files downloaded, resumed and already present."""

    entry: DatasetEntry
    folder: Path
    downloaded: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    present: bool = False
    bytes_received: int = 0
    checked: str = ""  # how a folder already there was checked: "size and mtime" or "sha256"
    repaired: list[str] = field(default_factory=list)  # files of a folder already there that failed and were fetched


def build_manifest(root: StrPath, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The manifest of the datasets under ``root`` (``../shared/data``): every file's size and sha256."""
    root = Path(root)
    sets: dict[str, Any] = {}
    for name in names or SOURCES:
        folder = root / name
        if not folder.is_dir():
            raise InputError("dataset folder does not exist", folder)
        repository, commit, prefix = SOURCES[name]
        files = {p.relative_to(folder).as_posix(): {"size": p.stat().st_size, "sha256": sha256_file(p)}
                 for p in sorted(folder.rglob("*")) if p.is_file()}
        sets[name] = {"repository": repository, "commit": commit, "prefix": prefix, **ABOUT[name], "files": files}
    return {"format": 1, "sets": sets}


def load_manifest(path: StrPath | None = None) -> dict[str, DatasetEntry]:
    """The shipped manifest (or the one at ``path``) as :class:`DatasetEntry` per dataset name."""
    if path is None:
        text = resources.files("styleval.datasets").joinpath(MANIFEST).read_text(encoding="utf-8")
        where: StrPath = MANIFEST
    else:
        text, where = Path(path).read_text(encoding="utf-8"), path
    try:
        data = json.loads(text)
        return {name: DatasetEntry(name, d["repository"], d["commit"], d.get("prefix", ""), d["licence"],
                                   d["citation"], tuple(FileEntry(p, int(f["size"]), f["sha256"])
                                                        for p, f in d["files"].items()))
                for name, d in data["sets"].items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"not a styleval data manifest ({exc})", where) from None


def entry(name: str, manifest: dict[str, DatasetEntry] | None = None) -> DatasetEntry:
    manifest = load_manifest() if manifest is None else manifest
    key = name.strip().lower().replace("_", "-")
    if key not in manifest:
        raise InputError(f"unknown dataset {name!r}; datasets to fetch: {', '.join(manifest)}")
    return manifest[key]


def file_url(data: DatasetEntry, file: FileEntry, mirror: str | None) -> str:
    if mirror:
        return f"{mirror.rstrip('/')}/{data.name}/{urllib.parse.quote(file.path)}"
    return RAW_URL.format(repository=data.repository, commit=data.commit, prefix=data.prefix,
                          path=urllib.parse.quote(file.path))


def _download(url: str, part: Path, file: FileEntry, timeout: float) -> tuple[int, bool]:
    """Append the rest of ``url`` to ``part`` (a Range request when it holds a start); (bytes received, resumed).
    Raises :class:`FetchError` when the transfer stops short."""
    have = part.stat().st_size if part.exists() else 0
    if have > file.size:
        part.unlink()
        have = 0
    request = urllib.request.Request(url, headers={"User-Agent": "styleval-data-fetch"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    got = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http(s) URLs only)
            resumed = have > 0 and response.status == 206
            if have and not resumed:  # the server sent the whole file: start again
                have = 0
            with open(part, "ab" if resumed else "wb") as out:
                while True:
                    block = response.read(CHUNK)
                    if not block:
                        break
                    out.write(block)
                    got += len(block)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{shown_url(url)}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, http.client.HTTPException, socket.timeout, ConnectionError, ValueError) as exc:
        reason = shown_url(str(getattr(exc, "reason", exc)))
        raise FetchError(f"{shown_url(url)}: download stopped after {have + got:,} of {file.size:,} bytes "
                         f"({reason})") from None
    total = have + got
    if total < file.size:
        raise FetchError(f"{shown_url(url)}: download stopped after {total:,} of {file.size:,} bytes")
    return got, resumed


def fetch(name: str, directory: StrPath | None = None, *, mirror: str | None = None, retries: int = 3,
          timeout: float = 60.0, manifest: dict[str, DatasetEntry] | None = None,
          progress: Callable[[str, int, int], None] | None = None, verify: bool = False) -> FetchReport:
    """Download dataset ``name`` into ``directory/<name>`` (default :func:`data_home`), each file checked against
    the manifest's sha256. A folder already there is checked (by size and modification time against its stamp,
    every sha256 with ``verify``; :mod:`.verify`) and left alone when it passes; the files that fail are downloaded
    again.

    A transfer cut short is resumed (HTTP Range) up to ``retries`` times, then :class:`FetchError` (a later call
    resumes from what was kept). A file whose size or hash differs is deleted and refused with :class:`InputError`
    naming the file, both hashes and the pinned commit."""
    data = entry(name, manifest)
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV) or None
    base = Path(directory) if directory is not None else data_home()
    if base.exists() and not base.is_dir():
        raise InputError("the data folder is a file, not a folder: name a folder (it is created if needed)", base)
    final = base / data.name
    report = FetchReport(data, final)
    staging = base / f"{data.name}.partial"
    if final.is_dir():
        bad = failed_files(final, data.commit, data.expected(), full=verify)
        report.checked = "sha256" if verify else "size and mtime"
        if not bad:
            report.present = True
            return report
        report.repaired = [f"{f.path} ({why})" for f, why in bad]
        shutil.rmtree(staging, ignore_errors=True)
        final.replace(staging)
        for f, _ in bad:
            (staging / f.path).unlink(missing_ok=True)
    try:
        staging.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the data folder: {exc.strerror or exc}", staging) from None
    try:
        _fetch_files(data, staging, mirror, retries, timeout, report, progress)
    except (FetchError, InputError):
        _drop_if_empty(staging)  # offline from the start: no folder is left that looks like a set
        raise
    staging.replace(final)
    write_stamp(final, data.commit, data.expected())
    return report


def _drop_if_empty(staging: Path) -> None:
    """Remove a staging folder that holds no byte of any file (only empty folders or empty ``.part`` files)."""
    if staging.is_dir() and not any(p.is_file() and p.stat().st_size for p in staging.rglob("*")):
        shutil.rmtree(staging, ignore_errors=True)


def _fetch_files(data: DatasetEntry, staging: Path, mirror: str | None, retries: int, timeout: float,
                 report: FetchReport, progress: Callable[[str, int, int], None] | None) -> None:
    """Every file of ``data`` into ``staging``, checked (the body of :func:`fetch`)."""
    for k, file in enumerate(data.files):
        if progress:
            progress(f"fetching {data.name} [files]", k, len(data.files))
        target = staging / file.path
        if target.is_file() and target.stat().st_size == file.size and sha256_file(target) == file.sha256:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(target.name + ".part")
        url = file_url(data, file, mirror)
        for attempt in range(retries + 1):
            try:
                got, resumed = _download(url, part, file, timeout)
            except FetchError:
                if attempt == retries:
                    raise
                continue
            report.bytes_received += got
            if resumed or attempt:
                report.resumed.append(file.path)
            break
        digest = sha256_file(part)
        if part.stat().st_size != file.size or digest != file.sha256:
            part.unlink()
            raise InputError(f"refused: sha256 {digest} differs from the manifest's {file.sha256} (size "
                             f"{file.size:,}; {data.repository} @ {data.commit[:7]}); the file was deleted",
                             shown_url(url))
        part.replace(target)
        report.downloaded.append(file.path)
    if progress:
        progress(f"fetching {data.name} [files]", len(data.files), len(data.files))


def remove_partial(name: str, directory: StrPath | None = None) -> None:
    """Forget an unfinished download of ``name`` (its ``.partial`` folder)."""
    base = Path(directory) if directory is not None else data_home()
    shutil.rmtree(base / f"{entry(name).name}.partial", ignore_errors=True)
