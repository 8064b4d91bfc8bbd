"""The tenants suite's spreadsheets, written by generate.py beside its Markdown documents.

Acme keeps its salary bands in a staff-only Excel workbook: Acme staff find a band's row, Acme's
public callers never see it (the band id is carried by no passage they may see), and Globex's
staff never see another tenant's workbook. Globex keeps a public office directory as a CSV file.
A spreadsheet row is cited by its sheet and the row number the spreadsheet shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sheet:
    name: str
    tenant: str
    access: str
    series: str
    title: str
    sheet: str | None  # the workbook's sheet name (None: a CSV file)
    rows: tuple[tuple[str | int, ...], ...]  # the header row first, at row 1

    def row_of(self, first_cell: str) -> int:
        """The spreadsheet row number of the row whose first cell is `first_cell`."""
        return next(number for number, row in enumerate(self.rows, start=1) if row[0] == first_cell)


SHEETS = [
    Sheet(
        "acme-salary-bands.xlsx", "acme", "staff", "salary-bands", "Acme salary bands", "Bands",
        (
            ("Band ID", "Role family", "Minimum (dollars)", "Maximum (dollars)"),
            ("SB-1", "Junior engineer", 48000, 62000),
            ("SB-2", "Engineer", 60000, 78000),
            ("SB-3", "Senior engineer", 74000, 95000),
            ("SB-4", "Principal engineer", 92000, 120000),
        ),
    ),
    Sheet(
        "globex-office-directory.csv", "globex", "public", "office-directory", "Globex office directory",
        None,
        (
            ("Team", "Floor", "Room", "Extension"),
            ("Legal", "4", "4.12", "4120"),
            ("Facilities", "1", "1.03", "1030"),
            ("Payroll", "3", "3.07", "3070"),
        ),
    ),
]

MID = "2026-06-15"


def write(docs: Path) -> None:
    import openpyxl

    for sheet in SHEETS:
        if sheet.sheet is None:
            text = "".join(",".join(str(cell) for cell in row) + "\n" for row in sheet.rows)
            (docs / sheet.name).write_text(text, encoding="utf-8")
            continue
        workbook = openpyxl.Workbook()
        page = workbook.active
        assert page is not None
        page.title = sheet.sheet
        for row in sheet.rows:
            page.append(list(row))
        workbook.save(docs / sheet.name)


def catalog_lines() -> list[str]:
    lines = []
    for sheet in SHEETS:
        lines += [
            f'["{sheet.name}"]',
            f'series = "{sheet.series}"',
            'version = "2026"',
            "effective = 2026-01-01",
            'status = "current"',
            f'access = "{sheet.access}"',
            f'tenant = "{sheet.tenant}"',
            f'title = "{sheet.title}"',
            "",
        ]
    return lines


BANDS, DIRECTORY = SHEETS


def _case(cid: str, tenant: str, role: str, question: str, expect: str, phrase: str | None, note: str,
          abstain_at: str | None = None) -> str:
    lines = [
        f"# {note}", "[[case]]", f'id = "{cid}"', f"as_of = {MID}", f'question = "{question}"',
        f'tenant = "{tenant}"', f'role = "{role}"', 'category = "spreadsheet"', f"expect = [{expect}]",
    ]
    if phrase:
        lines.append(f'phrase = "{phrase}"')
    if abstain_at:
        lines.append(f'abstain_at = "{abstain_at}"')
    return "\n".join(lines)


CASES = [
    _case("acme-salary-band-staff", "acme", "staff", "What is the maximum salary for band SB-3?",
          f'{{ source = "{BANDS.name}", kind = "table", section = "Bands", row = {BANDS.row_of("SB-3")} }}',
          "Maximum (dollars): 95000", "the staff-only workbook's row, for Acme staff"),
    _case("acme-salary-band-public", "acme", "public", "What is the maximum salary for band SB-3?", "",
          None, "the workbook is staff-only: no passage an Acme public caller may see carries SB-3"),
    _case("globex-salary-band-staff", "globex", "staff", "What is the maximum salary for band SB-3?", "",
          None, "Acme's staff workbook is another tenant's, even for Globex staff"),
    _case("globex-legal-floor", "globex", "public", "Which floor is the legal team on?",
          f'{{ source = "{DIRECTORY.name}", kind = "table", row = {DIRECTORY.row_of("Legal")} }}',
          "Floor: 4", "Globex's public directory, a CSV file"),
    _case("acme-legal-floor", "acme", "public", "Which floor is the legal team on?", "", None,
          "only Globex's directory says; Acme's callers share words with their own passages at most",
          abstain_at="answer"),
]
