"""The web app and JSON API over one library: FastAPI, server-rendered Jinja2 pages, no script.

Rules this module keeps:

- the caller comes from the server's configuration (`auth`), never from a request's fields;
- every lookup filters by what that caller may see on the as-of date before anything is read
  (`localqa.retrieve`, `localqa.library`): a hidden page image answers 404 exactly like a missing one;
- every request reads through one `Library` (one open index, reopened when a refresh replaced it,
  so an `index` run while serving is picked up by the next request);
- one model call at a time (a lock: the model is the expensive, single-threaded part), any number
  of searches; each backend is constructed once and stays loaded;
- all document text reaches the page with controls and bidi overrides shown as escapes, then
  through Jinja2 autoescaping, and the pages carry a Content-Security-Policy that allows no script;
- the ask page streams one part at a time as each is verified (chunked HTML, no JavaScript).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi import Query as Parameter
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from localqa import show
from localqa.errors import (
    IndexMissingError,
    LocalQAError,
    ModelError,
    QuestionError,
    SuiteError,
    UnknownModelError,
)
from localqa.library import Library, ListedDocument, PageNotFoundError
from localqa.models import backends, default_spec, get_model
from localqa.models.base import AnswerModel
from localqa.scope import UnknownDocumentError
from localqa.serve.auth import User, authenticate
from localqa.settings import Settings
from localqa.shapes import ask_json, document_json, parse_as_of, search_json
from localqa.terminal import visible_in_page
from localqa.text import squash
from localqa.types import Answer, Caller, Candidate, Location, PartResult

MAX_QUESTION_BYTES = 4096
MAX_BODY_BYTES = 64 * 1024
IMAGE_DPI = {"page": 110, "large": 200}
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@dataclass(frozen=True)
class ServeConfig:
    db: Path
    pdfs: Path
    caller: Caller = field(default_factory=Caller)  # everyone's caller when there is no users file
    users: tuple[User, ...] | None = None
    runs: Path | None = None  # saved evaluation runs (operator view)
    model: str | None = None  # default backend; None: LOCALQA_MODEL, else chosen as `localqa models` does
    allowed_hosts: frozenset[str] | None = None  # Host headers served (a loopback server's own names)
    settings: Settings = field(default_factory=Settings)


class HttpError(Exception):
    """An error with its HTTP status; the message is the CLI's one line, without 'Error: '."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def status_of(error: LocalQAError) -> int:
    """The HTTP status that fits a domain error."""
    if isinstance(error, PageNotFoundError | UnknownDocumentError):
        return 404
    if isinstance(error, QuestionError | UnknownModelError):
        return 400
    if isinstance(error, show.QuoteNotShownError):
        return 422
    if isinstance(error, ModelError):
        return 502
    if isinstance(error, IndexMissingError):
        return 503
    if isinstance(error, SuiteError):
        return 422
    return 500


class Query(BaseModel):
    """The body of POST /api/ask and /api/search (the CLI's arguments)."""

    model_config = ConfigDict(extra="forbid")

    question: str
    as_of: str | None = None
    parts: list[str] = Field(default_factory=list)
    model: str | None = None
    k: int | None = Field(default=None, ge=1, le=100)
    documents: list[str] = Field(default_factory=list)  # file names, globs or series (`--doc`)


class Models:
    """Each backend constructed once and kept (the embedded model stays loaded), and one model
    call at a time."""

    def __init__(self, default: str | None, settings: Settings) -> None:
        # Chosen once, as `localqa models` chooses: --model, LOCALQA_MODEL, Ollama, embedded.
        self.default = default or _default_or_none()
        self.call = threading.Lock()
        self._made: dict[str, AnswerModel] = {}
        self._making = threading.Lock()
        self.listed = backends()
        self.settings = settings.answering

    def choices(self) -> list[str]:
        names = [b.name for b in self.listed if b.available]
        return names + ([self.default] if self.default and self.default not in names else [])

    def get(self, spec: str | None) -> AnswerModel:
        chosen = spec or self.default or default_spec()
        if chosen not in self.choices():
            raise UnknownModelError(
                f"unknown model {chosen!r}; choose one of {', '.join(self.choices())} (see 'localqa models')"
            )
        with self._making:
            if chosen not in self._made:
                self._made[chosen] = get_model(chosen)
            return self._made[chosen]

    def answer(self, library: Library, result: PartResult, model: AnswerModel) -> Answer:
        with self.call:
            return library.answer_part(result, model, self.settings)


