"""Showing a quote in a source that has no page image (Word, spreadsheets, slides, HTML,
Markdown, text): the document's own text, laid out around the cited passage (its slide, or the
passages near it), drawn by PyMuPDF as a PNG with the quote highlighted, as a PDF page is.

The text is the index's passages of the file as the caller may see them, each escaped: a
document's words are data and never markup. The quote is found, not guessed: its characters
inside the cited passage's own block on the drawn page (`highlighting.text_boxes`).
"""

from __future__ import annotations

import html
import io
from typing import Any

import pymupdf

from localqa.display.highlighting import QuoteNotShownError, draw, find_passage, text_boxes
from localqa.library import VisiblePage
from localqa.types import Box, Kind, Location, Passage

WIDTH = 520.0  # points: a readable column
MAX_HEIGHT = 14000.0  # points: a PDF page is at most 14,400
MARGIN = 24.0
AROUND = 8  # passages shown before and after the cited one, in a source without pages
_CITED = "cited"
_CSS = """
* { font-family: sans-serif; }
body { font-size: 11pt; }
h1 { font-size: 13pt; font-weight: bold; margin: 0 0 6pt 0; }
h2 { font-size: 11pt; font-weight: bold; color: #444444; margin: 10pt 0 4pt 0; }
p { margin: 0 0 6pt 0; }
.where { font-size: 8pt; color: #777777; margin: 0; }
"""


def excerpt(page: VisiblePage, passage: Passage) -> list[Passage]:
    """What is drawn: the whole page (a slide) when the source has pages; otherwise the cited
    passage with up to `AROUND` passages before and after it, in document order."""
    passages = list(page.passages)
    if page.page is not None:
        return passages
    at = passages.index(passage)
    return passages[max(0, at - AROUND) : at + AROUND + 1]


def document_html(title: str, passages: list[Passage], cited: Passage) -> str:
    """The passages as HTML: a heading line where the section changes, where each table row
    sits, and the cited passage's block marked by its id."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    section: str | None = None
    for passage in passages:
        if passage.section != section and passage.section:
            parts.append(f"<h2>§ {html.escape(passage.section)}</h2>")
        section = passage.section
        where = _where(passage)
        if where:
            parts.append(f'<p class="where">{html.escape(where)}</p>')
        mark = f' id="{_CITED}"' if passage is cited else ""
        parts.append(f"<p{mark}>{html.escape(passage.text)}</p>")
    return f"<html><body>{''.join(parts)}</body></html>"


def _where(passage: Passage) -> str:
    location = Location(
        source=passage.source,
        page=None,
        kind=passage.kind,
        section=None,
        table=passage.table,
        row=passage.row,
        paragraph=passage.paragraph,
        effective=None,
    )
    # The citation without source, section or date: `row 12`, `table 2, row 4`, `paragraph 3`.
    described = location.describe().split(", ")[1:-1]
    return ", ".join(described) if passage.kind is Kind.TABLE else ""


def text_image(page: VisiblePage, quote: str | None, cited: Location | None = None, dpi: int = 110) -> bytes:
    """The PNG of a text source's passages around the quote (or, without a quote, of its
    page: a slide, or the source's first passages) with the quote highlighted."""
    passage = page.passages[0] if quote is None else find_passage(page, quote, cited)
    title = page.source if page.page is None else f"{page.source}, {_page_word(page)} {page.page}"
    markup = document_html(title, excerpt(page, passage), passage)
    fit = pymupdf.Story(markup, user_css=_CSS).fit_height(WIDTH, height_max=MAX_HEIGHT, delta=1)
    height = min(fit.rect.height if fit.big_enough else MAX_HEIGHT, MAX_HEIGHT)
    mediabox = pymupdf.Rect(0, 0, WIDTH + 2 * MARGIN, height + 2 * MARGIN)
    positions: list[pymupdf.Rect] = []

    def record(position: Any) -> None:
        if position.id == _CITED and position.open_close & 1:
            positions.append(pymupdf.Rect(position.rect))

    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    story = pymupdf.Story(markup, user_css=_CSS)
    device = writer.begin_page(mediabox)
    story.place(pymupdf.Rect(MARGIN, MARGIN, MARGIN + WIDTH, MARGIN + height))
    story.element_positions(record)
    story.draw(device)
    writer.end_page()
    writer.close()
    with pymupdf.open("pdf", buffer.getvalue()) as document:
        drawn = document[0]
        boxes: tuple[Box, ...] = ()
        if quote is not None:
            # The cited block runs from where it opens to the next block: its own lines only.
            region = [(r.x0, r.y0, MARGIN + WIDTH, r.y1) for r in positions]
            boxes = text_boxes(drawn, region, quote) if region else ()
            if not boxes:
                raise QuoteNotShownError(f"{page.source}: the quote could not be placed in its drawn text")
        return draw(drawn, boxes, dpi)


def _page_word(page: VisiblePage) -> str:
    return "slide" if page.source.lower().endswith(".pptx") else "page"
