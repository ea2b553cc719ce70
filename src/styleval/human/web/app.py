"""The FastAPI application: server-rendered Jinja2 pages, no build step.

Annotators reach only their own assignments, through ``/a/<token>/...`` (the token is the credential; only its
hash is stored). Admin pages need the admin token: the login form opens a server-side session (see
:mod:`.sessions`); scripts may send ``Authorization: Bearer <token>``. Every POST carries a CSRF token. A judgment
is committed before the redirect that acknowledges it; its time comes from a signed stamp bound to the item.
"""
from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from styleval.errors import InputError, StyleEvalError
from styleval.records import Direction

from ..analysis import dashboard as build_dashboard
from ..analysis.export import EXPORT_FORMATS, export_text, write_export
from ..campaigns import CampaignSpec, build_campaign
from ..protocols import PROTOCOLS, AnswerError, get_protocol, mask_style, parse_answers
from ..protocols.answers import moved_field, slot_label
from ..storage import Annotator, Store
from ..storage.schema import INT4_MAX
from . import security as sec
from .sessions import ADMIN_COOKIE, AdminAuth, LoginThrottle, TooManyAttempts

HERE = Path(__file__).parent
_SYSTEM_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_DIGITS = re.compile(r"[0-9]{1,10}")


@dataclass(frozen=True)
class Limits:
    """Request limits. ``upload_bytes`` bounds the admin's campaign upload; every other request (annotator and
    login forms) is bounded by ``form_bytes``. Both are enforced before the body is read."""

    upload_bytes: int = 20 * 2**20
    form_bytes: int = 64 * 2**10
    stamp_max_age_s: float = 86400.0
    session_ttl_s: float = 12 * 3600


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals.update(slot_label=slot_label, protocols=PROTOCOLS, moved_field=moved_field)
    env.filters["num"] = lambda v, d=2: "–" if v is None or v != v else f"{v:.{d}f}"
    return env


def path_int(raw: str) -> int:
    """A position or id from a URL: 1 .. 2^31-1 (what both databases can hold), else 404 (never an overflow)."""
    if not _DIGITS.fullmatch(raw) or not 1 <= int(raw) <= INT4_MAX:
        raise StarletteHTTPException(404, "No such page.")
    return int(raw)


