"""Running the application with uvicorn (used by ``styleval serve``)."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from ..storage import Store


def run_server(database: str | Path, *, admin_token: str, export_dir: str | Path, host: str = "127.0.0.1",
               port: int = 8000, exit_after: float | None = None, log_level: str = "warning",
               max_upload_bytes: int | None = None, ssl_certfile: str | None = None,
               ssl_keyfile: str | None = None, on_ready: Callable[[], None] | None = None,
               forwarded_allow_ips: str | None = None) -> None:
    """Serve until interrupted, or for at most ``exit_after`` seconds (then shut down cleanly).

    ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are ignored unless ``forwarded_allow_ips`` names the trusted
    proxies (comma-separated addresses or networks, ``*`` for any): the client address the login throttle counts
    against must not be chosen by the client.

    The database is opened and the options checked before ``on_ready`` is called and anything is served, so a
    bad option or a broken database fails with one :class:`~styleval.errors.StyleEvalError`.
    """
    import uvicorn

    from .app import Limits, create_app

    store = Store(database)
    try:
        limits = Limits() if max_upload_bytes is None else Limits(upload_bytes=max_upload_bytes)
        app = create_app(store, admin_token=admin_token, export_dir=export_dir, limits=limits)
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                                timeout_graceful_shutdown=5, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
                                proxy_headers=forwarded_allow_ips is not None,
                                forwarded_allow_ips=forwarded_allow_ips or "")
        server = uvicorn.Server(config)
        if on_ready is not None:
            on_ready()
        timer = None
        if exit_after is not None:
            timer = threading.Timer(exit_after, lambda: setattr(server, "should_exit", True))
            timer.daemon = True
            timer.start()
        try:
            server.run()
        finally:
            if timer is not None:
                timer.cancel()
    finally:
        store.close()
