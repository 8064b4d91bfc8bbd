"""List and count answers (`localqa.answers.listing`): which parts ask for one, distinct verified items up
to a bound, a count that is the number of items listed ("at least N" when more may hide), the
list rule evaluation gates on, and a hidden document never listed or counted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest
from access import NOV
from click.testing import CliRunner

from localqa.answers import listing
from localqa.answers.answering import answer_part, quote_check
from localqa.cli import cli
from localqa.display.printed import value_lines
from localqa.evaluate.expected_value import ExpectedValue, judge
from localqa.evaluate.records import Run, RunConfig, Totals
from localqa.evaluate.score import unchecked_figure, unchecked_item
from localqa.library import IndexContext, Library, VisiblePage
from localqa.models import get_model
from localqa.question import lists, ordinals
from localqa.settings import AnswerSettings, RetrievalSettings
from localqa.types import Answer, Caller, Candidate, Kind, ListItem, Location, Passage, Value
from localqa.values.choosing import VisibleTable
from localqa.values.fiscal import FiscalCalendar

LEXICAL_ONLY = AnswerSettings(unit_semantic_weight=0)


def location(
    source: str = "guide.pdf", *, kind: Kind = Kind.PROSE, row: int | None = None, **extra: object
) -> Location:
    table = kind is Kind.TABLE
    fields: dict[str, object] = {
        "source": source,
        "page": 1,
        "kind": kind,
        "section": "Guide > Products",
        "table": 1 if table else None,
        "row": row if table else None,
        "paragraph": None if table else 1,
        "effective": None,
    }
    return Location.model_validate(fields | extra)


def candidate(text: str, rank: int, **where: object) -> Candidate:
    where = {"paragraph": rank} | where if where.get("kind") is not Kind.TABLE else where
    return Candidate(
        rank=rank, score=10.0 - rank, location=location(**where), text=text, doc_id="guide", tenant="default"
    )


def answered(
    question: str, candidates: tuple[Candidate, ...], settings: AnswerSettings = LEXICAL_ONLY
) -> Answer:
    return answer_part(question, candidates, get_model("extractive"), settings)


# --- which parts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "kind", "cue"),
    [
        ("List the compulsory courses.", "list", "list the"),
        ("Please list all the sections that discuss the experiment setup?", "list", "list the"),
        ("Name the three bad fonts.", "list", "list the"),
        (
            "List the fees charged by the library.",
            "list",
            "list the",
        ),  # said outright: a quantity's words yield
        ("What kinds of business or segment does 3M have in FY2018?", "list", "kinds of"),
        ("What are the company's main products?", "list", "what are the (plural)"),
        ("What are the uses of the satellite constellation?", "list", "what are the (plural)"),
        ("Which compulsory ISEP courses must the students take?", "list", "which/what (plural)"),
        ("What services does the library offer?", "list", "which/what (plural)"),
        ("How many chapters are in this report?", "count", "how many"),
        ("How many geographic market names are listed under Los Angeles area?", "count", "how many"),
    ],
)
def test_parts_that_ask_for_several_things(part: str, kind: str, cue: str) -> None:
    found = lists.asked(part)
    assert found is not None and (found.kind, found.cue) == (kind, cue)


@pytest.mark.parametrize(
    "part",
    [
        "What were the net sales of 3M in FY2018?",  # an amount, plural as filings write it
        "What are the total revenues in FY2022?",  # a quantity
        "Which program has the longest duration?",  # one thing
        "Name a restaurant between 36th Ave. and 37th Ave.",  # one thing
        "How many days can a book be borrowed?",  # a measure: one sentence states it
        "How many unused annual leave days carry over?",
        "How many times can a book be renewed?",
        "How many grams of coffee fit in the insert?",
        "How many percent of the tweets are in English?",
        "How many more Tweets are attributed to Germanwings than Lufthansa?",  # arithmetic
        "How many Tweets are attributed to Germanwings and Airbus in total?",
        "Are the reading rooms open on Sundays?",  # yes or no
        "What drove the increase in operating expenses?",  # a cause (localqa.answers.causes)
        "What is the loan period?",
        "What was the revenue in the second quarter?",  # a part of a period, no entry of a list
        "Which is the second largest market?",  # a rank by size
    ],
)
def test_parts_that_ask_for_one_thing(part: str) -> None:
    assert lists.asked(part) is None


@pytest.mark.parametrize(
    ("part", "cue", "noun", "place"),
    [
        ("List the steps.", "list the", "steps", None),
        ("List all the chapters of the report.", "list the", "chapters", None),
        ("List the first three steps.", "list the", "steps", (1, 3, False)),
        (
            "What are the last 4 chapters listed in the table of contents?",
            "what are the (plural)",
            "chapters",
            (1, 4, True),
        ),
        ("What is the second step?", lists.ORDINAL_CUE, "step", (2, 1, False)),
        ("What is the last step of replacing the filter?", lists.ORDINAL_CUE, "step", (1, 1, True)),
    ],
)
def test_the_noun_a_list_names_and_the_entries_it_asks_for_by_place(
    part: str, cue: str, noun: str, place: tuple[int, int, bool] | None
) -> None:
    found = lists.asked(part)
    assert found is not None and (found.kind, found.cue, found.noun) == ("list", cue, noun)
    position = found.position
    assert (None if position is None else (position.start, position.count, position.from_end)) == place


@pytest.mark.parametrize(
    ("noun", "quote", "kind", "stated"),
    [
        ("datasets", "We evaluate on nine widely-used datasets.", Kind.PROSE, True),
        ("employees", "The branch has 12 employees.", Kind.PROSE, True),
        ("chapters", "The report has 9 chapters in all.", Kind.PROSE, True),
        ("chapters", "Chapter 9 covers food safety.", Kind.PROSE, False),
        ("steps", "Press the button and wait 10 seconds before the next steps.", Kind.PROSE, False),
        (
            "renewals",
            "Renewal limits: Item type: DVDs; Renewals allowed: 1; Loan period: 7 days",
            Kind.TABLE,
            True,
        ),
        ("markets", "Markets: Code: CA01; Market: Los Angeles area 1", Kind.TABLE, False),
    ],
)
def test_a_count_one_sentence_or_row_states_keeps_its_span(
    noun: str, quote: str, kind: Kind, stated: bool
) -> None:
    assert listing.stated_count(noun, quote, kind) is stated


# --- the items --------------------------------------------------------------------------------------

PRODUCTS = (
    candidate("The company's main products are industrial adhesives.", 1),
    candidate("The company's main products also include safety respirators.", 2),
    # The same sentence in another passage (a page header repeated, a summary): listed once.
    candidate("The company's main products are industrial adhesives.", 3),
    candidate("The company's main products include dental implants.", 4),
    candidate("The head office is in St. Paul.", 5),
)


def test_a_list_answer_lists_each_distinct_verified_quote_once() -> None:
    answer = answered("What are the company's main products?", PRODUCTS)
    value = answer.value
    assert value is not None and value.items is not None and value.number is None
    quotes = [item.quote for item in value.items]
    assert quotes.count("The company's main products are industrial adhesives.") == 1
    assert set(quotes) == {
        "The company's main products are industrial adhesives.",
        "The company's main products also include safety respirators.",
        "The company's main products include dental implants.",
    }
    assert value.text == listing.JOINER.join(item.text for item in value.items)
    for item in value.items:  # each item a verified quote of the passage it cites
        cited = next(c for c in PRODUCTS if c.location == item.citation)
        assert quote_check(item.quote, cited.text, item.citation.kind) is None
    assert listing.list_problem(value, lambda item: True) is None


def test_a_part_asking_for_one_thing_gets_no_list() -> None:
    answer = answered("Where is the head office?", PRODUCTS)
    assert answer.value is None or answer.value.items is None


def rows(count: int) -> tuple[Candidate, ...]:
    return tuple(
        candidate(f"Markets: Code: CA{n:02d}; Market: Los Angeles area {n}", n, kind=Kind.TABLE, row=n)
        for n in range(1, count + 1)
    )


def test_a_count_is_the_number_of_distinct_rows_listed() -> None:
    answer = answered(
        "How many markets are in the Los Angeles area?", rows(5), LEXICAL_ONLY.model_copy(update={"k": 8})
    )
    value = answer.value
    assert value is not None and value.items is not None
    assert (value.number, value.text) == (5, "5")
    assert sorted(item.text for item in value.items) == [f"CA{n:02d}" for n in range(1, 6)]


def test_a_count_beyond_the_bound_says_at_least() -> None:
    answer = answered(
        "How many markets are in the Los Angeles area?", rows(15), LEXICAL_ONLY.model_copy(update={"k": 20})
    )
    value = answer.value
    assert value is not None and value.items is not None
    assert len(value.items) == listing.LIST_BOUND
    assert (value.number, value.text) == (listing.LIST_BOUND, f"at least {listing.LIST_BOUND}")


def test_a_count_that_reaches_retrievals_cut_says_at_least() -> None:
    # Eight rows retrieved at k=8, the last of them listed: the table may go on beyond the cut.
    answer = answered(
        "How many markets are in the Los Angeles area?", rows(8), LEXICAL_ONLY.model_copy(update={"k": 8})
    )
    assert answer.value is not None and answer.value.text == "at least 8"


def test_a_count_nobody_states_or_lists_has_no_value() -> None:
    lone = (
        candidate("Appendix 3: Report Requirements and Review.", 1),
        candidate("The head office is in St. Paul.", 2),
    )
    answer = answered("How many chapters are in this report?", lone)
    assert answer.verified and answer.value is None


def test_a_count_one_sentence_states_is_not_counted_over_items() -> None:
    stated = (
        candidate("The region has 13 markets in the Los Angeles area.", 1),
        candidate("Markets in the Los Angeles area are served weekly.", 2),
    )
    answer = answered("How many markets are in the Los Angeles area?", stated)
    assert answer.value is not None and answer.value.items is None and answer.value.text == "13 markets"


# --- the rule a shown list passes, and the gate -------------------------------------------------------

ITEM = ListItem(
    text="CA01",
    quote="Markets: Code: CA01; Market: Los Angeles area 1",
    citation=location(kind=Kind.TABLE, row=1),
)
FORGED = ListItem(
    text="CA99",
    quote="Markets: Code: CA99; Market: Los Angeles area 99",
    citation=location(kind=Kind.TABLE, row=2),
)
PASSAGES = {ITEM.citation: ITEM.quote, FORGED.citation: "Markets: Code: CA02; Market: Los Angeles area 2"}


def text_at(where: Location) -> str | None:
    return PASSAGES.get(where)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (Value(text="CA01", items=(ITEM,)), None),
        (Value(text="1", number=1, items=(ITEM,)), None),
        (Value(text="CA01; CA99", items=(ITEM, FORGED)), "item 2 is not a verified quote"),
        (Value(text="CA01; CA01", items=(ITEM, ITEM)), "an item is listed twice"),
        (Value(text="3", number=3, items=(ITEM,)), "its count is not the number of its items"),
        (Value(text="CA01 and more", items=(ITEM,)), "its text is not its items joined"),
        (Value(text="CA01", items=(ITEM.model_copy(update={"text": "CA07"}),)), "item 1 is not a span"),
    ],
)
def test_an_unchecked_list_item_is_caught_by_the_gate(value: Value, problem: str | None) -> None:
    found = unchecked_item(value, text_at)
    assert (found is None) if problem is None else (found is not None and problem in found)
    assert unchecked_figure(value, ITEM.quote, text_at) is None  # a list is judged by the list rule


def test_unchecked_list_items_fail_a_run() -> None:
    config = RunConfig(
        suite="s", retrieval=RetrievalSettings(), answering=AnswerSettings(), model=None, prompt_hash="p",
        corpus_digest="c", localqa_version="v", created="now",
    )  # fmt: skip
    totals = Totals.of([]).model_copy(update={"unchecked_items": 1})
    assert Run(config=config, totals=totals, cases=[]).gates_failed == ["1 unchecked list item(s) shown"]


def test_a_list_value_is_judged_item_by_item() -> None:
    items = tuple(
        ListItem(text=t, quote=f"Segments: {t}: 2018: 1", citation=location(kind=Kind.TABLE, row=n))
        for n, t in enumerate(["Health Care, Dental", "Consumer"], start=1)
    )
    value = Value(text="Health Care, Dental; Consumer", items=items)
    assert judge(ExpectedValue(items=("Consumer", "Health Care, Dental")), value).correct


def test_a_list_is_printed_as_a_short_list_each_item_cited() -> None:
    value = Value(text="CA01", number=None, items=(ITEM,))
    lines = value_lines(value.model_copy(update={"items": (ITEM,)}))
    assert lines[0].strip().startswith("Answer: 1 item(s)")
    assert "1. CA01" in lines[1] and ITEM.quote in lines[2] and "row 1" in lines[3]


# --- a hidden document is never listed or counted ---------------------------------------------------------

CATALOG = """
["tools.md"]
series = "tools"
effective = 2026-01-01
access = "public"