def form_int(form: FormData, name: str, default: int) -> int:
    """A whole number from a form field (empty: ``default``); the range is checked by the campaign spec."""
    raw = str(form.get(name) or "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"[0-9]+", raw):
        raise InputError(f"{name} must be a whole number (got {raw[:20]!r})")
    if len(raw) > 9:
        raise InputError(f"{name} is too large (got {raw[:20]}{'...' if len(raw) > 20 else ''})")
    return int(raw)


class _App:
    """Handlers bound to one store, admin credential and export directory."""

    def __init__(self, store: Store, auth: AdminAuth, export_dir: Path, limits: Limits) -> None:
        self.store, self.auth, self.export_dir, self.limits = store, auth, export_dir, limits
        self.env = _environment()

    # ------------------------------------------------------------------ helpers
    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.update(request=request, csrf=sec.csrf_token(request, self.store.secret))
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=status)

    def error_page(self, status: int, message: str) -> bytes:
        return self.env.get_template("error.html").render(message=message, status=status).encode("utf-8")

    def annotator(self, token: str) -> Annotator:
        ann = self.store.annotator_by_token(token)
        if ann is None:
            raise StarletteHTTPException(404, "This link is not valid.")
        return ann

    def require_admin(self, request: Request) -> None:
        try:
            ok = self.auth.is_admin(request)
        except TooManyAttempts as exc:
            raise StarletteHTTPException(429, f"Too many wrong admin tokens from your address; wait "
                                              f"{exc.retry_after} s.",
                                         headers={"Retry-After": str(exc.retry_after)}) from None
        if not ok:
            raise StarletteHTTPException(401, "Admin login required.")

    def require_csrf(self, request: Request, form: FormData) -> None:
        if not sec.csrf_ok(request, self.store.secret, form.get("csrf")):
            raise StarletteHTTPException(403, "The form expired or came from another site; reload the page.")

    def body_limit(self, scope: Scope) -> int:
        if scope.get("method") == "POST" and scope.get("path") == "/admin/campaigns":
            return self.limits.upload_bytes
        return self.limits.form_bytes

    # ------------------------------------------------------------------ annotator pages
    def home(self, request: Request, token: str) -> HTMLResponse:
        ann = self.annotator(token)
        info = self.store.campaign(ann.campaign_id)
        done, total = self.store.progress(ann.id)
        protocol = get_protocol(info.protocol)
        return self.render(request, "annotator_home.html", token=token, annotator=ann, campaign=info,
                           protocol=protocol, examples=_examples(protocol, info), done=done, total=total,
                           next_position=self.store.next_position(ann.id))

    def guidelines(self, request: Request, token: str) -> HTMLResponse:
        ann = self.annotator(token)
        info = self.store.campaign(ann.campaign_id)
        protocol = get_protocol(info.protocol)
        return self.render(request, "guidelines.html", token=token, protocol=protocol,
                           examples=_examples(protocol, info), campaign=info)

    def next_item(self, token: str) -> RedirectResponse:
        ann = self.annotator(token)
        pos = self.store.next_position(ann.id)
        target = f"/a/{token}/done" if pos is None else f"/a/{token}/item/{pos}"
        return RedirectResponse(target, status_code=303)

    def done(self, request: Request, token: str) -> HTMLResponse:
        ann = self.annotator(token)
        done, total = self.store.progress(ann.id)
        return self.render(request, "done.html", token=token, done=done, total=total,
                           next_position=self.store.next_position(ann.id))

    def item_page(self, request: Request, token: str, position: int, *, error: str | None = None,
                  notice: str | None = None, form: FormData | None = None, status: int = 200) -> HTMLResponse:
        ann = self.annotator(token)
        view = self.store.assignment(ann.id, position)
        if view is None:
            raise StarletteHTTPException(404, "No such item.")
        info = self.store.campaign(ann.campaign_id)
        protocol = get_protocol(info.protocol)
        words = info.config.get("mask_words")
        masked = {"source": mask_style(view.source, words), "texts": [mask_style(x, words) for x in view.texts]}
        done, total = self.store.progress(ann.id)
        previous = {k: v for k, v in form.items() if isinstance(v, str)} if form is not None else {}
        stamp = sec.stamp(self.store.secret, view.assignment_id)
        if form is not None:  # shown again after a refused answer: the time still counts from the first showing
            try:
                sec.read_stamp(self.store.secret, form.get("shown"), view.assignment_id,
                               max_age_s=self.limits.stamp_max_age_s)
                stamp = str(form.get("shown"))
            except AnswerError:
                pass
        return self.render(request, "item.html", status=status, token=token, view=view, protocol=protocol,
                           masked=masked, stamp=stamp, error=error,
                           notice=notice, previous=previous, done=done, total=total,
                           next_position=self.store.next_position(ann.id))

    def submit_item(self, request: Request, token: str, position: int, form: FormData) -> Response:
        self.require_csrf(request, form)
        ann = self.annotator(token)
        view = self.store.assignment(ann.id, position)
        if view is None:
            raise StarletteHTTPException(404, "No such item.")
        protocol = get_protocol(self.store.campaign(ann.campaign_id).protocol)
        stored = view.answers
        if stored is None:
            try:
                answers = parse_answers(protocol, form, len(view.texts), require_moved=True)
                shown = sec.read_stamp(self.store.secret, form.get("shown"), view.assignment_id,
                                       max_age_s=self.limits.stamp_max_age_s)
            except AnswerError as exc:
                return self.item_page(request, token, position, error=str(exc), form=form, status=422)
            if not self.store.submit(view.assignment_id, answers, shown_at=shown):
                stored = self.store.stored_answers(view.assignment_id)  # a concurrent submission came first
                if stored != answers:
                    return self._changed(request, token, position)
        else:
            # resubmission (a retry after a lost response, the back button, a second tab): the first answer
            # stands; an identical one is acknowledged as before, a different one is reported, not dropped silently
            try:
                again = parse_answers(protocol, form, len(view.texts))
            except AnswerError:
                again = None
            if again != stored:
                return self._changed(request, token, position)
        # committed (or already there): only now acknowledge with the redirect
        if view.kind == "training":
            return RedirectResponse(f"/a/{token}/item/{position}", status_code=303)
        nxt = self.store.next_position(ann.id)
        return RedirectResponse(f"/a/{token}/done" if nxt is None else f"/a/{token}/item/{nxt}", status_code=303)

    def _changed(self, request: Request, token: str, position: int) -> HTMLResponse:
        return self.item_page(request, token, position, status=409, notice=(
            "You had already answered this item, and that first answer is kept: the different answer you just "
            "sent was NOT saved. Ask the organiser if the first answer was a mistake."))

    # ------------------------------------------------------------------ admin pages
    def admin_index(self, request: Request, message: str | None = None, status: int = 200) -> HTMLResponse:
        self.require_admin(request)
        return self.render(request, "admin_index.html", status=status, campaigns=self.store.campaigns(),
                           message=message)

    def create_campaign(self, request: Request, form: FormData, uploads: dict[str, Any]) -> HTMLResponse:
        from styleval.readers import read_parallel

        self.require_admin(request)
        self.require_csrf(request, form)
        shown_names: dict[str, str] = {}
        try:
            raw_annotators = str(form.get("annotators", "3")).strip()
            annotators: int | list[str] = form_int(form, "annotators", 3) if raw_annotators.isdigit() else [
                a for a in re.split(r"[,\s]+", raw_annotators) if a]
            spec = CampaignSpec(
                name=str(form.get("name", "")).strip(), protocol=str(form.get("protocol", "")),
                annotators=annotators, per_item=form_int(form, "per_item", 1),
                controls=form_int(form, "controls", 2), repeats=form_int(form, "repeats", 2),
                degraded=form_int(form, "degraded", 6))
            spec.validate()
            if uploads["sources"] is None or not uploads["outputs"]:
                raise AnswerError("upload the sources file and at least one system output file")
            direction = str(form.get("direction") or "").strip() or None
            with tempfile.TemporaryDirectory() as tmp:
                src_name, src_data = uploads["sources"]
                src = Path(tmp) / "sources.txt"
                src.write_bytes(src_data)
                shown_names[str(src)] = repr(src_name)
                records = []
                for i, (filename, data) in enumerate(uploads["outputs"]):
                    system = _SYSTEM_NAME.sub("_", Path(filename or f"system{i + 1}").stem)[:60] or f"system{i + 1}"
                    out = Path(tmp) / f"output-{i}.txt"
                    out.write_bytes(data)
                    shown_names[str(out)] = repr(filename)
                    records += read_parallel(out, src, system=system, direction=direction)
                shown_names[tmp] = "(upload)"
            created = self.store.create_campaign(build_campaign(spec, records))
        except (StyleEvalError, ValueError) as exc:
            message = str(exc)
            for path, name in sorted(shown_names.items(), key=lambda kv: -len(kv[0])):
                message = message.replace(path, name)  # never show the server's temporary paths
            return self.admin_index(request, message=f"Could not create the campaign: {message}", status=422)
        base = str(request.base_url).rstrip("/")
        links = {name: f"{base}/a/{tok}" for name, tok in created.tokens.items()}
        return self.render(request, "admin_created.html", campaign=self.store.campaign(created.id), links=links)

    def dashboard(self, request: Request, cid: int, message: str | None = None,
                  new_link: tuple[str, str] | None = None, status: int = 200) -> HTMLResponse:
        self.require_admin(request)
        try:
            data = build_dashboard(self.store, cid)
        except StyleEvalError:
            raise StarletteHTTPException(404, "No such campaign.") from None
        ids = {a.name: a.id for a in self.store.annotators(data.campaign.id)}
        return self.render(request, "dashboard.html", status=status, d=data, formats=EXPORT_FORMATS, message=message,
                           export_dir=str(self.export_dir), annotator_ids=ids, new_link=new_link)

    def download(self, request: Request, cid: int, fmt: str) -> Response:
        self.require_admin(request)
        if fmt not in EXPORT_FORMATS:
            raise StarletteHTTPException(404, "Unknown export format.")
        try:
            info = self.store.campaign(cid)
        except StyleEvalError:
            raise StarletteHTTPException(404, "No such campaign.") from None
        media = {"csv": "text/csv", "tsv": "text/tab-separated-values", "jsonl": "application/x-ndjson"}[fmt]
        return Response(export_text(self.store, info.id, fmt), media_type=media + "; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="campaign-{info.id}.{fmt}"'})

    def export_to_dir(self, request: Request, cid: int, form: FormData) -> HTMLResponse:
        self.require_admin(request)
        self.require_csrf(request, form)
        try:
            path = write_export(self.store, cid, self.export_dir, str(form.get("filename", "")))
        except StyleEvalError as exc:  # refused: the page says why, and the status says it was refused
            return self.dashboard(request, cid, message=f"Export refused: {exc}", status=422)
        return self.dashboard(request, cid, message=f"Exported to {path}")

    def revoke_link(self, request: Request, cid: int, aid: int, form: FormData) -> HTMLResponse:
        """A new link for one annotator; the old one stops working, their judgments stay."""
        self.require_admin(request)
        self.require_csrf(request, form)
        ann = next((a for a in self.store.annotators(cid) if a.id == aid), None)
        if ann is None:
            raise StarletteHTTPException(404, "No such annotator.")
        token = self.store.reset_token(ann.id)
        link = f"{str(request.base_url).rstrip('/')}/a/{token}"
        return self.dashboard(request, cid, new_link=(ann.name, link), message=(
            f"New link for {ann.name} (shown only now; the old link no longer works, their judgments are kept)."))

    # ------------------------------------------------------------------ login
    def login(self, request: Request, form: FormData) -> Response:
        self.require_csrf(request, form)
        response: Response
        try:
            ok = self.auth.token_matches(request, str(form.get("token", "")))
        except TooManyAttempts as exc:
            response = self.render(request, "admin_login.html", status=429, error=(
                f"Too many wrong admin tokens from your address: wait {exc.retry_after} s before the next try."))
            response.headers["Retry-After"] = str(exc.retry_after)
            return response
        if not ok:
            return self.render(request, "admin_login.html", status=401, error="Wrong admin token.")
        response = RedirectResponse("/admin", status_code=303)
        response.set_cookie(ADMIN_COOKIE, self.auth.open_session(), max_age=int(self.limits.session_ttl_s),
                            httponly=True, samesite="strict", path="/", secure=request.url.scheme == "https")
        return response

    def logout(self, request: Request, form: FormData) -> Response:
        self.require_csrf(request, form)
        self.auth.close_session(request)  # revoked on the server: a copied cookie is worthless from now on
        response = RedirectResponse("/admin/login", status_code=303)
        response.delete_cookie(ADMIN_COOKIE, path="/", httponly=True, samesite="strict",
                               secure=request.url.scheme == "https")
        return response


async def _uploads(form: FormData) -> dict[str, Any]:
    sources = form.get("sources")
    outputs = []
    for f in form.getlist("outputs"):
        if isinstance(f, UploadFile) and f.filename:
            outputs.append((f.filename, await f.read()))
    src = (sources.filename, await sources.read()) if isinstance(sources, UploadFile) and sources.filename else None
    return {"sources": src, "outputs": outputs}


def create_app(store: Store | str | Path, *, admin_token: str, export_dir: str | Path,
               limits: Limits | None = None, throttle: LoginThrottle | None = None,
               clock: Any = time.time) -> FastAPI:
    """The application for one database. ``admin_token`` (12 characters or more) guards admin pages; exports go
    under ``export_dir``. ``limits``, ``throttle`` and ``clock`` (for session expiry) are injectable."""
    if not admin_token or len(admin_token.strip()) < 12:
        raise InputError("the admin token must have at least 12 characters")
    limits = limits or Limits()
    store = store if isinstance(store, Store) else Store(store)
    auth = AdminAuth(store, admin_token.strip(), session_ttl_s=limits.session_ttl_s, throttle=throttle, clock=clock)
    h = _App(store, auth, Path(export_dir).resolve(), limits)
    app = FastAPI(title="styleval human evaluation", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.add_middleware(sec.GuardMiddleware, body_limit=h.body_limit, error_page=h.error_page)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 401 and request.method == "GET" and request.url.path.startswith("/admin"):
            return RedirectResponse("/admin/login", status_code=303)
        response = h.render(request, "error.html", status=exc.status_code, message=exc.detail)
        for key, value in (exc.headers or {}).items():
            response.headers[key] = value
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        return h.render(request, "error.html", status=422, message="The request is not valid.")

    @app.get("/", response_class=PlainTextResponse)
    def root() -> str:
        return "styleval human evaluation: open your annotator link, or /admin"

    @app.get("/a/{token}", response_class=HTMLResponse)
    def home(request: Request, token: str) -> HTMLResponse:
        return h.home(request, token)

    @app.get("/a/{token}/guidelines", response_class=HTMLResponse)
    def guidelines(request: Request, token: str) -> HTMLResponse:
        return h.guidelines(request, token)

    @app.get("/a/{token}/next")
    def next_item(token: str) -> Response:
        return h.next_item(token)

    @app.get("/a/{token}/done", response_class=HTMLResponse)
    def done(request: Request, token: str) -> HTMLResponse:
        return h.done(request, token)

    @app.get("/a/{token}/item/{position}", response_class=HTMLResponse)
    def item(request: Request, token: str, position: str) -> HTMLResponse:
        return h.item_page(request, token, path_int(position))

    @app.post("/a/{token}/item/{position}")
    async def submit(request: Request, token: str, position: str) -> Response:
        pos = path_int(position)
        form = await request.form()
        return await run_in_threadpool(h.submit_item, request, token, pos, form)

    @app.get("/admin/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return h.render(request, "admin_login.html", error=None)

    @app.post("/admin/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        return await run_in_threadpool(h.login, request, form)

    @app.post("/admin/logout")
    async def logout(request: Request) -> Response:
        form = await request.form()
        return await run_in_threadpool(h.logout, request, form)

    @app.get("/admin", response_class=HTMLResponse)
    def admin_index(request: Request) -> HTMLResponse:
        return h.admin_index(request)

    @app.post("/admin/campaigns", response_class=HTMLResponse)
    async def create(request: Request) -> HTMLResponse:
        await run_in_threadpool(h.require_admin, request)  # before a byte of the upload is read
        form = await request.form(max_files=200, max_part_size=h.limits.upload_bytes)
        uploads = await _uploads(form)
        return await run_in_threadpool(h.create_campaign, request, form, uploads)

    @app.get("/admin/campaigns/{cid}", response_class=HTMLResponse)
    def dash(request: Request, cid: str) -> HTMLResponse:
        return h.dashboard(request, path_int(cid))

    @app.get("/admin/campaigns/{cid}/export.{fmt}")
    def download(request: Request, cid: str, fmt: str) -> Response:
        return h.download(request, path_int(cid), fmt)

    @app.post("/admin/campaigns/{cid}/export", response_class=HTMLResponse)
    async def export(request: Request, cid: str) -> HTMLResponse:
        campaign = path_int(cid)
        form = await request.form()
        return await run_in_threadpool(h.export_to_dir, request, campaign, form)

    @app.post("/admin/campaigns/{cid}/annotators/{aid}/revoke-link", response_class=HTMLResponse)
    async def revoke(request: Request, cid: str, aid: str) -> HTMLResponse:
        campaign, annotator = path_int(cid), path_int(aid)
        form = await request.form()
        return await run_in_threadpool(h.revoke_link, request, campaign, annotator, form)

    return app


def _examples(protocol: Any, info: Any) -> tuple[Any, ...]:
    """The protocol's worked examples that suit the campaign's directions (its styles, in either order)."""
    styles: set[str] = set()
    for text in info.config.get("directions", []):
        try:
            direction = Direction.parse(text)
        except InputError:
            continue
        if direction is None:
            continue
        styles |= {direction.source_style.lower(), direction.target_style.lower()}
    return protocol.examples_for(styles)
