"""The web application: annotator pages (token links), admin pages (dashboard, campaign creation, export)."""
from __future__ import annotations

from .app import Limits, create_app
from .server import run_server
from .sessions import LoginThrottle

__all__ = ["create_app", "run_server", "Limits", "LoginThrottle"]
