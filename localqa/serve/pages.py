"""The web pages: ask (streamed one part at a time as each is verified: chunked HTML, no
script), search, library, the operator's evaluation page, and the stylesheet."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from importlib import resources
from typing import Annotated, Any
from urllib.parse import quote as url_quote
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from jinja2 import Environment

from localqa.conversation import Rewrite, Turn, turn_of
from localqa.derived.computing import substituted
from localqa.display.printed import comparison_head, describe_value
from localqa.language.text import squash
from localqa.library import Library, ListedDocument
from localqa.serve.conversations import rewritten
from localqa.serve.errors import HttpError
from localqa.serve.params import AsOf, check_size
from localqa.serve.security import GATE, Visitor, Who
from localqa.serve.state import ConfigDep, ConversationsDep, LibraryDep, ModelsDep, TemplatesDep
from localqa.types import Answer, Candidate, Location, PartResult

router = APIRouter(dependencies=GATE)

# `?doc=NAME`, repeatable: the documents to search only (as `--doc`).
Documents = Annotated[tuple[str, ...], Query()]


def _page(templates: Environment, name: str, request: Request, who: Visitor, **context: Any) -> HTMLResponse:
    html = templates.get_template(name).render(
        caller=who.caller, operator=who.operator, nav=request.url.path, **context
    )
    return HTMLResponse(html)


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/ask")


@router.get("/ask", response_model=None)
def ask(
    request: Request,
    who: Who,
    as_of: AsOf,
    library: LibraryDep,
    models: ModelsDep,
    templates: TemplatesDep,
    conversations: ConversationsDep,
    question: str = "",
    model: str | None = None,
    doc: Documents = (),
    conversation: str = "",
    as_is: bool = False,
) -> Response:
    """The ask page: one conversation. Each question is a turn of it (a new one starts when none
    is named); a follow-up is rewritten and shown ("Understood as ..."), and that line can be
    edited and asked as it stands (`as_is`)."""
    chosen = model or models.default
    check_size(question, conversation, *doc)
    earlier: list[Turn] = []
    views: list[dict[str, Any]] = []
    if conversation:  # as the caller may see it now: a narrowed document's quotes are withheld
        kept = conversations.recheck(conversation, who.user, who.caller, library)
        earlier, views = kept.turns, kept.views
    form = {
        "question": "",
        "as_of": as_of.isoformat(),
        "model": chosen,
        "choices": models.choices(),
        "picker": _picker(library, as_of, who, doc),
        "conversation": conversation,
    }
    if not question.strip():
        return _page(templates, "ask.html", request, who, form=form, streaming=False, earlier=views)
    answer_model = models.get(chosen)
    if not conversation:
        conversation = form["conversation"] = conversations.start(who.user, who.caller)
    if as_is:
        made = Rewrite(question, question, "edited")
    else:
        made = rewritten(question, earlier, who.caller, answer_model, models.call, models.settings)
    results = library.search(
        made.standalone,
        as_of=as_of,
        caller=who.caller,
        settings=library.settings.for_answering(),
        documents=doc,
    )

    def stream() -> Iterator[str]:
        yield templates.get_template("ask.html").render(
            caller=who.caller,
            nav="/ask",
            operator=who.operator,
            form=form,
            streaming=True,
            earlier=views,
            turn=_turn_view(made, []),
            model=answer_model,
            parts=len(results),
            retriever=results[0].retriever if results else "none",
        )
        answers: list[Answer] = []
        shown: list[PartView] = []
        for number, result in enumerate(results, start=1):
            answer = models.answer(
                library, result, answer_model, as_of=as_of, caller=who.caller, documents=doc
            )
            answers.append(answer)
            part = _part_view(number, result, answer, as_of, len(results))
            shown.append(replace(part, candidates=[]))
            yield templates.get_template("part.html").render(part=part)
        turn = turn_of(made, who.caller, answers)
        conversations.add(conversation, who.user, turn, _turn_view(made, shown), tuple(answers))
        yield templates.get_template("ask_end.html").render(form=form)

    return StreamingResponse(stream(), media_type="text/html; charset=utf-8")


def _turn_view(made: Rewrite, parts: list[PartView]) -> dict[str, Any]:
    """What the page shows of a turn: what was typed, what it was understood as, its parts."""
    return {
        "question": made.question,
        "understood_as": made.standalone,
        "rewritten": made.rewritten,
        "parts": parts,
    }


@router.get("/search", response_model=None)
def search(
    request: Request,
    who: Who,
    as_of: AsOf,
    library: LibraryDep,
    templates: TemplatesDep,
    question: str = "",
    doc: Documents = (),
) -> Response:
    results: list[PartResult] = []
    if question.strip():
        check_size(question, *doc)
        results = library.search(question, as_of=as_of, caller=who.caller, documents=doc)
    return _page(
        templates,
        "search.html",
        request,
        who,
        question=question,
        as_of=as_of.isoformat(),
        picker=_picker(library, as_of, who, doc),
        results=[(r, [_candidate_view(c) for c in r.candidates]) for r in results],
    )


def _picker(library: Library, as_of: date, who: Visitor, chosen: Sequence[str]) -> dict[str, Any]:
    """The document picker of the ask and search pages: the documents in force for the caller
    on the date, and the names chosen (`?doc=NAME`, repeatable, as `--doc`)."""
    in_force = [row for row in library.documents(as_of=as_of, caller=who.caller) if row.in_force]
    return {"documents": [_picker_option(row) for row in in_force], "chosen": list(chosen)}


def _picker_option(row: ListedDocument) -> dict[str, str]:
    """A document as the picker offers it: its file name, and what it is called and covers."""
    document = row.document
    shown = [document.source, *([document.title] if document.title else [])]
    if row.shown_period:
        shown.append(row.shown_period)
    return {"source": document.source, "label": " · ".join(shown)}


@router.get("/library", response_model=None)
def library_page(
    request: Request, who: Who, as_of: AsOf, library: LibraryDep, templates: TemplatesDep
) -> Response:
    documents = library.documents(as_of=as_of, caller=who.caller)
    return _page(templates, "library.html", request, who, as_of=as_of.isoformat(), documents=documents)


@router.get("/evaluation", response_model=None)
def evaluation(
    request: Request,
    who: Who,
    config: ConfigDep,
    templates: TemplatesDep,
    run: str | None = None,
    before: str | None = None,
    after: str | None = None,
) -> Response:
    from localqa.serve import runs as saved

    if not who.operator:
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
    return _page(templates, "evaluation.html", request, who, **context)


_STATIC = resources.files("localqa.serve") / "static"


@router.get("/static/{name}")
def static(name: str) -> Response:
    """A file of the package's static folder, by its name only (behind the gate like the rest)."""
    files = {f.name: f for f in _STATIC.iterdir() if f.is_file()}
    if name not in files:
        raise HttpError(404, "not found")
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return Response(files[name].read_bytes(), media_type=media_type, headers={"Cache-Control": "no-cache"})