["tools-staff.md"]
series = "tools-staff"
effective = 2026-01-01
access = "staff"
"""


@pytest.fixture
def tool_library(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "tools.md").write_text(
        "# Tools\n\nThe tool library lends cordless drills. The tool library lends folding ladders. "
        "The tool library lends hand saws.\n",
        encoding="utf-8",
    )
    (folder / "tools-staff.md").write_text(
        "# Tools\n\nThe tool library lends the master key to staff. The tool library lends the alarm fob "
        "to staff. The tool library lends the tool library safe code to staff tool library leads.\n",
        encoding="utf-8",
    )
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = tmp_path / "index.sqlite3"
    result = CliRunner().invoke(cli, ["index", "--pdfs", str(folder), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


def listed(db: Path, role: str) -> dict[str, object]:
    result = CliRunner().invoke(
        cli,
        ["ask", "Which tools does the tool library lend?", "--as-of", NOV, "--db", str(db), "--model",
         "extractive", "--role", role, "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    answer: dict[str, object] = json.loads(result.output)["parts"][0]["answer"]
    return answer


def test_a_hidden_documents_passage_is_never_listed_or_counted(tool_library: Path) -> None:
    public = listed(tool_library, "public")
    value = public["value"]
    assert isinstance(value, dict) and value["items"] is not None
    assert {item["citation"]["source"] for item in value["items"]} == {"tools.md"}
    assert len(value["items"]) == 3 and "key" not in json.dumps(public) and "fob" not in json.dumps(public)
    staff = listed(tool_library, "staff")  # the same question as staff reads the staff document
    assert "tools-staff.md" in json.dumps(staff)


def test_a_count_of_sentences_is_no_count(tool_library: Path) -> None:
    """Sentences that share the part's words are no list of the things counted (issue 47: on the
    MMLongBench dev splits such counts were right only by chance): the quote stands, no value."""
    result = CliRunner().invoke(
        cli,
        ["ask", "How many tools does the tool library lend?", "--as-of", NOV, "--db", str(tool_library),
         "--model", "extractive", "--json"],
    )  # fmt: skip
    answer = json.loads(result.output)["parts"][0]["answer"]
    assert answer["verified"] and answer["value"] is None
    assert answer["figure_note"].startswith("no count given")


def test_a_list_answer_in_json_has_items_with_text_quote_and_citation(tool_library: Path) -> None:
    value = listed(tool_library, "public")["value"]
    assert isinstance(value, dict)
    for item in value["items"]:
        assert set(item) == {"text", "quote", "citation"} and item["text"] == item["quote"]
    assert date.fromisoformat(NOV)


def test_the_web_app_shows_a_list_item_by_item() -> None:
    from localqa.serve.pages import _value_view

    answer = Answer.verified_quote(ITEM.quote, ITEM.citation).model_copy(
        update={"value": Value(text="CA01", items=(ITEM,))}
    )
    view = _value_view(answer)
    assert view["value"] == "1 item(s)"
    assert view["items"] == [{"text": "CA01", "quote": ITEM.quote, "where": ITEM.citation.describe()}]


LISTED_SCORES = """
import json
from benchmarks.common import Case
from benchmarks.pdfqa import listed_scores
cases = [Case(i, 'q', 'd.pdf', {('d.pdf', 1)}, 'text_or_table', answer='a', answer_type=t)
         for i, t in (('a', 'List'), ('b', 'Int'), ('c', 'Int'), ('d', 'Str'))]
