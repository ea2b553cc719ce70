"""Every read and write of campaign data. A write returns only after its transaction has committed."""
from __future__ import annotations

import hashlib
import json
import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import sqlalchemy as sa

from styleval.errors import InputError, StyleEvalError, UnknownNameError

from ..campaigns import BuiltCampaign
from . import schema as t
from .engine import WRITE, insert_ignore, make_engine


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class StorageError(StyleEvalError, RuntimeError):
    """The database cannot be opened, read or written; the message says which database and what to do."""


_ADVICE = (  # (words in the driver's message, what it means and what to do)
    (("file is not a database", "malformed", "not a database"),
     "is corrupt or not a styleval database; restore it from a backup or start with a new --db file"),
    (("readonly", "read-only", "read only"),
     "is read-only; make the file and its folder writable by this user, or copy it somewhere writable"),
    (("unable to open", "no such file", "could not open"),
     "cannot be opened; check that its folder exists and is writable"),
    (("locked", "busy"), "is locked by another program; stop it, or wait and try again"),
    (("connection", "connect", "authentication", "password", "role", "does not exist"),
     "cannot be reached; check the postgresql:// URL, that the server runs and that the user may log in"),
)


def describe_database_error(exc: BaseException, where: str) -> StorageError:
    """A one-line :class:`StorageError` for a driver error (no SQL, no parameters, no traceback)."""
    orig = getattr(exc, "orig", None) or exc
    detail = (str(orig).strip().splitlines() or [type(orig).__name__])[0][:200]
    lowered = detail.lower()
    for words, advice in _ADVICE:
        if any(w in lowered for w in words):
            return StorageError(f"database {where} {advice} ({detail})")
    return StorageError(f"database {where} failed: {detail}")


@dataclass(frozen=True)
class CampaignInfo:
    id: int
    name: str
    protocol: str
    config: dict[str, Any]
    created_at: float


@dataclass(frozen=True)
class CreatedCampaign:
    """A new campaign and its annotators' secret tokens (shown once: only their hashes are stored)."""

    id: int
    name: str
    tokens: dict[str, str]


@dataclass(frozen=True)
class Annotator:
    id: int
    campaign_id: int
    name: str


@dataclass(frozen=True)
class AssignmentView:
    """What an annotator may see of one assignment: texts without system names, and their own answer."""

    assignment_id: int
    position: int
    total: int
    kind: str
    source: str
    texts: list[str]
    answers: dict[str, Any] | None
    truth: dict[str, Any]  # the expected answer of a training item (for feedback); empty otherwise
    direction: str | None = None


@dataclass(frozen=True)
class JudgedRow:
    annotator: str
    item_key: str
    kind: str
    segment: str
    direction: str | None
    systems: list[str]
    truth: dict[str, Any]
    answers: dict[str, Any]
    seconds: float | None
    position: int
    submitted_at: float | None = None  # when the judgment was committed (server clock)


