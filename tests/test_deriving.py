"""Values and derived figures end to end, on a filing drawn as filings are (tests/filings.py) and
indexed for real: the cell at a fiscal year of a filer whose year ends in February, figures
computed from operands each retrieved as a part of its own, a missing operand named, a model
that tries to give a figure of its own refused, and nothing read from a document the caller may
not see."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_model import FakeModel
from filings import write_filing

from localqa.cli import cli
from localqa.derived import figures
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.settings import AnswerSettings, Settings
from localqa.types import Caller

AS_OF = date(2026, 1, 1)
CATALOG = """
["acme-10k-fy2018.pdf"]
series = "acme-10k"
access = "public"
period = "FY2018"

["globex-10k-fy2018.pdf"]
series = "globex-10k"
access = "staff"
"""


@pytest.fixture(scope="module")
def filings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("filings")
    write_filing(folder / "acme-10k-fy2018.pdf", "Acme Retail Inc.")
    write_filing(folder / "globex-10k-fy2018.pdf", "Globex Stores Inc.")
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str, caller: Caller | None = None, model: object = None):  # type: ignore[no-untyped-def]
    # The model is asked on every part: these tests are about what it replies.
    with Library(db, Settings(answering=AnswerSettings(always_ask_model=True))) as library:
        asked = library.answer(question, as_of=AS_OF, caller=caller, model=model or ExtractiveModel())
    return asked.parts[0].answer


def test_a_line_item_at_a_fiscal_year_is_the_cell_of_that_years_column(filings: Path) -> None:
    # Acme's fiscal 2018 ended on February 2, 2019 (its catalog period says FY2018).
    answer = ask(filings, "What were Acme Retail's FY2018 net sales? Answer in USD millions.")
    assert answer.verified and answer.value is not None
    assert (answer.value.text, answer.value.column, answer.value.scale) == (
        "7,939",
        "February 2, 2019",
        "millions",
    )
    assert answer.value.row == "Net sales"
    assert answer.citation is not None and answer.citation.page == 2
    previous = ask(filings, "What were Acme Retail's FY2017 net sales?")
    assert previous.value is not None and previous.value.text == "7,782"


def test_a_derived_figure_is_computed_from_cells_each_cited(filings: Path) -> None:
    answer = ask(
        filings,
        "What is Acme Retail's FY2018 gross margin? Answer in units of percents and round to one decimal "
        "place.",
    )
    value = answer.value
    assert answer.verified and value is not None and value.derived
    assert (value.text, value.number, value.unit) == ("34.5 %", 34.5, "%")  # (7,939 - 5,202) / 7,939
    assert [(o.value.text, o.citation.page) for o in value.operands or ()] == [("7,939", 2), ("5,202", 2)]
    assert answer.citation == (value.operands or ())[0].citation


def test_a_figure_over_two_years_and_two_statements(filings: Path) -> None:
    answer = ask(
        filings,
        "What is Acme Retail's FY2018 DPO? DPO is defined as: 365 * (average accounts payable between "
        "FY2017 and FY2018) / (FY2018 COGS + change in inventory between FY2017 and FY2018). Round your "
        "answer to two decimal places.",
    )
    value = answer.value
    assert value is not None and value.text == "21.51"  # 365 * 306 / (5,202 - 9)
    assert {o.citation.page for o in value.operands or ()} == {2, 3}


def test_an_item_no_row_gives_is_read_from_a_sentence_stating_its_amount_for_the_year(filings: Path) -> None:
    answer = ask(filings, "What is Acme Retail's FY2018 growth in advertising costs? Round to two decimals.")
    value = answer.value
    assert answer.verified and value is not None and value.derived
    assert value.text == "3.52 %"  # (412 - 398) / 398, not the $14 million change of the sentence before
    quotes = {o.quote for o in value.operands or ()}
    assert quotes == {
        "Advertising costs are expensed as incurred and totaled $412 million in fiscal 2018 and $398 "
        "million in fiscal 2017."
    }
    assert [o.value.text for o in value.operands or ()] == ["$412 million", "$398 million"]
    assert {o.citation.page for o in value.operands or ()} == {5}


def test_a_missing_operand_means_no_figure_and_is_named(filings: Path) -> None:
    # No quote verified either: the refusal says both (a verified quote would stand, `figure_note`).
    answer = ask(filings, "What is Acme Retail's FY2016 - FY2018 revenue CAGR?")
    assert not answer.verified and answer.value is None
    assert answer.reason == (
        "no figure computed: the evidence gives FY2018 revenue but not FY2016 revenue; "
        'and no quote was verified: the evidence never mentions "2016"'
    )


def test_nothing_is_read_from_a_filing_the_caller_may_not_see(filings: Path) -> None:
    question = "What were Globex Stores' FY2018 net sales?"
    public = ask(filings, question)
    assert public.value is None or all(
        o.citation.source != "globex-10k-fy2018.pdf" for o in public.value.operands or ()
    )
    assert public.citation is None or public.citation.source != "globex-10k-fy2018.pdf"
    staff = ask(filings, question, Caller(role="staff"))
    assert staff.value is not None and staff.citation is not None
    assert (staff.value.text, staff.citation.source) == ("7,939", "globex-10k-fy2018.pdf")


def test_a_model_that_replies_with_a_figure_of_its_own_is_refused(filings: Path) -> None:
    model = FakeModel().always(json.dumps({"source": "P1", "sentence": 1, "value": "8,000"}))
    answer = ask(filings, "How many stores does Acme Retail have?", model=model)
    assert not answer.verified and answer.value is None
    assert answer.reason == "the model's reply is not the expected JSON"


def test_the_cli_prints_the_value_first_then_each_operand_with_its_quote(filings: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "ask",
            "What is Acme Retail's FY2018 gross margin? Round to one decimal place.",
            "--db",
            str(filings),
            "--model",
            "extractive",
            "--as-of",
            "2026-01-01",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("   Answer:"))
    assert lines[start] == "   Answer: 34.5 % = (7,939 \u2212 5,202) / 7,939 \u00d7 100"
    assert lines[start + 1].startswith("   Computed by localqa from 2 verified figure(s)")
    assert lines[start + 2] == "     7,939 (millions) \u2014 Net sales, February 2, 2019"
    assert "acme-10k-fy2018.pdf, page 2, table 1, row 1" in lines[start + 4]


def test_the_web_app_and_the_api_show_the_value_and_its_operands(filings: Path) -> None:
    from fastapi.testclient import TestClient

    from localqa.serve.app import ServeConfig, create_app

    question = "What is Acme Retail's FY2018 gross margin? Round to one decimal place."
    config = ServeConfig(db=filings, pdfs=filings.parent, model="extractive")
    with TestClient(create_app(config)) as client:
        page = client.get("/ask", params={"question": question, "as_of": "2026-01-01"})
        api = client.post("/api/ask", json={"question": question, "as_of": "2026-01-01"})
    assert page.status_code == 200
    assert "Answer: <strong>34.5 %</strong> = (7,939 \u2212 5,202) / 7,939 \u00d7 100" in page.text
    assert "7,939 (millions) \u2014 Net sales, February 2, 2019" in page.text
    value = api.json()["parts"][0]["answer"]["value"]
    assert (value["text"], value["number"], value["unit"]) == ("34.5 %", 34.5, "%")
    assert [o["value"]["text"] for o in value["operands"]] == ["7,939", "5,202"]
    assert value["expression"] == "(revenue_fy2018 - cogs_fy2018) / revenue_fy2018 * 100"


DIFFERENCE = "What is the FY2018 difference between Acme Retail's gross profit and its SG&A expenses?"
WRITTEN = {
    "operands": [
        {"name": "gross_profit", "item": "gross profit", "year": 2018},
        {"name": "sga", "item": "selling, general and administrative expenses", "year": 2018},
    ],
    "expression": "gross_profit - sga",
}


def test_a_language_model_writes_the_arithmetic_no_glossary_entry_covers(filings: Path) -> None:
    model = FakeModel().enqueue(json.dumps({"source": "P1", "sentence": 1}), json.dumps(WRITTEN))
    answer = ask(filings, DIFFERENCE, model=model)
    assert answer.verified and answer.value is not None
    assert (answer.value.text, answer.value.expression) == ("651.00", "gross_profit - sga")  # 2,737 - 2,086
    figure_request = model.history[1]
    assert figure_request.schema["properties"]["operands"]["items"]["properties"]["year"] == {
        "enum": [2017, 2018]
    }
    assert "Fiscal years it names: FY2018" in figure_request.messages[1]["content"]


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("gross_profit - 2086", "a figure of its own (2086)"),  # a figure from memory, not a document
        ("gross_profit - rent", "a name it gave no operand"),
        ("import os", "not the arithmetic asked for"),
    ],
)
def test_a_model_written_expression_with_a_figure_of_its_own_is_refused(expression: str, why: str) -> None:
    reply = json.dumps({**WRITTEN, "expression": expression})
    found = figures.plan_from_reply(DIFFERENCE, reply)
    assert isinstance(found, str) and why in found


def test_the_extractive_backend_writes_no_arithmetic(filings: Path) -> None:
    answer = ask(filings, DIFFERENCE)  # extractive: the glossary and definitions only
    assert answer.value is None or not answer.value.derived


def test_the_scale_the_question_asks_for_shapes_the_value(filings: Path) -> None:
    answer = ask(filings, "What were Acme Retail's FY2018 net sales? Answer in USD billions.")
    value = answer.value
    assert value is not None and value.derived
    assert (value.text, value.scale, value.expression) == ("7.94", "billions", "(revenue_fy2018) / 1000")
    assert [o.value.text for o in value.operands or ()] == ["7,939"]


def test_a_model_named_item_is_the_glossarys_only_when_it_names_it_exactly() -> None:
    reply = json.dumps(
        {
            "operands": [
                {"name": "product_sales", "item": "product sales", "year": 2018},
                {"name": "net_sales", "item": "net sales", "year": 2018},
            ],
            "expression": "product_sales / net_sales * 100",
        }
    )
    found = figures.plan_from_reply("What share of FY2018 net sales were product sales?", reply)
    assert not isinstance(found, str)
    assert [(n.item.key, n.item.rows[:1]) for n in found.needs] == [
        ("product_sales", ("product sales",)),  # a row of its own, not the revenue it is part of
        ("revenue", ("total revenues",)),
    ]
