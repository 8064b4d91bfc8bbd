"""The `openai` answer backend: any server speaking the OpenAI chat completions API (llama.cpp's
`llama-server`, LM Studio, vLLM, ...), reached with httpx.

`--model openai:NAME` sends NAME as the model, to `$LOCALQA_OPENAI_BASE_URL/chat/completions`
(the API root, e.g. `http://127.0.0.1:8080/v1`), with `$LOCALQA_OPENAI_API_KEY` as the bearer
token when set. The answer schema goes in `response_format` as a strict `json_schema`. Like the
Ollama backend, this module only transports: faults of the server (not running, no such model,
too slow, a reply that is not the API's) become one `ModelError` naming the fix.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from localqa.errors import ModelError, UnknownModelError
from localqa.models.base import (
    AnswerModel,
    AnswerRequest,
    Availability,
    Backend,
    Completion,
    parse_options,
    timeout_seconds,
)

BASE_URL_ENV = "LOCALQA_OPENAI_BASE_URL"
API_KEY_ENV = "LOCALQA_OPENAI_API_KEY"
TIMEOUT_ENV = "LOCALQA_OPENAI_TIMEOUT"
DEFAULT_TIMEOUT = 120.0  # seconds; a local server may load the model on the first call
CONNECT_TIMEOUT = 10.0
SCHEMA_NAME = "quote_choice"
START_HINT = "start one, e.g. 'llama-server -m MODEL.gguf --port 8080'"


def resolve_base_url(url: str | None = None) -> str:
    """`url`, else $LOCALQA_OPENAI_BASE_URL: an http(s) URL, without a trailing slash."""
    raw = (url or os.environ.get(BASE_URL_ENV) or "").strip()
    if not raw:
        raise ModelError(
            f"the openai backend needs the server's API root in {BASE_URL_ENV} "
            f"(e.g. http://127.0.0.1:8080/v1); {START_HINT}"
        )
    try:
        split = urllib.parse.urlsplit(raw)
        split.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        raise ModelError(f"invalid {BASE_URL_ENV} {raw!r}: {exc}") from None
    if split.scheme not in ("http", "https") or not split.hostname:
        raise ModelError(
            f"invalid {BASE_URL_ENV} {raw!r}: write it as http://HOST:PORT/v1 (the API root of an "
            "OpenAI-compatible server)"
        )
    return raw.rstrip("/")


def resolve_timeout(timeout: float | None = None) -> float:
    """`timeout`, else $LOCALQA_OPENAI_TIMEOUT, else 120 s; a positive number of seconds."""
    return timeout_seconds(timeout, TIMEOUT_ENV, DEFAULT_TIMEOUT)


class OpenAIOptions(BaseModel):
    """Per-model options; unset ones come from the LOCALQA_OPENAI_* environment variables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    timeout: float | None = Field(default=None, gt=0)


