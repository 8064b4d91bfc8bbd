"""Source formats: which files localqa reads, and what each one's citations and renderings are.

A file's extension names its format, and its content must agree: a `.docx` whose bytes are a PDF
is named with what it really is, never read as something else (`check_content`). Formats fall in
three families:

- paged (PDF, and what PyMuPDF opens itself: EPUB, XPS, MOBI, FB2, CBZ): passages have page
  numbers and the page can be rendered as an image;
- images (PNG, JPEG, TIFF): a page without a text layer, read through OCR sidecars like a scanned
  PDF page, rendered as itself;
- text (Markdown, plain text, Word, spreadsheets, slides, HTML): no page image. A slide's number is
  its page; the others have no page, and are shown as their own text with the passage marked.

Imported by the index's readers (status, citations), so it loads no extraction library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Format:
    name: str  # what `localqa status` counts passages by
    label: str  # how a message names it ("a Word document")
    family: str  # "paged", "image" or "text"

    @property
    def noun(self) -> str:
        """The label without its article ("Word document")."""
        return self.label.split(" ", 1)[1]

    @property
    def rendered(self) -> bool:
        """Its pages can be drawn as images (PyMuPDF opens it)."""
        return self.family in {"paged", "image"}


PDF = Format("pdf", "a PDF", "paged")
_FORMATS: dict[str, Format] = {
    ".pdf": PDF,
    ".epub": Format("epub", "an EPUB e-book", "paged"),
    ".xps": Format("xps", "an XPS document", "paged"),
    ".oxps": Format("xps", "an XPS document", "paged"),
    ".mobi": Format("mobi", "a MOBI e-book", "paged"),
    ".fb2": Format("fb2", "a FictionBook e-book", "paged"),
    ".cbz": Format("cbz", "a comic book archive", "paged"),
    ".png": Format("image", "a PNG image", "image"),
    ".jpg": Format("image", "a JPEG image", "image"),
    ".jpeg": Format("image", "a JPEG image", "image"),
    ".tif": Format("image", "a TIFF image", "image"),
    ".tiff": Format("image", "a TIFF image", "image"),
    ".md": Format("markdown", "a Markdown file", "text"),
    ".markdown": Format("markdown", "a Markdown file", "text"),
    ".txt": Format("text", "a text file", "text"),
    ".docx": Format("docx", "a Word document", "text"),
    ".xlsx": Format("xlsx", "an Excel workbook", "text"),
    ".csv": Format("csv", "a CSV file", "text"),
    ".pptx": Format("pptx", "a PowerPoint presentation", "text"),
    ".html": Format("html", "an HTML page", "text"),
    ".htm": Format("html", "an HTML page", "text"),
}
SOURCE_SUFFIXES = tuple(_FORMATS)
SPREADSHEETS = frozenset({"xlsx", "csv"})
# Formats whose paragraphs are numbered within their section (or slide), not within a page.
SECTION_NUMBERED = frozenset({"docx", "html", "pptx"})
# What a spreadsheet's row is cited by: its sheet (the passage's section) and the row number the
# spreadsheet application shows. A CSV file is one sheet, named after the file.


# Document files localqa does not read, named at `index` time with what to do, so that none is
# passed over without a word (any other file in the folder is not a document and is ignored).
NOT_READ: dict[str, str] = {
    **dict.fromkeys(
        (".doc", ".xls", ".ppt"), "an Office 97-2003 file is not read; save it as .docx, .xlsx or .pptx"
    ),
    **dict.fromkeys(
        (".docm", ".xlsm", ".pptm", ".dotm", ".xltm", ".potm"),
        "a macro-enabled Office file is not read (macros are never run); save it as .docx, .xlsx or .pptx",
    ),
    **dict.fromkeys(
        (".odt", ".ods", ".odp", ".rtf"),
        "an OpenDocument or RTF file is not read; save it as .docx, .xlsx or .pptx (or export a PDF)",
    ),
}


def format_of(source: str) -> Format | None:
    """The format a source file name says it has, or None for a file localqa does not read."""
    return _FORMATS.get(Path(source).suffix.lower())


def format_name(source: str) -> str:
    """The format `localqa status` counts a source's passages under ("other" if unknown)."""
    found = format_of(source)
    return found.name if found else "other"


def is_spreadsheet(source: str) -> bool:
    return format_name(source) in SPREADSHEETS


# --- what a file's bytes say it is ---------------------------------------------------------------

ZIP = b"PK\x03\x04"
EMPTY_ZIP = b"PK\x05\x06"
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office 97-2003 files, and encrypted Office 2007+ files
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"GIF8", "a GIF image"),
    (OLE, "an Office 97-2003 or password-protected Office file"),
    (ZIP, "a zip archive"),
    (EMPTY_ZIP, "an empty zip archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"\x7fELF", "a program"),
    (b"MZ", "a Windows program"),
)
# The part that says which Office application wrote a zip archive.
OFFICE_MAIN_PART = {"docx": "word/document.xml", "xlsx": "xl/workbook.xml", "pptx": "ppt/presentation.xml"}
_OFFICE_BY_PART = {
    "word/document.xml": "a Word document",
    "xl/workbook.xml": "an Excel workbook",
    "ppt/presentation.xml": "a PowerPoint presentation",
}


def what_bytes_say(head: bytes) -> str | None:
    """What a file's first bytes say it is ("a PDF"), or None when they name no binary format.
    A PDF may start with a little junk before its header, as PDF readers allow."""
    if b"%PDF-" in head[:1024]:
        return "a PDF"
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def office_kind(members: set[str]) -> str | None:
    """Which Office document a zip archive's member names make it, or None."""
    return next((kind for part, kind in _OFFICE_BY_PART.items() if part in members), None)


def is_encrypted_office(path: Path) -> bool:
    """An Office 2007+ file saved with a password is an OLE compound file holding an
    `EncryptedPackage` stream (MS-OFFCRYPTO); the stream's name is in the file's directory."""
    name = "EncryptedPackage".encode("utf-16-le")
    with path.open("rb") as handle:
        if handle.read(len(OLE)) != OLE:
            return False
        tail = b""
        # The directory may sit anywhere in the file: read it all, a chunk at a time.
        while chunk := handle.read(1 << 20):
            if name in tail + chunk:
                return True
            tail = chunk[-len(name) :]
    return False