item = {'text': 't', 'quote': 'q', 'citation': None}
by_id = {
    'a': {'value': {'items': [item], 'number': None}, 'value_correct': True},
    'b': {'value': {'items': [item], 'number': 1.0}, 'value_correct': False},
    'c': {'value': {'items': None, 'number': 4.0}, 'value_correct': True},
    'd': {'value': None, 'value_correct': False},
}
print(json.dumps(listed_scores(cases, by_id)))
"""


def test_pdfqa_counts_list_and_count_answers_apart() -> None:
    """In a child process from the repository root, as the benchmarks run."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-c", LISTED_SCORES], capture_output=True, text=True, cwd=root, check=True
    )
    scores = json.loads(result.stdout)
    assert {k: (v["numerator"], v["denominator"]) for k, v in scores.items()} == {
        "list answers (value correct)": (1, 1),
        "count answers (value correct)": (0, 1),
        "value correct, List format": (1, 1),
        "value correct, Int format": (1, 2),
    }


# --- a table's rows read whole (`Context.table`) ----------------------------------------------------


def market_rows(count: int, source: str = "guide.pdf") -> tuple[Passage, ...]:
    return tuple(
        Passage(
            kind=Kind.TABLE,
            source=source,
            page=1,
            section="Guide > Products",
            table=1,
            row=n,
            text=f"Markets: Code: CA{n:02d}; Market: Los Angeles area {n}",
        )
        for n in range(1, count + 1)
    )