class Store:
    """Campaign storage on SQLite (a file path) or PostgreSQL (a ``postgresql://`` URL)."""

    def __init__(self, target: str | Path) -> None:
        self.engine = make_engine(target)
        self.where = self.engine.url.render_as_string(hide_password=True).replace("sqlite:///", "")
        try:
            self._refuse_foreign_database()
            t.metadata.create_all(self.engine)
            with self._write() as conn:
                conn.execute(insert_ignore(self.engine, t.meta, ["key"]),
                             [{"key": "schema_version", "value": t.SCHEMA_VERSION},
                              {"key": "secret", "value": secrets.token_hex(32)}])
            with self.engine.connect() as conn:
                self.secret = bytes.fromhex(conn.execute(sa.select(t.meta.c.value)
                                                         .where(t.meta.c.key == "secret")).scalar_one())
        except sa.exc.SQLAlchemyError as exc:
            self.engine.dispose()
            raise describe_database_error(exc, self.where) from None
        except ValueError:  # the stored secret is not hex: someone edited the table
            self.engine.dispose()
            raise StorageError(f"database {self.where} holds a damaged server secret; restore it from a backup "
                               "or start with a new --db file") from None

    def _refuse_foreign_database(self) -> None:
        """Raise :class:`StorageError` for a database that holds tables but was not made by styleval (no
        ``styleval_meta`` table with a schema version) or was made for another schema version: styleval adds its
        tables only to an empty database or one of its own."""
        # SQLite: looked at through a plain connection, since the engine's own switches the file to WAL
        sqlite = self.engine.dialect.name == "sqlite"
        probe = sa.create_engine(self.engine.url, poolclass=sa.pool.NullPool) if sqlite else self.engine
        try:
            tables = set(sa.inspect(probe).get_table_names())
            if not tables:
                return
            if t.meta.name not in tables:
                shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
                raise StorageError(f"database {self.where} was not created by styleval (it has tables {shown} but "
                                   f"no {t.meta.name} table); styleval leaves it untouched: give a new --db file or "
                                   "an empty database")
            with probe.connect() as conn:
                version = conn.execute(sa.select(t.meta.c.value).where(t.meta.c.key == "schema_version")).scalar()
        finally:
            if sqlite:
                probe.dispose()
        if version is not None and version != t.SCHEMA_VERSION:  # no version yet: a first start cut short
            raise StorageError(f"database {self.where} has styleval schema version {version!r}, this styleval "
                               f"needs {t.SCHEMA_VERSION!r}; styleval leaves it untouched")

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        with self.engine.connect() as conn:
            conn.execution_options(**{WRITE: True})
            with conn.begin():
                yield conn

    # ------------------------------------------------------------------ campaigns
    def create_campaign(self, built: BuiltCampaign) -> CreatedCampaign:
        """Store a built campaign in one transaction; returns the annotators' tokens."""
        spec = built.spec
        config = {"per_item": spec.per_item, "controls": spec.controls, "repeats": spec.repeats,
                  "degraded": spec.degraded, "seed": spec.seed, "systems": built.systems,
                  "directions": sorted({it.direction for it in built.items if it.direction}),
                  "mask_words": None if spec.mask_words is None else sorted(set(spec.mask_words))}
        tokens = {name: secrets.token_urlsafe(24) for name in built.assignments}
        now = time.time()
        # the same limits on SQLite and PostgreSQL, checked before anything is written
        t.check_lengths(t.campaigns, [{"name": spec.name}], "campaign")
        t.check_lengths(t.items, [{"key": it.key, "segment": it.segment, "direction": it.direction}
                                  for it in built.items], "item")
        t.check_lengths(t.annotators, [{"name": n} for n in tokens], "annotator")
        with self._write() as conn:
            if conn.execute(sa.select(t.campaigns.c.id).where(t.campaigns.c.name == spec.name)).first():
                raise InputError(f"a campaign named {spec.name!r} already exists")
            key = conn.execute(t.campaigns.insert().values(name=spec.name, protocol=built.protocol.name,
                                                           config=json.dumps(config), created_at=now)
                               ).inserted_primary_key
            assert key is not None
            cid = key[0]
            conn.execute(t.items.insert(), [
                {"campaign_id": cid, "key": it.key, "kind": it.kind, "segment": it.segment,
                 "direction": it.direction, "source": it.source, "candidates": json.dumps(it.candidates),
                 "truth": json.dumps(it.truth)} for it in built.items])
            item_ids = dict(conn.execute(sa.select(t.items.c.key, t.items.c.id).where(t.items.c.campaign_id == cid))
                            .all())
            conn.execute(t.annotators.insert(), [{"campaign_id": cid, "name": n, "token_hash": hash_token(tok)}
                                                 for n, tok in tokens.items()])
            ann_ids = dict(conn.execute(sa.select(t.annotators.c.name, t.annotators.c.id)
                                        .where(t.annotators.c.campaign_id == cid)).all())
            conn.execute(t.assignments.insert(), [
                {"annotator_id": ann_ids[name], "item_id": item_ids[key], "position": pos}
                for name, keys in built.assignments.items() for pos, key in enumerate(keys, start=1)])
        return CreatedCampaign(cid, spec.name, tokens)

    def campaigns(self) -> list[CampaignInfo]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.campaigns).order_by(t.campaigns.c.id)).all()
        return [CampaignInfo(r.id, r.name, r.protocol, json.loads(r.config), r.created_at) for r in rows]

    def campaign(self, ref: int | str) -> CampaignInfo:
        """A campaign by id (an ``int``) or by name (a ``str``). Ids and names never share one namespace: a name
        made of digits is tried as an id only when no campaign has that name, and a name that is also another
        campaign's id is refused as ambiguous."""
        every = self.campaigns()
        if isinstance(ref, int) and not isinstance(ref, bool):
            for c in every:
                if c.id == ref:
                    return c
            raise UnknownNameError("campaign id", str(ref), [str(c.id) for c in every])
        text = str(ref)
        by_name = next((c for c in every if c.name == text), None)
        by_id = next((c for c in every if str(c.id) == text), None)
        if by_name is not None and by_id is not None and by_name.id != by_id.id:
            raise InputError(f"campaign {text!r} is ambiguous: it is the name of campaign id {by_name.id} and the id "
                             f"of campaign {by_id.name!r}; give --id {by_id.id} or --id {by_name.id}")
        found = by_name or by_id
        if found is None:
            raise UnknownNameError("campaign", text, [c.name for c in every])
        return found

    # ------------------------------------------------------------------ annotators
    def annotator_by_token(self, token: str) -> Annotator | None:
        if not token or len(token) > 200:
            return None
        with self.engine.connect() as conn:
            r = conn.execute(sa.select(t.annotators).where(t.annotators.c.token_hash == hash_token(token))).first()
        return None if r is None else Annotator(r.id, r.campaign_id, r.name)

    def annotators(self, campaign_id: int) -> list[Annotator]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.annotators).where(t.annotators.c.campaign_id == campaign_id)
                                .order_by(t.annotators.c.name)).all()
        return [Annotator(r.id, r.campaign_id, r.name) for r in rows]

    def annotator(self, campaign: int | str, ref: int | str) -> Annotator:
        """An annotator of a campaign by name or id."""
        info = self.campaign(campaign)
        people = self.annotators(info.id)
        for a in people:
            if a.name == str(ref) or str(a.id) == str(ref):
                return a
        raise UnknownNameError(f"annotator of campaign {info.name!r}", str(ref), [a.name for a in people])

    def reset_token(self, annotator_id: int) -> str:
        """A new token for an annotator: the old link stops working at once, their judgments stay theirs."""
        token = secrets.token_urlsafe(24)
        with self._write() as conn:
            changed = conn.execute(t.annotators.update().where(t.annotators.c.id == annotator_id)
                                   .values(token_hash=hash_token(token))).rowcount
        if not changed:
            raise InputError(f"no annotator with id {annotator_id}")
        return token

    # ------------------------------------------------------------------ admin sessions
    def open_admin_session(self, token_fingerprint: str, ttl_s: float, *, now: float | None = None) -> str:
        """A new random session id (returned once; only its hash is stored), valid for ``ttl_s`` seconds.
        Expired sessions are removed on the way."""
        now = time.time() if now is None else now
        session = secrets.token_urlsafe(32)
        with self._write() as conn:
            conn.execute(t.admin_sessions.delete().where(t.admin_sessions.c.expires_at <= now))
            conn.execute(t.admin_sessions.insert().values(id_hash=hash_token(session),
                                                          token_fingerprint=token_fingerprint, created_at=now,
                                                          expires_at=now + ttl_s))
        return session

    def admin_session_valid(self, session: str, token_fingerprint: str, *, now: float | None = None) -> bool:
        """Whether ``session`` was opened under the current admin token, is not revoked and has not expired."""
        if not session or len(session) > 200:
            return False
        now = time.time() if now is None else now
        s = t.admin_sessions
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(s.c.token_fingerprint, s.c.expires_at)
                               .where(s.c.id_hash == hash_token(session))).first()
        return row is not None and row.token_fingerprint == token_fingerprint and row.expires_at > now

    def close_admin_session(self, session: str) -> None:
        """Revoke one session (logout)."""
        if session and len(session) <= 200:
            with self._write() as conn:
                conn.execute(t.admin_sessions.delete().where(t.admin_sessions.c.id_hash == hash_token(session)))

    def revoke_admin_sessions(self, keep_fingerprint: str | None = None) -> int:
        """Revoke every session not opened under ``keep_fingerprint`` (all when None); returns how many."""
        q = t.admin_sessions.delete()
        if keep_fingerprint is not None:
            q = q.where(t.admin_sessions.c.token_fingerprint != keep_fingerprint)
        with self._write() as conn:
            return int(conn.execute(q).rowcount or 0)

    # ------------------------------------------------------------------ assignments and judgments
    def progress(self, annotator_id: int) -> tuple[int, int]:
        """(judged, total) assignments of one annotator."""
        a, j = t.assignments, t.judgments
        with self.engine.connect() as conn:
            total = conn.execute(sa.select(sa.func.count()).select_from(a).where(a.c.annotator_id == annotator_id)
                                 ).scalar_one()
            done = conn.execute(sa.select(sa.func.count()).select_from(a.join(j, j.c.assignment_id == a.c.id))
                                .where(a.c.annotator_id == annotator_id)).scalar_one()
        return int(done), int(total)

    def next_position(self, annotator_id: int) -> int | None:
        """The first position without a judgment, or None when everything is done."""
        a, j = t.assignments, t.judgments
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(sa.func.min(a.c.position)).select_from(a.outerjoin(j, j.c.assignment_id == a.c.id))
                .where(a.c.annotator_id == annotator_id, j.c.id.is_(None))).scalar_one()

    def assignment(self, annotator_id: int, position: int) -> AssignmentView | None:
        """The annotator's item at ``position`` (None if it is not theirs or does not exist)."""
        if not 1 <= position <= t.INT4_MAX:  # larger numbers overflow the drivers (SQLite int64, PostgreSQL int4)
            return None
        a, i, j = t.assignments, t.items, t.judgments
        with self.engine.connect() as conn:
            r = conn.execute(
                sa.select(a.c.id, a.c.position, i.c.kind, i.c.source, i.c.candidates, i.c.truth, j.c.answers,
                          i.c.direction)
                .select_from(a.join(i, i.c.id == a.c.item_id).outerjoin(j, j.c.assignment_id == a.c.id))
                .where(a.c.annotator_id == annotator_id, a.c.position == position)).first()
            total = conn.execute(sa.select(sa.func.count()).select_from(a).where(a.c.annotator_id == annotator_id)
                                 ).scalar_one()
        if r is None:
            return None
        texts = [c["text"] for c in json.loads(r.candidates)]
        return AssignmentView(r.id, r.position, int(total), r.kind, r.source, texts,
                              None if r.answers is None else json.loads(r.answers),
                              json.loads(r.truth) if r.kind == "training" else {}, r.direction)

    def stored_answers(self, assignment_id: int) -> dict[str, Any] | None:
        """The committed answers of one assignment (None when not judged yet)."""
        with self.engine.connect() as conn:
            raw = conn.execute(sa.select(t.judgments.c.answers)
                               .where(t.judgments.c.assignment_id == assignment_id)).scalar_one_or_none()
        return None if raw is None else json.loads(raw)

    def submit(self, assignment_id: int, answers: dict[str, Any], *, shown_at: float | None = None,
               now: float | None = None) -> bool:
        """Record a judgment and commit. Idempotent: a second submission for the same assignment changes nothing
        and returns False (the first answer stands; compare with :meth:`stored_answers` to tell the annotator)."""
        now = time.time() if now is None else now
        seconds = None if shown_at is None or not 0 <= now - shown_at <= 86400 else round(now - shown_at, 3)
        with self._write() as conn:
            res = conn.execute(insert_ignore(self.engine, t.judgments, ["assignment_id"]).values(
                assignment_id=assignment_id, answers=json.dumps(answers, sort_keys=True), shown_at=shown_at,
                submitted_at=now, seconds=seconds).returning(t.judgments.c.id))
            return res.first() is not None

    def judged_rows(self, campaign_id: int) -> list[JudgedRow]:
        """Every judgment of a campaign with its item (systems included: for analysis, never for annotators)."""
        a, i, j, n = t.assignments, t.items, t.judgments, t.annotators
        q = (sa.select(n.c.name, i.c.key, i.c.kind, i.c.segment, i.c.direction, i.c.candidates, i.c.truth,
                       j.c.answers, j.c.seconds, a.c.position, j.c.submitted_at)
             .select_from(j.join(a, a.c.id == j.c.assignment_id).join(i, i.c.id == a.c.item_id)
                          .join(n, n.c.id == a.c.annotator_id))
             .where(i.c.campaign_id == campaign_id).order_by(n.c.name, a.c.position))
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
        return [JudgedRow(r.name, r.key, r.kind, r.segment, r.direction,
                          [c["system"] for c in json.loads(r.candidates)], json.loads(r.truth),
                          json.loads(r.answers), r.seconds, r.position, r.submitted_at) for r in rows]

    def assignment_counts(self, campaign_id: int) -> dict[str, tuple[int, int]]:
        """Per annotator name: (judged, total)."""
        a, j, n = t.assignments, t.judgments, t.annotators
        q = (sa.select(n.c.name, sa.func.count(a.c.id), sa.func.count(j.c.id))
             .select_from(n.outerjoin(a, a.c.annotator_id == n.c.id).outerjoin(j, j.c.assignment_id == a.c.id))
             .where(n.c.campaign_id == campaign_id).group_by(n.c.name).order_by(n.c.name))
        with self.engine.connect() as conn:
            return {name: (int(done), int(total)) for name, total, done in conn.execute(q).all()}

    def judgment_count(self, campaign_id: int | None = None) -> int:
        a, i, j = t.assignments, t.items, t.judgments
        q = sa.select(sa.func.count()).select_from(j)
        if campaign_id is not None:
            q = (sa.select(sa.func.count()).select_from(j.join(a, a.c.id == j.c.assignment_id)
                                                         .join(i, i.c.id == a.c.item_id))
                 .where(i.c.campaign_id == campaign_id))
        with self.engine.connect() as conn:
            return int(conn.execute(q).scalar_one())
