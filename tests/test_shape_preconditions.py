"""Every computed shape checks what it assumes (issue 47), end to end on documents drawn for each
way a shape was found to show a wrong answer as computed: a sum row spelt "All regions" or
"Totals" taken as the largest item, an extreme read from the first column of figures where the
part names another, a table continued on the next page cut at its page, "which year" answered
with a row, a two-section table compared across its sections, "improved" said of a rising cost
ratio or tax rate, and a ratio question answered with its denominator. Each answer is the drawn
truth or no computed answer, with the quote standing and the reason beside it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path

import pymupdf
import pytest

from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer

AS_OF = date(2026, 1, 1)
Rows = Sequence[tuple[str, ...]]


def table_page(page: pymupdf.Page, titles: Sequence[str], headers: Sequence[str], rows: Rows) -> None:
    """A table as filings lay it out: titles, right-aligned headers, a label and figures a row."""
    y = 72.0
    for title in titles:
        page.insert_text((72, y), title, fontname="hebo", fontsize=11)
        y += 16
    right = [420.0, 520.0] if len(headers) <= 2 else [300.0 + 110 * i for i in range(len(headers))]
    y += 10
    for x, header in zip(right, headers, strict=False):
        width = pymupdf.get_text_length(header, fontname="hebo", fontsize=9)
        page.insert_text((x - width, y), header, fontname="hebo", fontsize=9)
    y += 20
    for label, *cells in rows:
        page.insert_text((72, y), label, fontname="helv", fontsize=9)
        for x, cell in zip(right, cells, strict=False):
            width = pymupdf.get_text_length(cell, fontname="helv", fontsize=9)
            page.insert_text((x - width, y), cell, fontname="helv", fontsize=9)
        y += 16


Drawn = Callable[[pymupdf.Page], None]


def write(path: Path, title: str, pages: Sequence[Drawn]) -> None:
    with pymupdf.open() as document:
        for draw in pages:
            draw(document.new_page())
        document.set_metadata({"title": title})
        document.save(path)


REGIONS = [
    ("North America", "5,000", "4,500"),
    ("Europe", "2,000", "2,200"),
    ("Asia Pacific", "1,500", "1,400"),
]
REGION_TITLES = ["NET REVENUES BY GEOGRAPHIC REGION", "(In millions)"]
STORES_FIRST = [(f"Store {n}", f"{100 + n:,}") for n in range(1, 11)]
STORES_MORE = [("Store Omega", "9,999"), ("Store 11", "150")]
LONG_FIRST = [(f"Store {n}", f"{100 + n:,}") for n in range(1, 39)]
LONG_MORE = [*STORES_MORE, *((f"Store {n}", f"{100 + n:,}") for n in range(39, 45))]


def _documents(folder: Path) -> None:
    for name, total in (("orbit", "All regions"), ("comet", "Totals"), ("pulsar", "Worldwide")):
        rows = [*REGIONS, (total, "8,500", "8,100")]
        write(
            folder / f"{name}-10k-fy2022.pdf",
            f"{name.title()} Games Annual Report 2022",
            [lambda page, rows=rows: table_page(page, REGION_TITLES, ["2022", "2021"], rows)],
        )
    # A total no label says is one: "Net revenues" under three regions.
    rows = [*REGIONS, ("Net revenues", "8,500", "8,100")]
    write(
        folder / "quasar-10k-fy2022.pdf",
        "Quasar Games Annual Report 2022",
        [lambda page: table_page(page, REGION_TITLES, ["2022", "2021"], rows)],
    )
    write(
        folder / "nimbus-10k-fy2022.pdf",
        "Nimbus Play Annual Report 2022",
        [
            lambda page: table_page(
                page,
                ["REVENUE BY PLATFORM", "(In millions)"],
                ["Change from prior year", "Revenue"],
                [("Puzzle", "30", "100"), ("Arcade", "5", "900"), ("Strategy", "12", "400")],
            )
        ],
    )
    # A table of stores that goes on at the next page, "(continued)": 10 then 2 stores, 38 then 2,
    # and 38 then 8 (more than an extreme compares).
    for company, first, more in (
        ("stellar", STORES_FIRST, STORES_MORE),
        ("galaxy", LONG_FIRST, STORES_MORE),
        ("nebula", LONG_FIRST, LONG_MORE),
    ):
        write(
            folder / f"{company}-10k-fy2022.pdf",
            f"{company.title()} Stores Annual Report 2022",
            [
                lambda page, rows=first: table_page(
                    page, ["NET SALES BY STORE", "(In thousands)"], ["2022"], rows
                ),
                lambda page, rows=more: table_page(
                    page, ["NET SALES BY STORE (continued)", "(In thousands)"], ["2022"], rows
                ),
            ],
        )
    statement = [
        ("Net sales", "9,000", "8,000", "7,000"),
        ("Cost of sales", "6,300", "5,400", "4,900"),
        ("Selling, general and administrative expenses", "1,800", "1,500", "1,400"),
        ("Operating income", "700", "900", "800"),
        ("Income before income taxes", "600", "800", "700"),
        ("Provision for income taxes", "180", "160", "140"),
    ]
    write(
        folder / "vega-10k-fy2022.pdf",
        "Vega Tools Annual Report 2022",
        [
            lambda page: table_page(
                page,
                ["VEGA TOOLS INC.", "CONSOLIDATED STATEMENTS OF OPERATIONS", "(In millions)"],
                ["2022", "2021", "2020"],
                statement,
            )
        ],
    )
    segments = [
        ("Operating income:", "", ""),
        ("US", "50", "45"),
        ("International", "80", "70"),
        ("Net sales:", "", ""),
        ("US", "500", "450"),
        ("International", "300", "280"),
    ]
    write(
        folder / "lyra-10k-fy2022.pdf",
        "Lyra Foods Annual Report 2022",
        [
            lambda page: table_page(
                page, ["LYRA FOODS INC.", "SEGMENT INFORMATION", "(In millions)"], ["2022", "2021"], segments
            )
        ],
    )


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("preconditions")
    _documents(folder)
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str, source: str) -> Answer:
    with Library(db) as opened:
        result = opened.answer(question, as_of=AS_OF, model=ExtractiveModel(), documents=[source])
        return result.parts[0].answer


def computed_row(answer: Answer) -> str | None:
    """The row (or period) a computed extreme names, or None when none was computed."""
    value = answer.value
    if value is None or value.comparison is None:
        return None
    return value.row


@pytest.mark.parametrize("company", ["orbit", "comet", "pulsar", "quasar"])
def test_a_sum_row_of_any_spelling_is_never_the_largest_item(library: Path, company: str) -> None:
    answer = ask(library, "Which region had the largest net revenues in FY2022?", f"{company}-10k-fy2022.pdf")
    assert computed_row(answer) in ("North America", None)
    if company != "quasar":  # a labelled total is left out, and the items are compared
        assert computed_row(answer) == "North America"
        assert answer.value is not None and answer.value.comparison is not None
        assert len(answer.value.comparison.figures) == 3
    else:  # an unlabelled one is said, and nothing is computed
        assert answer.figure_note is not None and "sum of the others" in answer.figure_note


def test_an_extreme_reads_the_column_the_part_names(library: Path) -> None:
    answer = ask(library, "Which platform had the largest revenue?", "nimbus-10k-fy2022.pdf")
    assert computed_row(answer) in ("Arcade", None)
    assert not (answer.value is not None and answer.value.text == "30")


@pytest.mark.parametrize("company", ["stellar", "galaxy"])
def test_a_table_continued_on_the_next_page_is_read_to_its_end(library: Path, company: str) -> None:
    # galaxy: 38 stores on the first page, the largest of them on the next ("(continued)").
    answer = ask(library, "Which store had the largest net sales in 2022?", f"{company}-10k-fy2022.pdf")
    assert computed_row(answer) == "Store Omega", answer
    assert answer.value is not None and answer.value.text == "9,999"


def test_a_table_too_long_to_read_to_its_end_gives_no_extreme(library: Path) -> None:
    answer = ask(library, "Which store had the largest net sales in 2022?", "nebula-10k-fy2022.pdf")
    assert computed_row(answer) is None
    assert answer.figure_note is not None and "no extreme computed" in answer.figure_note


def test_which_year_compares_the_periods_of_the_row_asked(library: Path) -> None:
    answer = ask(library, "Which year had the highest operating income?", "vega-10k-fy2022.pdf")
    assert computed_row(answer) == "2021", answer
    assert answer.value is not None and answer.value.text == "900"
    assert answer.quote is not None and "Operating income" in answer.quote


def test_two_items_compared_within_the_section_the_part_names(library: Path) -> None:
    answer = ask(
        library, "How did US net sales compare to international net sales in FY2022?", "lyra-10k-fy2022.pdf"
    )
    comparison = answer.value.comparison if answer.value else None
    assert comparison is not None, answer
    assert (comparison.direction, [f.text for f in comparison.figures]) == ("higher", ["500", "300"])


@pytest.mark.parametrize(
    ("question", "allowed"),
    [
        ("Did the cost of goods sold as a % of revenue improve from FY2021 to FY2022?", {"declined"}),
        ("Did the effective tax rate improve from FY2021 to FY2022?", {"increased"}),
        ("Did SG&A as a % of net sales improve from FY2021 to FY2022?", {"increased", None}),
    ],
)
def test_improved_only_where_the_glossary_states_the_direction(
    library: Path, question: str, allowed: set[str | None]
) -> None:
    answer = ask(library, question, "vega-10k-fy2022.pdf")
    comparison = answer.value.comparison if answer.value else None
    direction = comparison.direction if comparison else None
    assert direction in allowed, answer
    assert direction != "improved"


def test_a_ratio_question_gets_the_ratio_or_nothing(library: Path) -> None:
    answer = ask(
        library, "Did SG&A as a % of net sales improve from FY2021 to FY2022?", "vega-10k-fy2022.pdf"
    )
    value = answer.value
    if value is not None and value.comparison is not None:
        assert [f.text for f in value.comparison.figures] == ["18.75 %", "20.00 %"], value
        assert value.comparison.direction == "increased"
    assert not (value is not None and value.text in ("8,000", "9,000"))
