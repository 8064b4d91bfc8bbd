"""OCR sidecars: `<stem>.page-<N>.ocr.txt` beside a PDF (or an image, or another document with
page images), one per page that has no text layer.

Sidecars are plain text a person can correct; the index reads them like prose with kind `ocr`.
Writing them is a separate step (`localqa ocr`) so that OCR, slow and imperfect, is done once and
reviewed, never silently redone on every index refresh.
"""

from __future__ import annotations

import io
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import pymupdf
from PIL import Image

from localqa.errors import LocalQAError
from localqa.extract.pdf import PdfUnreadable, has_text_layer, open_pdf
from localqa.extract.plain import extract_plain
from localqa.extract.tesseract import (
    TesseractFailed,
    TesseractMissing,
    check_tesseract,
    image_text,
    image_words,
)
from localqa.formats import format_of
from localqa.indexing.files import sha256_file, write_atomic
from localqa.types import Box, Kind, Passage

SIDECAR = re.compile(r"^(?P<stem>.+)\.page-(?P<page>[1-9]\d*)\.ocr\.txt$")
DPI = 300


@dataclass(frozen=True)
class OcrJob:
    pdf: Path
    page: int  # 1-based

    @property
    def sidecar(self) -> Path:
        return sidecar_path(self.pdf, self.page)


def sidecar_path(pdf: Path, page: int) -> Path:
    return pdf.with_name(f"{pdf.stem}.page-{page}.ocr.txt")


def parse_sidecar_name(name: str) -> tuple[str, int] | None:
    """(PDF stem, page) for a sidecar file name, or None if it is not one."""
    match = SIDECAR.match(name)
    return (match["stem"], int(match["page"])) if match else None


def pages_needing_ocr(pdf: Path, force: bool = False) -> Iterator[OcrJob]:
    """Pages of `pdf` with no usable text layer (and, unless `force`, no sidecar yet).
    Pages that have text are never OCR'd: their text layer is better than any OCR."""
    with open_pdf(pdf) as document:
        for number, page in enumerate(document, start=1):
            if not has_text_layer(page) and (force or not sidecar_path(pdf, number).exists()):
                yield OcrJob(pdf, number)