def create_app(config: ServeConfig) -> FastAPI:
    app = FastAPI(title="localqa", docs_url=None, redoc_url=None, openapi_url=None)
    templates = Environment(
        loader=PackageLoader("localqa.serve", "templates"),
        autoescape=True,
        # Every printed string is data (document text, file names): controls and bidi overrides
        # are shown as escapes before HTML escaping, as the CLI shows them.
        finalize=lambda value: visible_in_page(value) if isinstance(value, str) else value,
    )
    models = Models(config.model, config.settings)
    library = Library(config.db, config.settings)
    answer_retrieval = config.settings.for_answering()  # a search returns retrieval.k candidates
    app.mount("/static", StaticFiles(packages=[("localqa.serve", "static")]), name="static")

    def page(name: str, request: Request, caller: Caller, **context: Any) -> HTMLResponse:
        return HTMLResponse(
            templates.get_template(name).render(caller=caller, nav=request.url.path, **context)
        )

    # --- who is asking ---------------------------------------------------------------------------

    def who(request: Request) -> tuple[Caller, bool]:
        """(caller, operator). The request decides nothing but which configured user it is."""
        if config.allowed_hosts is not None and request.headers.get("host", "") not in config.allowed_hosts:
            # A loopback server answers only to its own names (no DNS rebinding from a web page).
            raise HttpError(421, "this server answers only to its own address")
        if config.users is None:
            return config.caller, config.runs is not None
        user = authenticate(request.headers.get("authorization"), config.users)
        if user is None:
            raise HttpError(
                401,
                "sign in: send 'Authorization: Bearer TOKEN' with a token from the users file",
                {"WWW-Authenticate": 'Basic realm="localqa", charset="UTF-8"'},
            )
        return user.caller, user.operator

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        response.headers.update(_SECURITY_HEADERS)
        return response

    # --- errors: the CLI's one line, JSON under /api, a page elsewhere ----------------------------

    def error_response(request: Request, status: int, message: str, headers: dict[str, str]) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status, headers=headers)
        html = templates.get_template("error.html").render(
            caller=None, nav=request.url.path, status=status, message=message
        )
        return HTMLResponse(html, status_code=status, headers=headers)

    @app.exception_handler(HttpError)
    async def on_http_error(request: Request, error: HttpError) -> Response:
        return error_response(request, error.status, error.message, error.headers)

    @app.exception_handler(LocalQAError)
    async def on_domain_error(request: Request, error: LocalQAError) -> Response:
        return error_response(request, status_of(error), str(error), {})

    @app.exception_handler(HTTPException)
    async def on_starlette_error(request: Request, error: HTTPException) -> Response:
        message = "not found" if error.status_code == 404 else str(error.detail)
        return error_response(request, error.status_code, message, {})

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, error: RequestValidationError) -> Response:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("path", "query", "body"))
        return error_response(request, 400, f"{where or 'request'}: {first.get('msg', 'invalid')}", {})

    # --- JSON API --------------------------------------------------------------------------------

    @app.post("/api/search")
    async def api_search(request: Request) -> JSONResponse:
        caller, _ = who(request)
        query = await _query(request)
        as_of = _as_of(query.as_of)
        results = await run_in_threadpool(
            lambda: library.search(
                query.question,
                as_of=as_of,
                caller=caller,
                parts=query.parts,
                k=query.k,
                documents=query.documents,
            )
        )
        return JSONResponse(search_json(results, as_of, caller, query.documents))

    @app.post("/api/ask")
    async def api_ask(request: Request) -> JSONResponse:
        caller, _ = who(request)
        query = await _query(request)
        as_of = _as_of(query.as_of)
        model = await run_in_threadpool(models.get, query.model)
        results = await run_in_threadpool(_retrieve_for_answer, query, as_of, caller)
        answers = [await run_in_threadpool(models.answer, library, result, model) for result in results]
        payload = ask_json(results, answers, as_of, caller, (model.backend, model.name), query.documents)
        faults = sorted({a.reason for a in answers if a.model_failed and a.reason})
        if faults:
            payload["error"] = "; ".join(faults)
            return JSONResponse(payload, status_code=502)
        return JSONResponse(payload)

    def _retrieve_for_answer(query: Query, as_of: date, caller: Caller) -> list[PartResult]:
        return library.search(
            query.question,
            as_of=as_of,
            caller=caller,
            parts=query.parts,
            k=query.k,
            settings=answer_retrieval,
            documents=query.documents,
        )

    @app.get("/api/documents")
    def api_documents(request: Request, as_of: str | None = None) -> JSONResponse:
        caller, _ = who(request)
        day = _as_of(as_of)
        return JSONResponse(
            {
                "as_of": day.isoformat(),
                "role": caller.role,
                "tenant": caller.tenant,
                "documents": [document_json(row) for row in library.documents(as_of=day, caller=caller)],
            }
        )

    @app.get("/api/pages/{source}/{number}.png")
    def api_page(
        request: Request,
        source: str,
        number: int,
        quote: str | None = None,
        as_of: str | None = None,
        size: str = "page",
    ) -> Response:
        caller, _ = who(request)
        if len((quote or "").encode("utf-8")) > MAX_QUESTION_BYTES:
            raise HttpError(413, f"the quote is over {MAX_QUESTION_BYTES} bytes")
        found = library.page(source, number, as_of=_as_of(as_of), caller=caller)
        png = show.page_image(config.pdfs, found, quote, dpi=IMAGE_DPI.get(size, IMAGE_DPI["page"]))
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, no-store"})

    # --- pages -----------------------------------------------------------------------------------

    @app.get("/")
    def home() -> RedirectResponse:
        return RedirectResponse("/ask")

    def picker(day: date, caller: Caller, chosen: list[str]) -> dict[str, Any]:
        """The document picker of the ask and search pages: the documents in force for the
        caller on the day, and the names chosen."""
        in_force = [row for row in library.documents(as_of=day, caller=caller) if row.in_force]
        return {"documents": [_picker_option(row) for row in in_force], "chosen": chosen}

    @app.get("/ask", response_model=None)
    def ask_page(
        request: Request,
        question: str = "",
        as_of: str | None = None,
        model: str | None = None,
        doc: list[str] = Parameter(default=[]),  # noqa: B008 (FastAPI's way to read a repeated field)
    ) -> Response:
        caller, operator = who(request)
        day = _as_of(as_of)
        chosen = model or models.default
        form = {
            "question": question,
            "as_of": day.isoformat(),
            "model": chosen,
            "choices": models.choices(),
            "picker": picker(day, caller, doc),
        }
        if not question.strip():
            return page("ask.html", request, caller, operator=operator, form=form, streaming=False)
        _check_size(question, *doc)
        answer_model = models.get(chosen)
        results = library.search(question, as_of=day, caller=caller, settings=answer_retrieval, documents=doc)

        def stream() -> Iterator[str]:
            head = templates.get_template("ask.html")
            yield head.render(
                caller=caller,
                nav="/ask",
                operator=operator,
                form=form,
                streaming=True,
                model=answer_model,
                parts=len(results),
                retriever=results[0].retriever if results else "none",
            )
            for number, result in enumerate(results, start=1):
                answer = models.answer(library, result, answer_model)
                yield templates.get_template("part.html").render(
                    part=_part_view(number, result, answer, day, len(results))
                )
            yield templates.get_template("ask_end.html").render()

        return StreamingResponse(stream(), media_type="text/html; charset=utf-8")

    @app.get("/search", response_model=None)
    def search_page(
        request: Request,
        question: str = "",
        as_of: str | None = None,
        doc: list[str] = Parameter(default=[]),  # noqa: B008 (FastAPI's way to read a repeated field)
    ) -> Response:
        caller, operator = who(request)
        day = _as_of(as_of)
        results: list[PartResult] = []
        if question.strip():
            _check_size(question, *doc)
            results = library.search(question, as_of=day, caller=caller, documents=doc)
        return page(
            "search.html",
            request,
            caller,
            operator=operator,
            question=question,
            as_of=day.isoformat(),
            picker=picker(day, caller, doc),
            results=[(r, [_candidate_view(c) for c in r.candidates]) for r in results],
        )

    @app.get("/library", response_model=None)
    def library_page(request: Request, as_of: str | None = None) -> Response:
        caller, operator = who(request)
        day = _as_of(as_of)
        return page(
            "library.html",
            request,
            caller,
            operator=operator,
            as_of=day.isoformat(),
            documents=library.documents(as_of=day, caller=caller),
        )

    @app.get("/evaluation", response_model=None)
    def evaluation_page(
        request: Request, run: str | None = None, before: str | None = None, after: str | None = None
    ) -> Response:
        from localqa.serve import runs as saved

        caller, operator = who(request)
        if not operator:
            raise HttpError(404, "not found")
        folder = config.runs
        listed = saved.list_runs(folder) if folder else []
        context: dict[str, Any] = {
            "runs": listed,
            "folder": folder,
            "selected": run,
            "before": before,
            "after": after,
        }
        if folder and run:
            context["report"] = saved.report(folder, run, listed)
        if folder and before and after:
            context["comparison"] = saved.comparison(folder, before, after, listed)
        return page("evaluation.html", request, caller, operator=operator, **context)

    return app


