"""localqa: answer questions about local PDFs with verbatim, re-verified quotes."""

from localqa.api import search_parts

__all__ = ["search_parts"]
