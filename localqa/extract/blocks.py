"""Text helpers shared by the extractors: headings and paragraphs of plain text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from localqa.language.text import squash


def looks_like_heading(line: str) -> bool:
    """A short line that ends without sentence punctuation: the shape of a heading in plain text
    (OCR sidecars, .txt files), where no font information exists."""
    line = line.strip()
    return 0 < len(line) <= 80 and "\n" not in line and line[-1] not in ".,;:!?" and len(line.split()) <= 10


def governing(levels: Sequence[int | None]) -> list[int | None]:
    """Heading levels in reading order (None: not a heading; 0 is the highest level), with every
    heading that governs nothing made text: one that is last, or whose next block is a heading of
    the same or a higher level. Otherwise a short closing line in bold ("Reopens Monday 3 March"),
    or a one-line note in a sidecar, would vanish into a heading path."""
    governed: list[int | None] = []
    for level, following in zip(levels, [*levels[1:], -1], strict=False):
        # -1 after the last block: nothing follows, which outranks every heading.
        governs = level is not None and (following is None or following > level)
        governed.append(level if governs else None)
    return governed


def paragraphs(text: str) -> list[tuple[str, int, int]]:
    """Split plain text on blank lines: (squashed paragraph, start, end) with offsets into `text`."""
    found = []
    for match in re.finditer(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", text, flags=re.S):
        found.append((squash(match.group(0)), match.start(), match.end()))
    return found
