"""Extraction on the real sample PDFs (PyMuPDF), Markdown, plain text and OCR sidecars."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from localqa.extract.blocks import governing, looks_like_heading, paragraphs
from localqa.extract.pdf import extract_pdf
from localqa.extract.plain import extract_markdown, extract_plain
from localqa.language.text import identifiers, squash
from localqa.types import Kind, Passage

PDFS = Path(__file__).resolve().parent.parent / "pdfs"
NOVEMBER = "equipment-policy-2026-11-01.pdf"
HANDBOOK = "library-handbook.pdf"
SIDECAR = "library-handbook.page-4.ocr.txt"
EQ314_NOVEMBER = (
    "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner; "
    "Loan limit: 45 minutes; Deposit: 20 dollars"
)


@pytest.fixture
def index(library_db: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(f"file:{library_db}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    yield db
    db.close()


@pytest.fixture(scope="module")
def handbook() -> list[Passage]:
    return extract_pdf(PDFS / HANDBOOK, HANDBOOK).passages


# --- the EQ-314 table row --------------------------------------------------------------------------


def test_eq314_in_november_policy_is_exactly_one_table_row_passage(index: sqlite3.Connection) -> None:
    rows = index.execute(
        "SELECT * FROM passages WHERE source = ? AND text LIKE '%EQ-314%'", (NOVEMBER,)
    ).fetchall()
    assert len(rows) == 1
    row = rows[0]
    assert (row["page"], row["kind"], row["table_no"], row["row_no"]) == (1, "table", 1, 2)
    assert row["text"] == EQ314_NOVEMBER
    assert "Item ID" in row["text"] and "Loan limit" in row["text"] and "45 minutes" in row["text"]
    assert row["section"] == "Equipment Loan Policy > Equipment loan limits"
    assert row["paragraph"] is None
    # Drawn where the row is: inside the table, the width of all its cells.
    ((x0, y0, x1, y1),) = json.loads(row["boxes"])
    assert 0 < x0 < x1 and 0 < y0 < y1 and x1 - x0 > 300
    # The exact-ID channel knows it too, on that passage only.
    carriers = index.execute(
        "SELECT DISTINCT i.passage_id FROM identifiers i JOIN passages p ON p.id = i.passage_id "
        "WHERE i.identifier = 'EQ-314' AND p.source = ?",
        (NOVEMBER,),
    ).fetchall()
    assert [c[0] for c in carriers] == [row["id"]]


def test_extract_pdf_gives_one_passage_per_data_row_with_title_and_headers() -> None:
    result = extract_pdf(PDFS / NOVEMBER, NOVEMBER)
    assert result.problems == [] and result.pages_without_text == [] and result.page_count == 1
    rows = [p for p in result.passages if p.kind is Kind.TABLE]
    assert [(p.page, p.table, p.row) for p in rows] == [(1, 1, n) for n in range(1, 6)]
    for passage in rows:
        assert passage.text.startswith("Equipment loan limits: Item ID: EQ-")
        assert (
            "; Item: " in passage.text and "; Loan limit: " in passage.text and "; Deposit: " in passage.text
        )
    eq314 = [p for p in result.passages if "EQ-314" in p.text]
    assert len(eq314) == 1
    assert eq314[0].text == EQ314_NOVEMBER
    assert eq314[0].row == 2
    # The header row is not a passage of its own.
    assert not any(p.text.endswith("Item ID: Item ID") or "Item ID: Item ID" in p.text for p in rows)


def test_june_policy_keeps_its_own_eq314_row(index: sqlite3.Connection) -> None:
    rows = index.execute(
        "SELECT page, kind, row_no, text FROM passages WHERE source = 'equipment-policy-2026-06-01.pdf' "
        "AND text LIKE '%EQ-314%'"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        (
            1,
            "table",
            2,
            "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner; Loan limit: 30 minutes; "
            "Deposit: 20 dollars",
        )
    ]


# --- prose locations -------------------------------------------------------------------------------


def test_prose_passages_carry_section_page_paragraph_and_char_span(handbook: list[Passage]) -> None:
    by_start = {p.text.split(".")[0]: p for p in handbook}
    loans = by_start["Standard book loans last 21 days"]
    assert (loans.kind, loans.page, loans.section, loans.paragraph) == (
        Kind.PROSE,
        1,
        "Riverside Library Handbook > Book loans",
        3,
    )
    fragile = next(p for p in handbook if p.text.startswith("Fragile equipment, such as camera lenses"))
    assert (fragile.page, fragile.section, fragile.paragraph) == (
        2,
        "Riverside Library Handbook > Equipment loans",
        3,
    )
    intro = handbook[0]
    assert (intro.page, intro.section, intro.paragraph) == (1, "Riverside Library Handbook", 1)


def test_every_prose_passage_has_a_consistent_location(handbook: list[Passage]) -> None:
    prose = [p for p in handbook if p.kind is Kind.PROSE]
    assert len(prose) == 13
    per_page: dict[int, list[Passage]] = defaultdict(list)
    for passage in prose:
        assert passage.source == HANDBOOK
        assert passage.section and passage.section.startswith("Riverside Library Handbook")
        assert passage.page is not None
        assert len(passage.boxes) == 1
        per_page[passage.page].append(passage)
    assert sorted(per_page) == [1, 2, 3]  # page 4 is a scan: no text layer
    for passages in per_page.values():
        assert [p.paragraph for p in passages] == list(range(1, len(passages) + 1))
        # Paragraphs are drawn one below the other, in reading order.
        tops = [p.boxes[0][1] for p in passages]
        bottoms = [p.boxes[0][3] for p in passages]
        assert all(bottom <= top for bottom, top in zip(bottoms, tops[1:], strict=False)), passages


def test_headings_become_section_paths_never_passages(handbook: list[Passage]) -> None:
    texts = {p.text for p in handbook}
    for heading in ("Riverside Library Handbook", "Membership", "Book loans", "Opening hours", "Study rooms"):
        assert heading not in texts
    assert {p.section for p in handbook} == {
        "Riverside Library Handbook",
        "Riverside Library Handbook > Membership",
        "Riverside Library Handbook > Book loans",
        "Riverside Library Handbook > Returns",
        "Riverside Library Handbook > Equipment loans",
        "Riverside Library Handbook > Opening hours",
        "Riverside Library Handbook > Study rooms",
        "Riverside Library Handbook > Printing and copying",
        "Riverside Library Handbook > Lost property",
    }


def test_scanned_page_is_reported_as_without_text() -> None:
    result = extract_pdf(PDFS / HANDBOOK, HANDBOOK)
    assert result.pages_without_text == [4]
    assert result.page_count == 4
    assert all(p.page != 4 for p in result.passages)


def test_a_bold_closing_line_is_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "closure.pdf"
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((60, 72), "Notice", fontname="hebo", fontsize=16)
        page.insert_textbox(
            pymupdf.Rect(60, 100, 535, 150), "The library is closed for repairs.", fontsize=11
        )
        page.insert_textbox(
            pymupdf.Rect(60, 170, 535, 200), "Reopens Monday 3 March", fontname="hebo", fontsize=11
        )
        document.save(path)
    passages = extract_pdf(path, "closure.pdf").passages
    assert [p.text for p in passages][:1] == ["The library is closed for repairs."]
    assert any("Reopens Monday 3 March" in p.text for p in passages)


# --- the OCR sidecar -----------------------------------------------------------------------------------


def test_sidecar_paragraphs_are_ocr_passages_of_page_4(index: sqlite3.Connection) -> None:
    rows = index.execute(
        "SELECT kind, source, origin, page, section, paragraph, text FROM passages WHERE origin = ? "
        "ORDER BY paragraph",
        (SIDECAR,),
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        (
            "ocr",
            HANDBOOK,
            SIDECAR,
            4,
            "Community Map Exchange",
            1,
            "The desk accepts maps for the community map exchange from 12:00 to 15:00 on weekdays.",
        ),
        (
            "ocr",
            HANDBOOK,
            SIDECAR,
            4,
            "Community Map Exchange",
            2,
            "Donated maps should be folded flat and labelled with the name of the donor.",
        ),
    ]
    assert (
        index.execute(
            "SELECT count(*) FROM passages WHERE kind = 'ocr' AND origin != ?", (SIDECAR,)
        ).fetchone()[0]
        == 0
    )


def test_sidecar_paragraphs_are_ocr_passages_of_their_page() -> None:
    text = (PDFS / SIDECAR).read_text(encoding="utf-8")
    passages = extract_plain(text, HANDBOOK, 4, Kind.OCR)
    assert len(passages) == 2
    for passage in passages:
        assert passage.kind is Kind.OCR and passage.page == 4 and passage.source == HANDBOOK
        assert passage.text in squash(text)


# --- Markdown ------------------------------------------------------------------------------------------


def test_markdown_headings_become_the_section_path(tmp_path: Path) -> None:
    source = tmp_path / "guide.md"
    source.write_text(
        "# Guide\n\nIntro text.\n\n## Loans\n\nBooks last 21 days.\n\n### Renewals ###\n"
        "Renew twice.\n\n## Fees\n\nLate fees are\n20 cents a day.\n\n"
        "# Appendix\n\n#### Deep\n\nDeep text.\n",
        encoding="utf-8",
    )
    passages = extract_markdown(source, "guide.md")
    assert [(p.section, p.text, p.paragraph, p.page) for p in passages] == [
        ("Guide", "Intro text.", 1, None),
        ("Guide > Loans", "Books last 21 days.", 2, None),
        ("Guide > Loans > Renewals", "Renew twice.", 3, None),  # heading directly on its paragraph
        ("Guide > Fees", "Late fees are 20 cents a day.", 4, None),
        ("Appendix > Deep", "Deep text.", 5, None),
    ]
    for passage in passages:
        assert passage.kind is Kind.PROSE and passage.source == "guide.md" and passage.boxes == ()


def test_markdown_without_headings_has_no_section(tmp_path: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_text("First note.\n\n\n\nSecond note.\n", encoding="utf-8")
    assert [(p.section, p.text) for p in extract_markdown(source, "notes.md")] == [
        (None, "First note."),
        (None, "Second note."),
    ]


def test_sample_markdown_sections() -> None:
    passages = extract_markdown(PDFS / "fines-and-fees.md", "fines-and-fees.md")
    assert [p.section for p in passages] == [
        "Fines and Fees",
        "Fines and Fees > Late fees",
        "Fines and Fees > Late fees",
        "Fines and Fees > Lost and damaged items",
        "Fines and Fees > Lost and damaged items",
        "Fines and Fees > Paying fines",
    ]
    assert passages[3].text == (
        "A lost or badly damaged item is charged at its replacement cost plus a processing fee of 5 dollars."
    )


# --- plain text and sidecar headings -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Community Map Exchange", True),
        ("Opening hours", True),
        ("The desk accepts maps.", False),
        ("Note:", False),
        ("Is it open?", False),
        ("one two three four five six seven eight nine ten eleven", False),
        ("x" * 81, False),
        ("Two\nlines", False),
        ("", False),
        ("   ", False),
    ],
)
def test_looks_like_heading(line: str, expected: bool) -> None:
    assert looks_like_heading(line) is expected


def test_plain_text_heading_governs_the_paragraphs_after_it() -> None:
    text = (
        "Intro without heading.\n\nRoom Rules\n\nNo food.\n\nNo phones,\nplease.\n\n"
        "Fees\n\nPrinting costs 10 cents.\n"
    )
    passages = extract_plain(text, "rules.txt", None, Kind.PROSE)
    assert [(p.section, p.text, p.paragraph, p.page, p.kind) for p in passages] == [
        (None, "Intro without heading.", 1, None, Kind.PROSE),
        ("Room Rules", "No food.", 2, None, Kind.PROSE),
        ("Room Rules", "No phones, please.", 3, None, Kind.PROSE),
        ("Fees", "Printing costs 10 cents.", 4, None, Kind.PROSE),
    ]


def test_paragraphs_split_on_blank_lines_with_offsets() -> None:
    text = "  One\nline.\n \t\nTwo.\n\n\n"
    assert paragraphs(text) == [("One line.", 2, 11), ("Two.", 15, 19)]


def test_sidecar_text_made_of_short_lines_is_not_lost() -> None:
    text = "Weekend hours\n\nSaturday 10:00 to 16:00\n\nSunday closed\n"
    passages = extract_plain(text, "notice.pdf", 1, Kind.OCR)
    indexed = " ".join(p.text for p in passages)
    assert "10:00 to 16:00" in indexed
    assert "Sunday closed" in indexed


# --- identifiers --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EQ-314", ["EQ-314"]),
        ("What is the loan limit for eq-314?", ["EQ-314"]),
        ("eq-314 and EQ-314 and Eq-314", ["EQ-314"]),
        ("See CT-41, then R-17.", ["CT-41", "R-17"]),
        ("Item ID: EQ-502; Item: Audio recorder", ["EQ-502"]),
        ("Model EQ-314a", ["EQ-314A"]),
        ("x_EQ-1 EQ314 EQ- -314", []),
    ],
)
def test_identifiers(text: str, expected: list[str]) -> None:
    assert identifiers(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It takes effect on 2026-11-01.",
        "It takes effect on 1 November 2026.",
        "Valid 2026-06-01 to 2026-10-31",
        "Open from 09:00 to 20:00, 12-15 people",
        "Call 555-0100",
    ],
)
def test_dates_times_and_numbers_are_not_identifiers(text: str) -> None:
    assert identifiers(text) == []


def test_a_date_inside_a_hyphenated_file_name_is_not_an_identifier() -> None:
    assert identifiers("What does equipment-policy-2026-11-01 say about projectors?") == []


@pytest.mark.parametrize(
    ("levels", "governed"),
    [
        ([0, None, 1, None], [0, None, 1, None]),  # each heading governs the text after it
        ([0, 1, None], [0, 1, None]),  # a heading may govern a lower one
        ([1, 0, None], [None, 0, None]),  # ... not a higher one
        ([0, 0, None], [None, 0, None]),  # ... nor one of its own level
        ([None, 0], [None, None]),  # the last block governs nothing: it is text
        ([], []),
    ],
)
def test_a_heading_that_governs_nothing_is_text(levels: list[int | None], governed: list[int | None]) -> None:
    assert governing(levels) == governed


def test_a_file_that_breaks_its_extractor_is_reported_not_fatal(tmp_path: Path) -> None:
    from localqa.extract import Extracted, Unreadable
    from localqa.extract.pool import Job, extract_many

    def extract(path: Path, name: str, doc_source: str) -> Extracted:
        if name == "odd.md":
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return Extracted([])

    jobs = [Job(tmp_path / name, name, name) for name in ("odd.md", "fine.md")]
    [(_, odd), (_, fine)] = list(extract_many(jobs, 1, extract))
    assert isinstance(odd, Unreadable) and str(odd) == (
        "cannot be extracted (OverflowError: Python int too large to convert to SQLite INTEGER); "
        "check the file"
    )
    assert isinstance(fine, Extracted)
