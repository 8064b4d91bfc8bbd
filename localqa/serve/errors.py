"""Every error a request can meet, as the CLI's one line: `{"error": ...}` under /api, an error
page elsewhere, with the status that fits."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException

from localqa.display import show
from localqa.errors import (
    IndexUnavailableError,
    LocalQAError,
    ModelError,
    PageNotFoundError,
    QuestionError,
    SuiteError,
    UnknownModelError,
)
from localqa.question.scope import UnknownDocumentError
from localqa.serve.conversations import UnknownConversationError
from localqa.serve.state import served


class HttpError(Exception):
    """An error with its HTTP status; the message is the CLI's one line, without 'Error: '."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def status_of(error: LocalQAError) -> int:
    """The HTTP status that fits a domain error."""
    if isinstance(error, PageNotFoundError | UnknownDocumentError | UnknownConversationError):
        return 404
    if isinstance(error, QuestionError | UnknownModelError):
        return 400
    if isinstance(error, show.QuoteNotShownError):
        return 422
    if isinstance(error, ModelError):
        return 502
    if isinstance(error, IndexUnavailableError):
        return 503
    if isinstance(error, SuiteError):
        return 422
    return 500


def error_response(request: Request, status: int, message: str, headers: dict[str, str]) -> Response:
    if request.url.path.startswith("/v1/"):  # the OpenAI API's error shape, which its clients show
        kind = "authentication_error" if status == 401 else "invalid_request_error"
        error = {"message": message, "type": kind, "code": status}
        return JSONResponse({"error": error}, status_code=status, headers=headers)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status, headers=headers)
    html = (
        served(request)
        .templates.get_template("error.html")
        .render(caller=None, nav=request.url.path, status=status, message=message)
    )
    return HTMLResponse(html, status_code=status, headers=headers)


async def _on_http_error(request: Request, error: HttpError) -> Response:
    return error_response(request, error.status, error.message, error.headers)


async def _on_domain_error(request: Request, error: LocalQAError) -> Response:
    return error_response(request, status_of(error), str(error), {})


async def _on_starlette_error(request: Request, error: HTTPException) -> Response:
    message = "not found" if error.status_code == 404 else str(error.detail)
    return error_response(request, error.status_code, message, {})


async def _on_invalid(request: Request, error: RequestValidationError) -> Response:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("path", "query", "body"))
    return error_response(request, 400, f"{where or 'request'}: {first.get('msg', 'invalid')}", {})


def install(app: FastAPI) -> None:
    app.exception_handler(HttpError)(_on_http_error)
    app.exception_handler(LocalQAError)(_on_domain_error)
    app.exception_handler(HTTPException)(_on_starlette_error)
    app.exception_handler(RequestValidationError)(_on_invalid)
