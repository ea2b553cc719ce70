"""A local stand-in for the Hugging Face hub on 127.0.0.1, so the tests run the real download code
(``huggingface_hub`` pointed at it through ``HF_ENDPOINT``) offline: standard library only.

It answers the calls a snapshot download makes: the revision's metadata
(``GET /api/models/{repo}/revision/{rev}``: the commit and the file list), the file tree
(``GET /api/models/{repo}/tree/{rev}``: paths, sizes and git blob ids) and each file
(``HEAD``/``GET /{repo}/resolve/{rev}/{path}``, with the ``X-Repo-Commit``, ``ETag`` and ``Content-Length`` headers
the client checks; ``Range`` requests are answered with 206); anything else is a 404. Faults: ``status`` answers every
request with that HTTP status; ``truncate`` names files whose next body is cut to half its announced length, once
(the client then resumes with a ``Range`` request); ``delay`` sleeps before each file body (concurrent downloads).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


class HubStandIn:
    """Serves folders as hub repositories: ``add(repo_id, folder)`` publishes ``folder`` at one commit."""

    def __init__(self) -> None:
        self.repos: dict[str, tuple[str, Path]] = {}
        self.status: int | None = None
        self.truncate: set[str] = set()
        self.delay = 0.0
        self.requests: list[tuple[str, str]] = []  # (method, path)
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:  # noqa: N802 (the standard library's name)
                hub._answer(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                hub._answer(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(self, repo_id: str, folder: Path) -> str:
        """Publish ``folder`` as ``repo_id``; returns its commit (a hash of the files, so equal folders agree)."""
        digest = hashlib.sha1()
        for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            digest.update(f.relative_to(folder).as_posix().encode() + b"\0" + f.read_bytes())
        commit = digest.hexdigest()
        self.repos[repo_id] = (commit, Path(folder))
        return commit

    def files_fetched(self) -> list[str]:
        return [p for m, p in self.requests if m == "GET" and "/resolve/" in p]

    def __enter__(self) -> "HubStandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- answers ----------------------------------------------------------------------------------------
    def _repo(self, path: str) -> tuple[str, str, str, str] | None:
        """(kind, repo_id, revision, rest) for ``/api/models/<repo>/revision/<rev>``,
        ``/api/models/<repo>/tree/<rev>`` or ``/<repo>/resolve/<rev>/<rest>``."""
        for repo_id in sorted(self.repos, key=len, reverse=True):
            for prefix, kind in ((f"/api/models/{repo_id}/revision/", "info"), (f"/api/models/{repo_id}/tree/", "tree"),
                                 (f"/{repo_id}/resolve/", "file")):
                if path.startswith(prefix):
                    rev, _, rest = path[len(prefix):].partition("/")
                    return kind, repo_id, unquote(rev), rest
        return None

    def _answer(self, handler: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        with self._lock:
            self.requests.append((handler.command, path))
        if self.status is not None:
            self._send(handler, self.status, b'{"error": "injected"}', {"Content-Type": "application/json"}, body)
            return
        found = self._repo(path)
        if found is None:
            self._send(handler, 404, b'{"error": "Repository not found"}',
                       {"Content-Type": "application/json", "X-Error-Code": "RepoNotFound"}, body)
            return
        kind, repo_id, rev, rest = found
        commit, folder = self.repos[repo_id]
        if rev not in ("main", commit):
            self._send(handler, 404, b'{"error": "Invalid rev id"}',
                       {"Content-Type": "application/json", "X-Error-Code": "RevisionNotFound"}, body)
            return
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        if kind == "info":
            meta = {"id": repo_id, "modelId": repo_id, "sha": commit, "private": False,
                    "siblings": [{"rfilename": f.relative_to(folder).as_posix()} for f in files]}
            self._send(handler, 200, json.dumps(meta).encode(), {"Content-Type": "application/json"}, body)
            return
        if kind == "tree":
            tree = [{"type": "file", "path": f.relative_to(folder).as_posix(), "size": f.stat().st_size,
                     "oid": _blob_id(f.read_bytes())} for f in files]
            self._send(handler, 200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, body)
            return
        file = (folder / rest).resolve()
        if not file.is_file() or folder.resolve() not in file.parents:
            self._send(handler, 404, b'{"error": "Entry not found"}',
                       {"Content-Type": "application/json", "X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit},
                       body)
            return
        data = file.read_bytes()
        headers = {"X-Repo-Commit": commit, "ETag": f'"{_blob_id(data)}"',
                   "Content-Type": "application/octet-stream"}
        if body and self.delay:
            time.sleep(self.delay)
        if body and rest in self.truncate:
            self.truncate.discard(rest)
            handler.send_response(200)
            for k, v in {**headers, "Content-Length": str(len(data))}.items():
                handler.send_header(k, v)
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        rng = handler.headers.get("Range", "")
        if body and rng.startswith("bytes=") and rng.endswith("-") and rng[6:-1].isdigit():
            start = int(rng[6:-1])
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            self._send(handler, 206, data[start:], headers, body)
            return
        self._send(handler, 200, data, headers, body)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str], body: bool) -> None:
        handler.send_response(status)
        for k, v in headers.items():
            handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        if body:
            handler.wfile.write(data)


def _blob_id(data: bytes) -> str:
    """The git blob id of a file's bytes, which the hub gives as the ETag of a file kept outside LFS."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