# --- helpers ---------------------------------------------------------------------------------------


async def _query(request: Request) -> Query:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise HttpError(413, f"the request body is over {MAX_BODY_BYTES // 1024} KB")
    try:
        query = Query.model_validate_json(bytes(body))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise HttpError(
            400, f'{where}: {first["msg"]}; send JSON like {{"question": "...", "as_of": "YYYY-MM-DD"}}'
        ) from None
    _check_size(query.question, *query.parts)
    return query


def _check_size(*texts: str) -> None:
    if sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) > MAX_QUESTION_BYTES:
        raise HttpError(413, f"the question is over {MAX_QUESTION_BYTES // 1024} KB; ask something shorter")


def _as_of(value: str | None) -> date:
    """The CLI's rule for --as-of: YYYY-MM-DD, default today."""
    try:
        return parse_as_of(value)
    except ValueError as error:
        raise HttpError(400, f"as_of: {error}") from None


def _default_or_none() -> str | None:
    try:
        return default_spec()
    except LocalQAError:
        return None


@dataclass(frozen=True)
class PartView:
    number: int
    total: int
    question: str
    answer: Answer
    candidates: list[dict[str, Any]]
    note: str | None
    route: str | None = None  # why the part was searched mainly in some documents
    image: str | None = None
    large_image: str | None = None
    marked: tuple[str, str, str] | None = None  # a text source: (before, quote, after)
    other: list[str] = field(default_factory=list)


