"""Text rules shared by extraction, retrieval, answering and evaluation: whitespace and
identifiers. Kept outside `localqa.extract` so that using them never loads a PDF library."""

from __future__ import annotations

import re

# Code-shaped tokens: letters, a hyphen, digits (EQ-314, CT-41, R-17, S-88).
# Not inside a longer hyphenated name: "equipment-policy-2026-11-01" carries no identifier.
IDENTIFIER = re.compile(r"(?<![\w-])([A-Za-z]{1,6}-\d{1,6}[A-Za-z]?)(?![\w]|-\d)")
_SPACE = re.compile(r"\s+")


def squash(text: str) -> str:
    """Collapse every run of whitespace (newlines included) to one space."""
    return _SPACE.sub(" ", text).strip()


def identifiers(text: str) -> list[str]:
    """The code-shaped identifiers in `text`, upper-cased, in order of first appearance."""
    seen: dict[str, None] = {}
    for match in IDENTIFIER.finditer(text):
        seen.setdefault(match.group(1).upper(), None)
    return list(seen)
