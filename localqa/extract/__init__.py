"""Extraction: turning one input file into passages. Which extractor reads which file is decided
here; each extractor lives in its own module."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from localqa.catalog import Problem
from localqa.extract.ocr import SidecarWithoutPage, extract_sidecar, parse_sidecar_name
from localqa.extract.pdf import PdfUnreadable, extract_pdf
from localqa.extract.plain import extract_markdown, extract_plain
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
    """Passages of one input file: a PDF, a Markdown or text file, or the OCR sidecar of a page of
    `doc_source`. Raises `Unreadable` when nothing can be extracted."""
    try:
        sidecar = parse_sidecar_name(name)
        if sidecar is not None:
            # Boxes come from tesseract's words on the page image (about a second a page): found
            # when the sidecar is added or edited, like its text. Without them the passages are
            # still indexed, with a warning.
            passages, warning = extract_sidecar(path, path.with_name(doc_source), doc_source, sidecar[1])
            problems = [Problem(name, warning, warning=True)] if warning else []
            return Extracted(passages, problems=problems)
        suffix = path.suffix.lower()
        if suffix == ".pdf":
            pdf = extract_pdf(path, name)
            found = Found(title=pdf.title, name=pdf.organisation, period=pdf.period)
            return Extracted(pdf.passages, tuple(pdf.pages_without_text), pdf.problems, found)
        if suffix == ".txt":
            text = extract_plain(path.read_text(encoding="utf-8-sig"), name, None, Kind.PROSE)
            return Extracted(text, found=Found())
        return Extracted(extract_markdown(path, name), found=Found())
    except (PdfUnreadable, SidecarWithoutPage) as error:
        raise Unreadable(str(error)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise Unreadable(f"cannot be read ({error}); check the file") from None
