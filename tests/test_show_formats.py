"""Seeing the evidence in every format: a passage of a Word document, a spreadsheet or a slide is
drawn in its own text with the quote highlighted (checked by pixels against where PyMuPDF drew
the quote's characters); an image's OCR passage is highlighted on the image itself; `status`
counts passages by format, only among what the caller may see."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pymupdf
import pytest
from click.testing import CliRunner
from highlight import mask, share_inside, stray_pixels, to_pixels
from pptx import Presentation

from localqa.cli import cli
from localqa.display import show, show_text
from localqa.display.show import QuoteNotShownError
from localqa.indexing.index import refresh_index
from localqa.library import Library, VisiblePage
from localqa.store import Db
from localqa.types import Caller, Kind, Passage

AS_OF = "2026-11-14"
RESERVED = "Items reserved by another member cannot be renewed; they must be returned by their due date."


def highlighted_text(png: bytes) -> float:
    """The share of the image that carries the highlight colour."""
    found = mask(png)
    width, height = found.size
    return found.histogram()[255] / (width * height)


def test_a_word_paragraph_is_drawn_in_its_own_text_with_only_the_quote_highlighted(
    indexed: tuple[Path, Db],
) -> None:
    pdfs, db = indexed
    with Library(db) as library:
        page = library.page("loans-handbook.docx", None, as_of=date.fromisoformat(AS_OF), caller=Caller())
    png = show.page_image(pdfs, page, "cannot be renewed")
    found = mask(png)
    # Where the quote is: the drawn page searched by PyMuPDF for the quote, within its passage.
    passage = show.find_passage(page, "cannot be renewed")
    assert passage.text == RESERVED
    document = _drawn(page, passage)
    rects = [to_pixels(tuple(r), show.DEFAULT_DPI) for r in document[0].search_for("cannot be renewed")]
    assert len(rects) == 1
    assert share_inside(found, rects[0]) > 0.4
    assert stray_pixels(found, rects) == 0


def _drawn(page: VisiblePage, passage: Passage) -> pymupdf.Document:
    """The text drawing as a PDF (what `text_image` rasterises)."""
    import io

    markup = show_text.document_html(page.source, show_text.excerpt(page, passage), passage)
    fit = pymupdf.Story(markup, user_css=show_text._CSS).fit_height(
        show_text.WIDTH, height_max=show_text.MAX_HEIGHT, delta=1
    )
    buffer = io.BytesIO()
    writer = pymupdf.DocumentWriter(buffer)
    story = pymupdf.Story(markup, user_css=show_text._CSS)
    margin, width = show_text.MARGIN, show_text.WIDTH
    device = writer.begin_page(pymupdf.Rect(0, 0, width + 2 * margin, fit.rect.height + 2 * margin))
    story.place(pymupdf.Rect(margin, margin, margin + width, margin + fit.rect.height))
    story.draw(device)
    writer.end_page()
    writer.close()
    return pymupdf.open("pdf", buffer.getvalue())


def test_a_spreadsheet_row_is_drawn_among_its_neighbours(indexed: tuple[Path, Db]) -> None:
    pdfs, db = indexed
    with Library(db) as library:
        page = library.page("equipment-register.xlsx", None, as_of=date.fromisoformat(AS_OF), caller=Caller())
    passage = show.find_passage(page, "EQ-404")
    assert (passage.kind, passage.section, passage.row) == (Kind.TABLE, "Equipment", 7)
    drawn = _drawn(page, passage)
    text = drawn[0].get_text()
    assert "row 7" in text and "EQ-401" in text and "EQ-406" in text  # its sheet around it
    png = show.page_image(pdfs, page, "Loan limit: 7 days")
    rects = [to_pixels(tuple(r), show.DEFAULT_DPI) for r in drawn[0].search_for("Loan limit: 7 days")]
    assert len(rects) == 1  # only EQ-404's row says it
    found = mask(png)
    assert share_inside(found, rects[0]) > 0.4
    assert stray_pixels(found, rects) == 0


def test_document_text_is_drawn_as_text_never_as_markup(tmp_path: Path) -> None:
    passage = Passage(
        kind=Kind.PROSE,
        source="notes.docx",
        page=None,
        text='<h1 style="font-size:90pt">Injected</h1> <img src="http://127.0.0.1:9/x.png"> & more',
        section="Notes",
        paragraph=1,
    )
    page = VisiblePage(source="notes.docx", page=None, sha256=None, passages=(passage,))
    png = show_text.text_image(page, '<h1 style="font-size:90pt">Injected</h1>')
    assert highlighted_text(png) > 0  # the markup is text on the page, found and highlighted
    drawn = _drawn(page, passage)
    assert '<h1 style="font-size:90pt">Injected</h1>' in " ".join(drawn[0].get_text().split())


def test_a_quote_that_is_not_in_the_passages_is_refused() -> None:
    passage = Passage(kind=Kind.PROSE, source="a.docx", page=None, text="Loans last 21 days.", paragraph=1)
    page = VisiblePage(source="a.docx", page=None, sha256=None, passages=(passage,))
    with pytest.raises(QuoteNotShownError, match="the quote is not in any passage"):
        show_text.text_image(page, "30 days")


def test_show_cli_prints_or_draws_a_word_passage(indexed: tuple[Path, Db], tmp_path: Path) -> None:
    pdfs, db = indexed
    runner = CliRunner()
    common = ["--db", str(db), "--pdfs", str(pdfs), "--as-of", AS_OF]
    printed = runner.invoke(cli, ["show", "loans-handbook.docx", "--quote", "cannot be renewed", *common])
    assert printed.exit_code == 0, printed.output
    assert printed.output == (
        "loans-handbook.docx, paragraph 3, § Loans > Renewals\n"
        "   Items reserved by another member »cannot be renewed«; they must be returned by their due date.\n"
    )
    out = tmp_path / "renewals.png"
    drawn = runner.invoke(
        cli, ["show", "loans-handbook.docx", "--quote", "cannot be renewed", "-o", str(out), *common]
    )
    assert drawn.exit_code == 0, drawn.output
    assert highlighted_text(out.read_bytes()) > 0


def test_a_slide_is_shown_by_its_number(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Renewals"
    slide.placeholders[1].text_frame.text = "Items may be renewed twice."
    presentation.save(folder / "training.pptx")
    db = tmp_path / "index.sqlite3"
    refresh_index(folder, db, embed=False)
    runner = CliRunner()
    common = ["--db", str(db), "--pdfs", str(folder), "--as-of", AS_OF]
    out = tmp_path / "slide.png"
    result = runner.invoke(
        cli, ["show", "training.pptx", "1", "--quote", "renewed twice", "-o", str(out), *common]
    )
    assert result.exit_code == 0, result.output
    assert highlighted_text(out.read_bytes()) > 0
    usage = runner.invoke(cli, ["show", "training.pptx", "--quote", "renewed twice", *common])
    assert usage.exit_code == 2
    assert "a PowerPoint presentation needs a slide number" in usage.output


def test_ask_show_writes_a_drawing_for_a_word_answer(
    indexed: tuple[Path, Db], tmp_path: Path, fake_model
) -> None:  # type: ignore[no-untyped-def]
    pdfs, db = indexed
    fake_model.enqueue('{"source": "P1", "sentence": 1}')
    out = tmp_path / "shown"
    result = CliRunner().invoke(
        cli,
        [
            "ask",
            "Can an item reserved by another member be renewed?",
            "--model",
            "fake",
            "--show",
            str(out),
            "--db",
            str(db),
            "--pdfs",
            str(pdfs),
            "--as-of",
            AS_OF,
        ],
    )
    assert result.exit_code == 0, result.output
    (written,) = sorted(out.iterdir())
    assert written.name == "1-loans-handbook.png"
    assert highlighted_text(written.read_bytes()) > 0


def test_status_counts_passages_by_format_among_what_the_caller_sees(indexed: tuple[Path, Db]) -> None:
    _, db = indexed
    runner = CliRunner()
    public = json.loads(runner.invoke(cli, ["status", "--db", str(db), "--json"]).output)
    staff = json.loads(runner.invoke(cli, ["status", "--db", str(db), "--json", "--role", "staff"]).output)
    assert public["passages_by_format"]["docx"] == 12
    assert public["passages_by_format"]["xlsx"] == 6
    assert "csv" not in public["passages_by_format"]  # desk-rota.csv is staff-only
    assert staff["passages_by_format"]["csv"] == 4
    assert sum(public["passages_by_format"].values()) == sum(public["passages"].values())


# --- the web app ---------------------------------------------------------------------------------


def test_the_web_app_shows_a_word_answer_marked_and_a_slide_highlighted(tmp_path: Path) -> None:
    import shutil

    from fastapi.testclient import TestClient

    from localqa.serve.app import ServeConfig, create_app

    folder = tmp_path / "pdfs"
    folder.mkdir()
    sample = Path(__file__).resolve().parent.parent / "pdfs"
    shutil.copy(sample / "loans-handbook.docx", folder)
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Fines"
    slide.placeholders[1].text_frame.text = "Overdue laptops cost 5 dollars a day."
    presentation.save(folder / "fines.pptx")
    db = tmp_path / "index.sqlite3"
    refresh_index(folder, db, embed=False)
    with TestClient(create_app(ServeConfig(db=db, pdfs=folder, model="extractive"))) as client:
        word = client.get(
            "/ask", params={"question": "How much does an interlibrary loan request cost?", "as_of": AS_OF}
        )
        assert word.status_code == 200
        assert "<mark" in word.text and "An interlibrary loan request costs 3 dollars" in word.text
        asked = client.post(
            "/api/ask", json={"question": "How much do overdue laptops cost?", "as_of": AS_OF}
        )
        citation = asked.json()["parts"][0]["answer"]["citation"]
        assert (citation["source"], citation["page"]) == ("fines.pptx", 1)
        slide_page = client.get(
            "/ask", params={"question": "How much do overdue laptops cost?", "as_of": AS_OF}
        )
        assert "/api/pages/fines.pptx/1.png?" in slide_page.text
        image = client.get(
            "/api/pages/fines.pptx/1.png",
            params={"quote": "Overdue laptops cost 5 dollars a day.", "as_of": AS_OF},
        )
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        assert highlighted_text(image.content) > 0


def test_a_copied_staff_spreadsheet_stays_staff(indexed: tuple[Path, Db]) -> None:
    """The content-hash rule holds for every format: the staff-only rota copied under a new name,
    without a catalog entry, is indexed as narrowly as the file whose bytes it has."""
    import shutil

    folder, db = indexed
    shutil.copy(folder / "desk-rota.csv", folder / "rota-copy.csv")
    report = refresh_index(folder, db, embed=False)
    assert report.added == ["rota-copy.csv"]
    (warning,) = [p for p in report.problems if p.source == "rota-copy.csv"]
    assert (
        "has the same content as desk-rota.csv, so it is indexed as narrowly (access staff" in warning.message
    )
    with Library(db) as library:
        public = library.search("Who works the closing shift on Friday?", as_of=date.fromisoformat(AS_OF))
        staff = library.search(
            "Who works the closing shift on Friday?",
            as_of=date.fromisoformat(AS_OF),
            caller=Caller(role="staff"),
        )
        assert library.status(Caller()).formats.get("csv") is None
    assert not any(c.location.source.endswith(".csv") for c in public[0].candidates)
    assert {c.location.source for c in staff[0].candidates[:2]} == {"desk-rota.csv", "rota-copy.csv"}
