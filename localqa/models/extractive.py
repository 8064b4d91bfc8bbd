"""The `extractive` backend: no language model. A deterministic baseline that picks, among the
quotable sentences the schema offers, the one sharing the most question terms (ties go to the
better-ranked passage). It never paraphrases, so it shows what retrieval alone gets right."""

from __future__ import annotations

import json
from typing import Any

from localqa.models.base import AnswerModel, Message
from localqa.prompts import question_of
from localqa.store.tokenizer import tokenizer


class ExtractiveModel(AnswerModel):
    backend = "extractive"
    name = "overlap-baseline"
    is_language_model = False

    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        words = tokenizer()
        wanted = set(words.terms(question_of(messages)))
        best: tuple[int, str, str] | None = None
        for branch in schema["anyOf"]:
            source = branch["properties"]["source"].get("const")
            if source is None:
                continue
            for sentence in branch["properties"]["quote"]["enum"]:
                overlap = len(wanted & set(words.tokens(sentence)))
                if overlap and (best is None or overlap > best[0]):
                    best = (overlap, source, sentence)
        if best is None:
            return json.dumps({"source": None, "quote": None})
        return json.dumps({"source": best[1], "quote": best[2]})
