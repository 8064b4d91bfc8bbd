"""`localqa show` and `ask --show` over the sample library: the highlight is checked by pixels
against where the text really is (PyMuPDF's own search, the table's row, and for the scanned
page the notice re-typeset exactly as pdfs/generate.py typeset it before rasterising)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from collections import OrderedDict
from datetime import date
from pathlib import Path
from types import ModuleType

import pymupdf
import pytest
from click.testing import CliRunner
from highlight import highlighted, mask, share_inside, stray_pixels, to_pixels

from localqa.cli import cli
from localqa.display import show
from localqa.extract import ocr
from localqa.indexing.index import refresh_index
from localqa.library import Library, VisiblePage
from localqa.types import Kind, Passage

REPO = Path(__file__).resolve().parent.parent
AS_OF = "2026-11-14"
DPI = 110
FRAGILE = (
    "Fragile equipment, such as camera lenses and the document scanner, may be borrowed for two "
    "calendar days only."
)
EQ314_ROW = (
    "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner; Loan limit: 45 minutes; "
    "Deposit: 20 dollars"
)
MAPS = "The desk accepts maps for the community map exchange from 12:00 to 15:00 on weekdays."


def run_show(runner: CliRunner, db: Path, pdfs: Path, *args: str) -> object:
    return runner.invoke(cli, ["show", *args, "--db", str(db), "--pdfs", str(pdfs), "--as-of", AS_OF])


def shown(runner: CliRunner, db: Path, tmp_path: Path, source: str, page: int, quote: str | None) -> bytes:
    out = tmp_path / "page.png"
    extra = ["--quote", quote] if quote is not None else []
    result = run_show(runner, db, db.parent / "pdfs", source, str(page), *extra, "-o", str(out))
    assert result.exit_code == 0, result.output
    return out.read_bytes()


def assert_highlights_exactly(png: bytes, expected: list[pymupdf.Rect]) -> None:
    """Highlight colour inside each expected rectangle, and nowhere else on the page."""
    found = mask(png)
    rects = [to_pixels(tuple(rect), DPI) for rect in expected]
    for rect in rects:
        assert share_inside(found, rect) > 0.4, rect
    assert stray_pixels(found, rects) == 0


def test_a_prose_sentence_that_wraps_is_highlighted_on_both_lines_only(
    library_db: Path, runner: CliRunner, tmp_path: Path
) -> None:
    png = shown(runner, library_db, tmp_path, "library-handbook.pdf", 2, FRAGILE)
    with pymupdf.open(REPO / "pdfs" / "library-handbook.pdf") as document:
        lines = document[1].search_for(FRAGILE)
        rest = document[1].search_for("This exception overrides the standard equipment loan period.")
    assert len(lines) == 2  # the sentence wraps
    assert_highlights_exactly(png, lines)
    # The next sentence of the same paragraph, on the same line, stays plain.
    assert share_inside(mask(png), to_pixels(tuple(rest[0]), DPI)) == 0


def test_a_table_row_is_highlighted_as_the_whole_row(
    library_db: Path, runner: CliRunner, tmp_path: Path
) -> None:
    png = shown(runner, library_db, tmp_path, "equipment-policy-2026-11-01.pdf", 1, EQ314_ROW)
    with pymupdf.open(REPO / "pdfs" / "equipment-policy-2026-11-01.pdf") as document:
        table = document[0].find_tables().tables[0]
        row = pymupdf.Rect(table.rows[2].bbox)  # rows[0] is the header; EQ-314 is data row 2
        assert "EQ-314" in document[0].get_textbox(row)
    assert_highlights_exactly(png, [row])


def _generate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sample_generate", REPO / "pdfs" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


def scan_rects(sentence: str) -> list[pymupdf.Rect]:
    """Where `sentence` was typeset on the handbook's scanned page before it became a picture:
    the same steps as generate.add_scanned_page, stopping before rasterising."""
    generate = _generate_module()
    scan = generate.HANDBOOK[3]
    scratch = pymupdf.open()
    writer = generate.PageWriter(
        scratch.new_page(width=generate.PAGE_WIDTH, height=generate.PAGE_HEIGHT), 1.8
    )
    writer.y = generate.MARGIN * 1.5 + generate.MARGIN / 2
    for block in scan.blocks:
        writer.block(block)
    return [pymupdf.Rect(rect) for rect in writer.page.search_for(sentence)]


@pytest.mark.tesseract
def test_an_ocr_paragraph_on_the_scanned_page_is_highlighted_word_by_word(
    library_db: Path, runner: CliRunner, tmp_path: Path
) -> None:
    png = shown(runner, library_db, tmp_path, "library-handbook.pdf", 4, MAPS)
    lines = scan_rects(MAPS)
    assert len(lines) == 2
    # Tesseract's word boxes are a little taller than the glyphs' line boxes: allow 3 points.
    grown = [pymupdf.Rect(r.x0 - 3, r.y0 - 3, r.x1 + 3, r.y1 + 3) for r in lines]
    found = mask(png)
    for line in lines:
        assert share_inside(found, to_pixels(tuple(line), DPI)) > 0.4
    assert stray_pixels(found, [to_pixels(tuple(r), DPI) for r in grown]) == 0
    # The other paragraph of the notice stays plain.
    donated = scan_rects("Donated maps should be folded flat and labelled with the name of the donor.")
    assert all(share_inside(found, to_pixels(tuple(r), DPI)) == 0 for r in donated)


@pytest.mark.tesseract
def test_indexed_ocr_boxes_are_the_paragraphs_words(library_db: Path) -> None:
    with Library(library_db) as library:
        page = library.page("library-handbook.pdf", 4, as_of=date.fromisoformat(AS_OF))
    maps = next(p for p in page.passages if p.text == MAPS)
    assert len(maps.boxes) == len(MAPS.split())  # every word found, one box each
    lines = [pymupdf.Rect(r.x0 - 3, r.y0 - 3, r.x1 + 3, r.y1 + 3) for r in scan_rects(MAPS)]
    assert all(any(pymupdf.Rect(box) in line for line in lines) for box in maps.boxes)


@pytest.mark.tesseract
def test_a_sidecar_corrected_by_hand_still_places_its_words(
    sample_pdfs: Path, runner: CliRunner, tmp_path: Path
) -> None:
    sidecar = sample_pdfs / "library-handbook.page-4.ocr.txt"
    corrected = MAPS.replace("on weekdays.", "on working days.")
    sidecar.write_text(
        sidecar.read_text(encoding="utf-8").replace(
            "exchange from 12:00 to 15:00 on weekdays.", "exchange from 12:00 to 15:00 on working days."
        ),
        encoding="utf-8",
    )
    db = tmp_path / "index.sqlite3"
    assert not refresh_index(sample_pdfs, db).problems
    out = tmp_path / "corrected.png"
    result = run_show(
        runner, db, sample_pdfs, "library-handbook.pdf", "4", "--quote", corrected, "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    found = mask(out.read_bytes())
    lines = scan_rects(MAPS)
    grown = [to_pixels((r.x0 - 3, r.y0 - 3, r.x1 + 3, r.y1 + 3), DPI) for r in lines]
    assert stray_pixels(found, grown) == 0
    # "weekdays." was corrected to "working days": its place is still the quote's own place.
    weekdays = next(r for r in (scan_rects("weekdays.")) if r.y0 > lines[0].y1 - 1)
    assert share_inside(found, to_pixels(tuple(weekdays), DPI)) > 0.4


def test_markdown_prints_the_paragraph_with_the_sentence_marked(library_db: Path, runner: CliRunner) -> None:
    result = run_show(
        runner,
        library_db,
        library_db.parent / "pdfs",
        "fines-and-fees.md",
        "--quote",
        "Fines above 10 dollars block further loans.",
    )
    assert result.exit_code == 0, result.output
    assert result.output == (
        "fines-and-fees.md, paragraph 2, § Fines and Fees > Late fees\n"
        "   Overdue books incur a fine of 20 cents per day. »Fines above 10 dollars block further loans.«\n"
    )


def test_a_quote_not_on_the_page_is_refused_and_nothing_is_written(
    library_db: Path, runner: CliRunner, tmp_path: Path
) -> None:
    out = tmp_path / "page.png"
    result = run_show(
        runner,
        library_db,
        library_db.parent / "pdfs",
        "library-handbook.pdf",
        "1",
        "--quote",
        FRAGILE,
        "-o",
        str(out),  # a real sentence, but of page 2
    )
    assert result.exit_code == 1
    assert result.output == (
        "Error: the quote is not in any passage on page 1 of 'library-handbook.pdf'; nothing to highlight\n"
    )
    assert not out.exists()


def test_a_hidden_page_is_refused_exactly_like_a_missing_one(library_db: Path, runner: CliRunner) -> None:
    pdfs = library_db.parent / "pdfs"
    outputs = {
        name: run_show(
            runner, library_db, pdfs, name, "1", "--quote", "The alarm code is changed every 90 days."
        )
        for name in ("staff-procedures.pdf", "no-such-file.pdf", "../pdfs/staff-procedures.pdf")
    }
    for name, result in outputs.items():
        assert result.exit_code == 1
        assert result.output == (
            f"Error: page 1 of {name!r} is not in the index for role public, tenant default on "
            f"{AS_OF}; check the source name and page (see 'localqa search')\n"
        )
    staff = runner.invoke(
        cli,
        [
            "show",
            "staff-procedures.pdf",
            "1",
            "--quote",
            "The alarm code is changed every 90 days.",
            "--db",
            str(library_db),
            "--pdfs",
            str(pdfs),
            "--as-of",
            AS_OF,
            "--role",
            "staff",
            "-o",
            str(library_db.parent / "staff.png"),
        ],
    )
    assert staff.exit_code == 0, staff.output


def test_a_superseded_version_is_not_shown(library_db: Path, runner: CliRunner) -> None:
    result = run_show(runner, library_db, library_db.parent / "pdfs", "equipment-policy-2026-06-01.pdf", "1")
    assert result.exit_code == 1
    assert "is not in the index for role public" in result.output


def test_without_a_quote_the_page_is_rendered_plain(
    library_db: Path, runner: CliRunner, tmp_path: Path
) -> None:
    png = shown(runner, library_db, tmp_path, "library-handbook.pdf", 1, None)
    assert highlighted(png) == 0


def test_a_changed_file_is_not_highlighted_with_old_boxes(
    sample_pdfs: Path, runner: CliRunner, tmp_path: Path
) -> None:
    db = tmp_path / "index.sqlite3"
    refresh_index(sample_pdfs, db)
    shutil.copy(
        sample_pdfs / "equipment-policy-2026-06-01.pdf", sample_pdfs / "equipment-policy-2026-11-01.pdf"
    )
    result = run_show(runner, db, sample_pdfs, "equipment-policy-2026-11-01.pdf", "1", "--quote", EQ314_ROW)
    assert result.exit_code == 1
    assert result.output == (
        "Error: equipment-policy-2026-11-01.pdf has changed since it was indexed; run 'localqa index'\n"
    )


def test_ask_show_writes_one_image_per_verified_answer(
    library_db: Path, runner: CliRunner, tmp_path: Path
) -> None:
    folder = tmp_path / "shown"
    question = (
        "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
        "exchange, and how many days does a standard book loan last?"
    )
    result = runner.invoke(
        cli,
        [
            "ask",
            question,
            "--as-of",
            AS_OF,
            "--model",
            "extractive",
            "--db",
            str(library_db),
            "--pdfs",
            str(library_db.parent / "pdfs"),
            "--show",
            str(folder),
        ],
    )
    assert result.exit_code == 0, result.output
    names = [
        "1-equipment-policy-2026-11-01.page-1.png",
        "2-library-handbook.page-4.png",
        "3-library-handbook.page-1.png",
    ]
    for name in names:
        assert f"   page image: {folder / name}\n" in result.output
    assert sorted(p.name for p in folder.iterdir()) == names
    assert highlighted((folder / names[0]).read_bytes()) > 0


# --- the matching itself, on a page made here --------------------------------------------------


def hyphenated_page(document: pymupdf.Document) -> pymupdf.Page:
    page = document.new_page(width=300, height=200)
    page.insert_text((20, 40), "Loans of reference books need written per-", fontsize=10)
    page.insert_text((20, 55), "mission from the librarian on duty. Other", fontsize=10)
    page.insert_text((20, 70), "books may be borrowed freely.", fontsize=10)
    return page


@pytest.mark.parametrize(
    "quote",
    [
        "Loans of reference books need written per- mission from the librarian on duty.",
        "Loans of reference books need written permission from the librarian on duty.",
        "Loans of reference books need written per-mission from the librarian on duty.",
    ],
)
def test_a_hyphenated_sentence_is_found_however_it_was_extracted(quote: str) -> None:
    with pymupdf.open() as document:
        page = hyphenated_page(document)
        boxes = show.text_boxes(page, [(0, 0, 300, 200)], quote)
        assert len(boxes) == 2
        assert "per-" in page.get_textbox(boxes[0]) and "duty." in page.get_textbox(boxes[1])
        assert "Other" not in page.get_textbox(boxes[1])


def test_text_outside_the_passage_boxes_is_never_matched() -> None:
    with pymupdf.open() as document:
        page = hyphenated_page(document)
        assert show.text_boxes(page, [(0, 60, 300, 200)], "Loans of reference books") == ()


@pytest.mark.parametrize("name", ["../secret.pdf", "a/b.pdf", "..", "a\\b.pdf"])
def test_a_path_like_source_name_is_refused(tmp_path: Path, name: str) -> None:
    page = VisiblePage(
        source=name, page=1, sha256=None, passages=(Passage(kind=Kind.PROSE, source=name, page=1, text="x"),)
    )
    with pytest.raises(show.QuoteNotShownError, match="is not a file name"):
        show.source_file(tmp_path, page)


def test_missing_tesseract_indexes_ocr_passages_without_boxes_and_show_refuses(
    sample_pdfs: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(ocr, "_WORDS", OrderedDict())  # words read earlier in this process
    db = tmp_path / "index.sqlite3"
    report = refresh_index(sample_pdfs, db)
    assert not report.failed
    assert [(p.source, p.warning) for p in report.problems] == [("library-handbook.page-4.ocr.txt", True)]
    assert "tesseract is not installed" in report.problems[0].message
    result = run_show(
        runner, db, sample_pdfs, "library-handbook.pdf", "4", "--quote", MAPS, "-o", str(tmp_path / "x.png")
    )
    assert result.exit_code == 1
    assert result.output == (
        "Error: library-handbook.pdf, page 4: the index records no position for this passage; "
        "run 'localqa index --rebuild'\n"
    )


def test_a_ligature_matches_its_letters() -> None:
    with pymupdf.open() as document:
        page = document.new_page(width=300, height=100)
        page.insert_text((20, 40), "The final notice is posted.", fontsize=10)
        assert show.text_boxes(page, [(0, 0, 300, 100)], "The \ufb01nal notice is posted.")


def test_a_pdf_needs_a_page(library_db: Path, runner: CliRunner) -> None:
    result = run_show(runner, library_db, library_db.parent / "pdfs", "library-handbook.pdf")
    assert result.exit_code == 2
    assert "Error: a PDF needs PAGE: localqa show SOURCE PAGE [--quote TEXT]" in result.output


def test_ask_show_json_names_each_image(library_db: Path, runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "shown"
    result = runner.invoke(
        cli,
        [
            "ask",
            "How much is the fine for an overdue book?",
            "--part",
            "What is the loan limit for EQ-314?",
            "--part",
            "How much is the fine per day for overdue books?",
            "--as-of",
            AS_OF,
            "--model",
            "extractive",
            "--db",
            str(library_db),
            "--pdfs",
            str(library_db.parent / "pdfs"),
            "--show",
            str(folder),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    parts = json.loads(result.stdout)["parts"]
    assert parts[0]["image"] == str(folder / "1-equipment-policy-2026-11-01.page-1.png")
    assert parts[1]["answer"]["citation"]["source"] == "fines-and-fees.md"
    # A text source has no page: its own text is drawn around the quote.
    assert parts[1]["image"] == str(folder / "2-fines-and-fees.png")
    assert sorted(p.name for p in folder.iterdir()) == [
        "1-equipment-policy-2026-11-01.page-1.png",
        "2-fines-and-fees.png",
    ]
