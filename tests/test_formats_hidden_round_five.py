"""Round five's red team on what an author hid (issue 50): each document is the one that broke,
and each test fails on the code before its fix. Word indexed a tracked move's old copy ("40
dollars" where the document now says 55) and `w:specVanish` runs; HTML indexed `<template>`
content, `display:/**/none`, zero font size and opacity and clipped text; a spreadsheet indexed a
column of width 0, a row of height 0, a `;;;` cell and white on white."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

import docx
import openpyxl
import pytest
from click.testing import CliRunner
from docx.oxml import parse_xml
from openpyxl.formatting.rule import CellIsRule
from openpyxl.styles import Font, PatternFill

from localqa.cli import cli
from localqa.extract import extract_file
from localqa.library import search_parts

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
MOVED = "The Kestrel Quay mooring fee is 40 dollars per night."
NOW = "The Kestrel Quay mooring fee is 55 dollars per night."
SHOWN = "Standard loans last 21 days at every branch of the library."


def raw_paragraph(document: docx.document.Document, inner: str) -> None:
    """A paragraph of `inner` WordprocessingML, placed before the section properties."""
    document.add_paragraph()._p.addprevious(parse_xml(f"<w:p {W_NS}>{inner}</w:p>"))


def run(text: str, properties: str = "") -> str:
    return f'<w:r><w:rPr>{properties}</w:rPr><w:t xml:space="preserve">{text}</w:t></w:r>'


def moved_word(path: Path) -> None:
    """The red team's document: the mooring fee sentence moved with track changes to the end of
    the section, and changed there; its old copy stays in `w:moveFrom`. A `w:specVanish` run."""
    document = docx.Document()
    document.add_heading("Moorings", 1)
    move = 'w:id="{0}" w:author="Harbour office" w:date="2026-10-01T09:00:00Z"'
    raw_paragraph(document, f"<w:moveFrom {move.format(1)}>{run(MOVED)}</w:moveFrom>")
    document.add_paragraph(SHOWN)
    raw_paragraph(document, run("Visitors pay at the office. ") + run(MOVED, "<w:specVanish/>"))
    raw_paragraph(document, f"<w:moveTo {move.format(2)}>{run(NOW)}</w:moveTo>")
    document.save(path)


HIDDEN_BOXES = (  # a text box in a hidden shape, as Word writes it (DrawingML) and in its VML fallback
    '<w:r><w:drawing><wp:anchor xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
    ' simplePos="0" relativeHeight="1" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
    '<wp:docPr id="7" name="Text Box 7" hidden="1"/>'
    '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
    '<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
    '<wps:wsp xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:txbx>'
    "<w:txbxContent><w:p><w:r><w:t>The berth code is 4478.</w:t></w:r></w:p></w:txbxContent>"
    "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></w:r>"
    '<w:r><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml" style="visibility:hidden"><v:textbox>'
    "<w:txbxContent><w:p><w:r><w:t>The berth code is 4479.</w:t></w:r></w:p></w:txbxContent>"
    "</v:textbox></v:shape></w:pict></w:r>"
)


def test_a_text_box_whose_shape_is_hidden_is_not_read(tmp_path: Path) -> None:
    """A guard more than a fix: Word text boxes are not read at all (docs/formats.md), so one in
    a hidden shape is not either; should text boxes ever be read, this says the hidden stay out."""
    document = docx.Document()
    raw_paragraph(document, run("Visitors pay at the office. ") + HIDDEN_BOXES)
    document.save(tmp_path / "b.docx")
    texts = [p.text for p in extract_file(tmp_path / "b.docx", "b.docx", "b.docx").passages]
    assert texts == ["Visitors pay at the office."]


def template_page(path: Path) -> None:
    path.write_text(
        "<html><head><title>Harbour</title></head><body><main><h1>Gates</h1>"
        f"<p>{SHOWN}</p>"
        "<template><p>The harbour gate code is 4471 for staff only.</p></template>"
        '<p style="display:/**/none">The harbour gate code is 4471 for staff only.</p>'
        '<p style="font-size: 0PX">The harbour gate code is 4471 for staff only.</p>'
        '<p style="opacity:0.0">The harbour gate code is 4471 for staff only.</p>'
        '<p style="position:absolute;clip:rect(1px,1px,1px,1px)">'
        "The harbour gate code is 4471 for staff only.</p>"
        "<p>The harbour opens at six every morning of the week.</p></main></body></html>",
        encoding="utf-8",
    )


def with_sheet_xml(data: bytes, change: Callable[[str], str]) -> bytes:
    """The workbook `data` with its first sheet's XML changed (openpyxl writes no width or height
    of 0: it takes 0 for "not set")."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            body = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                body = change(body.decode("utf-8")).encode("utf-8")
            target.writestr(item, body)
    return out.getvalue()


