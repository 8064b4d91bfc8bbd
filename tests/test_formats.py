"""Every format on a real file, written by the library made for it (python-docx, openpyxl,
python-pptx) or by LibreOffice (tests/fixtures/formats, with their sources): passages, heading
paths, table rows with their header cells and row numbers, and citations as each format gives them."""

from __future__ import annotations

import shutil
from pathlib import Path

import docx
import openpyxl
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from pptx import Presentation
from pptx.util import Inches

from localqa.extract import Extracted, extract_file
from localqa.store.base import StoredPassage
from localqa.types import Kind, Location, Passage

FIXTURES = Path(__file__).parent / "fixtures" / "formats"


def extract(path: Path) -> Extracted:
    return extract_file(path, path.name, path.name)


def rows(passages: list[Passage]) -> list[tuple[str, str | None, int | None, int | None, int | None, str]]:
    """(kind, section, paragraph, table, row, text) of each passage, for exact comparison."""
    return [(p.kind.value, p.section, p.paragraph, p.table, p.row, p.text) for p in passages]


def cited(passage: Passage) -> str:
    stored = StoredPassage(id=1, doc_id="d", **passage.model_dump(exclude={"boxes"}))
    return Location.model_validate(
        {**stored.model_dump(exclude={"id", "doc_id", "text", "boxes"}), "effective": None}
    ).describe()


# --- Word --------------------------------------------------------------------------------------


def word_handbook(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Riverside Library Handbook", 0)
    document.add_paragraph("Welcome to the library.")
    document.add_heading("Loans", 1)
    document.add_paragraph("Standard loans last 21 days.")
    document.add_heading("Renewals", 2)
    document.add_paragraph("Items may be renewed twice.")
    document.add_paragraph("A renewal adds 14 days.")
    document.add_paragraph("Items reserved by another member cannot be renewed.")
    document.add_paragraph("You can renew:")
    document.add_paragraph("online", style="List Bullet")
    document.add_paragraph("at the desk", style="List Bullet")
    # A heading by outline level alone (no heading style), as Word's "Level 2" paragraph setting.
    outlined = document.add_paragraph("Overdue items")
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "1")
    outlined._p.get_or_add_pPr().append(level)
    document.add_paragraph("Equipment loan limits")
    table = document.add_table(rows=0, cols=3)
    for values in (
        ("Item ID", "Item", "Loan limit"),
        ("EQ-314", "Camera", "45 minutes"),
        ("EQ-120", "Laptop", "2 days"),
    ):
        cells = table.add_row().cells
        for cell, value in zip(cells, values, strict=True):
            cell.text = value
    document.add_paragraph("Overdue items cost 50 cents a day.")
    document.save(path)
    return path


def test_word_written_by_python_docx(tmp_path: Path) -> None:
    result = extract(word_handbook(tmp_path / "handbook.docx"))
    assert result.found is not None and result.found.title == "Riverside Library Handbook"
    assert rows(result.passages) == [
        ("prose", None, 1, None, None, "Welcome to the library."),
        ("prose", "Loans", 1, None, None, "Standard loans last 21 days."),
        ("prose", "Loans > Renewals", 1, None, None, "Items may be renewed twice."),
        ("prose", "Loans > Renewals", 2, None, None, "A renewal adds 14 days."),
        ("prose", "Loans > Renewals", 3, None, None, "Items reserved by another member cannot be renewed."),
        ("prose", "Loans > Renewals", 4, None, None, "You can renew: • online • at the desk"),
        ("prose", "Loans > Overdue items", 1, None, None, "Equipment loan limits"),
        (
            "table",
            "Loans > Overdue items",
            None,
            1,
            1,
            "Equipment loan limits: Item ID: EQ-314; Item: Camera; Loan limit: 45 minutes",
        ),
        (
            "table",
            "Loans > Overdue items",
            None,
            1,
            2,
            "Equipment loan limits: Item ID: EQ-120; Item: Laptop; Loan limit: 2 days",
        ),
        ("prose", "Loans > Overdue items", 2, None, None, "Overdue items cost 50 cents a day."),
    ]
    assert all(p.page is None for p in result.passages)  # python-docx records no pagination
    assert cited(result.passages[4]) == "handbook.docx, § Loans > Renewals, paragraph 3, undated"
    assert cited(result.passages[8]) == "handbook.docx, § Loans > Overdue items, table 1, row 2, undated"


