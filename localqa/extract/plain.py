"""Markdown, plain-text and OCR-sidecar extraction: paragraphs under their heading path."""

from __future__ import annotations

import re
from pathlib import Path

from localqa.extract.blocks import governing, looks_like_heading, paragraphs
from localqa.language.text import squash
from localqa.types import Kind, Passage

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def extract_markdown(path: Path, source: str) -> list[Passage]:
    """`#` headings become the section path; each other block between blank lines is a passage."""
    text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is not text
    stack: list[tuple[int, str]] = []
    passages: list[Passage] = []
    for _, start, end in paragraphs(text):
        lines = text[start:end].split("\n")
        # A heading may sit directly on top of its paragraph, with no blank line between.
        while lines and (heading := _MD_HEADING.match(lines[0].strip())):
            level = len(heading.group(1))
            stack = [(lvl, name) for lvl, name in stack if lvl < level] + [(level, heading.group(2))]
            lines.pop(0)
        if not lines:
            continue
        passages.append(
            Passage(
                kind=Kind.PROSE,
                source=source,
                page=None,
                text=squash("\n".join(lines)),
                section=" > ".join(name for _, name in stack) or None,
                paragraph=len(passages) + 1,
            )
        )
    return passages


def extract_plain(text: str, source: str, page: int | None, kind: Kind) -> list[Passage]:
    """Plain text (a .txt file, or an OCR sidecar of one page): a short unpunctuated line on its
    own is a heading and governs the paragraphs after it. One that governs nothing (the next
    block is heading-shaped too, or there is none) is kept as text, so short notes are not lost."""
    section: str | None = None
    passages: list[Passage] = []
    blocks = paragraphs(text)
    levels = governing([0 if looks_like_heading(text[start:end]) else None for _, start, end in blocks])
    for (body, _, _), level in zip(blocks, levels, strict=True):
        if level is not None:
            section = body
            continue
        passages.append(
            Passage(
                kind=kind,
                source=source,
                page=page,
                text=body,
                section=section,
                paragraph=len(passages) + 1,
            )
        )
    return passages
