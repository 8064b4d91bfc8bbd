"""The `ollama` answer backend: a local Ollama server, reached with the `ollama` Python client.

The reply is constrained by Ollama's `format=` (a JSON schema). This module only transports: it
returns the raw reply text, and `localqa.answers.answering` parses and verifies it. Faults of the server (not
running, model not pulled, too slow, not speaking Ollama's API) become `ModelError`s whose message
names the fix.
"""

from __future__ import annotations

import ipaddress
import json
import os
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import httpx
import pydantic
from pydantic import BaseModel, ConfigDict, Field

from localqa.errors import ModelError
from localqa.models.base import (
    AnswerModel,
    AnswerRequest,
    Availability,
    Backend,
    Completion,
    label_confidence,
    parse_options,
    timeout_seconds,
)


def _import_ollama() -> Any:
    # `import ollama` builds a module-level client that parses OLLAMA_HOST at import time and
    # raises on a malformed value; localqa always passes host= itself and reports bad values
    # with the fix, so the package is imported without it.
    saved = os.environ.pop("OLLAMA_HOST", None)
    try:
        import ollama as package
    finally:
        if saved is not None:
            os.environ["OLLAMA_HOST"] = saved
    return package


if TYPE_CHECKING:
    import ollama
else:
    ollama = _import_ollama()

DEFAULT_MODEL = "qwen2.5:1.5b"
DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_TIMEOUT = 120.0  # seconds; the first call may load the model into memory
TIMEOUT_ENV = "LOCALQA_OLLAMA_TIMEOUT"
HOST_ENV = "OLLAMA_HOST"
# Connecting to a running server is immediate; do not wait the whole read timeout for it.
CONNECT_TIMEOUT = 10.0


def normalize_host(host: str | None) -> str:
    """The base URL the `ollama` client uses for `host` (as OLLAMA_HOST accepts it).

    Mirrors the client's own rules: scheme defaults to http, port to 11434 (80/443 when a scheme
    is given), host to 127.0.0.1; IPv6 literals keep their brackets; a path is kept.
    """
    host, port = (host or "").strip(), 11434
    scheme, _, hostport = host.partition("://")
    if not hostport:
        scheme, hostport = "http", host
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    try:
        split = urllib.parse.urlsplit(f"{scheme}://{hostport}")
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise ModelError(f"invalid Ollama host {host!r} ({HOST_ENV}): {exc}") from None
    name = split.hostname or "127.0.0.1"
    try:
        if isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address):
            name = f"[{name}]"
    except ValueError:
        pass
    try:
        port = split.port or port
    except ValueError as exc:  # e.g. "host:notaport"
        raise ModelError(f"invalid Ollama host {host!r} ({HOST_ENV}): {exc}") from None
    if path := split.path.strip("/"):
        return f"{scheme}://{name}:{port}/{path}"
    return f"{scheme}://{name}:{port}"


def resolve_host(host: str | None = None) -> str:
    """`host`, else $OLLAMA_HOST, else the default, as a base URL."""
    return normalize_host(host or os.environ.get(HOST_ENV) or DEFAULT_HOST)


def resolve_timeout(timeout: float | None = None) -> float:
    """`timeout`, else $LOCALQA_OLLAMA_TIMEOUT, else 120 s; it must be a positive number."""
    return timeout_seconds(timeout, TIMEOUT_ENV, DEFAULT_TIMEOUT)


def _timeouts(seconds: float) -> httpx.Timeout:
    return httpx.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT))


def unreachable_message(host: str) -> str:
    return f"cannot reach Ollama at {host}: start it with 'ollama serve', or use --model embedded"


def server_answers(host: str | None = None, timeout: float = 0.5) -> bool:
    """True if an Ollama server answers at `host` (else $OLLAMA_HOST, else the default).

    Cheap (one GET /api/tags) and bounded by `timeout` per connect/read. Only what means "no
    Ollama server here" is False: nothing listening, a timeout, an HTTP error, or a server that
    does not speak Ollama's API. A malformed host is a ModelError naming OLLAMA_HOST, and any
    other exception (a bug) propagates rather than silently changing the default backend.
    """
    url = resolve_host(host)
    try:
        client = ollama.Client(host=url, timeout=httpx.Timeout(timeout))
    except (httpx.InvalidURL, ValueError) as exc:
        raise ModelError(f"invalid Ollama host {url!r} ({HOST_ENV}): {exc}") from None
    try:
        client.list()
    except (httpx.HTTPError, ollama.ResponseError, OSError, json.JSONDecodeError, pydantic.ValidationError):
        return False
    finally:
        client.close()  # type: ignore[no-untyped-call]
    return True