def _part_view(number: int, result: PartResult, answer: Answer, as_of: date, total: int) -> PartView:
    view = PartView(
        number=number,
        total=total,
        question=result.question,
        answer=answer,
        candidates=[_candidate_view(c) for c in result.candidates],
        note=result.note,
        route=result.route.why if result.route else None,
        other=[location.describe() for location in answer.other_evidence],
    )
    citation = answer.citation
    if not answer.verified or citation is None or answer.quote is None:
        return view
    if citation.page is None:
        text = next((squash(c.text) for c in result.candidates if c.location == citation), "")
        start = text.find(answer.quote)
        if start < 0:
            return view
        return replace(view, marked=(text[:start], answer.quote, text[start + len(answer.quote) :]))
    return replace(
        view,
        image=page_url(citation, answer.quote, as_of, "page"),
        large_image=page_url(citation, answer.quote, as_of, "large"),
    )


def page_url(location: Location, quote: str, as_of: date, size: str) -> str:
    query = urlencode({"quote": quote, "as_of": as_of.isoformat(), "size": size})
    return f"/api/pages/{url_quote(location.source, safe='')}/{location.page}.png?{query}"


def _picker_option(row: ListedDocument) -> dict[str, str]:
    """A document as the picker offers it: its file name, and what it is called and covers."""
    document = row.document
    shown = [document.source, *([document.title] if document.title else [])]
    if row.shown_period:
        shown.append(row.shown_period)
    return {"source": document.source, "label": " · ".join(shown)}


def _candidate_view(candidate: Candidate) -> dict[str, Any]:
    return {
        "rank": candidate.rank,
        "score": f"{candidate.score:.2f}",
        "where": candidate.location.describe(),
        "text": candidate.text,
    }