def gates_workbook(path: Path) -> None:
    """The red team's register: the gate codes in column C, of width 0; a row of height 0; a cell
    formatted `;;;`; a cell in white on no fill and one in white on a white fill."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Gates"
    sheet.append(["Gate", "Opens", "Code"])
    sheet.append(["North", "06:00", "gate code 4472"])
    sheet.append(["South", "07:00", "gate code 4473"])
    sheet.append(["East", "08:00", "none"])
    sheet.append(["West", "09:00", "none"])
    sheet["B4"].number_format = ";;;"
    sheet["A5"].font = Font(color="FFFFFFFF")
    sheet["B5"].font = Font(color="FFFFFF")
    sheet["B5"].fill = PatternFill("solid", fgColor="FFFFFFFF")
    buffer = io.BytesIO()
    book.save(buffer)

    def hide(xml: str) -> str:
        cols = '<cols><col min="3" max="3" width="0" customWidth="1"/></cols>'
        xml = xml.replace("<sheetData>", f"{cols}<sheetData>")
        return re.sub(r'<row r="3"[^>]*>', '<row r="3" ht="0" customHeight="1">', xml)

    path.write_bytes(with_sheet_xml(buffer.getvalue(), hide))


def indexed(tmp_path: Path, name: str, make: Callable[[Path], None]) -> tuple[Path, str]:
    folder = tmp_path / "docs"
    folder.mkdir()
    make(folder / name)
    db = tmp_path / "index.sqlite3"
    done = CliRunner().invoke(cli, ["index", "--pdfs", str(folder), "--db", str(db)])
    assert done.exit_code == 0, done.output
    return db, done.output


def found(db: Path, question: str) -> list[str]:
    results = search_parts(question, as_of=date(2026, 12, 1), db=db)
    return [c.text for r in results for c in r.candidates]


def test_the_moved_away_mooring_fee_is_not_indexed_and_the_fee_now_is(tmp_path: Path) -> None:
    db, output = indexed(tmp_path, "moorings.docx", moved_word)
    texts = found(db, "What is the Kestrel Quay mooring fee per night?")
    assert texts[0] == NOW
    assert not [t for t in texts if "40 dollars" in t]
    said = "hidden content is not indexed (1 hidden run(s) of text; 1 moved-away copy(ies) of tracked moves)"
    assert f"Warning: moorings.docx: {said}; unhide it to index it" in output


def test_word_keeps_the_text_around_a_move_and_a_spec_vanish_run(tmp_path: Path) -> None:
    moved_word(tmp_path / "m.docx")
    passages = extract_file(tmp_path / "m.docx", "m.docx", "m.docx").passages
    assert [p.text for p in passages] == [SHOWN, "Visitors pay at the office.", NOW]


def test_the_template_gate_code_is_not_indexed(tmp_path: Path) -> None:
    db, output = indexed(tmp_path, "harbour.html", template_page)
    assert not [t for t in found(db, "What is the harbour gate code?") if "4471" in t]
    assert "Warning: harbour.html: hidden content is not indexed (5 hidden element(s))" in output
    page = extract_file(tmp_path / "docs" / "harbour.html", "harbour.html", "harbour.html")
    assert [p.text for p in page.passages] == [SHOWN, "The harbour opens at six every morning of the week."]


def test_the_zero_width_columns_code_is_not_indexed(tmp_path: Path) -> None:
    db, output = indexed(tmp_path, "gates.xlsx", gates_workbook)
    assert not [t for t in found(db, "What is the gate code?") if "447" in t]
    said = (
        "1 hidden row(s) of sheet Gates; 1 hidden column(s) of sheet Gates; "
        "1 cell(s) of sheet Gates formatted to show nothing; 2 cell(s) of sheet Gates white on white"
    )
    assert f"Warning: gates.xlsx: hidden content is not indexed ({said}); unhide it to index it" in output
    passages = extract_file(tmp_path / "docs" / "gates.xlsx", "gates.xlsx", "gates.xlsx").passages
    assert [(p.row, p.text) for p in passages] == [(2, "Gate: North; Opens: 06:00"), (4, "Gate: East")]


def test_white_on_white_is_not_decided_on_a_sheet_that_a_rule_may_recolour(tmp_path: Path) -> None:
    """A conditional format (or a table style) may draw a white-font cell on a dark fill: the
    cell's style alone does not say it is white on white, so it is read; `;;;` still hides."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Gate", "Opens"])
    sheet.append(["North", "06:00"])
    sheet.append(["South", "07:00"])
    sheet["A2"].font = Font(color="FFFFFFFF")
    sheet["B3"].number_format = ";;;"
    dark = PatternFill("solid", fgColor="FF000080", bgColor="FF000080")
    sheet.conditional_formatting.add("A2:A3", CellIsRule(operator="notEqual", formula=['""'], fill=dark))
    book.save(tmp_path / "g.xlsx")
    passages = extract_file(tmp_path / "g.xlsx", "g.xlsx", "g.xlsx").passages
    assert [p.text for p in passages] == ["Gate: North; Opens: 06:00", "Gate: South"]