class WholeTable:
    """A context whose tables are `table` (as `localqa.library.IndexContext` reads them)."""

    def __init__(self, table: VisibleTable) -> None:
        self.visible = table

    def calendar(self, source: str) -> FiscalCalendar:
        return FiscalCalendar()

    def around(self, location: Location) -> Sequence[str]:
        return ()

    def table(self, location: Location) -> VisibleTable:
        return self.visible

    def passages(self, location: Location) -> Sequence[Passage]:
        return self.visible.rows

    def passages_containing(self, source: str, text: str, limit: int) -> Sequence[Passage]:
        return ()

    def last_page(self, source: str) -> int | None:
        return None


def counted(
    table: VisibleTable, retrieved: int, question: str = "How many markets are in the Los Angeles area?"
) -> Value:
    """The value of a count part over `retrieved` rows of `table` (retrieval's cut at k=3)."""
    candidates = rows(retrieved)
    settings = LEXICAL_ONLY.model_copy(update={"k": 3})
    answer = answer_part(question, candidates, get_model("extractive"), settings, WholeTable(table))
    assert answer.value is not None and answer.value.items is not None
    return answer.value


def test_a_count_reads_the_whole_table_not_only_the_rows_retrieved() -> None:
    value = counted(VisibleTable(rows=market_rows(9)), retrieved=3)
    assert (value.number, value.text) == (9, "9")  # not "at least 3": the table was read whole
    assert sorted(item.text for item in value.items or ()) == [f"CA{n:02d}" for n in range(1, 10)]
    assert listing.list_problem(value, lambda item: True) is None


