"""The `extractive` backend: no language model. It answers with the sentence scorer's first unit
(`localqa.answers.sentences`: BM25 over the part's sentences fused with the MiniLM cosine), so it shows
what retrieval and the scorer alone get right, deterministically and in well under a second.

It answers null only when nothing ties the first unit to the question: no question term in it
and (with the semantic model) no closeness in meaning reaching `neighbour`, retrieval's own bar
for a semantic neighbour.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from localqa.models.base import AnswerModel, AnswerRequest, Availability, Backend, Completion, parse_options
from localqa.settings import RetrievalSettings

NEIGHBOUR = RetrievalSettings().neighbour


class ExtractiveModel(AnswerModel):
    backend = "extractive"
    name = "sentence-scorer"
    is_language_model = False

    def complete(self, request: AnswerRequest) -> Completion:
        first = min(request.units, key=lambda unit: unit.rank, default=None)
        if first is None or (first.lexical <= 0 and (first.semantic or 0.0) < NEIGHBOUR):
            return Completion(text=json.dumps({"source": None, "sentence": None}))
        return Completion(text=json.dumps({"source": first.label, "sentence": first.sentence}))


def _create(name: str | None, options: Mapping[str, Any]) -> ExtractiveModel:
    parse_options(ExtractiveModel, options)
    return ExtractiveModel()


BACKEND = Backend(
    name="extractive",
    create=_create,
    check=lambda: Availability(
        True, "no language model: the sentence scorer's first sentence (BM25 + MiniLM; a baseline)"
    ),
)
