"""The sample library in `pdfs/`: generated PDFs cannot drift from `pdfs/generate.py`, and the
layout the extractor relies on (paragraph blocks, fonts, ruled tables, a text-less scan) holds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pymupdf
import pytest

PDFS = Path(__file__).resolve().parent.parent / "pdfs"
HANDBOOK = PDFS / "library-handbook.pdf"
EQUIPMENT_COLUMNS = ["Item ID", "Item", "Loan limit", "Deposit"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    subprocess.run(
        [sys.executable, str(PDFS / "generate.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def committed_sources() -> set[str]:
    return {p.name for p in PDFS.iterdir() if p.suffix in {".pdf", ".md", ".docx", ".xlsx", ".csv"}}


def test_generator_reproduces_every_committed_pdf(generated: Path) -> None:
    produced = {p.name for p in generated.glob("*.pdf")}
    committed = {p.name for p in PDFS.glob("*.pdf")}
    assert produced == committed, "run `python pdfs/generate.py` and commit the result"
    for name in sorted(produced):
        assert (generated / name).read_bytes() == (PDFS / name).read_bytes(), (
            f"pdfs/{name} differs from what pdfs/generate.py writes; regenerate and commit it"
        )


OFFICE = ("loans-handbook.docx", "equipment-register.xlsx", "desk-rota.csv")


def test_generator_reproduces_the_word_excel_and_csv_files(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(PDFS / "generate_office.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(OFFICE)
    for name in OFFICE:
        assert (tmp_path / name).read_bytes() == (PDFS / name).read_bytes(), (
            f"pdfs/{name} differs from what pdfs/generate_office.py writes; regenerate and commit it"
        )


def test_catalog_has_an_entry_for_every_source_and_nothing_else() -> None:
    catalog = tomllib.loads((PDFS / "catalog.toml").read_text(encoding="utf-8"))
    assert set(catalog) == committed_sources()
    for name, entry in catalog.items():
        assert entry["access"] in {"public", "staff"}, name
        assert entry["tenant"] == "default", name


def test_handbook_page_4_is_an_image_without_a_text_layer() -> None:
    with pymupdf.open(HANDBOOK) as doc:
        assert doc.page_count == 4
        scan = doc[3]
        assert scan.get_text().strip() == ""
        assert len(scan.get_images()) == 1
        assert all(doc[i].get_text().strip() for i in range(3))


def blocks_of(page: pymupdf.Page) -> list[str]:
    return [" ".join(b[4].split()) for b in page.get_text("blocks") if b[6] == 0]


def test_each_paragraph_is_one_block_and_the_exception_follows_the_rule() -> None:
    with pymupdf.open(HANDBOOK) as doc:
        page1, page2 = blocks_of(doc[0]), blocks_of(doc[1])
    assert any(b.startswith("Standard book loans last 21 days.") for b in page1)
    rule = next(i for i, b in enumerate(page2) if b.startswith("Standard equipment loans"))
    assert "two calendar days" in page2[rule + 1]
    assert "On Saturdays the library opens from 10:00 to 16:00." in page2[-1]


def test_title_and_headings_are_bold_at_their_sizes() -> None:
    with pymupdf.open(HANDBOOK) as doc:
        spans = [
            s for b in doc[0].get_text("dict")["blocks"] for line in b.get("lines", []) for s in line["spans"]
        ]
    styles = {s["text"]: (round(s["size"]), bool(s["flags"] & pymupdf.TEXT_FONT_BOLD)) for s in spans}
    assert styles["Riverside Library Handbook"] == (18, True)
    assert styles["Book loans"] == (14, True)
    body = next(text for text in styles if text.startswith("Standard book loans"))
    assert styles[body] == (11, False)


@pytest.mark.parametrize(
    ("name", "limit", "has_projector"),
    [
        ("equipment-policy-2026-06-01.pdf", "30 minutes", True),
        ("equipment-policy-2026-11-01.pdf", "45 minutes", False),
    ],
)
def test_equipment_table_is_found_with_its_header(name: str, limit: str, has_projector: bool) -> None:
    with pymupdf.open(PDFS / name) as doc:
        tables = doc[0].find_tables().tables
        assert len(tables) == 1
        table = tables[0]
        assert table.header.names == EQUIPMENT_COLUMNS
        assert not table.header.external  # the bold top row is the header, not the title above
        rows = table.extract()[1:]  # extract() includes an internal header row; drop it
    assert rows[1][0] == "EQ-314"  # data row 2
    assert rows[1][2] == limit
    assert any(row[0] == "EQ-073" for row in rows) is has_projector


@pytest.mark.tesseract
@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")
def test_tesseract_reads_the_scanned_notice(tmp_path: Path) -> None:
    image = tmp_path / "page-4.png"
    with pymupdf.open(HANDBOOK) as doc:
        doc[3].get_pixmap(dpi=300).save(image)
    text = subprocess.run(
        ["tesseract", str(image), "-"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},  # much faster on small machines
    ).stdout
    flat = " ".join(text.split())
    assert "Community Map Exchange" in flat
    assert "from 12:00 to 15:00 on weekdays" in flat
