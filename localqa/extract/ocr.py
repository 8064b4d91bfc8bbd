"""OCR sidecars: `<stem>.page-<N>.ocr.txt` beside a PDF, one per page that has no text layer.

Sidecars are plain text a person can correct; the index reads them like prose with kind `ocr`.
Writing them is a separate step (`localqa ocr`) so that OCR, slow and imperfect, is done once and
reviewed, never silently redone on every index refresh.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from localqa.errors import LocalQAError
from localqa.extract.pdf import has_text_layer, open_pdf
from localqa.files import write_atomic

SIDECAR = re.compile(r"^(?P<stem>.+)\.page-(?P<page>[1-9]\d*)\.ocr\.txt$")
DPI = 300


class TesseractMissing(LocalQAError):
    pass


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


def check_tesseract() -> None:
    if shutil.which("tesseract") is None:
        raise TesseractMissing(
            "tesseract is not installed; install it with 'apt-get install tesseract-ocr' (or 'make test')"
        )


def run_ocr(job: OcrJob, language: str = "eng") -> str:
    """Render the page at 300 dpi and return tesseract's text, tidied for human correction."""
    import pytesseract
    from PIL import Image

    # One thread per tesseract process: on small machines OpenMP threads make it slower, not faster.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    with open_pdf(job.pdf) as document:
        pixmap = document[job.page - 1].get_pixmap(dpi=DPI, colorspace="gray")
        image = Image.open(io.BytesIO(pixmap.tobytes("png")))
    try:
        text = pytesseract.image_to_string(image, lang=language)
    except pytesseract.TesseractError as error:
        raise LocalQAError(f"{job.pdf.name}, page {job.page}: tesseract failed ({error})") from None
    lines = [line.rstrip() for line in text.replace("\f", "").splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"


def write_sidecar(job: OcrJob, text: str) -> None:
    write_atomic(job.sidecar, text)
