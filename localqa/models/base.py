"""The one interface every answer backend implements, and how a backend is described.

A backend receives one `AnswerRequest` (the question, the labelled passages and what may be quoted
from each, the chat messages built from them, the JSON schema and the generation bounds) and
returns a `Completion`: the raw text of its reply and, when it reports them, the token counts. It
does not parse or trust the reply: `localqa.answers.answering` validates and verifies it.

A `Backend` is what the registry (`localqa.models`) holds: a name, how to build its model, and
whether it can run here. Third-party packages provide one through the `localqa.models` entry
point group.
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from localqa.errors import ModelError, UnknownModelError
from localqa.settings import AnswerSettings
from localqa.types import Candidate, RankedUnit

Message = dict[str, str]  # {"role": "system"|"user", "content": ...}


@dataclass(frozen=True)
class AnswerRequest:
    """Everything a backend may use to answer one question part.

    `passages` are labelled P1..Pn in rank order. `units` are what the model is shown, in the
    order shown: sentences (or table rows) of those passages, best first as the sentence scorer
    ranked them, each with its label and its number in its passage. A language model reads
    `messages` under `schema` and replies with a label and a number (`unit` maps them back); a
    backend without one (extractive) may use the units as data. `max_tokens` bounds the reply;
    `settings` carries the sampling options.
    """

    question: str
    passages: Mapping[str, Candidate]
    units: tuple[RankedUnit, ...]
    messages: tuple[Message, ...]
    schema: dict[str, Any]
    max_tokens: int
    settings: AnswerSettings

    def unit(self, label: str, sentence: int) -> RankedUnit | None:
        """The shown unit a reply names by passage label and sentence number; None if none."""
        return next((u for u in self.units if (u.label, u.sentence) == (label, sentence)), None)


class Completion(BaseModel):
    """A backend's raw reply text and what it cost, in tokens, where the backend says."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    prompt_tokens: int | None = None
    cached_tokens: int | None = None  # of prompt_tokens, reused from an earlier call
    completion_tokens: int | None = None
    # Where the backend times them: seconds reading the prompt, and generating the reply.
    prompt_seconds: float | None = None
    generation_seconds: float | None = None
    # The probability the model gave the passage label it chose (see label_confidence); None
    # when the backend reports no token probabilities or the reply chose no label.
    label_confidence: float | None = None

    @classmethod
    def from_usage(
        cls, text: str, usage: object, logprobs: object = None, timings: object = None
    ) -> Completion:
        """With the token counts of an OpenAI-style `usage` object (llama.cpp and OpenAI-compatible
        servers send one), the label confidence read off a choice's OpenAI-style `logprobs`
        (`{"content": [{"token": ..., "logprob": ...}, ...]}`) and llama.cpp's `timings`
        (`prompt_ms`, `predicted_ms`), where present and well-formed; a server's odd usage,
        logprobs or timings never fail a reply."""
        counts = usage if isinstance(usage, dict) else {}
        details = counts.get("prompt_tokens_details")
        tokens = _tokens(logprobs)
        timed = timings if isinstance(timings, dict) else {}
        return cls(
            text=text,
            prompt_tokens=_count(counts.get("prompt_tokens")),
            cached_tokens=_count(details.get("cached_tokens") if isinstance(details, dict) else None),
            completion_tokens=_count(counts.get("completion_tokens")),
            prompt_seconds=_milliseconds(timed.get("prompt_ms")),
            generation_seconds=_milliseconds(timed.get("predicted_ms")),
            label_confidence=label_confidence(text, tokens) if tokens is not None else None,
        )


def _tokens(logprobs: object) -> list[tuple[str, float]] | None:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    tokens = []
    for entry in content:
        token = entry.get("token") if isinstance(entry, dict) else None
        logprob = entry.get("logprob") if isinstance(entry, dict) else None
        if not isinstance(token, str) or not isinstance(logprob, int | float) or isinstance(logprob, bool):
            return None
        tokens.append((token, float(logprob)))
    return tokens


_SOURCE_VALUE = re.compile(r'"source"\s*:\s*"([^"\\]*)"')


