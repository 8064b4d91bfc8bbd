"""The JSON API under /api: the CLI's `--json` shapes (`localqa.shapes`) for search, ask and the
documents, and page images with a verified quote highlighted.

A body is JSON, sent as `application/json` (415 otherwise): any web page may send `text/plain` to
any address without a CORS preflight, but `application/json` only to an origin that allows it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localqa.conversation import Turn, turn_of
from localqa.display import show
from localqa.library import Library
from localqa.serve.conversations import MAX_TURNS, Conversations, rewritten
from localqa.serve.errors import HttpError
from localqa.serve.params import MAX_QUESTION_BYTES, AsOf, as_of_date, check_size
from localqa.serve.security import GATE, Visitor, Who
from localqa.serve.state import ConfigDep, ConversationsDep, LibraryDep, ModelsDep
from localqa.settings import ASK_K, SEARCH_K
from localqa.shapes import ask_json, document_json, search_json

MAX_BODY_BYTES = 64 * 1024
IMAGE_DPI = {"page": 110, "large": 200}

router = APIRouter(prefix="/api", dependencies=GATE)


class SearchQuery(BaseModel):
    """The body of POST /api/search (the CLI's arguments). Strict: each value has its JSON type
    (`"k": true` or `"k": "5"` is refused, not read as 1 or 5)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str
    as_of: str | None = None
    parts: list[str] = Field(default_factory=list)
    model: str | None = None
    k: int | None = Field(default=None, ge=SEARCH_K.least, le=SEARCH_K.most)
    documents: list[str] = Field(default_factory=list)  # file names, globs or series (`--doc`)


class AskQuery(SearchQuery):
    """The body of POST /api/ask: `k` is the passages the model sees, as `ask -k`. A follow-up
    gives the earlier questions (`turns`, oldest first: only questions, never answers, are taken
    from a client) or a `conversation` the server keeps ("new" starts one; the reply names its
    id), not both."""

    k: int | None = Field(default=None, ge=ASK_K.least, le=ASK_K.most)
    turns: list[str] = Field(default_factory=list, max_length=MAX_TURNS)
    conversation: str | None = Field(default=None, max_length=64)


Shape = TypeVar("Shape", bound=SearchQuery)


def json_body(shape: type[Shape]) -> Callable[[Request], Awaitable[Shape]]:
    """A dependency reading the body as `shape` (`json_body_of`), the question at most
    MAX_QUESTION_BYTES."""
    read_body = json_body_of(shape, example='{"question": "...", "as_of": "YYYY-MM-DD"}')

    async def read(request: Request) -> Shape:
        query = await read_body(request)
        check_size(query.question, *query.parts)
        return query

    return read


Body = TypeVar("Body", bound=BaseModel)


def json_body_of(
    shape: type[Body], example: str = '{"model": "localqa", "messages": [...]}'
) -> Callable[[Request], Awaitable[Body]]:
    """A dependency reading the body as `shape`: JSON only, at most MAX_BODY_BYTES; a body that is
    not `shape` is a 400 naming its first wrong field and an `example` of the right one."""

    async def read(request: Request) -> Body:
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            raise HttpError(415, "send the body as JSON, with 'Content-Type: application/json'")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise HttpError(413, f"the request body is over {MAX_BODY_BYTES // 1024} KB")
        try:
            return shape.model_validate_json(bytes(body))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise HttpError(400, f"{where}: {first['msg']}; send JSON like {example}") from None

    return read


@router.post("/search")
def search(
    query: Annotated[SearchQuery, Depends(json_body(SearchQuery))], who: Who, library: LibraryDep
) -> JSONResponse:
    as_of = as_of_date(query.as_of)
    results = library.search(
        query.question,
        as_of=as_of,
        caller=who.caller,
        parts=query.parts,
        k=query.k,
        documents=query.documents,
    )
    return JSONResponse(search_json(results, as_of, who.caller, query.documents))


@router.post("/ask")
def ask(
    query: Annotated[AskQuery, Depends(json_body(AskQuery))],
    who: Who,
    library: LibraryDep,
    models: ModelsDep,
    conversations: ConversationsDep,
) -> JSONResponse:
    as_of = as_of_date(query.as_of)
    model = models.get(query.model)
    earlier, key = _earlier(query, who, conversations, library)
    made = rewritten(query.question, earlier, who.caller, model, models.call, models.settings)
    results = library.search(
        made.standalone,
        as_of=as_of,
        caller=who.caller,
        parts=query.parts,
        k=query.k,
        settings=library.settings.for_answering(),
        documents=query.documents,
    )
    answers = [
        models.answer(library, result, model, as_of=as_of, caller=who.caller, documents=query.documents)
        for result in results
    ]
    payload = ask_json(results, answers, as_of, who.caller, (model.backend, model.name), query.documents)
    # A question asked alone is recorded as `ask --json` records it: no rewrite.
    payload["rewrite"] = made.record() if query.turns or key is not None else None
    if key is not None:
        conversations.add(key, who.user, turn_of(made, who.caller, answers), answers=tuple(answers))
        payload["conversation"] = key
    faults = sorted({a.reason for a in answers if a.model_failed and a.reason})
    if faults:
        payload["error"] = "; ".join(faults)
        return JSONResponse(payload, status_code=502)
    return JSONResponse(payload)


def _earlier(
    query: AskQuery, who: Visitor, conversations: Conversations, library: Library
) -> tuple[list[Turn], str | None]:
    """The turns a follow-up carries from, and the server-kept conversation it joins (None: none);
    a kept one's turns as the caller may see them now (`Conversations.recheck`)."""
    if query.turns and query.conversation:
        raise HttpError(400, "give the earlier turns or a conversation id, not both")
    check_size(*query.turns)
    if query.conversation is None:
        return [Turn(q, q, who.caller) for q in query.turns], None
    if query.conversation == "new":
        return [], conversations.start(who.user, who.caller)
    return conversations.recheck(query.conversation, who.user, who.caller, library).turns, query.conversation


@router.get("/documents")
def documents(who: Who, library: LibraryDep, as_of: AsOf) -> JSONResponse:
    listed = library.documents(as_of=as_of, caller=who.caller)
    return JSONResponse(
        {
            "as_of": as_of.isoformat(),
            "role": who.caller.role,
            "tenant": who.caller.tenant,
            "documents": [document_json(row) for row in listed],
        }
    )


@router.get("/pages/{source}/{number}.png")
def page_image(
    source: str,
    number: int,
    who: Who,
    library: LibraryDep,
    config: ConfigDep,
    as_of: AsOf,
    quote: str | None = None,
    size: str = "page",
) -> Response:
    """A hidden document and a missing one get the same 404 after the same work (see
    `Library.page`); the quote is looked at only on a page the caller may see."""
    if len((quote or "").encode("utf-8")) > MAX_QUESTION_BYTES:
        raise HttpError(413, f"the quote is over {MAX_QUESTION_BYTES} bytes")
    found = library.page(source, number, as_of=as_of, caller=who.caller)
    if quote is not None:
        found = show.quotable(found, quote)
    png = show.page_image(config.pdfs, found, quote, dpi=IMAGE_DPI.get(size, IMAGE_DPI["page"]))
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, no-store"})
