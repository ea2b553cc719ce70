"""Running the application with uvicorn (used by ``styleval serve``)."""
from __future__ import annotations

import threading
from pathlib import Path

from ..storage import Store


def run_server(database: str | Path, *, admin_token: str, export_dir: str | Path, host: str = "127.0.0.1",
               port: int = 8000, exit_after: float | None = None, log_level: str = "warning") -> None:
    """Serve until interrupted, or for at most ``exit_after`` seconds (then shut down cleanly)."""
    import uvicorn

    from .app import create_app

    store = Store(database)
    app = create_app(store, admin_token=admin_token, export_dir=export_dir)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                            timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
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
        store.close()