def test_word_written_by_libreoffice_has_its_footnote_list_and_table() -> None:
    """libreoffice-handbook.docx: `soffice --headless --convert-to docx libreoffice-handbook.fodt`."""
    result = extract(FIXTURES / "libreoffice-handbook.docx")
    assert rows(result.passages) == [
        ("prose", "Loans", 1, None, None, "Standard loans last 21 days."),
        ("prose", "Loans > Footnote 1", 1, None, None, "Reference books cannot be borrowed."),
        ("prose", "Loans > Renewals", 1, None, None, "Items may be renewed twice."),
        ("prose", "Loans > Renewals", 2, None, None, "A renewal adds 14 days."),
        ("prose", "Loans > Renewals", 3, None, None, "• Online • At the desk"),
        ("table", "Loans > Renewals", None, 1, 1, "Item ID: EQ-314; Loan limit: 45 minutes"),
        ("table", "Loans > Renewals", None, 1, 2, "Item ID: EQ-120; Loan limit: 2 days"),
    ]


def test_word_leaves_out_tracked_deletions_and_table_of_contents_and_keeps_insertions(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Contents", 1)
    toc = document.add_paragraph("Loans ........ 3")
    toc.style = document.styles.add_style("TOC 1", 1)
    paragraph = document.add_paragraph("The fee is ")
    deleted = OxmlElement("w:del")
    run = OxmlElement("w:r")
    gone = OxmlElement("w:delText")
    gone.text = "5 dollars"
    run.append(gone)
    deleted.append(run)
    paragraph._p.append(deleted)
    inserted = OxmlElement("w:ins")
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "3 dollars."
    run.append(text)
    inserted.append(run)
    paragraph._p.append(inserted)
    document.save(tmp_path / "tracked.docx")
    assert [p.text for p in extract(tmp_path / "tracked.docx").passages] == ["The fee is 3 dollars."]


def test_word_pages_only_where_the_file_records_them(tmp_path: Path) -> None:
    """Word records where it broke pages when it last saved (`w:lastRenderedPageBreak`)."""
    document = docx.Document()
    document.add_paragraph("On the first page.")
    second = document.add_paragraph()
    run = second.add_run()
    run._r.append(OxmlElement("w:lastRenderedPageBreak"))
    second.add_run("On the second page.")
    document.save(tmp_path / "paged.docx")
    passages = extract(tmp_path / "paged.docx").passages
    assert [(p.page, p.text) for p in passages] == [(1, "On the first page."), (2, "On the second page.")]
    assert cited(passages[1]) == "paged.docx, page 2, paragraph 2, undated"


# --- Spreadsheets ------------------------------------------------------------------------------


def register(path: Path) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Loans"
    sheet.append(["Equipment register 2026"])
    sheet.append([])
    sheet.append(["Item ID", "Item", "Loan limit", "Deposit", "Internal note"])
    sheet.append(["EQ-314", "Camera", "45 minutes", 20, "fragile"])
    sheet.append(["EQ-120", "Laptop", "2 days", 0, "check battery"])
    sheet.append(["EQ-073", "Projector", "1 day", 12.5, "retired soon"])
    sheet.append(["EQ-201", "Tripod", "7 days", 0, ""])
    sheet.row_dimensions[6].hidden = True  # EQ-073's row
    sheet.column_dimensions["E"].hidden = True
    staff = workbook.create_sheet("Staff notes")
    staff.sheet_state = "hidden"
    staff.append(["Key", "Value"])
    staff.append(["alarm code", "4711"])
    fees = workbook.create_sheet("Fees")
    fees.append([None, None])
    fees.append([None, "Fee", "Amount"])  # a table that starts at B2
    fees.append([None, "Late book", 0.5])
    workbook.save(path)
    return path


def test_excel_written_by_openpyxl(tmp_path: Path) -> None:
    result = extract(register(tmp_path / "register.xlsx"))
    assert rows(result.passages) == [
        (
            "table",
            "Loans",
            None,
            1,
            4,
            "Equipment register 2026: Item ID: EQ-314; Item: Camera; Loan limit: 45 minutes; Deposit: 20",
        ),
        (
            "table",
            "Loans",
            None,
            1,
            5,
            "Equipment register 2026: Item ID: EQ-120; Item: Laptop; Loan limit: 2 days; Deposit: 0",
        ),
        (
            "table",
            "Loans",
            None,
            1,
            7,
            "Equipment register 2026: Item ID: EQ-201; Item: Tripod; Loan limit: 7 days; Deposit: 0",
        ),
        ("table", "Fees", None, 3, 3, "Fee: Late book; Amount: 0.5"),
    ]
    assert cited(result.passages[2]) == "register.xlsx, sheet Loans, row 7, undated"
    # Hidden sheets, rows and columns: one rule, and it is said.
    (warning,) = result.problems
    assert warning.warning
    assert str(warning) == (
        "register.xlsx: hidden content is not indexed (1 hidden row(s) of sheet Loans; 1 hidden column(s) "
        "of sheet Loans; hidden sheet Staff notes); unhide it to index it"
    )
    assert not any("4711" in p.text or "fragile" in p.text or "EQ-073" in p.text for p in result.passages)


def test_excel_formulas_are_read_as_the_values_libreoffice_cached() -> None:
    """libreoffice-fees.xlsx: `soffice --headless --convert-to xlsx libreoffice-fees.fods`; its B3
    is the formula =B2*10."""
    result = extract(FIXTURES / "libreoffice-fees.xlsx")
    assert rows(result.passages) == [
        ("table", "Fees", None, 1, 2, "Fee: Late book; Amount: 0.5"),
        ("table", "Fees", None, 1, 3, "Fee: Late laptop; Amount: 5"),
    ]


def test_csv_finds_its_header_and_cites_records(tmp_path: Path) -> None:
    path = tmp_path / "rota.csv"
    path.write_text(
        'Desk rota\n\nDay;Opening shift;Closing shift\nMonday;Priya;Tom\nFriday;Lena;"Webb; Marcus"\n'
    )
    result = extract(path)
    assert rows(result.passages) == [
        ("table", None, None, 1, 4, "Desk rota: Day: Monday; Opening shift: Priya; Closing shift: Tom"),
        (
            "table",
            None,
            None,
            1,
            5,
            "Desk rota: Day: Friday; Opening shift: Lena; Closing shift: Webb; Marcus",
        ),
    ]
    assert cited(result.passages[1]) == "rota.csv, row 5, undated"


def test_a_sheet_without_a_header_row_names_columns_by_letter(tmp_path: Path) -> None:
    path = tmp_path / "numbers.csv"
    path.write_text("1,2\n3,4\n")
    assert [p.text for p in extract(path).passages] == [
        "Column A: 1; Column B: 2",
        "Column A: 3; Column B: 4",
    ]


# --- Slides ------------------------------------------------------------------------------------


def deck(path: Path) -> Path:
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])  # title only
    slide.shapes.title.text = "Training day"
    presentation.slides.add_slide(presentation.slide_layouts[1])
    second = presentation.slides[1]
    second.shapes.title.text = "Renewals"
    body = second.placeholders[1].text_frame
    body.text = "Items may be renewed twice."
    indented = body.add_paragraph()
    indented.text = "Online or at the desk."
    indented.level = 1
    body.add_paragraph().text = "Reserved items cannot be renewed."
    table = second.shapes.add_table(3, 2, Inches(1), Inches(5), Inches(6), Inches(1)).table
    for r, values in enumerate((("Item ID", "Loan limit"), ("EQ-314", "45 minutes"), ("EQ-120", "2 days"))):
        for c, value in enumerate(values):
            table.cell(r, c).text = value
    second.notes_slide.notes_text_frame.text = "Remind staff that renewals are free."
    presentation.save(path)
    return path


