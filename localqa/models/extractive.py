"""The `extractive` backend: no language model. A deterministic baseline that picks, among the
quotable sentences of the request, the one sharing the most question terms (ties go to the
better-ranked passage). It never paraphrases, so it shows what retrieval alone gets right."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from localqa.models.base import AnswerModel, AnswerRequest, Availability, Backend, Completion, parse_options
from localqa.store.tokenizer import tokenizer


class ExtractiveModel(AnswerModel):
    backend = "extractive"
    name = "overlap-baseline"
    is_language_model = False

    def complete(self, request: AnswerRequest) -> Completion:
        words = tokenizer()
        wanted = set(words.terms(request.question))
        best: tuple[int, str, str] | None = None
        for label, sentences in request.quotable.items():
            for sentence in sentences:
                overlap = len(wanted & set(words.tokens(sentence)))
                if overlap and (best is None or overlap > best[0]):
                    best = (overlap, label, sentence)
        if best is None:
            return Completion(text=json.dumps({"source": None, "quote": None}))
        return Completion(text=json.dumps({"source": best[1], "quote": best[2]}))


def _create(name: str | None, options: Mapping[str, Any]) -> ExtractiveModel:
    parse_options(ExtractiveModel, options)
    return ExtractiveModel()


BACKEND = Backend(
    name="extractive",
    create=_create,
    check=lambda: Availability(True, "no language model: deterministic sentence overlap (a baseline)"),
)
