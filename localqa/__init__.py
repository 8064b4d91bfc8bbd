"""localqa: answer questions about local PDFs with verbatim, re-verified quotes."""

from localqa.api import Asked, PartAnswer, answer, search_parts

__all__ = ["Asked", "PartAnswer", "answer", "search_parts"]
