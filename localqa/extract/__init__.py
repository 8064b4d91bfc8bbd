"""Extraction: turning one input file into passages. Which extractor reads which file is decided
here; each extractor lives in its own module."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from localqa.extract.checks import BadFile, check_file
from localqa.extract.ocr import SidecarWithoutPage, extract_sidecar, parse_sidecar_name
from localqa.extract.pdf import PdfUnreadable, extract_pdf
from localqa.extract.plain import extract_markdown, extract_plain
from localqa.indexing.catalog import Problem
from localqa.types import Found, Kind, Passage


class Unreadable(Exception):
    """The whole file cannot be extracted now; the message says why and how to fix it."""


@dataclass(frozen=True)
class Extracted:
    passages: list[Passage]
    pages_without_text: tuple[int, ...] = ()
    problems: list[Problem] = field(default_factory=list)  # pages that could not be read
    found: Found | None = None  # what its first page says about it (a source file only)


def extract_file(path: Path, name: str, doc_source: str) -> Extracted:
    """Passages of one input file: a source of any format `localqa.formats` names, or the OCR
    sidecar of a page of `doc_source`. Raises `Unreadable` when nothing can be extracted."""
    try:
        sidecar = parse_sidecar_name(name)
        if sidecar is not None:
            # Boxes come from tesseract's words on the page image (about a second a page): found
            # when the sidecar is added or edited, like its text. Without them the passages are
            # still indexed, with a warning.
            passages, warning = extract_sidecar(path, path.with_name(doc_source), doc_source, sidecar[1])
            problems = [Problem(name, warning, warning=True)] if warning else []
            return Extracted(passages, problems=problems)
        if path.suffix.lower() == ".pdf":
            return _paged(path, name)
        fmt = check_file(path, name)
        if fmt.rendered:
            return _paged(path, name)
        return _text_format(path, name, fmt.name)
    except (PdfUnreadable, SidecarWithoutPage, BadFile) as error:
        raise Unreadable(str(error)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise Unreadable(f"cannot be read ({error}); check the file") from None


def _paged(path: Path, name: str) -> Extracted:
    """A PDF, or a document PyMuPDF opens (EPUB, XPS, images...): the same extraction."""
    pdf = extract_pdf(path, name)
    found = Found(title=pdf.title, name=pdf.organisation, period=pdf.period)
    return Extracted(pdf.passages, tuple(pdf.pages_without_text), pdf.problems, found)


def _text_format(path: Path, name: str, fmt: str) -> Extracted:
    """A source without page images: Markdown, text, Word, spreadsheets, slides, HTML."""
    if fmt == "text":
        text = extract_plain(path.read_text(encoding="utf-8-sig"), name, None, Kind.PROSE)
        return Extracted(text, found=Found())
    if fmt == "markdown":
        return Extracted(extract_markdown(path, name), found=Found())
    if fmt == "docx":
        from localqa.extract.word import extract_docx

        word = extract_docx(path, name)
        return Extracted(
            word.passages, problems=hidden_warning(name, word.left_out), found=Found(title=word.title)
        )
    if fmt == "pptx":
        from localqa.extract.slides import extract_pptx

        slides = extract_pptx(path, name)
        found = Found(title=slides.title)
        return Extracted(slides.passages, problems=hidden_warning(name, slides.left_out), found=found)
    if fmt == "html":
        from localqa.extract.web import extract_html

        page = extract_html(path, name)
        return Extracted(
            page.passages, problems=hidden_warning(name, page.left_out), found=Found(title=page.title)
        )
    from localqa.extract.sheets import extract_csv, extract_xlsx

    sheets = extract_xlsx(path, name) if fmt == "xlsx" else extract_csv(path, name)
    return Extracted(sheets.passages, problems=hidden_warning(name, sheets.left_out), found=Found())


def hidden_warning(name: str, left_out: list[str]) -> list[Problem]:
    """One rule for every format: what its author hid is not indexed, and the index says what it
    left out of the file (`docs/formats.md` lists what counts as hidden per format). Hiding is
    no access control; the catalog's `access` is."""
    if not left_out:
        return []
    return [
        Problem(
            name,
            f"hidden content is not indexed ({'; '.join(left_out)}); unhide it to index it",
            warning=True,
        )
    ]