def run_ocr(job: OcrJob, language: str = "eng") -> str:
    """Render the page at 300 dpi and return tesseract's text, tidied for human correction."""
    with open_pdf(job.pdf) as document:
        pixmap = document[job.page - 1].get_pixmap(
            dpi=ocr_dpi(job.pdf, document, job.page), colorspace="gray"
        )
        image = Image.open(io.BytesIO(pixmap.tobytes("png")))
    try:
        text = image_text(image, language)
    except TesseractFailed as error:
        raise LocalQAError(f"{job.pdf.name}, page {job.page}: tesseract failed ({error})") from None
    lines = [line.rstrip() for line in text.replace("\f", "").splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def ocr_dpi(path: Path, document: pymupdf.Document, page: int) -> int:
    """The resolution a page is read at: 300 dpi for a PDF page; an image at its own pixels
    (PyMuPDF sizes an image without a resolution at 96 dpi, and rendering it at 300 would only
    enlarge it, at ten times tesseract's work)."""
    fmt = format_of(path.name)
    if fmt is None or fmt.family != "image":
        return DPI
    with Image.open(path) as image:
        image.seek(page - 1)
        width: int = image.size[0]
    return max(1, round(72 * width / float(document[page - 1].rect.width)))


def write_sidecar(job: OcrJob, text: str) -> None:
    write_atomic(job.sidecar, text)


# --- word boxes: where a sidecar's words are on the page image ---------------------------------
#
# A sidecar is text a person may have corrected, so its words are aligned with tesseract's word
# boxes on the page image rather than trusted to be tesseract's own output: words that still
# match (or replace a misread word one for one) get that word's box; a paragraph with too few
# matching words falls back to the region of the tesseract paragraphs it overlaps, and one with
# none to the whole page.


@dataclass(frozen=True)
class OcrWord:
    """One word tesseract read, with its box in PDF points (unrotated page coordinates)."""

    text: str
    box: Box
    line: tuple[int, int, int]  # (block, paragraph, line) in tesseract's layout

    @property
    def paragraph(self) -> tuple[int, int]:
        return self.line[:2]


@dataclass(frozen=True)
class Located:
    """OCR words standing for a run of sidecar words: `exact` when word for word (a match, or a
    misread word corrected in place); otherwise a misread stretch of a different word count."""

    text_words: range
    ocr_words: range
    exact: bool


class OcrUnavailable(LocalQAError):
    """tesseract is missing or failed, or the page cannot be rendered."""


# Tesseract takes about a second a page: its words are remembered by the file's content, so a
# server or a test session that sees the same page again (even in another copy of the file) reads
# it once. Bounded, and the entries are small (one page's words).
_WORDS: OrderedDict[tuple[str, int, str], tuple[OcrWord, ...]] = OrderedDict()
_WORDS_KEPT = 32
_WORDS_LOCK = threading.Lock()  # the web app reads pages from several threads


def page_words(pdf: Path, page: int, language: str = "eng") -> tuple[OcrWord, ...]:
    """Tesseract's words on page `page` (1-based) of `pdf`, rendered as `localqa ocr` renders it."""
    key = (_sha256(pdf), page, language)
    with _WORDS_LOCK:
        words = _WORDS.get(key)
    if words is None:
        words = _read_words(pdf, page, language)
        with _WORDS_LOCK:
            _WORDS[key] = words
            while len(_WORDS) > _WORDS_KEPT:
                _WORDS.popitem(last=False)
    return words


def _sha256(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError as error:
        raise OcrUnavailable(f"{path.name}: cannot be read ({error.strerror or error})") from None


def _read_words(pdf: Path, page: int, language: str) -> tuple[OcrWord, ...]:
    check_tesseract()
    try:
        with open_pdf(pdf) as document:
            if not 1 <= page <= document.page_count:
                raise OcrUnavailable(f"{pdf.name} has no page {page}")
            pdf_page = document[page - 1]
            dpi = ocr_dpi(pdf, document, page)
            pixmap = pdf_page.get_pixmap(dpi=dpi, colorspace="gray")
            # Pixels are of the page as displayed (rotated); boxes are kept unrotated.
            to_page = pymupdf.Matrix(72 / dpi, 72 / dpi) * pdf_page.derotation_matrix
            image = Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)
    except PdfUnreadable as error:
        raise OcrUnavailable(f"{pdf.name}: {error}") from None
    try:
        found = image_words(image, language)
    except TesseractFailed as error:
        raise OcrUnavailable(f"{pdf.name}, page {page}: tesseract failed ({error})") from None
    words = []
    for word in found:
        rect = pymupdf.Rect(word.left, word.top, word.left + word.width, word.top + word.height) * to_page
        box = (round(rect.x0, 2), round(rect.y0, 2), round(rect.x1, 2), round(rect.y1, 2))
        words.append(OcrWord(word.text.strip(), box, word.line))
    return tuple(words)


_EDGE_PUNCTUATION = re.compile(r"^\W+|\W+$")


def _key(word: str) -> str:
    """What two spellings of a word must share to match: case and edge punctuation ignored."""
    stripped = _EDGE_PUNCTUATION.sub("", word).lower()
    return stripped or word


def align(text_words: list[str], ocr: Sequence[OcrWord]) -> list[Located]:
    """Pair sidecar words with tesseract words (difflib over normalised words, in reading order).
    Sidecar words a person added, that tesseract never read, are left out."""
    matcher = SequenceMatcher(
        None, [_key(w) for w in text_words], [_key(w.text) for w in ocr], autojunk=False
    )
    located = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            located += [
                Located(range(i, i + 1), range(j, j + 1), True)
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
        elif tag == "replace":
            located.append(Located(range(i1, i2), range(j1, j2), False))
    return located


def words_in(located: list[Located], span: range, *, whole: bool) -> list[int]:
    """Indices of the OCR words standing for sidecar words `span`. `whole`: only pairings that
    lie entirely inside the span (a highlight must not spill over); otherwise any overlap."""
    found: list[int] = []
    for item in located:
        inside = span.start <= item.text_words.start and item.text_words.stop <= span.stop
        overlaps = item.text_words.start < span.stop and span.start < item.text_words.stop
        if inside or (overlaps and not whole):
            found += list(item.ocr_words)
    return sorted(set(found))


# A paragraph is located by its own words when at least this share of them is found.
WORD_SHARE = 0.5


def with_word_boxes(
    passages: list[Passage], text: str, words: Sequence[OcrWord], page_box: Box
) -> list[Passage]:
    """The sidecar passages with their boxes: the page image's words standing for each
    passage's words, or the region of the tesseract paragraphs they touch when fewer than half
    are found, or the whole page when none is."""
    text_words = text.split()
    located = align(text_words, words)
    placed = []
    cursor = 0
    for passage in passages:
        own = passage.text.split()
        start = _find(text_words, own, cursor)
        if start is None:  # not a run of the sidecar's words (cannot happen for extract_plain output)
            placed.append(passage.model_copy(update={"boxes": (page_box,)}))
            continue
        cursor = start + len(own)
        span = range(start, cursor)
        found = words_in(located, span, whole=False)
        exact = words_in([item for item in located if item.exact], span, whole=True)
        if not found:
            boxes: tuple[Box, ...] = (page_box,)
        elif len(exact) >= WORD_SHARE * len(own):
            boxes = tuple(words[j].box for j in found)
        else:
            paragraphs = {words[j].paragraph for j in found}
            boxes = line_boxes([w for w in words if w.paragraph in paragraphs])
        placed.append(passage.model_copy(update={"boxes": boxes}))
    return placed


def line_boxes(words: Sequence[OcrWord]) -> tuple[Box, ...]:
    """One box per tesseract line around the given words, in reading order."""
    lines: dict[tuple[int, int, int], list[Box]] = {}
    for word in words:
        lines.setdefault(word.line, []).append(word.box)
    return tuple(
        (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
        for boxes in lines.values()
    )


def _find(words: list[str], run: list[str], start: int) -> int | None:
    for i in range(start, len(words) - len(run) + 1):
        if words[i : i + len(run)] == run:
            return i
    return None


class SidecarWithoutPage(LocalQAError):
    """A sidecar names a page its PDF does not have."""


def extract_sidecar(path: Path, pdf: Path, source: str, page: int) -> tuple[list[Passage], str | None]:
    """The passages of one OCR sidecar with their boxes on the page image, and a warning when
    the boxes could not be found (tesseract missing or failing): the passages are indexed
    without boxes rather than not at all. A sidecar of a page the PDF does not have is refused
    (`SidecarWithoutPage`): its passages would cite a page nobody can open. A byte-order mark
    (an editor on Windows writes one) is not text."""
    with open_pdf(pdf) as document:
        if page > document.page_count:
            raise SidecarWithoutPage(
                f"{pdf.name} has {document.page_count} page(s), so it has no page {page}; "
                "rename the sidecar to the page it transcribes, or remove it"
            )
        rect = document[page - 1].rect * document[page - 1].derotation_matrix
    text = path.read_text(encoding="utf-8-sig")
    passages = extract_plain(text, source, page, Kind.OCR)
    if not passages:
        return passages, None
    try:
        words = page_words(pdf, page)
    except (OcrUnavailable, TesseractMissing) as error:
        return passages, (
            f"OCR passages have no word boxes ({error}), so their quotes cannot be highlighted; "
            "fix that and run 'localqa index --rebuild'"
        )
    page_box = (round(rect.x0, 2), round(rect.y0, 2), round(rect.x1, 2), round(rect.y1, 2))
    return with_word_boxes(passages, text, words, page_box), None
