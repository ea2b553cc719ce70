"""Human evaluation campaigns: protocols, campaign building, storage, quality control, analysis and a web app.

An optional extra: the core package never imports it. The web part needs FastAPI, Jinja2, SQLAlchemy and
python-multipart (PostgreSQL also psycopg); storage and analysis need SQLAlchemy only.

* :mod:`.protocols` -- what annotators see and answer (aspects, scales, guidelines with examples).
* :mod:`.campaigns` -- items from system outputs, quality-control items, assignment of annotators.
* :mod:`.storage` -- the database (SQLite by default, PostgreSQL by URL) and every read/write.
* :mod:`.quality` -- per-annotator checks: control items, repeated items, the degraded-item test.
* :mod:`.analysis` -- the long-format export, agreement and per-system scores (the dashboard's numbers).
* :mod:`.web` -- the FastAPI application (server-rendered pages).
"""
from __future__ import annotations

from .campaigns import CampaignSpec, build_campaign
from .protocols import PROTOCOLS, Question, Protocol, get_protocol
from .storage import Store

__all__ = ["PROTOCOLS", "Question", "Protocol", "get_protocol", "CampaignSpec", "build_campaign", "Store"]
