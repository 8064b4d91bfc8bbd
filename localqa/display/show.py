"""Showing a quote in place: its page rendered with the quote's own rectangles highlighted.

Where a quote is drawn is found, never guessed, inside the boxes extraction recorded for its
passage:

- prose: the quote's own characters on the page's text layer (a sentence that wraps, or a word
  hyphenated at a line end, included), one rectangle per line;
- a table row: the row (its text is the row's cells with their header names, not a run of
  characters on the page);
- OCR (a scanned page): tesseract's words on the page image, aligned with the quote's words;
  only words that match (or were corrected in place) are highlighted.

If the quote cannot be placed this way, nothing is highlighted and `QuoteNotShownError` says
why. A source without page images is drawn as its own text (`localqa.display.show_text`); `mark` splits
its paragraph around the quote for the terminal. Finding a quote's characters and drawing a page
are `localqa.display.highlighting`'s, which both share; its names the CLI, the web app and the tests use
(`QuoteNotShownError`, `find_passage`, `text_boxes`, `draw`, `DEFAULT_DPI`, `MAX_PIXELS`) are
re-exported here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from localqa.answers.answering import quote_check
from localqa.display.highlighting import DEFAULT_DPI as DEFAULT_DPI
from localqa.display.highlighting import MAX_PIXELS as MAX_PIXELS
from localqa.display.highlighting import QuoteNotShownError as QuoteNotShownError
from localqa.display.highlighting import centre, grown
from localqa.display.highlighting import draw as draw
from localqa.display.highlighting import find_passage as find_passage
from localqa.display.highlighting import text_boxes as text_boxes
from localqa.extract import ocr
from localqa.extract.pdf import PdfUnreadable, open_pdf
from localqa.extract.tesseract import TesseractMissing
from localqa.formats import format_of
from localqa.indexing.files import sha256_file
from localqa.language.text import squash
from localqa.library import VisiblePage
from localqa.types import Box, Kind, Location, Passage


@dataclass(frozen=True)
class Placed:
    """A quote found on a page: the passage it belongs to and the rectangles it covers."""

    passage: Passage
    boxes: tuple[Box, ...]


def source_file(folder: Path, page: VisiblePage) -> Path:
    """The indexed file for `page`, checked to be the one that was indexed. The name comes from
    the index (a plain file name in `folder`); a path-like name is refused all the same."""
    name = page.source
    if Path(name).name != name or name in {"", ".", ".."} or "\\" in name or "\0" in name:
        raise QuoteNotShownError(f"{name!r} is not a file name of the indexed folder")
    path = folder / name
    if not path.is_file():
        # Named by its source only: this message reaches web callers, who need not know the
        # server's folders.
        raise QuoteNotShownError(f"{name}: not found; pass --pdfs with the folder that was indexed")
    if page.sha256 is not None and _sha256(*_stamp(path)) != page.sha256:
        raise QuoteNotShownError(f"{name} has changed since it was indexed; run 'localqa index'")
    return path


def place(pdf: Path, page: VisiblePage, quote: str, cited: Location | None = None) -> Placed:
    """Find `quote` on its page: the rectangles of its own text, the row, or its OCR words."""
    passage = find_passage(page, quote, cited)
    if not passage.boxes:
        raise QuoteNotShownError(
            f"{page.source}, page {page.page}: the index records no position for this passage; "
            "run 'localqa index --rebuild'"
        )
    if passage.kind is Kind.TABLE:
        return Placed(passage, passage.boxes)
    number = _page_number(page)
    if passage.kind is Kind.OCR:
        return Placed(passage, _ocr_boxes(pdf, number, passage, quote))
    with open_pdf(pdf) as document:
        boxes = text_boxes(document[number - 1], passage.boxes, quote)
    if not boxes:
        raise QuoteNotShownError(
            f"{page.source}, page {number}: the quote is in the passage's text but not drawn inside "
            "its boxes; nothing is highlighted"
        )
    return Placed(passage, boxes)


def _ocr_boxes(pdf: Path, number: int, passage: Passage, quote: str) -> tuple[Box, ...]:
    """The page image's words that stand for the quote's words, one rectangle per line."""
    try:
        words = ocr.page_words(pdf, number)
    except (ocr.OcrUnavailable, TesseractMissing) as error:
        raise QuoteNotShownError(f"cannot find the quote's words on the scanned page: {error}") from None
    region = grown(passage.boxes)
    inside = [w for w in words if any(centre(w.box) in box for box in region)]
    located = ocr.align(passage.text.split(), inside)
    chosen = ocr.words_in(located, _word_span(passage.text, quote), whole=True)
    if not chosen:
        raise QuoteNotShownError(
            f"{passage.source}, page {number}: none of the quote's words is found on the scanned page "
            "(was the sidecar rewritten?); nothing is highlighted"
        )
    return ocr.line_boxes([inside[j] for j in chosen])


def _word_span(text: str, quote: str) -> range:
    """Which words of `text` the quote covers; it must begin and end on word boundaries."""
    words, wanted = squash(text), squash(quote)
    start = words.find(wanted)
    end = start + len(wanted)
    if start < 0 or (start > 0 and words[start - 1] != " ") or (end < len(words) and words[end] != " "):
        raise QuoteNotShownError("on a scanned page only whole words can be highlighted")
    first = words[:start].count(" ")
    return range(first, first + wanted.count(" ") + 1)


def render(pdf: Path, number: int, boxes: Sequence[Box], dpi: int = DEFAULT_DPI) -> bytes:
    """Page `number` (1-based) of `pdf` as PNG, with `boxes` (page points) highlighted: at `dpi`,
    or at less when that would be over MAX_PIXELS."""
    try:
        with open_pdf(pdf) as document:
            if not 1 <= number <= document.page_count:
                raise QuoteNotShownError(f"{pdf.name} has no page {number}")
            return draw(document[number - 1], boxes, dpi)
    except PdfUnreadable as error:
        raise QuoteNotShownError(f"{pdf.name}: {error}") from None
    except pymupdf.mupdf.FzErrorBase as error:  # whatever else MuPDF refuses to draw
        raise QuoteNotShownError(
            f"{pdf.name}, page {number}: MuPDF cannot draw it ({error}); nothing is shown"
        ) from None


def page_image(
    folder: Path,
    page: VisiblePage,
    quote: str | None,
    *,
    cited: Location | None = None,
    dpi: int = DEFAULT_DPI,
) -> bytes:
    """The PNG of `page` with `quote` highlighted (no quote: the page as it is). A source without
    page images (Word, spreadsheets, slides, HTML, Markdown, text) is drawn as its own text, with
    its passages around the quote (`localqa.display.show_text`)."""
    fmt = format_of(page.source)
    if fmt is None or not fmt.rendered:
        from localqa.display.show_text import text_image

        source_file(folder, page)  # the file must still be the one indexed, as for a PDF
        return text_image(page, quote, cited, dpi)
    if page.page is None:
        raise QuoteNotShownError(f"{page.source!r} is a text source and has no page to render")
    pdf = source_file(folder, page)
    boxes = place(pdf, page, quote, cited).boxes if quote is not None else ()
    return render(pdf, page.page, boxes, dpi)


def mark(page: VisiblePage, quote: str, cited: Location | None = None) -> tuple[Passage, str, str, str]:
    """For a source without pages: the passage holding `quote` and its text split into
    (before, quote, after), whitespace normalised."""
    passage = find_passage(page, quote, cited)
    text, wanted = squash(passage.text), squash(quote)
    start = text.find(wanted)
    return passage, text[:start], wanted, text[start + len(wanted) :]


def _page_number(page: VisiblePage) -> int:
    if page.page is None:
        raise QuoteNotShownError(f"{page.source!r} is a text source and has no page to render")
    return page.page


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


# Keyed by path, modification time and size: a long-running server hashes a file once.
@functools.lru_cache(maxsize=64)
def _sha256(path: str, _mtime: int, _size: int) -> str:
    return sha256_file(path)  # cached by (path, mtime, size): a changed file is hashed again


def quotable(page: VisiblePage, quote: str) -> VisiblePage:
    """`page` narrowed to the passages of which `quote` is a whole sentence or table row, the
    rule a verified answer meets (`quote_check`). So a server (GET /api/pages, the MCP `page`
    tool) highlights what an answer could have quoted, and a piece of a sentence is refused like
    text that is not there: no request learns a sentence a word at a time."""
    kept = tuple(p for p in page.passages if quote_check(quote, p.text, p.kind) is None)
    if not kept:
        raise QuoteNotShownError(
            f"the quote is not a whole sentence or table row on page {page.page} of {page.source!r}; "
            "nothing to highlight"
        )
    return page.model_copy(update={"passages": kept})
