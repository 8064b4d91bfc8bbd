"""One rule for what an author hid, in every format (issue 36.6): it is not indexed, so never
searched nor quoted, and `index` says per file what it left out. Spreadsheets had the rule
(tests/test_formats.py); Word, PowerPoint and HTML quoted "the staff override code is 4242"."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import docx
import pytest
from click.testing import CliRunner
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from pptx import Presentation
from pptx.util import Inches

from localqa.cli import cli
from localqa.extract import extract_file
from localqa.library import search_parts

SECRET = "The staff override code is 4242."
SHOWN = "Standard loans last 21 days at every branch of the library."


def word(path: Path) -> str:
    """Hidden four ways: a run marked hidden, a run whose character style hides it, a paragraph
    whose style (through `basedOn`) hides it; a run that unhides itself in it is read."""
    document = docx.Document()
    document.add_heading("Loans", 1)
    paragraph = document.add_paragraph(SHOWN + " ")
    paragraph.add_run(SECRET).font.hidden = True
    secret_style = document.styles.add_style("Secret", WD_STYLE_TYPE.CHARACTER)
    secret_style.font.hidden = True
    document.add_paragraph("Renewals are free. ").add_run(SECRET, style="Secret")
    hidden_body = document.styles.add_style("Hidden body", WD_STYLE_TYPE.PARAGRAPH)
    hidden_body.font.hidden = True
    notes = document.styles.add_style("Desk notes", WD_STYLE_TYPE.PARAGRAPH)
    notes.base_style = hidden_body
    hidden = document.add_paragraph(SECRET, style="Desk notes")
    unhidden = hidden.add_run(" Fines are capped at 10 dollars.")
    vanish = OxmlElement("w:vanish")
    vanish.set(qn("w:val"), "false")
    unhidden._r.get_or_add_rPr().append(vanish)
    document.save(path)
    return "3 hidden run(s) of text"


def slides(path: Path) -> str:
    """Slide 2 hidden in the slide show; on slide 3, one shape hidden in the selection pane."""
    deck = Presentation()
    for number, body in enumerate([SHOWN, SECRET, "Renewals are free."], start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Desk {number}"
        slide.placeholders[1].text = body
    deck.slides[1]._element.set("show", "0")
    box = deck.slides[2].shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(1))
    box.text_frame.text = SECRET
    box._element.nvSpPr.cNvPr.set("hidden", "1")
    deck.save(path)
    return "hidden slide 2; 1 hidden shape(s) of slide 3"


def page(path: Path) -> str:
    """Hidden by the `hidden` attribute, `display: none` and `visibility: hidden`; `aria-hidden`
    (hidden from a screen reader, shown on the screen) is read."""
    path.write_text(
        f"<html><head><title>Desk</title></head><body><main><h1>Loans</h1><p>{SHOWN}</p>"
        f'<p style="color: red; DISPLAY:none">{SECRET}</p><div hidden><p>{SECRET}</p></div>'
        f'<p style="visibility: hidden">{SECRET}</p>'
        '<p aria-hidden="true">Renewals are free of charge at the desk and online.</p></main></body></html>',
        encoding="utf-8",
    )
    return "3 hidden element(s)"


MADE: dict[str, Callable[[Path], str]] = {"desk.docx": word, "desk.pptx": slides, "desk.html": page}


@pytest.mark.parametrize("name", sorted(MADE))
def test_what_the_author_hid_is_left_out_and_said(name: str, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    said = MADE[name](folder / name)
    extracted = extract_file(folder / name, name, name)
    texts = " ".join(p.text for p in extracted.passages)
    assert "4242" not in texts and "21 days" in texts
    db = tmp_path / "index.sqlite3"
    done = CliRunner().invoke(cli, ["index", "--pdfs", str(folder), "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert f"Warning: {name}: hidden content is not indexed ({said}); unhide it to index it" in done.output
    results = search_parts("What is the staff override code?", as_of=date(2026, 12, 1), db=db)
    assert not [c for r in results for c in r.candidates if "4242" in c.text]


def test_word_keeps_a_run_that_unhides_itself_and_the_text_around_hidden_runs(tmp_path: Path) -> None:
    word(tmp_path / "desk.docx")
    texts = [p.text for p in extract_file(tmp_path / "desk.docx", "desk.docx", "desk.docx").passages]
    assert texts == [SHOWN, "Renewals are free.", "Fines are capped at 10 dollars."]


def test_html_aria_hidden_is_read(tmp_path: Path) -> None:
    page(tmp_path / "desk.html")
    texts = [p.text for p in extract_file(tmp_path / "desk.html", "desk.html", "desk.html").passages]
    assert texts == [SHOWN, "Renewals are free of charge at the desk and online."]


def test_slides_keep_their_numbers_around_a_hidden_slide(tmp_path: Path) -> None:
    slides(tmp_path / "desk.pptx")
    passages = extract_file(tmp_path / "desk.pptx", "desk.pptx", "desk.pptx").passages
    assert [(p.page, p.text) for p in passages] == [(1, SHOWN), (3, "Renewals are free.")]
