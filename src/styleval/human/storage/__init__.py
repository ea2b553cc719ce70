"""The database: SQLite (WAL, synchronous=FULL) by default, PostgreSQL given a URL, through SQLAlchemy Core."""
from __future__ import annotations

from .engine import database_url, make_engine
from .store import (Annotator, AssignmentView, CampaignInfo, CreatedCampaign, JudgedRow, StorageError, Store,
                    describe_database_error)

__all__ = ["Store", "make_engine", "database_url", "CampaignInfo", "CreatedCampaign", "Annotator",
           "AssignmentView", "JudgedRow", "StorageError", "describe_database_error"]
