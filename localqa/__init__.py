"""localqa: answer questions about local PDFs with verbatim, re-verified quotes.

The top-level names load on first use (PEP 562), so that importing any part of the package, a
backend author's `localqa.models.base` say, never pays for PyMuPDF, numpy or the index.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localqa.library import Asked, Library, PartAnswer, answer, search_parts

# Each public name and the module that defines it.
_EXPORTS = {
    "Asked": "localqa.library",
    "Library": "localqa.library",
    "PartAnswer": "localqa.library",
    "answer": "localqa.library",
    "search_parts": "localqa.library",
}

__all__ = ["Asked", "Library", "PartAnswer", "answer", "search_parts"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'localqa' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