def test_a_count_of_a_whole_table_beyond_the_bound_says_at_least() -> None:
    value = counted(VisibleTable(rows=market_rows(15)), retrieved=3)
    assert len(value.items or ()) == listing.LIST_BOUND
    assert value.text == f"at least {listing.LIST_BOUND}"


def test_a_count_of_a_table_that_ends_its_page_says_at_least() -> None:
    value = counted(VisibleTable(rows=market_rows(5), runs_on=True), retrieved=3)
    assert (value.number, value.text) == (5, "at least 5")  # the next page may go on with it


def test_a_total_row_of_the_table_is_no_item() -> None:
    total = Passage(
        kind=Kind.TABLE,
        source="guide.pdf",
        page=1,
        table=1,
        row=6,
        text="Markets: Code: Total; Market: 5 markets",
    )
    value = counted(VisibleTable(rows=(*market_rows(5), total)), retrieved=3)
    assert value.text == "5"


def test_another_table_than_the_quotes_is_never_read_as_its_rows() -> None:
    # A table that does not hold the quoted row (another page's): the rows retrieved, as before.
    elsewhere = tuple(r.model_copy(update={"page": 2}) for r in market_rows(9))
    assert counted(VisibleTable(rows=elsewhere), retrieved=3).text == "at least 3"


MARKETS_CATALOG = """
["markets.csv"]
series = "markets"
effective = 2026-01-01
access = "public"

["markets-staff.csv"]
series = "markets-staff"
effective = 2026-01-01
access = "staff"
"""


