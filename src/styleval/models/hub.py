"""Model files from a Hugging Face-compatible hub, fetched once into the local cache (:func:`fetch_snapshot`).

Only reached when hub ids are allowed (:func:`styleval.models.spec.hub_allowed`). The download is
``huggingface_hub.snapshot_download``, so ``HF_ENDPOINT`` (a mirror, or the tests' stand-in on 127.0.0.1),
``HF_HOME``/``HF_HUB_CACHE``, ``HF_TOKEN`` and ``HF_HUB_OFFLINE`` work as they do for transformers; its file locks let
two processes fetch the same model at once. A revision (``org/name@REV``: a branch, tag or commit) is resolved to
its commit before anything is downloaded, and that commit is the model's identity in signatures. Weights are
fetched in one format only (safetensors when the repository has them), never TensorFlow, Flax or ONNX copies.
Every failure is one :class:`~styleval.errors.ResourceUnavailableError` naming the model, the revision and the
endpoint.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, ResourceUnavailableError

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# other frameworks' weights and exports: never needed to run a PyTorch model
_OTHER_FORMATS = ["*.h5", "*.msgpack", "*.ot", "*.onnx", "*.tflite", "*.mlmodel", "tf_model*", "flax_model*",
                  "rust_model*", "onnx/*", "openvino/*", "coreml/*", "*.gguf"]
_lock = threading.Lock()
_fetched: dict[tuple[str, str], "HubSnapshot"] = {}


@dataclass(frozen=True)
class HubSnapshot:
    """A hub model's files at one commit, in the local cache."""

    hub_id: str
    revision: str  # as asked (``main`` when none was given)
    commit: str  # the 40-hex commit it resolved to
    path: Path


def split_revision(text: str) -> tuple[str, str | None]:
    """``org/name@rev`` -> (``org/name``, ``rev``); no ``@`` -> (text, None)."""
    hub_id, sep, rev = text.partition("@")
    if sep and not rev.strip():
        raise InputError(f"model {text!r}: nothing after '@' (write org/name@REVISION, or leave the '@' out)")
    return hub_id.strip(), (rev.strip() if sep else None)


def endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def _reason(exc: BaseException) -> str:
    """The error's first line, without the library's long advice."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return f"{type(exc).__name__}: {first}"[:300]


@contextmanager
def _no_bars() -> Iterator[None]:
    """huggingface_hub's own tqdm bars off while styleval fetches (library code prints nothing)."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was = are_progress_bars_disabled()
    disable_progress_bars()
    try:
        yield
    finally:
        if not was:
            enable_progress_bars()


def _offline() -> bool:
    """``HF_HUB_OFFLINE`` as set now (huggingface_hub reads it once, at import)."""
    from huggingface_hub import constants

    now = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")
    return now or bool(constants.HF_HUB_OFFLINE)


def fetch_snapshot(hub_id: str, revision: str | None = None) -> HubSnapshot:
    """The model's files at ``revision`` (default ``main``), downloaded into the hub cache unless already there.

    Memoised per process: a model is resolved and checked once per run."""
    rev = revision or "main"
    key = (hub_id, rev)
    with _lock:
        if key in _fetched:
            return _fetched[key]
        from ..progress import report

        report(f"fetching model {hub_id}@{rev} from the hub", 0, 1)
        with _no_bars():
            snap = _fetch(hub_id, rev)
        report(f"fetching model {hub_id}@{rev} from the hub", 1, 1)
        _fetched[key] = snap
        _fetched[(hub_id, snap.commit)] = snap
        return snap


def _fetch(hub_id: str, rev: str) -> HubSnapshot:
    try:
        from huggingface_hub import HfApi, snapshot_download
    except ImportError:  # pragma: no cover - a dependency of transformers
        raise ResourceUnavailableError("hub models need huggingface_hub: pip install 'styleval[neural]'") from None
    where = f"{hub_id}@{rev}"
    if _offline():
        try:
            path = Path(snapshot_download(hub_id, revision=rev, local_files_only=True,
                                          ignore_patterns=_OTHER_FORMATS))
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line naming the model
            raise ResourceUnavailableError(
                f"model {hub_id!r} (revision {rev}) is not in the local hub cache and HF_HUB_OFFLINE=1 forbids "
                "downloading it "
                f"({_reason(exc)}); unset HF_HUB_OFFLINE, or give a local folder instead of the hub id") from None
        return HubSnapshot(hub_id, rev, _commit_of(path, hub_id), path)
    try:
        info = HfApi(endpoint=endpoint()).model_info(hub_id, revision=rev)
    except Exception as exc:  # noqa: BLE001
        raise ResourceUnavailableError(f"model hub {endpoint()}: cannot resolve {where} ({_reason(exc)})") from None
    commit = str(getattr(info, "sha", "") or "")
    if not _COMMIT.match(commit):
        raise ResourceUnavailableError(f"model hub {endpoint()}: {where} resolved to no commit (got {commit!r})")
    names = [s.rfilename for s in (info.siblings or [])]
    ignore = list(_OTHER_FORMATS)
    if any(n.endswith(".safetensors") for n in names):
        ignore += ["*.bin", "*.pt", "*.pth"]
    try:
        path = Path(snapshot_download(hub_id, revision=commit, ignore_patterns=ignore))
    except Exception as exc:  # noqa: BLE001
        raise ResourceUnavailableError(f"model hub {endpoint()}: downloading {where} (commit {commit[:12]}) failed "
                                       f"({_reason(exc)}); run again to resume") from None
    return HubSnapshot(hub_id, rev, commit, path)


def _commit_of(path: Path, hub_id: str) -> str:
    """A cached snapshot's folder is named by its commit (``…/snapshots/<commit>``)."""
    name = Path(os.fspath(path)).name
    if not _COMMIT.match(name):
        raise ResourceUnavailableError(f"model {hub_id}: the cached snapshot {path} is not named by a commit")
    return name