def test_slides_written_by_python_pptx(tmp_path: Path) -> None:
    result = extract(deck(tmp_path / "training.pptx"))
    assert result.found is not None and result.found.title == "Training day"
    assert [(p.page, *row) for p, row in zip(result.passages, rows(result.passages), strict=True)] == [
        (2, "prose", "Renewals", 1, None, None, "Items may be renewed twice. Online or at the desk."),
        (2, "prose", "Renewals", 2, None, None, "Reserved items cannot be renewed."),
        (2, "table", "Renewals", None, 1, 1, "Item ID: EQ-314; Loan limit: 45 minutes"),
        (2, "table", "Renewals", None, 1, 2, "Item ID: EQ-120; Loan limit: 2 days"),
        (2, "prose", "Renewals > Speaker notes", 1, None, None, "Remind staff that renewals are free."),
    ]
    assert cited(result.passages[3]) == "training.pptx, slide 2, § Renewals, table 1, row 2, undated"
    assert (
        cited(result.passages[4])
        == "training.pptx, slide 2, § Renewals > Speaker notes, paragraph 1, undated"
    )


# --- HTML --------------------------------------------------------------------------------------

PAGE = """<!doctype html><html><head><title>Loans | Riverside Library</title>
<script>document.write("tracking pixel");</script><style>p { color: red }</style></head>
<body><header><nav><a href="/">Home</a> <a href="/loans">Loans</a> <a href="/events">Events</a></nav></header>
<main><article><h1>Borrowing</h1>
<p>Standard book loans last 21 days and may be renewed twice online or at the desk.</p>
<h2>Renewals</h2>
<p>A renewal adds 14 days to the loan. Items reserved by another member cannot be renewed.</p>
<table><thead><tr><th>Item ID</th><th>Loan limit</th></tr></thead>
<tbody><tr><td>EQ-314</td><td>45 minutes</td></tr><tr><td>EQ-120</td><td>2 days</td></tr></tbody></table>
<h2>Fines</h2><p>Overdue books cost 50 cents a day, up to a maximum of 10 dollars per item.</p>
</article></main>
<aside><p>Related: events this week</p></aside>
<footer><p>Copyright Riverside Library. Privacy. Contact us.</p></footer></body></html>"""