class OpenAIModel(AnswerModel):
    backend = "openai"
    Options = OpenAIOptions

    def __init__(
        self, name: str, base_url: str | None = None, api_key: str | None = None, timeout: float | None = None
    ) -> None:
        self.name = name
        self.base_url = resolve_base_url(base_url)
        self.timeout = resolve_timeout(timeout)
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    def complete(self, request: AnswerRequest) -> Completion:
        settings = request.settings
        body = {
            "model": self.name,
            "messages": [dict(m) for m in request.messages],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": request.schema, "strict": True},
            },
            "temperature": settings.temperature,
            "seed": settings.seed,
            "max_tokens": request.max_tokens,
            "stream": False,
            # Token probabilities of the reply (a standard field; a server may omit them), for
            # the label confidence (Completion.from_usage).
            "logprobs": True,
        }
        try:
            response = httpx.post(
                f"{self.base_url}/chat/completions",
                json=body,
                headers=self._headers,
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT)),
            )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise ModelError(unreachable_message(self.base_url)) from None
        except httpx.TimeoutException:
            raise ModelError(
                f"the server at {self.base_url} did not answer within {self.timeout:g} s (model "
                f"{self.name}): allow longer with {TIMEOUT_ENV}=<seconds>, or use a smaller model"
            ) from None
        except httpx.HTTPError as exc:  # the connection broke mid-request, a bad URL, ...
            raise ModelError(
                f"the connection to the server at {self.base_url} failed: {exc or type(exc).__name__}"
            ) from None
        if response.status_code != 200:
            raise self._status_error(response)
        try:
            reply = response.json()
        except ValueError:
            raise self._malformed(f"not JSON: {response.text[:60]!r}") from None
        choice = _choice(reply)
        if choice is None:
            raise self._malformed("no choices[0].message.content")
        content, logprobs = choice
        # llama.cpp's llama-server also says how long reading the prompt and generating took.
        return Completion.from_usage(content, reply.get("usage"), logprobs, reply.get("timings"))

    def _malformed(self, what: str) -> ModelError:
        return ModelError(
            f"the server at {self.base_url} sent a malformed reply ({what}); is {BASE_URL_ENV} "
            "pointing at an OpenAI-compatible server?"
        )

    def _status_error(self, response: httpx.Response) -> ModelError:
        status, message = response.status_code, _error_message(response)
        if status in (401, 403):
            return ModelError(
                f"the server at {self.base_url} refused the request (HTTP {status}: {message}): set "
                f"{API_KEY_ENV} to its API key"
            )
        if status == 404 and "model" in message.lower():
            return ModelError(
                f"the server at {self.base_url} does not have model {self.name!r} ({message}): use a "
                f"model it serves (GET {self.base_url}/models lists them)"
            )
        if status == 404:
            return ModelError(
                f"the server at {self.base_url} answered 404 for /chat/completions ({message}); is "
                f"{BASE_URL_ENV} its API root (e.g. http://127.0.0.1:8080/v1)?"
            )
        return ModelError(
            f"the server at {self.base_url} failed (HTTP {status}) with model {self.name!r}: {message}"
        )


def unreachable_message(base_url: str) -> str:
    return f"cannot reach an OpenAI-compatible server at {base_url}: {START_HINT}, or fix {BASE_URL_ENV}"


def _choice(reply: object) -> tuple[str, object] | None:
    """choices[0]'s message text and its logprobs (None when the server sent none; checked by
    Completion.from_usage); None when there is no message text."""
    if not isinstance(reply, dict):
        return None
    try:
        choice = reply["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(content, str):
        return None
    return content, choice.get("logprobs") if isinstance(choice, dict) else None


def _error_message(response: httpx.Response) -> str:
    """The server's own one-line explanation: OpenAI's `{"error": {"message"}}`, a bare
    `{"error": ...}` or `{"detail": ...}`, else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    found: object = None
    if isinstance(body, dict):
        error = body.get("error", body.get("detail"))
        found = error.get("message", error) if isinstance(error, dict) else error
    text = json.dumps(found) if isinstance(found, dict | list) else str(found or response.text or "no detail")
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:199] + "…"


def server_answers(base_url: str, api_key: str | None = None, timeout: float = 0.5) -> bool:
    """True if GET {base_url}/models answers 200: a server is there. Only connection and HTTP
    errors mean "no server"."""
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
    try:
        response = httpx.get(
            f"{base_url}/models",
            headers={"Authorization": f"Bearer {key}"} if key else {},
            timeout=httpx.Timeout(timeout),
        )
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def _create(name: str | None, options: Mapping[str, Any]) -> OpenAIModel:
    chosen = parse_options(OpenAIModel, options)
    assert isinstance(chosen, OpenAIOptions)
    if not name:
        raise UnknownModelError(
            "the openai backend needs the model's name as the server knows it: --model openai:NAME"
        )
    return OpenAIModel(name, base_url=chosen.base_url, api_key=chosen.api_key, timeout=chosen.timeout)


def _check() -> Availability:
    if not os.environ.get(BASE_URL_ENV, "").strip():
        return Availability(
            False,
            f"an OpenAI-compatible server (openai:NAME): set {BASE_URL_ENV} to its API root, "
            "e.g. http://127.0.0.1:8080/v1",
        )
    try:
        url = resolve_base_url()
    except ModelError as error:
        return Availability(False, str(error), str(error))
    return Availability(
        server_answers(url),
        f"OpenAI-compatible server at {url} (openai:NAME)",
        unreachable_message(url),
    )


BACKEND = Backend(name="openai", create=_create, check=_check, takes_name=True)
