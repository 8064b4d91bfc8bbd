"""Running the tesseract binary on one page image: its text, or its words with their boxes.

tesseract computes with OpenMP threads; on small machines one thread per page is faster (0.5 s a
page against 1.2-2 s). `OMP_THREAD_LIMIT` is set in tesseract's own environment only: set in this
process it would also cap every other OpenMP user loaded here, llama.cpp among them (the embedded
model ran on one core of two that way). pytesseract always passes this process's environment, so
the binary is run here directly.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from dataclasses import dataclass

from PIL import Image

from localqa.errors import LocalQAError

# Threads each tesseract process may use, unless the caller's environment already says.
THREAD_LIMIT = "1"


class TesseractMissing(LocalQAError):
    pass


class TesseractFailed(LocalQAError):
    """tesseract ran and failed; the message carries what it printed."""


def check_tesseract() -> None:
    if shutil.which("tesseract") is None:
        raise TesseractMissing(
            "tesseract is not installed; install it with 'apt-get install tesseract-ocr' (or 'make test')"
        )


def environment() -> dict[str, str]:
    """tesseract's environment: this process's, with one OpenMP thread unless it says otherwise."""
    return {**os.environ, "OMP_THREAD_LIMIT": os.environ.get("OMP_THREAD_LIMIT", THREAD_LIMIT)}


def _run(image: Image.Image, language: str, *outputs: str) -> str:
    # Saved as PNG without a resolution, as pytesseract did, so that tesseract estimates it the
    # same way and reads the same text.
    png = io.BytesIO()
    image.save(png, format="PNG")
    try:
        done = subprocess.run(
            ["tesseract", "stdin", "stdout", "-l", language, *outputs],
            input=png.getvalue(),
            capture_output=True,
            env=environment(),
            check=False,
        )
    except FileNotFoundError:
        check_tesseract()
        raise
    if done.returncode:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TesseractFailed(said[-1] if said else f"exit status {done.returncode}")
    return done.stdout.decode("utf-8", "replace")


def image_text(image: Image.Image, language: str = "eng") -> str:
    """tesseract's plain text of `image`."""
    return _run(image, language)


@dataclass(frozen=True)
class Word:
    """One word tesseract read: its text, its box in image pixels, and its (block, paragraph,
    line) in tesseract's layout."""

    text: str
    left: int
    top: int
    width: int
    height: int
    line: tuple[int, int, int]


def image_words(image: Image.Image, language: str = "eng") -> list[Word]:
    """tesseract's words of `image` (its TSV output), in reading order; blank entries left out."""
    rows = _run(image, language, "tsv").splitlines()
    words = []
    for row in rows[1:]:  # the first line names the columns
        fields = row.split("\t", 11)
        if len(fields) < 12 or not fields[11].strip():
            continue
        block, paragraph, line, left, top, width, height = (int(fields[i]) for i in (2, 3, 4, 6, 7, 8, 9))
        words.append(Word(fields[11], left, top, width, height, (block, paragraph, line)))
    return words
