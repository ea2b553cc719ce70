"""The FastAPI application: server-rendered Jinja2 pages, no build step.

Annotators reach only their own assignments, through ``/a/<token>/...`` (the token is the credential; only its
hash is stored). Admin pages need the admin token (a login form sets a session cookie; scripts may send
``Authorization: Bearer <token>``). Every POST carries a CSRF token. A judgment is committed before the
redirect that acknowledges it.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from styleval.errors import StyleEvalError

from ..analysis import dashboard as build_dashboard
from ..analysis.export import EXPORT_FORMATS, export_text, write_export
from ..campaigns import CampaignSpec, build_campaign
from ..protocols import PROTOCOLS, AnswerError, get_protocol, mask_style, parse_answers
from ..protocols.answers import slot_label
from ..storage import Annotator, Store
from . import security as sec

HERE = Path(__file__).parent
_SYSTEM_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.globals.update(slot_label=slot_label, protocols=PROTOCOLS)
    env.filters["num"] = lambda v, d=2: "–" if v is None or v != v else f"{v:.{d}f}"
    return env


class _App:
    """Handlers bound to one store, admin token and export directory."""

    def __init__(self, store: Store, admin_token: str, export_dir: Path) -> None:
        self.store, self.admin_token, self.export_dir = store, admin_token, export_dir
        self.env = _environment()

    # ------------------------------------------------------------------ helpers
    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.update(request=request, csrf=sec.csrf_token(request, self.store.secret))
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=status)

    def annotator(self, token: str) -> Annotator:
        ann = self.store.annotator_by_token(token)
        if ann is None:
            raise StarletteHTTPException(404, "This link is not valid.")
        return ann

    def require_admin(self, request: Request) -> None:
        if not sec.is_admin(request, self.store.secret, self.admin_token):
            raise StarletteHTTPException(401, "Admin login required.")

    def require_csrf(self, request: Request, form: FormData) -> None:
        if not sec.csrf_ok(request, self.store.secret, form.get("csrf")):
            raise StarletteHTTPException(403, "The form expired or came from another site; reload the page.")

    # ------------------------------------------------------------------ annotator pages
    def home(self, request: Request, token: str) -> HTMLResponse:
        ann = self.annotator(token)
        info = self.store.campaign(ann.campaign_id)
        done, total = self.store.progress(ann.id)
        return self.render(request, "annotator_home.html", token=token, annotator=ann, campaign=info,
                           protocol=get_protocol(info.protocol), done=done, total=total,
                           next_position=self.store.next_position(ann.id))

    def guidelines(self, request: Request, token: str) -> HTMLResponse:
        ann = self.annotator(token)
        info = self.store.campaign(ann.campaign_id)
        return self.render(request, "guidelines.html", token=token, protocol=get_protocol(info.protocol),
                           campaign=info)

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
                  form: FormData | None = None, status: int = 200) -> HTMLResponse:
        ann = self.annotator(token)
        view = self.store.assignment(ann.id, position)
        if view is None:
            raise StarletteHTTPException(404, "No such item.")
        info = self.store.campaign(ann.campaign_id)
        protocol = get_protocol(info.protocol)
        words = info.config.get("mask_words")
        masked = {"source": mask_style(view.source, words), "texts": [mask_style(x, words) for x in view.texts]}
        done, total = self.store.progress(ann.id)
        return self.render(request, "item.html", status=status, token=token, view=view, protocol=protocol,
                           masked=masked, stamp=sec.stamp(self.store.secret), error=error,
                           previous=dict(form) if form is not None else {}, done=done, total=total,
                           next_position=self.store.next_position(ann.id))

    def submit_item(self, request: Request, token: str, position: int, form: FormData) -> Response:
        self.require_csrf(request, form)
        ann = self.annotator(token)
        view = self.store.assignment(ann.id, position)
        if view is None:
            raise StarletteHTTPException(404, "No such item.")
        if view.answers is None:
            protocol = get_protocol(self.store.campaign(ann.campaign_id).protocol)
            try:
                answers = parse_answers(protocol, form, len(view.texts))
            except AnswerError as exc:
                return self.item_page(request, token, position, error=str(exc), form=form, status=422)
            self.store.submit(view.assignment_id, answers, shown_at=sec.read_stamp(self.store.secret,
                                                                                   form.get("shown")))
        # committed (or already there): only now acknowledge with the redirect
        if view.kind == "training":
            return RedirectResponse(f"/a/{token}/item/{position}", status_code=303)
        nxt = self.store.next_position(ann.id)
        return RedirectResponse(f"/a/{token}/done" if nxt is None else f"/a/{token}/item/{nxt}", status_code=303)

    # ------------------------------------------------------------------ admin pages
    def admin_index(self, request: Request, message: str | None = None, status: int = 200) -> HTMLResponse:
        self.require_admin(request)
        return self.render(request, "admin_index.html", status=status, campaigns=self.store.campaigns(),
                           message=message)

    def create_campaign(self, request: Request, form: FormData, uploads: dict[str, Any]) -> HTMLResponse:
        from styleval.readers import read_parallel

        self.require_admin(request)
        self.require_csrf(request, form)
        try:
            annotators: int | list[str] = str(form.get("annotators", "3")).strip()
            annotators = int(annotators) if annotators.isdigit() else [
                a for a in re.split(r"[,\s]+", annotators) if a]
            spec = CampaignSpec(
                name=str(form.get("name", "")).strip(), protocol=str(form.get("protocol", "")),
                annotators=annotators, per_item=int(form.get("per_item") or 1),
                controls=int(form.get("controls") or 2), repeats=int(form.get("repeats") or 2),
                degraded=int(form.get("degraded") or 6))
            if not spec.name:
                raise AnswerError("give the campaign a name")
            if uploads["sources"] is None or not uploads["outputs"]:
                raise AnswerError("upload the sources file and at least one system output file")
            direction = str(form.get("direction") or "").strip() or None
            with tempfile.TemporaryDirectory() as tmp:
                src = Path(tmp) / "sources.txt"
                src.write_bytes(uploads["sources"])
                records = []
                for i, (filename, data) in enumerate(uploads["outputs"]):
                    system = _SYSTEM_NAME.sub("_", Path(filename or f"system{i + 1}").stem)[:60] or f"system{i + 1}"
                    out = Path(tmp) / f"output-{i}.txt"
                    out.write_bytes(data)
                    records += read_parallel(out, src, system=system, direction=direction)
            created = self.store.create_campaign(build_campaign(spec, records))
        except (StyleEvalError, ValueError) as exc:
            return self.admin_index(request, message=f"Could not create the campaign: {exc}", status=422)
        base = str(request.base_url).rstrip("/")
        links = {name: f"{base}/a/{tok}" for name, tok in created.tokens.items()}
        return self.render(request, "admin_created.html", campaign=self.store.campaign(created.id), links=links)

    def dashboard(self, request: Request, cid: int, message: str | None = None) -> HTMLResponse:
        self.require_admin(request)
        try:
            data = build_dashboard(self.store, cid)
        except StyleEvalError:
            raise StarletteHTTPException(404, "No such campaign.") from None
        return self.render(request, "dashboard.html", d=data, formats=EXPORT_FORMATS, message=message,
                           export_dir=str(self.export_dir))

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
            message = f"Exported to {path}"
        except StyleEvalError as exc:
            message = f"Export refused: {exc}"
        return self.dashboard(request, cid, message=message)


async def _uploads(form: FormData) -> dict[str, Any]:
    sources = form.get("sources")
    outputs = []
    for f in form.getlist("outputs"):
        if isinstance(f, UploadFile) and f.filename:
            outputs.append((f.filename, await f.read()))
    return {"sources": await sources.read() if isinstance(sources, UploadFile) and sources.filename else None,
            "outputs": outputs}


def create_app(store: Store | str | Path, *, admin_token: str, export_dir: str | Path) -> FastAPI:
    """The application for one database. ``admin_token`` guards admin pages; exports go under ``export_dir``."""
    if not admin_token or len(admin_token) < 12:
        raise ValueError("the admin token must have at least 12 characters")
    store = store if isinstance(store, Store) else Store(store)
    h = _App(store, admin_token, Path(export_dir).resolve())
    app = FastAPI(title="styleval human evaluation", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.add_middleware(sec.SecurityMiddleware)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 401 and request.method == "GET" and request.url.path.startswith("/admin"):
            return RedirectResponse("/admin/login", status_code=303)
        return h.render(request, "error.html", status=exc.status_code, message=exc.detail)

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
    def item(request: Request, token: str, position: int) -> HTMLResponse:
        return h.item_page(request, token, position)

    @app.post("/a/{token}/item/{position}")
    async def submit(request: Request, token: str, position: int) -> Response:
        form = await request.form()
        return await run_in_threadpool(h.submit_item, request, token, position, form)

    @app.get("/admin/login", response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return h.render(request, "admin_login.html", error=None)

    @app.post("/admin/login")
    async def login(request: Request) -> Response:
        form = await request.form()
        h.require_csrf(request, form)
        if not sec.check_admin_token(str(form.get("token", "")), admin_token):
            return h.render(request, "admin_login.html", status=401, error="Wrong admin token.")
        response = RedirectResponse("/admin", status_code=303)
        response.set_cookie(sec.ADMIN_COOKIE, sec.admin_session_value(store.secret, admin_token), httponly=True,
                            samesite="strict", path="/")
        return response

    @app.post("/admin/logout")
    async def logout(request: Request) -> Response:
        h.require_csrf(request, await request.form())
        response = RedirectResponse("/admin/login", status_code=303)
        response.delete_cookie(sec.ADMIN_COOKIE, path="/")
        return response

    @app.get("/admin", response_class=HTMLResponse)
    def admin_index(request: Request) -> HTMLResponse:
        return h.admin_index(request)

    @app.post("/admin/campaigns", response_class=HTMLResponse)
    async def create(request: Request) -> HTMLResponse:
        h.require_admin(request)
        form = await request.form(max_files=200)
        uploads = await _uploads(form)
        return await run_in_threadpool(h.create_campaign, request, form, uploads)

    @app.get("/admin/campaigns/{cid}", response_class=HTMLResponse)
    def dash(request: Request, cid: int) -> HTMLResponse:
        return h.dashboard(request, cid)

    @app.get("/admin/campaigns/{cid}/export.{fmt}")
    def download(request: Request, cid: int, fmt: str) -> Response:
        return h.download(request, cid, fmt)

    @app.post("/admin/campaigns/{cid}/export", response_class=HTMLResponse)
    async def export(request: Request, cid: int) -> HTMLResponse:
        form = await request.form()
        return await run_in_threadpool(h.export_to_dir, request, cid, form)

    return app