@pytest.mark.parametrize(
    ("style", "hidden"),
    [
        ("display: none", True),
        ("DISPLAY:/* a comment */NONE", True),
        ("display:\tnone !important", True),
        ("dis\\70 lay: none", True),
        ("display: none; display: block", False),
        ("display: none !important; display: block", True),
        ("opacity: 0", True),
        ("opacity: 0%", True),
        ("opacity: 0.5", False),
        ("font-size: 0", True),
        ("font-size: 0em", True),
        ("font-size: 1px", False),
        ("clip: rect(0 0 0 0); position: absolute", True),
        ("clip: rect(0px, 10px, 10px, 0px)", False),
        ("clip-path: inset(50%)", True),
        ("clip-path: inset(50% 0)", True),
        ("clip-path: inset(10%)", False),
        ("clip-path: circle(0)", True),
        ("height: 0; overflow: hidden", True),
        ("height: 0", False),
        ("max-width: 0px; overflow: clip", True),
        ("visibility: collapse", True),
        ("content-visibility: hidden", True),
        ("color: white", False),
    ],
)
def test_an_inline_style_hides_as_a_browser_reads_it(style: str, hidden: bool, tmp_path: Path) -> None:
    secret = "The harbour gate code is 4471 for staff only."
    (tmp_path / "p.html").write_text(
        f"<html><body><main><h1>Gates</h1><p>{SHOWN}</p><p style='{style}'>{secret}</p></main></body></html>",
        encoding="utf-8",
    )
    texts = [p.text for p in extract_file(tmp_path / "p.html", "p.html", "p.html").passages]
    assert (secret not in texts) is hidden and SHOWN in texts


def test_a_descendant_that_undoes_an_inherited_hiding_is_read(tmp_path: Path) -> None:
    """`font-size: 0` and `visibility: hidden` are inherited, and a child may undo them: what it
    holds is drawn, the text around it is not."""
    (tmp_path / "p.html").write_text(
        "<html><body><main><h1>Gates</h1>"
        '<div style="font-size:0">The gate code is 4471. '
        '<p style="font-size:16px">Renewals are free at the desk.</p>'
        '<p style="font-size:2em">The gate code is 4472.</p></div>'
        '<div style="visibility:hidden">The gate code is 4473. '
        '<p style="visibility:visible">Fines are capped at ten dollars.</p></div>'
        '<div style="visibility:hidden; font-size:0">The gate code is 4474. '
        '<p style="visibility:visible">The gate code is 4475.</p>'
        '<p style="visibility:visible; font-size:1rem">Members may renew twice online.</p></div>'
        "</main></body></html>",
        encoding="utf-8",
    )
    text = " ".join(p.text for p in extract_file(tmp_path / "p.html", "p.html", "p.html").passages)
    for shown in ("Renewals are free at the desk.", "Fines are capped at ten dollars.", "renew twice online"):
        assert shown in text
    assert "gate code" not in text
