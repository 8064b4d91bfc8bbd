"""Images (.png, .jpg, .tiff) are scanned pages: `localqa ocr` writes an editable sidecar for
each of their pages, the index reads it as it reads a PDF page's, and `show` highlights the
quote's words on the image itself. Runs the real tesseract."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest
from click.testing import CliRunner
from highlight import mask
from PIL import Image, ImageDraw, ImageFont

from localqa.cli import cli
from localqa.extract.ocr import ocr_dpi

pytestmark = pytest.mark.tesseract

AS_OF = "2026-11-14"
NOTICE = "The map exchange opens at 12:00 on Saturdays."


def photo(path: Path, lines: list[str], **save: object) -> Path:
    image = Image.new("L", (1500, 120 + 90 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=44)
    for number, line in enumerate(lines):
        draw.text((60, 60 + 90 * number), line, font=font, fill=0)
    image.save(path, **save)
    return path


def test_an_image_is_read_at_its_own_pixels(tmp_path: Path) -> None:
    path = photo(tmp_path / "notice.png", ["Notice"])
    with pymupdf.open(path) as document:
        pixmap = document[0].get_pixmap(dpi=ocr_dpi(path, document, 1))
    assert (pixmap.width, pixmap.height) == Image.open(path).size


def test_ocr_index_search_and_show_an_image(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    photo(folder / "notice.png", ["Notice to members", "", NOTICE], dpi=(200, 200))
    photo(
        folder / "scan.tiff",
        ["Page one of the scan"],
        save_all=True,
        append_images=[Image.new("L", (10, 10), 255)],
    )
    runner = CliRunner()
    db = tmp_path / "index.sqlite3"
    common = ["--db", str(db), "--pdfs", str(folder)]
    before = runner.invoke(cli, ["index", *common])
    assert before.exit_code == 0, before.output
    assert (
        "notice.png, page 1: no text layer and no OCR sidecar; run 'localqa ocr' to add one" in before.output
    )
    ocr = runner.invoke(cli, ["ocr", "--pdfs", str(folder)])
    assert ocr.exit_code == 0, ocr.output
    sidecar = folder / "notice.page-1.ocr.txt"
    assert NOTICE in sidecar.read_text()
    assert (folder / "scan.page-1.ocr.txt").exists()  # a TIFF page is a page
    after = runner.invoke(cli, ["index", *common])
    assert after.exit_code == 0, after.output
    found = json.loads(
        runner.invoke(cli, ["search", "map exchange", "--json", "--as-of", AS_OF, "--db", str(db)]).output
    )
    top = found["parts"][0]["candidates"][0]
    assert (top["source"], top["page"], top["kind"], top["text"]) == ("notice.png", 1, "ocr", NOTICE)
    out = tmp_path / "shown.png"
    shown = runner.invoke(
        cli, ["show", "notice.png", "1", "--quote", NOTICE, "-o", str(out), "--as-of", AS_OF, *common]
    )
    assert shown.exit_code == 0, shown.output
    highlight = mask(out.read_bytes())
    width, height = highlight.size
    rows = [y for y in range(height) if any(highlight.getpixel((x, y)) for x in range(0, width, 4))]
    assert rows, "nothing highlighted"
    # Only the notice's line (the third of three), not its title.
    assert min(rows) > height * 0.45
    # An edited sidecar is read again, like a PDF page's.
    sidecar.write_text(sidecar.read_text().replace("12:00", "13:00"))
    edited = runner.invoke(cli, ["index", *common])
    assert "changed  notice.page-1.ocr.txt" in edited.output
