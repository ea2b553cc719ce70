"""Tables. One generic set for every protocol: answers are JSON, so a new protocol needs no migration.

String columns have explicit lengths; :func:`check_lengths` enforces them before a write, so a value that is too
long is refused with the same message on SQLite (which would store it) and PostgreSQL (which would fail).
"""
from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = "1"

metadata = sa.MetaData()

meta = sa.Table(
    "styleval_meta", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

campaigns = sa.Table(
    "campaigns", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("protocol", sa.String(64), nullable=False),
    sa.Column("config", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

items = sa.Table(
    "items", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    sa.Column("key", sa.String(300), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("segment", sa.String(200), nullable=False),
    sa.Column("direction", sa.String(100)),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("candidates", sa.Text, nullable=False),  # JSON [{"system", "text"}] in display order
    sa.Column("truth", sa.Text, nullable=False),  # JSON, never sent to annotators
    sa.UniqueConstraint("campaign_id", "key", name="uq_item_key"),
)

annotators = sa.Table(
    "annotators", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.UniqueConstraint("campaign_id", "name", name="uq_annotator_name"),
)

assignments = sa.Table(
    "assignments", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("annotator_id", sa.Integer, sa.ForeignKey("annotators.id", ondelete="CASCADE"), nullable=False),
    sa.Column("item_id", sa.Integer, sa.ForeignKey("items.id", ondelete="CASCADE"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.UniqueConstraint("annotator_id", "position", name="uq_assignment_position"),
    sa.UniqueConstraint("annotator_id", "item_id", name="uq_assignment_item"),
)

# admin login sessions: only a hash of the random session id is stored, with the fingerprint of the admin token it
# was opened under (a token change revokes every session) and an expiry
admin_sessions = sa.Table(
    "admin_sessions", metadata,
    sa.Column("id_hash", sa.String(64), primary_key=True),
    sa.Column("token_fingerprint", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)

judgments = sa.Table(
    "judgments", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    # one judgment per assignment item: the key that makes resubmission idempotent
    sa.Column("assignment_id", sa.Integer, sa.ForeignKey("assignments.id", ondelete="CASCADE"), nullable=False,
              unique=True),
    sa.Column("answers", sa.Text, nullable=False),
    sa.Column("shown_at", sa.Float),
    sa.Column("submitted_at", sa.Float, nullable=False),
    sa.Column("seconds", sa.Float),
)


INT4_MAX = 2**31 - 1  # PostgreSQL's INTEGER: ids and positions outside 1..INT4_MAX cannot exist


def check_lengths(table: sa.Table, rows: list[dict], what: str) -> None:
    """Raise :class:`~styleval.errors.InputError` when a string is longer than its column allows."""
    from styleval.errors import InputError

    limits: dict[str, int] = {c.name: int(c.type.length) for c in table.columns
                              if isinstance(c.type, sa.String) and c.type.length}
    for row in rows:
        for name, limit in limits.items():
            value = row.get(name)
            if isinstance(value, str) and len(value) > limit:
                shown = value if len(value) <= 40 else value[:37] + "..."
                raise InputError(f"{what} {name} {shown!r} has {len(value)} characters; at most {limit} are allowed")
