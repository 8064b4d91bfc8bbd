"""The one interface every answer backend implements.

A backend receives chat messages and a JSON schema and returns the raw text of its reply. It does
not parse or trust the reply: `localqa.answer` validates and verifies it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

Message = dict[str, str]  # {"role": "system"|"user", "content": ...}


class AnswerModel(ABC):
    backend: str  # "ollama" | "embedded" | "extractive" | "fake"
    name: str  # the model name, e.g. "qwen2.5:1.5b"
    is_language_model: bool = True

    @abstractmethod
    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        """Return the reply text, constrained by `schema` where the backend supports it.

        Raises `localqa.errors.ModelError` with a message naming the fix when the backend cannot
        answer (unreachable, not installed, not pulled, timeout).
        """

    @property
    def label(self) -> str:
        return f"{self.backend}:{self.name}"
