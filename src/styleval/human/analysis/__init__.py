"""The numbers behind the dashboard and the export: long-format judgments, agreement, per-system scores."""
from __future__ import annotations

from .dashboard import AgreementRow, Dashboard, SystemScoreRow, dashboard
from .export import EXPORT_FORMATS, export_path, judgments, write_export

__all__ = ["judgments", "write_export", "export_path", "EXPORT_FORMATS", "dashboard", "Dashboard",
           "AgreementRow", "SystemScoreRow"]