class OllamaOptions(BaseModel):
    """Per-model options; unset ones come from OLLAMA_HOST and LOCALQA_OLLAMA_TIMEOUT."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str | None = None
    timeout: float | None = Field(default=None, gt=0)


class OllamaModel(AnswerModel):
    backend = "ollama"
    Options = OllamaOptions

    def __init__(
        self, name: str = DEFAULT_MODEL, host: str | None = None, timeout: float | None = None
    ) -> None:
        self.name = name
        self.host = resolve_host(host)
        self.timeout = resolve_timeout(timeout)
        try:
            self._client = ollama.Client(host=self.host, timeout=_timeouts(self.timeout))
        except (httpx.InvalidURL, ValueError) as exc:
            raise ModelError(f"invalid Ollama host {self.host!r} ({HOST_ENV}): {exc}") from None

    def complete(self, request: AnswerRequest) -> Completion:
        settings = request.settings
        try:
            response = self._client.chat(
                model=self.name,
                messages=list(request.messages),
                format=request.schema,
                options={
                    "temperature": settings.temperature,
                    "top_k": settings.top_k,
                    "seed": settings.seed,
                    "num_ctx": settings.context_tokens,
                    "num_predict": request.max_tokens,
                },
                stream=False,
                # Token probabilities of the reply (Ollama 0.12.11 and later; older servers send
                # none), for the label confidence.
                logprobs=True,
            )
        except ollama.ResponseError as exc:
            raise self._response_error(exc) from None
        except ollama.RequestError as exc:
            raise ModelError(f"invalid request for Ollama model {self.name!r}: {exc.error}") from None
        except httpx.ConnectTimeout:
            raise ModelError(unreachable_message(self.host)) from None
        except httpx.TimeoutException:
            raise ModelError(
                f"Ollama at {self.host} did not answer within {self.timeout:g} s "
                f"(model {self.name}): allow longer with {TIMEOUT_ENV}=<seconds>, "
                "or use a smaller model"
            ) from None
        except (ConnectionError, httpx.ConnectError):
            raise ModelError(unreachable_message(self.host)) from None
        except json.JSONDecodeError as exc:
            raise ModelError(
                f"Ollama at {self.host} sent a malformed reply (not JSON: {exc.doc[:60]!r}); "
                f"is {HOST_ENV} pointing at an Ollama server?"
            ) from None
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:3]
            )
            raise ModelError(
                f"Ollama at {self.host} sent a malformed reply ({problems}); "
                f"is {HOST_ENV} pointing at an Ollama server?"
            ) from None
        except TypeError:  # valid JSON, but not an object
            raise ModelError(
                f"Ollama at {self.host} sent a malformed reply (not a JSON object); "
                f"is {HOST_ENV} pointing at an Ollama server?"
            ) from None
        except httpx.HTTPError as exc:  # the connection broke mid-request, bad redirect, ...
            raise ModelError(
                f"the connection to Ollama at {self.host} failed: {exc or type(exc).__name__}"
            ) from None
        content = response.message.content
        if content is None:
            raise ModelError(f"Ollama at {self.host} sent a malformed reply (the message has no content)")
        tokens = [(t.token, t.logprob) for t in response.logprobs or ()]
        return Completion(
            text=content,
            prompt_tokens=response.prompt_eval_count,
            completion_tokens=response.eval_count,
            prompt_seconds=_seconds(response.prompt_eval_duration),
            generation_seconds=_seconds(response.eval_duration),
            label_confidence=label_confidence(content, tokens),  # None when the server sent none
        )

    def _response_error(self, exc: ollama.ResponseError) -> ModelError:
        error = str(exc.error).strip()
        if exc.status_code == 404 and "not found" in error.lower() and "model" in error.lower():
            return ModelError(
                f"Ollama at {self.host} does not have model {self.name!r}: "
                f"run 'ollama pull {self.name}', or use --model embedded"
            )
        if exc.status_code == 404:
            return ModelError(
                f"Ollama at {self.host} answered 404 ({_first_line(error)}); "
                f"is {HOST_ENV} pointing at an Ollama server?"
            )
        return ModelError(
            f"Ollama at {self.host} failed (HTTP {exc.status_code}) with model {self.name!r}: "
            f"{_first_line(error)}"
        )


def _seconds(nanoseconds: int | None) -> float | None:
    """Ollama's durations are nanoseconds."""
    return None if nanoseconds is None or nanoseconds < 0 else nanoseconds / 1e9


def _first_line(value: object, limit: int = 200) -> str:
    text = str(value).strip()
    line = text.splitlines()[0] if text else "no detail"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _create(name: str | None, options: Mapping[str, Any]) -> OllamaModel:
    chosen = parse_options(OllamaModel, options)
    assert isinstance(chosen, OllamaOptions)
    return OllamaModel(name or DEFAULT_MODEL, host=chosen.host, timeout=chosen.timeout)


def _check() -> Availability:
    try:
        host = resolve_host()
    except ModelError as error:
        return Availability(False, str(error), str(error))
    return Availability(
        server_answers(host),
        f"Ollama server at {host}, default model {DEFAULT_MODEL} (ollama:NAME)",
        f"no Ollama server answers at {host} (start it with 'ollama serve')",
    )


BACKEND = Backend(name="ollama", create=_create, check=_check, takes_name=True, default_rank=10)
