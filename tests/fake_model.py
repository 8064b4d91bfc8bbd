"""The test suite's one fake answer model, how a test serves it as `--model fake`, and a
hypothesis strategy for any reply a model might give."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

from localqa import models
from localqa.errors import ModelError
from localqa.models.base import AnswerModel, AnswerRequest, Availability, Backend, Completion

Reply = str | Completion | ModelError | Callable[[AnswerRequest], str | Completion]


class FakeModel(AnswerModel):
    """The test suite's one model: it answers what the test enqueued, in order, and records every
    request it was sent (`history`). A reply is the text to return, a ModelError to raise (a
    failing backend), a whole Completion (a reply with the backend's figures, such as its label
    confidence), or a function of the request returning text or a Completion (replies drawn
    from what was actually sent)."""

    backend = "fake"

    def __init__(self, name: str = "fake") -> None:
        self.name = name
        self.replies: list[Reply] = []
        self.history: list[AnswerRequest] = []
        self._always: Reply | None = None

    def enqueue(self, *replies: Reply) -> FakeModel:
        self.replies.extend(replies)
        return self

    def always(self, reply: Reply) -> FakeModel:
        """Answer every request with `reply` (a failing or scripted backend)."""
        self._always = reply
        return self

    def complete(self, request: AnswerRequest) -> Completion:
        self.history.append(request)
        if self._always is not None:
            reply = self._always
        elif self.replies:
            reply = self.replies.pop(0)
        else:
            raise AssertionError("FakeModel was called more often than replies were enqueued")
        if isinstance(reply, ModelError):
            raise reply
        if callable(reply):
            reply = reply(request)
        if isinstance(reply, Completion):
            return reply
        return Completion(text=reply, prompt_tokens=len(str(request.messages)) // 4)


@contextmanager
def serving(model: FakeModel) -> Iterator[FakeModel]:
    """Register `model` as the backend `fake` (what `--model fake` and LOCALQA_MODEL=fake get),
    through the registry's API, the way a plugin's entry point would make it available."""

    def create(name: str | None, options: Mapping[str, Any]) -> FakeModel:
        return model

    models.register(
        Backend(
            name="fake",
            create=create,
            check=lambda: Availability(True, "the test suite's fake model"),
            takes_name=True,
        )
    )
    try:
        yield model
    finally:
        models.unregister("fake")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def replies(draw: st.DrawFn, labels: int, texts: list[str]) -> str:
    """Any reply a model might give: garbage, random JSON, or a source/sentence object whose label
    and number are random, supplied or not, shown or not, of the wrong type, or a quote instead."""
    kind = draw(st.sampled_from(["text", "json", "object", "object", "object"]))
    if kind == "text":
        return draw(st.text(max_size=60))
    if kind == "json":
        return json.dumps(draw(_json))
    source = draw(
        st.sampled_from([f"P{i}" for i in range(1, labels + 1)] or ["P1"])
        | st.sampled_from(["P0", "P9", "p1", "P1 ", "", "P01"])
        | st.none()
        | st.integers(0, 9)
        | st.text(max_size=4)
    )
    sentence = draw(
        st.integers(-2, 12)
        | st.none()
        | st.integers()
        | st.sampled_from(["1", 1.0, True, [1]])
        | st.sampled_from(texts)
    )
    body: dict[str, Any] = {"source": source, "sentence": sentence}
    if draw(st.booleans()) and draw(st.booleans()):
        body[draw(st.sampled_from(["quote", "reason", "confidence", "Source"]))] = draw(
            _json | st.sampled_from(texts)
        )
    if draw(st.booleans()) and draw(st.booleans()):
        del body[draw(st.sampled_from(["source", "sentence"]))]
    return json.dumps(body, ensure_ascii=draw(st.booleans()))