def label_confidence(text: str, tokens: Sequence[tuple[str, float]]) -> float | None:
    """The probability the model gave the `source` label in its reply `text`: the product of the
    probabilities of the tokens that spell the label ("P", "3"), read from `tokens`, the reply's
    (token text, log probability) pairs in order.

    A small model rarely writes null; how sure it was of the passage it chose is the one sign of
    doubt a reply carries (how well it tells answerable questions from unanswerable ones is
    measured by benchmarks/confidence.py). None when the reply chose no label or the tokens do
    not spell the reply (then nothing can be said).
    """
    found = _SOURCE_VALUE.search(text)
    if found is None or "".join(token for token, _ in tokens) != text:
        return None
    if not all(logprob <= 0 for _, logprob in tokens):  # a server's NaN or positive value
        return None
    start, end = found.span(1)
    total, offset = 0.0, 0
    for token, logprob in tokens:
        if offset < end and offset + len(token) > start:  # the token spells part of the label
            total += logprob
        offset += len(token)
    return math.exp(total)


def _milliseconds(value: object) -> float | None:
    """A non-negative, finite duration in milliseconds, as seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        return None
    return value / 1000


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def timeout_seconds(timeout: float | None, env: str, default: float) -> float:
    """`timeout`, else $`env`, else `default`: a positive, finite number of seconds, or a
    ModelError naming where the bad value came from."""
    source: str = "timeout"
    value: float | str | None = timeout
    if value is None:
        raw = os.environ.get(env, "").strip()
        if not raw:
            return default
        source, value = env, raw
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ModelError(f"{source} must be a positive number of seconds, got {value!r}")
    return seconds


class NoOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AnswerModel(ABC):
    """One model of one backend. `Options` lists what may be configured per model (a pydantic
    model with `extra="forbid"`: a misspelt option is an error, not silently ignored)."""

    backend: ClassVar[str]  # "ollama" | "embedded" | "extractive" | "openai" | a plugin's name
    name: str  # the model name, e.g. "qwen2.5:1.5b"
    is_language_model: ClassVar[bool] = True
    Options: ClassVar[type[BaseModel]] = NoOptions

    @abstractmethod
    def complete(self, request: AnswerRequest) -> Completion:
        """Return the reply, constrained by `request.schema` where the backend supports it.

        Raises `localqa.errors.ModelError` with a message naming the fix when the backend cannot
        answer (unreachable, not installed, not pulled, timeout, malformed reply).
        """

    def prepare(self, settings: AnswerSettings) -> None:
        """Start, without waiting and without holding anything up, what makes the first
        `complete` faster (the embedded model: its file read ahead); called before retrieval.
        Never raises: a failure is the `complete` that needs the model's to report. Default:
        nothing to prepare."""
        return None

    @property
    def label(self) -> str:
        return f"{self.backend}:{self.name}"


@dataclass(frozen=True)
class Availability:
    available: bool
    detail: str  # what the backend is and where, as `localqa models` lists it
    fix: str | None = None  # when not available: why, and how to install or start it


@dataclass(frozen=True)
class Backend:
    """A registered answer backend.

    `create(name, options)` builds a model: `name` is what follows `backend:` in a model spec
    (None: the backend's default model); `options` are checked against the model's `Options`
    (see `parse_options`). `check()` says whether it can run here, cheaply: it loads no model.
    Backends with a `default_rank` take part in the automatic choice, lowest rank first.
    """

    name: str
    create: Callable[[str | None, Mapping[str, Any]], AnswerModel]
    check: Callable[[], Availability]
    takes_name: bool = False  # accepts backend:NAME
    default_rank: int | None = None


def parse_options(model: type[AnswerModel], options: Mapping[str, Any]) -> BaseModel:
    """`options` validated against `model.Options`; a misspelt or mistyped option is an
    `UnknownModelError` naming the options there are."""
    try:
        return model.Options.model_validate(dict(options))
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "options"
        known = ", ".join(model.Options.model_fields) or "none"
        raise UnknownModelError(
            f"option {field!r} for {model.backend}: {first['msg']} (its options: {known})"
        ) from None
