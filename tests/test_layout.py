"""Real-document layout in PDF extraction: lists, running headers and page numbers, statements
without ruling lines, two-column pages, the document title. The PDFs are drawn by
`tests/fixtures/layout.py`; the optional tests at the end read the public benchmark filings and
skip when ../shared/bench is absent."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from fixtures import layout

from localqa.extract.pdf import _Block, document_title, extract_pdf
from localqa.extract.unruled import is_value
from localqa.types import Kind, Passage

BENCH = Path(__file__).resolve().parents[2] / "shared/bench"
if not BENCH.is_dir():
    BENCH = Path(__file__).resolve().parents[3] / "shared/bench"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("layout")
    for make in (layout.ruled_list, layout.running_headers, layout.statement, layout.two_columns):
        make(folder / f"{make.__name__}.pdf")
    return folder


def passages(folder: Path, name: str) -> list[Passage]:
    return extract_pdf(folder / f"{name}.pdf", f"{name}.pdf").passages


def test_a_ruled_bulleted_list_is_prose_not_a_table(drawn: Path) -> None:
    found = passages(drawn, "ruled_list")
    assert [p.kind for p in found] == [Kind.PROSE] * (len(layout.LIST_ITEMS) + 2)
    for item in layout.LIST_ITEMS:
        (holder,) = [p for p in found if item in p.text]
        assert holder.section == "Borrowing rules" and holder.boxes
    # PyMuPDF draws "•" in Helvetica as "·"; neither may head a row.
    assert not any(p.text.startswith(("•:", "·:")) for p in found)


def test_running_header_footer_and_page_number_are_not_passage_text(drawn: Path) -> None:
    found = passages(drawn, "running_headers")
    assert [(p.page, p.text) for p in found] == [
        (page, template.format(n=page)) for page in range(1, 6) for template in layout.RUNNING_BODY
    ]
    assert {p.section for p in found} == {"Results"}
    assert [p.paragraph for p in found] == [1, 2] * 5


def test_a_running_line_needs_four_pages(tmp_path: Path) -> None:
    # On a three-page document a line repeated at the top of every page is still text.
    found = passages(layout.running_headers(tmp_path / "short.pdf", pages=3).parent, "short")
    assert sum(p.text == layout.HEADER for p in found) == 3


def test_a_short_line_that_differs_in_more_than_the_page_number_is_text(tmp_path: Path) -> None:
    # Both lines are short and at the page's edges on every page; with their numbers masked they
    # read alike on every page. The footer differs only by the page number: a running footer.
    # The other differs in two numbers: it says something else on each page.
    path = tmp_path / "codes.pdf"
    with pymupdf.open() as document:
        for number in range(1, 13):
            page = document.new_page()
            page.insert_text((72, 72), f"Page {number} says code Z-{number}.")
            page.insert_text((72, 760), f"Annual report, page {number} of 12")
        document.save(path)
    found = extract_pdf(path, "codes.pdf").passages
    assert [(p.page, p.text) for p in found] == [(n, f"Page {n} says code Z-{n}.") for n in range(1, 13)]


def test_a_statement_without_rules_gives_one_table_row_per_line_item(drawn: Path) -> None:
    found = passages(drawn, "statement")
    rows = [p for p in found if p.kind is Kind.TABLE]
    # The unit the header rows state at their left, over no column, stays with the caption.
    title = f"Example Corp {layout.STATEMENT_TITLE} (In millions)"
    assert [p.text for p in rows] == [
        f"{title}: Net sales: 2023: 14,694; 2022: 14,544; 2021: 12,861",
        f"{title}: Cost of sales: 2023: (11,162); 2022: (11,113); 2021: (9,837)",
        f"{title}: Gross profit: 2023: 3,532; 2022: 3,431; 2021: 3,024",
        f"{title}: Research and development: 2023: 98; 2022: 101; 2021: 106",
        f"{title}: Restructuring charges: 2023: -; 2022: (24); 2021: (98)",
        f"{title}: Selling, general and administrative expenses, including amortization of acquired "
        "intangible assets: 2023: 1,428; 2022: 1,391; 2021: 1,284",
        f"{title}: Operating income: 2023: 2,006; 2022: 1,963; 2021: 1,538",
    ]
    # Row 1 is the first line item: the year header is neither a row nor a prose passage.
    assert [(p.page, p.table, p.row) for p in rows] == [(2, 1, n) for n in range(1, 8)]
    assert not any("2023" in p.text and "2022" in p.text for p in found if p.kind is Kind.PROSE)
    # The statement's own title is the section, not the auditors' heading a page earlier; a
    # sub-heading row names the rows under it.
    assert [p.section for p in rows] == [layout.STATEMENT_TITLE] * 3 + [
        f"{layout.STATEMENT_TITLE} > Operating expenses"
    ] * 4
    # Each row is drawn where its label and amounts are, one row below the other.
    for row in rows:
        ((x0, _, x1, _),) = row.boxes
        assert x0 == pytest.approx(layout.MARGIN, abs=1) and x1 == pytest.approx(560, abs=1)
    tops = [r.boxes[0][1] for r in rows]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)
    prose = [p.text for p in found if p.kind is Kind.PROSE and p.page == 2]
    assert prose == ["See the accompanying notes to the consolidated financial statements."]


def test_a_two_column_page_is_read_column_by_column(drawn: Path) -> None:
    found = passages(drawn, "two_columns")
    assert [p.text for p in found] == [
        "This guide describes both wings of the building and how to use them.",
        *layout.LEFT_COLUMN,
        *layout.RIGHT_COLUMN,
    ]
    assert [p.paragraph for p in found] == list(range(1, 8))
    assert {p.section for p in found} == {"Visitor Guide"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("14,694", True),
        ("(1,577)", True),
        ("$ 5,363", True),
        ("12.5%", True),
        ("—", True),
        ("-", True),
        ("2023", True),
        ("Net sales", False),
        ("Note 7", False),
        ("10-K", False),
    ],
)
def test_is_value(text: str, expected: bool) -> None:
    assert is_value(text) is expected


# --- the document title -------------------------------------------------------------------------


def _heading(text: str, size: float, top: float, bold: bool = False) -> _Block:
    return _Block(text=text, size=size, bold=bold, top=top, lines=1, box=(60.0, top, 300.0, top + size))


FIRST_PAGE = [
    _heading("UNITED STATES", 12, 40),
    _heading("Riverside Holdings Annual Report", 18, 80),
    _heading("For the year ended December 31, 2023, the board reports as follows.", 10, 120),
]


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ("10-K - 02/07/2019 - 3M Company", "10-K - 02/07/2019 - 3M Company"),
        ("ADBE 10-K FY22", "ADBE 10-K FY22"),
        ("0001410636-21-000101", "Riverside Holdings Annual Report"),  # SEC accession number
        ("annual-report-final.docx", "Riverside Holdings Annual Report"),  # a file name
        ("C:\\reports\\draft", "Riverside Holdings Annual Report"),
        ("", "Riverside Holdings Annual Report"),
        ("  ", "Riverside Holdings Annual Report"),
        (None, "Riverside Holdings Annual Report"),
        ("12", "Riverside Holdings Annual Report"),
    ],
)
def test_document_title_prefers_a_real_metadata_title(metadata: str | None, expected: str) -> None:
    assert document_title(metadata, FIRST_PAGE, body_size=10) == expected


def test_document_title_falls_back_to_the_first_bold_heading_then_to_none() -> None:
    bold = [_heading("Body text, long enough to be a paragraph.", 10, 40), _heading("Notice", 10, 90, True)]
    assert document_title(None, bold, body_size=10) == "Notice"
    assert document_title(None, [], body_size=10) is None


def test_extract_pdf_reports_the_title(tmp_path: Path) -> None:
    path = layout.two_columns(tmp_path / "guide.pdf")
    assert extract_pdf(path, "guide.pdf").title == "Visitor Guide"
    with pymupdf.open(path) as document:
        document.set_metadata({"title": "0000320187-19-000051"})
        document.save(tmp_path / "accession.pdf")
        document.set_metadata({"title": "Visitor Guide 2026"})
        document.save(tmp_path / "titled.pdf")
    assert extract_pdf(tmp_path / "accession.pdf", "accession.pdf").title == "Visitor Guide"
    assert extract_pdf(tmp_path / "titled.pdf", "titled.pdf").title == "Visitor Guide 2026"


# --- real filings (optional: ../shared/bench) ---------------------------------------------------------

needs_bench = pytest.mark.skipif(not BENCH.is_dir(), reason="public benchmark data (../shared/bench) absent")


@pytest.mark.slow
@needs_bench
def test_3m_cash_flow_statement_rows_carry_their_years() -> None:
    path = BENCH / "financebench-dev/pdfs/3M_2018_10K.pdf"
    found = [p for p in extract_pdf(path, path.name).passages if p.page == 60]
    capex = [p for p in found if "Purchases of property, plant and equipment" in p.text]
    assert [p.text.split(": ", 1)[1] for p in capex] == [
        "Purchases of property, plant and equipment (PP&E): 2018: (1,577); 2017: (1,373); 2016: (1,420)"
    ]
    assert capex[0].kind is Kind.TABLE and capex[0].boxes
    assert capex[0].section is not None and capex[0].section.startswith("Consolidated Statement of Cash Flow")
    # "Table of Contents" and the page number are gone from every page.
    everything = extract_pdf(path, path.name).passages
    assert not any(p.text in ("Table of Contents", "60") for p in everything)


def test_text_set_sideways_is_neither_a_heading_nor_the_title(tmp_path: Path) -> None:
    path = tmp_path / "paper.pdf"
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text(
            (30, 500), "arXiv:2303.08559v2 [cs.CL] 21 Oct 2023", fontname="helv", fontsize=20, rotate=90
        )
        page.insert_text(
            (80, 72), "Large Language Models Are Not Good Extractors", fontname="hebo", fontsize=14
        )
        page.insert_textbox(
            pymupdf.Rect(80, 90, 535, 140), "We compare large and small models on nine datasets.", fontsize=10
        )
        document.save(path)
    result = extract_pdf(path, "paper.pdf")
    assert result.title == "Large Language Models Are Not Good Extractors"
    assert {p.section for p in result.passages} == {"Large Language Models Are Not Good Extractors"}
