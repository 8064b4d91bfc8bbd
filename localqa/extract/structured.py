"""Passages of documents that say their own structure (Word, HTML, slides): headings kept as the
section path, paragraphs numbered within their section (`§ Loans > Renewals, paragraph 3`),
tables numbered within the document (or slide) and cited by data row (1 = the first row under
the header), as PDF tables are."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from localqa.language.text import squash
from localqa.types import Kind, Passage


def row_text(header: Sequence[str], cells: Sequence[str], title: str | None) -> str:
    """`Title: Header: value; Header: value`, empty cells left out; the text PDF table rows have."""
    pairs = "; ".join(f"{name}: {value}" for name, value in zip(header, cells, strict=False) if value)
    return f"{title}: {pairs}" if title and pairs else pairs


def column_names(header: Sequence[str]) -> list[str]:
    """Header cells as column names; a blank one is `Column N`."""
    return [squash(name) or f"Column {number}" for number, name in enumerate(header, start=1)]


class Sections:
    """Collects the passages of one document (or one slide) in reading order."""

    def __init__(self, source: str, page: int | None = None) -> None:
        self.source = source
        self.page = page
        self.passages: list[Passage] = []
        self._stack: list[tuple[int, str]] = []
        self._paragraphs: Counter[str | None] = Counter()
        self.tables = 0

    @property
    def section(self) -> str | None:
        return " > ".join(name for _, name in self._stack) or None

    def heading(self, level: int, text: str) -> None:
        """A heading of `level` (0 is the highest): it closes every heading at its level or below."""
        text = squash(text)
        if text:
            self._stack = [(lvl, name) for lvl, name in self._stack if lvl < level] + [(level, text)]

    def paragraph(self, text: str, *, under: str | None = None) -> None:
        """A prose passage in the current section, or in `under` below it (speaker notes, a
        footnote)."""
        text = squash(text)
        if not text:
            return
        section = " > ".join(p for p in (self.section, under) if p) or None
        self._paragraphs[section] += 1
        self.passages.append(
            Passage(
                kind=Kind.PROSE,
                source=self.source,
                page=self.page,
                text=text,
                section=section,
                paragraph=self._paragraphs[section],
            )
        )

    def table(self, rows: Sequence[Sequence[str]], title: str | None = None, header_rows: int = 1) -> None:
        """A table whose first `header_rows` rows are its header (joined per column); each data
        row a passage. A table of one column or one row is a layout table: its text is prose."""
        rows = [[squash(cell) for cell in row] for row in rows]
        rows = [row for row in rows if any(row)]
        width = max((len(row) for row in rows), default=0)
        if width < 2 or len(rows) <= header_rows:
            for row in rows:
                self.paragraph(" ".join(cell for cell in row if cell))
            return
        self.tables += 1
        header = column_names(
            [
                " ".join(dict.fromkeys(r[i] for r in rows[:header_rows] if i < len(r) and r[i]))
                for i in range(width)
            ]
        )
        title = squash(title or "") or None
        for number, cells in enumerate(rows[header_rows:], start=1):
            self.passages.append(
                Passage(
                    kind=Kind.TABLE,
                    source=self.source,
                    page=self.page,
                    text=row_text(header, cells, title),
                    section=self.section,
                    table=self.tables,
                    row=number,
                )
            )
