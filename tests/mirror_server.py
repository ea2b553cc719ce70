"""A local HTTP mirror of a data folder for the download tests: standard library only, on 127.0.0.1, with HTTP
Range support and injectable faults (a connection cut after N bytes of a file, a tampered byte)."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote


class Mirror:
    """Serves ``root/<path>`` at ``http://127.0.0.1:PORT/<path>``.

    ``cut[path] = n``: the next response for ``path`` announces the full length but sends only ``n`` bytes (from
    where the request starts), then closes the connection; the fault fires once. ``tamper``: paths whose byte at
    position 0 is flipped in every response. ``requests`` logs (path, Range header) of every GET."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.cut: dict[str, int] = {}
        self.tamper: set[str] = set()
        self.requests: list[tuple[str, str | None]] = []
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep the test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                rel = unquote(self.path.lstrip("/"))
                rng = self.headers.get("Range")
                mirror.requests.append((rel, rng))
                file = (mirror.root / rel).resolve()
                if not file.is_file() or mirror.root.resolve() not in file.parents:
                    self.send_error(404)
                    return
                data = bytearray(file.read_bytes())
                if rel in mirror.tamper and data:
                    data[0] ^= 0xFF
                start = 0
                status = 200
                if rng and rng.startswith("bytes=") and rng.endswith("-"):
                    start = int(rng[6:-1])
                    status = 206
                body = bytes(data[start:])
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                if rel in mirror.cut:
                    n = mirror.cut.pop(rel)
                    self.wfile.write(body[:n])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "Mirror":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