# --- what a part of the ask page shows ---------------------------------------------------------


@dataclass(frozen=True)
class PartView:
    number: int
    total: int
    question: str
    answer: Answer
    candidates: list[dict[str, Any]]
    note: str | None
    route: str | None = None  # why the part was searched mainly in some documents
    route_sources: tuple[str, ...] = ()  # the documents `route` names, re-checked in a kept turn
    reading: str | None = None  # how the part was read (`Reading.describe`)
    image: str | None = None
    large_image: str | None = None
    marked: tuple[str, str, str] | None = None  # a text source: (before, quote, after)
    other: list[str] = field(default_factory=list)
    value: str | None = None  # the answer's value in words (`printed.describe_value`)
    figure: str | None = None  # a derived value's expression written in its operands' values
    operands: list[dict[str, str]] = field(default_factory=list)  # their values, quotes, citations
    items: list[dict[str, str]] = field(default_factory=list)  # a list answer's items, quotes, citations
    rule: str | None = None  # a comparison's rule ("higher is better for ...")


def _part_view(number: int, result: PartResult, answer: Answer, as_of: date, total: int) -> PartView:
    view = PartView(
        number=number,
        total=total,
        question=result.question,
        answer=answer,
        candidates=[_candidate_view(c) for c in result.candidates],
        note=result.note,
        route=result.route.why if result.route else None,
        route_sources=tuple(result.route.sources) if result.route else (),
        reading=result.reading.describe() if result.reading else None,
        other=[location.describe() for location in answer.other_evidence],
        **_value_view(answer),
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


def _value_view(answer: Answer) -> dict[str, Any]:
    """What the part shows of its answer's value (the CLI's words: `localqa.display.printed`)."""
    value = answer.value
    if value is None:
        return {}
    if value.items is not None:
        head = f"{value.text}, counted from the items listed" if value.number is not None else None
        return {
            "value": head or f"{len(value.items)} item(s)",
            "items": [
                {"text": i.text, "quote": i.quote, "where": i.citation.describe()} for i in value.items
            ],
        }
    if value.comparison is not None:
        return {
            "value": comparison_head(value),
            "rule": value.comparison.rule,
            "operands": [
                {
                    "value": f"{figure.column}: {describe_value(o.value)}",
                    "quote": o.quote,
                    "where": o.citation.describe(),
                }
                for figure in value.comparison.figures
                for o in figure.operands or ()
            ],
        }
    if not value.derived:
        return {"value": describe_value(value)}
    return {
        "value": describe_value(value),
        "figure": substituted(value),
        "operands": [
            {"value": describe_value(o.value), "quote": o.quote, "where": o.citation.describe()}
            for o in value.operands or ()
        ],
    }


def page_url(location: Location, quote: str, as_of: date, size: str) -> str:
    query = urlencode({"quote": quote, "as_of": as_of.isoformat(), "size": size})
    return f"/api/pages/{url_quote(location.source, safe='')}/{location.page}.png?{query}"


def _candidate_view(candidate: Candidate) -> dict[str, Any]:
    return {
        "rank": candidate.rank,
        "score": f"{candidate.score:.2f}",
        "where": candidate.location.describe(),
        "text": candidate.text,
    }
