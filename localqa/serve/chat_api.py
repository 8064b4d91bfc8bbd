"""The OpenAI chat API on `localqa serve`, for chat front ends (Open WebUI's "OpenAI API
connection", LibreChat, any client of the official `openai` package): `GET /v1/models` and `POST
/v1/chat/completions`, streamed as server-sent events or not.

- **The question** is the last user message; the earlier user messages are the conversation, and
  a follow-up is rewritten and checked as `localqa chat` does ("Understood as: ..."). Only the
  questions are taken from the client: an assistant message it sends may say anything, so no
  earlier answer is carried from it.
- **The reply's content** is the answer as a reader wants it (`localqa.display.reply`): each part
  read, its value, quote and citation, or "No quote verified" and the reason. The same answer's
  JSON (`ask --json`'s shape, with the rewrite) rides in the extension field `localqa`, in the
  completion and in the last chunk of a stream.
- **The model** the client names selects a backend localqa has: `localqa` (the server's default)
  or `localqa-<backend>` (`localqa-extractive`, `localqa-embedded`, ...). Any other name is a 404.
  Every error under /v1 is one line in the OpenAI API's error shape (`{"error": {"message",
  "type", "code"}}`), which its clients show their users.
- **Who asks** comes from the users file, as for `/api` (the token the client sends as its API
  key); nothing in the body names a role or a tenant.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from localqa.conversation import Turn, rewrite
from localqa.display.reply import reply_text
from localqa.errors import UnknownModelError
from localqa.models.base import AnswerModel
from localqa.serve.api import json_body_of
from localqa.serve.conversations import rewritten
from localqa.serve.errors import HttpError
from localqa.serve.params import as_of_date, check_size
from localqa.serve.security import GATE, Who
from localqa.serve.state import LibraryDep, Models, ModelsDep
from localqa.shapes import ask_json
from localqa.types import Caller

router = APIRouter(prefix="/v1", dependencies=GATE)

PREFIX = "localqa"
# At most this many messages in one request: a conversation is bounded as the server's own are.
MAX_MESSAGES = 40


class TextPart(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["text"]
    text: str


class Message(BaseModel):
    """One message as the OpenAI chat API sends it; its content a string or text parts."""

    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "\n".join(part.text for part in self.content)
        return self.content or ""


class Completion(BaseModel):
    """The body of POST /v1/chat/completions: the fields localqa reads (others a client sends,
    temperature and the like, are ignored: nothing is sampled)."""

    model_config = ConfigDict(extra="ignore")

    model: str
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False


def backend_of(name: str, models: Models) -> AnswerModel:
    """The backend a model name selects: `localqa` the default, `localqa-NAME` that backend."""
    unknown = HttpError(404, f"unknown model {name!r}; GET /v1/models lists the models this server has")
    if name == PREFIX:
        return models.get(None)
    if not name.startswith(f"{PREFIX}-"):
        raise unknown
    try:
        return models.get(name.removeprefix(f"{PREFIX}-"))
    except UnknownModelError:
        raise unknown from None


@router.get("/models")
def list_models(models: ModelsDep) -> JSONResponse:
    names = [PREFIX, *(f"{PREFIX}-{choice}" for choice in models.choices())]
    listed = [
        {"id": name, "object": "model", "created": 0, "owned_by": "localqa"} for name in dict.fromkeys(names)
    ]
    return JSONResponse({"object": "list", "data": listed})


@router.post("/chat/completions", response_model=None)
def chat_completions(
    query: Annotated[Completion, Depends(json_body_of(Completion))],
    who: Who,
    library: LibraryDep,
    models: ModelsDep,
) -> Response:
    model = backend_of(query.model, models)
    questions = [m.text() for m in query.messages if m.role == "user"]
    if not questions or not questions[-1].strip():
        raise HttpError(400, "messages: the last user message is the question, and there is none")
    check_size(questions[-1])
    earlier = _turns(questions[:-1], who.caller)
    made = rewritten(questions[-1], earlier, who.caller, model, models.call, models.settings)
    as_of = as_of_date(None)
    results = library.search(
        made.standalone, as_of=as_of, caller=who.caller, settings=library.settings.for_answering()
    )
    answers = [models.answer(library, result, model, as_of=as_of, caller=who.caller) for result in results]
    payload = ask_json(results, answers, as_of, who.caller, (model.backend, model.name))
    payload["rewrite"] = made.record() if earlier else None
    understood = made.standalone if made.rewritten else None
    content = reply_text(results, answers, understood)
    name = query.model
    if query.stream:
        return StreamingResponse(_chunks(name, content, payload), media_type="text/event-stream")
    return JSONResponse(
        {
            "id": _id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": name,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            PREFIX: payload,
        }
    )


def _turns(questions: list[str], caller: Caller) -> list[Turn]:
    """The earlier questions as the turns a follow-up carries from, each made standalone by the
    rules from the one before it (no model call for what was already asked)."""
    turns: list[Turn] = []
    for question in questions:
        check_size(question)
        turns.append(Turn(question, rewrite(question, turns, caller).standalone, caller))
    return turns


def _chunks(name: str, content: str, payload: dict[str, Any]) -> Iterator[str]:
    """The reply as server-sent events: the role, the content a paragraph at a time, then the
    end with the answer's JSON, then `[DONE]`."""
    ident, created = _id(), int(time.time())

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        chunk = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": name,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant"})
    pieces = content.split("\n\n")
    for number, piece in enumerate(pieces):
        yield event({"content": piece + ("\n\n" if number < len(pieces) - 1 else "")})
    yield event({}, "stop", **{PREFIX: payload})
    yield "data: [DONE]\n\n"


def _id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"