@pytest.fixture
def markets_library(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    public = [f"CA{n:02d},Market {n} of the Los Angeles area,West" for n in range(1, 10)]
    staff = [f"SX{n:02d},Staff market {n} of the Los Angeles area,West" for n in range(1, 4)]
    (folder / "markets.csv").write_text("\n".join(["Code,Market,Region", *public]) + "\n", encoding="utf-8")
    (folder / "markets-staff.csv").write_text(
        "\n".join(["Code,Market,Region", *staff]) + "\n", encoding="utf-8"
    )
    (folder / "catalog.toml").write_text(MARKETS_CATALOG, encoding="utf-8")
    db = tmp_path / "index.sqlite3"
    result = CliRunner().invoke(cli, ["index", "--pdfs", str(folder), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


def test_a_count_asked_of_the_index_counts_the_whole_table(markets_library: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["ask", "How many markets are in the Los Angeles area?", "--as-of", NOV, "--db", str(markets_library),
         "--model", "extractive", "-k", "3", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    value = json.loads(result.output)["parts"][0]["answer"]["value"]
    assert (value["number"], value["text"]) == (9, "9")  # nine rows, three retrieved
    assert {item["citation"]["source"] for item in value["items"]} == {"markets.csv"}
    assert "SX0" not in result.output and "Staff market" not in result.output


def test_a_hidden_documents_table_is_never_read(markets_library: Path) -> None:
    staff_row = Location(
        source="markets-staff.csv",
        page=None,
        kind=Kind.TABLE,
        section=None,
        table=1,
        row=2,
        paragraph=None,
        effective=None,
    )
    public_row = staff_row.model_copy(update={"source": "markets.csv"})
    with Library(markets_library) as library:
        as_public = IndexContext(library, date.fromisoformat(NOV), Caller(role="public"), "How many markets?")
        assert as_public.table(staff_row) == VisibleTable()  # not one row, not a count
        assert len(as_public.table(public_row).rows) == 9
        as_staff = IndexContext(library, date.fromisoformat(NOV), Caller(role="staff"), "How many markets?")
        assert len(as_staff.table(staff_row).rows) == 3


class OnePage:
    """A library of one page, `passages` (what `Library.page` gives the caller)."""

    def __init__(self, passages: tuple[Passage, ...]) -> None:
        self.passages = passages

    def page(self, source: str, page: int | None, **_: object) -> VisiblePage:
        return VisiblePage(source=source, page=page, sha256=None, passages=self.passages)


@pytest.mark.parametrize(
    ("after", "runs_on"),
    [
        ((), True),  # the table is the last thing on its page: the next may continue it
        (
            (Passage(kind=Kind.PROSE, source="guide.pdf", page=1, paragraph=9, text="Source: the guide."),),
            False,
        ),
    ],
)
def test_a_table_that_ends_its_page_may_run_on(after: tuple[Passage, ...], runs_on: bool) -> None:
    page = OnePage((*market_rows(4), *after))
    context = IndexContext(page, date.fromisoformat(NOV), Caller(), "How many markets?")  # type: ignore[arg-type]
    table = context.table(location(kind=Kind.TABLE, row=2))
    assert (len(table.rows), table.runs_on) == (4, runs_on)


def test_one_row_retrieved_reads_its_table_whole_when_a_header_names_what_is_counted() -> None:
    value = counted(VisibleTable(rows=market_rows(9)), retrieved=1)  # "Market" names the markets
    assert (value.number, value.text) == (9, "9")


def test_one_row_that_mentions_the_word_does_not_make_its_table_a_list() -> None:
    report = tuple(
        Passage(
            kind=Kind.TABLE, source="guide.pdf", page=1, table=1, row=n, text=f"Report rules: Rule: {text}"
        )
        for n, text in enumerate(
            ["5 pages (max) including tables and figures.", "600 words (min).", "Cite sources."], 1
        )
    )
    question = "How many pages include figures?"
    retrieved = (Candidate(rank=1, score=9.0, location=location(kind=Kind.TABLE, row=1), text=report[0].text,
                           doc_id="guide", tenant="default"),)  # fmt: skip
    settings = LEXICAL_ONLY.model_copy(update={"k": 3})
    answer = answer_part(
        question, retrieved, get_model("extractive"), settings, WholeTable(VisibleTable(report))
    )
    assert answer.verified and answer.value is None  # not "3": the table is no list of pages


def test_the_last_entries_of_a_run_that_ends_its_page_are_not_given() -> None:
    where = Location(
        source="r.pdf", page=7, kind=Kind.PROSE, section="Contents > Chapters",
        table=None, row=None, paragraph=1, effective=None,
    )  # fmt: skip
    items = tuple(ListItem(text=f"{n}. Part", quote=f"{n}. Part", citation=where) for n in range(1, 6))
    last_two = ordinals.Position(1, 2, True, "chapters")
    ends_page = listing.selected(last_two, listing.Listed(items, True))
    assert isinstance(ends_page, str) and "the next may continue" in ends_page
    first_two = listing.selected(ordinals.Position(1, 2, False, "chapters"), listing.Listed(items, True))
    assert isinstance(first_two, listing.Listed)
    assert [i.text for i in first_two.items] == ["1. Part", "2. Part"]
    done = listing.selected(last_two, listing.Listed(items, False))
    assert isinstance(done, listing.Listed) and [i.text for i in done.items] == ["4. Part", "5. Part"]