def test_html_main_content_only(tmp_path: Path) -> None:
    path = tmp_path / "loans.html"
    path.write_text(PAGE)
    result = extract(path)
    assert result.found is not None and result.found.title == "Loans | Riverside Library"
    assert rows(result.passages) == [
        (
            "prose",
            "Borrowing",
            1,
            None,
            None,
            "Standard book loans last 21 days and may be renewed twice online or at the desk.",
        ),
        (
            "prose",
            "Borrowing > Renewals",
            1,
            None,
            None,
            "A renewal adds 14 days to the loan. Items reserved by another member cannot be renewed.",
        ),
        ("table", "Borrowing > Renewals", None, 1, 1, "Item ID: EQ-314; Loan limit: 45 minutes"),
        ("table", "Borrowing > Renewals", None, 1, 2, "Item ID: EQ-120; Loan limit: 2 days"),
        (
            "prose",
            "Borrowing > Fines",
            1,
            None,
            None,
            "Overdue books cost 50 cents a day, up to a maximum of 10 dollars per item.",
        ),
    ]
    assert cited(result.passages[1]) == "loans.html, § Borrowing > Renewals, paragraph 1, undated"


# --- What PyMuPDF opens itself -----------------------------------------------------------------


def test_epub_goes_the_pdf_way() -> None:
    """libreoffice-handbook.epub: `soffice --headless --convert-to epub libreoffice-handbook.fodt`.
    MuPDF lays the book out in pages, and the PDF extraction reads them: headings by size, blocks
    as MuPDF sets them (here its list and two paragraphs are one block; the table has no rules)."""
    result = extract(FIXTURES / "libreoffice-handbook.epub")
    renewal = next(p for p in result.passages if "A renewal adds 14 days." in p.text)
    assert (renewal.page, renewal.kind, renewal.section) == (1, Kind.PROSE, "Loans > Renewals")
    assert (
        cited(renewal) == "libreoffice-handbook.epub, page 1, prose paragraph 2, § Loans > Renewals, undated"
    )


def test_an_image_is_a_page_without_a_text_layer(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("L", (400, 200), 255).save(tmp_path / "notice.png")
    result = extract(tmp_path / "notice.png")
    assert result.passages == [] and result.pages_without_text == (1,)


def test_the_sample_library_sources_are_all_read(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parent.parent / "pdfs"
    for name in ("loans-handbook.docx", "equipment-register.xlsx", "desk-rota.csv"):
        shutil.copy(sample / name, tmp_path / name)
        assert extract(tmp_path / name).passages, name


@pytest.mark.parametrize(
    ("name", "kind"),
    [("a.docx", Kind.PROSE), ("a.xlsx", Kind.TABLE)],
)
def test_kinds_are_the_existing_ones(name: str, kind: Kind) -> None:
    """New formats bring no new passage kind: a spreadsheet row is a `table` unit, Word text is
    `prose` (the JSON location fields stay the same for every format)."""
    assert kind in set(Kind)
    assert {k.value for k in Kind} == {"prose", "table", "ocr"}


def test_a_utf16_html_page_is_text_not_binary(tmp_path: Path) -> None:
    path = tmp_path / "wide.html"
    body = "<main><h1>Loans</h1><p>Standard loans last 21 days at every branch of the library.</p></main>"
    path.write_bytes(f"<html><head><title>Wide</title></head><body>{body}</body></html>".encode("utf-16"))
    result = extract(path)
    assert [(p.section, p.text) for p in result.passages] == [
        ("Loans", "Standard loans last 21 days at every branch of the library.")
    ]


def test_a_numbered_heading_is_a_heading(tmp_path: Path) -> None:
    document = docx.Document()
    heading = document.add_heading("Renewals", 1)
    numbering = OxmlElement("w:numPr")
    for tag, value in (("w:ilvl", "0"), ("w:numId", "1")):
        element = OxmlElement(tag)
        element.set(qn("w:val"), value)
        numbering.append(element)
    heading._p.get_or_add_pPr().append(numbering)
    document.add_paragraph("Items may be renewed twice.")
    document.save(tmp_path / "numbered.docx")
    assert rows(extract(tmp_path / "numbered.docx").passages) == [
        ("prose", "Renewals", 1, None, None, "Items may be renewed twice.")
    ]


FICTION_BOOK = """<?xml version="1.0" encoding="UTF-8"?>
<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0">
<description><title-info><book-title>Riverside Library Handbook</book-title><lang>en</lang></title-info>
</description><body><section><title><p>Loans</p></title>
<p>Standard loans last 21 days and may be renewed twice.</p></section></body></FictionBook>
"""


def test_a_fictionbook_goes_the_pdf_way(tmp_path: Path) -> None:
    """FB2 is XML a person can write; MuPDF lays it out in pages like an EPUB."""
    path = tmp_path / "handbook.fb2"
    path.write_text(FICTION_BOOK, encoding="utf-8")
    result = extract(path)
    assert result.found is not None and result.found.title == "Riverside Library Handbook"
    assert [(p.page, p.kind, p.section, p.text) for p in result.passages] == [
        (1, Kind.PROSE, "Loans", "Standard loans last 21 days and may be renewed twice.")
    ]
