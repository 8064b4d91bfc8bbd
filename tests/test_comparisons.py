"""Comparisons computed in code (`localqa.derived.comparing`), end to end on filings drawn with PyMuPDF and
indexed for real: a direction across fiscal years of a filer whose year ends in May, a sign, a
judgment with the glossary's sourced rule of thumb, a figure that cannot be computed beside the
part's quote (never instead of it), and nothing read from a filing the caller may not see; and, as
tables, which questions the planners take for a figure, a comparison or neither."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from filings import write_filing, write_report

from localqa.cli import cli
from localqa.derived import comparing, figures
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Comparison, Kind, Location, Operand, Value

AS_OF = date(2026, 1, 1)
CATALOG = """
["nimbus-10k-fy2022.pdf"]
series = "nimbus-10k"
access = "public"
period = "FY2022"

["acme-10k-fy2018.pdf"]
series = "acme-10k"
access = "public"
period = "FY2018"

["globex-10k-fy2018.pdf"]
series = "globex-10k"
access = "staff"
"""
# A food company whose fiscal year ends on May 31: its FY2022 column is "May 31, 2022".
MAY_COLUMNS = ("May 31, 2022", "May 31, 2021")
MAY_STATEMENTS = {
    "CONSOLIDATED STATEMENTS OF EARNINGS": [
        ("Net sales", "5,000", "4,000"),
        ("Cost of sales", "3,500", "2,700"),
        ("Operating income", "600", "520"),
        ("Net earnings", "410", "380"),
    ],
    "CONSOLIDATED BALANCE SHEETS": [
        ("Total current assets", "1,200", "1,300"),
        ("Total current liabilities", "1,500", "1,000"),
        ("Long-term debt", "2,100", "2,400"),
    ],
}


def write_may_filing(path: Path) -> Path:
    title = "Nimbus Foods Annual Report Fiscal 2022"
    return write_report(path, "Nimbus Foods Inc.", "May 31, 2022", MAY_STATEMENTS, MAY_COLUMNS, title)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("comparisons")
    write_may_filing(folder / "nimbus-10k-fy2022.pdf")
    write_filing(folder / "acme-10k-fy2018.pdf", "Acme Retail Inc.")
    write_filing(folder / "globex-10k-fy2018.pdf", "Globex Stores Inc.")
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str, caller: Caller | None = None) -> Answer:
    with Library(db) as opened:
        asked = opened.answer(question, as_of=AS_OF, caller=caller, model=ExtractiveModel())
    return asked.parts[0].answer


def comparison(answer: Answer) -> Comparison:
    assert answer.verified and answer.value is not None and answer.value.comparison is not None
    return answer.value.comparison


def test_a_margin_compared_across_the_years_of_a_filer_whose_year_ends_in_may(library: Path) -> None:
    answer = ask(library, "Does Nimbus Foods have an improving operating margin profile as of FY2022?")
    compared = comparison(answer)
    # 520 / 4,000 = 13.00 % (FY2021, May 31, 2021) -> 600 / 5,000 = 12.00 % (FY2022, May 31, 2022)
    assert [(f.column, f.text) for f in compared.figures] == [("FY2021", "13.00 %"), ("FY2022", "12.00 %")]
    assert compared.direction == "declined"
    assert compared.rule.startswith("higher is better for operating margin")
    columns = [o.value.column for f in compared.figures for o in f.operands or ()]
    assert columns == ["May 31, 2021", "May 31, 2021", "May 31, 2022", "May 31, 2022"]
    assert comparing.comparison_check(answer.value) is None  # type: ignore[arg-type]


def test_an_amount_between_two_years_increased_or_decreased_without_a_rule(library: Path) -> None:
    answer = ask(library, "Has Nimbus Foods increased its debt on balance sheet between FY2022 and FY2021?")
    compared = comparison(answer)
    assert [f.text for f in compared.figures] == ["2,400", "2,100"]
    assert compared.direction == "decreased"
    assert compared.rule == "debt: the later figure against the earlier"


def test_a_sign_question_is_the_figure_and_its_sign(library: Path) -> None:
    answer = ask(library, "Does Nimbus Foods have positive working capital based on FY2022 data?")
    compared = comparison(answer)
    assert [f.text for f in compared.figures] == ["-300.00"]
    assert compared.direction == "negative"


def test_a_judgment_cites_the_glossarys_rule_of_thumb_or_gives_the_figure_alone(library: Path) -> None:
    answer = ask(library, "Is Acme Retail's liquidity healthy based on its FY2018 quick ratio?")
    compared = comparison(answer)
    assert (answer.value.text, compared.direction, compared.threshold) == ("1.15", "above", 1.0)  # type: ignore[union-attr]
    assert "the 1.0 the glossary uses for a quick ratio (the ratio's definition" in compared.rule
    alone = ask(library, "Is Acme Retail's FY2018 cash ratio healthy?")
    assert alone.value is not None and alone.value.comparison is None and alone.value.text == "0.58"


def test_a_figure_that_cannot_be_computed_stands_beside_the_quote(library: Path) -> None:
    # Days sales outstanding needs FY2016 receivables, which the filing does not give.
    answer = ask(
        library, "Did Acme Retail's advertising costs totaled in fiscal 2018 improve its DSO in FY2017?"
    )
    assert answer.verified and answer.quote
    assert answer.value is None or not answer.value.derived
    assert answer.figure_note is not None and answer.figure_note.startswith(
        "no figure computed: the evidence"
    )
    assert answer.as_json()["figure_note"] == answer.figure_note


def test_the_cli_and_json_show_the_direction_the_rule_and_each_figures_operands(library: Path) -> None:
    question = "Does Nimbus Foods have an improving operating margin profile as of FY2022?"
    run = CliRunner().invoke(
        cli, ["ask", question, "--db", str(library), "--as-of", "2026-01-01", "--model", "extractive"]
    )
    assert run.exit_code == 0, run.output
    assert "Answer: declined — operating margin 13.00 % (FY2021) → 12.00 % (FY2022)" in run.output
    assert "(rule: higher is better for operating margin" in run.output
    assert "FY2021: 13.00 % = 520 / 4,000 \u00d7 100" in run.output
    as_json = comparison(ask(library, question)).as_json()
    assert as_json["direction"] == "declined" and len(as_json["figures"]) == 2
    assert as_json["figures"][0]["operands"][0]["citation"]["source"] == "nimbus-10k-fy2022.pdf"


def test_a_hidden_documents_rows_are_never_compared(library: Path) -> None:
    question = "Has Globex Stores increased its total current liabilities between FY2017 and FY2018?"
    public = ask(library, question)
    sources = {public.citation.source} if public.citation else set()
    if public.value is not None:
        figures_shown = public.value.comparison.figures if public.value.comparison else (public.value,)
        sources |= {o.citation.source for f in figures_shown for o in f.operands or ()}
    assert "globex-10k-fy2018.pdf" not in sources
    staff = comparison(ask(library, question, Caller(role="staff")))
    assert {o.citation.source for f in staff.figures for o in f.operands or ()} == {"globex-10k-fy2018.pdf"}
    assert staff.direction == "increased"


# --- which questions are figures, comparisons or neither (patterns of the dev set's kinds) --------

NOT_FIGURES = [
    "As of FY2023Q1, why did Acme raise full year guidance for FY2023?",
    "What drove the reduction in Acme's SG&A expense ratio in FY2022?",
    "What drove operating margin change as of FY2022 for Acme?",
    "What are the main drivers of Acme's gross margin in FY2022?",
    "Which business segment of Acme had the highest operating margin in FY2022?",
    "What is Acme forecasting for its FY2024 capital expenditure?",
    "What is the nature of Acme's FY2022 restructuring liability?",
]
# Two items compared: no single figure, a comparison of two (`localqa.derived.pairs`).
TWO_ITEMS = "How did Acme's US sales growth compare to international sales growth in FY2022?"
FIGURES = [
    "What is the FY2018 capital expenditure amount (in USD millions) for Acme?",
    "What is Acme's FY2019 - FY2020 total revenue growth rate?",
    "What is Acme's FY2022 quick ratio?",
    "What is the FY2021 debt to equity ratio for Acme?",
    "What is Acme's FY2020 free cash flow conversion?",
]
COMPARISONS = [
    ("Does Acme have an improving operating margin profile as of FY2022?", "improve", ("FY2021", "FY2022")),
    (
        "Has Acme increased its debt on balance sheet between FY2023 and the FY2022 period?",
        "change",
        ("FY2022", "FY2023"),
    ),
    ("Does Acme have positive working capital based on FY2022 data?", "sign", ("FY2022",)),
    (
        "How much has the effective tax rate of Acme changed between FY2021 and FY2022?",
        "change",
        ("FY2021", "FY2022"),
    ),
    ("Did Acme's days sales outstanding improve in FY2022?", "improve", ("FY2021", "FY2022")),
    ("Is Acme's liquidity healthy based on its FY2022 current ratio?", "judge", ("FY2022",)),
]


@pytest.mark.parametrize("question", NOT_FIGURES)
def test_a_part_that_asks_no_quantity_is_never_planned_as_a_figure(question: str) -> None:
    assert figures.plan(question) is None
    assert comparing.plan(question) is None
    assert not figures.asks_computed(question)


def test_two_items_compared_are_no_one_figure_but_a_comparison_of_two() -> None:
    assert figures.plan(TWO_ITEMS) is None and not figures.asks_computed(TWO_ITEMS)
    planned = comparing.plan(TWO_ITEMS)
    assert planned is not None and planned.kind == "items" and len(planned.figures) == 2


@pytest.mark.parametrize("question", FIGURES)
def test_a_part_that_asks_a_quantity_is_planned_as_a_figure(question: str) -> None:
    assert figures.plan(question) is not None
    assert comparing.plan(question) is None


@pytest.mark.parametrize(("question", "kind", "labels"), COMPARISONS)
def test_a_part_that_asks_a_direction_is_planned_as_a_comparison(
    question: str, kind: str, labels: tuple[str, ...]
) -> None:
    planned = comparing.plan(question)
    assert planned is not None and (planned.kind, planned.labels) == (kind, labels)
    assert figures.plan(question) is None or kind == "change"


def test_improving_means_lower_where_the_glossary_says_so() -> None:
    planned = comparing.plan("Did Acme's days sales outstanding improve in FY2022?")
    assert planned is not None and planned.better == "lower"
    assert planned.rule == (
        "lower is better for days sales outstanding (the glossary's rule: efficiency ratios: receivables "
        "collected in fewer days)"
    )
    assert comparing.direction_of("improve", "lower", [40.0, 35.0]) == "improved"
    assert comparing.direction_of("improve", "higher", [40.0, 35.0]) == "declined"
    assert comparing.direction_of("change", None, [40.0, 40.0]) == "unchanged"


def test_a_shape_that_holds_a_glossary_name_and_more_is_its_own_figure() -> None:
    shaped = figures.plan("What is the Cash Flow to Total Debt Ratio for Acme in FY2015?")
    assert shaped is not None and shaped.origin == "shape"  # not the glossary's "debt ratio"
    listed = figures.plan("What is the FY2017 - FY2019 3 year average of capex as a % of revenue for Acme?")
    assert listed is not None and listed.origin == "glossary"


def test_a_question_phrase_is_never_searched_as_a_line_item() -> None:
    assert not figures.is_item_phrase("what drove the reduction in an expense")
    assert figures.is_item_phrase("selling, general and administrative expense")


def _figure(number: float, text: str) -> Value:
    quote = f"Operating income: {text}"
    cell = Value(text=text, number=number)
    operand = Operand(name="x", value=cell, quote=quote, citation=_location())
    return Value(text=text, number=number, operands=(operand,), expression="x")


def _location() -> Location:
    return Location(
        source="a.pdf", page=1, kind=Kind.TABLE, section=None, table=1, row=1, paragraph=None, effective=None
    )


def test_a_direction_the_figures_do_not_give_fails_the_check() -> None:
    first, last = _figure(10, "10"), _figure(12, "12")
    right = Comparison(
        direction="increased", rule="x: the later figure against the earlier", figures=(first, last)
    )
    assert comparing.comparison_check(last.model_copy(update={"comparison": right})) is None
    wrong = right.model_copy(update={"direction": "decreased"})
    assert comparing.comparison_check(last.model_copy(update={"comparison": wrong})) is not None
    verdict = Comparison(direction="above", rule="no source", figures=(last,))
    assert comparing.comparison_check(last.model_copy(update={"comparison": verdict})) is not None


def test_pdfqa_counts_quotes_kept_beside_a_figure_note_and_refusals_that_silence_one() -> None:
    from benchmarks.common import Case
    from benchmarks.pdfqa import figure_outcomes

    cases = [Case(str(n), "q", "a.pdf", {("a.pdf", 2)}, "answerable") for n in range(4)]
    cited = {"source": "a.pdf", "page": 2}
    by_id = {
        "0": {
            "verified": True,
            "citation": cited,
            "figure_note": "no figure computed: the evidence gives no X",
        },
        "1": {"verified": False, "citation": None, "reason": "no figure computed: the evidence gives no X"},
        "2": {
            "verified": False,
            "citation": None,
            "reason": "no figure computed: its check failed; and no quote was verified: off topic",
        },
        "3": {"verified": True, "citation": cited},
    }
    scores = figure_outcomes(cases, by_id)
    assert scores["quote kept beside 'no figure computed'"]["numerator"] == 1
    assert scores["... of which from an evidence page"]["numerator"] == 1
    assert scores["refused 'no figure computed' alone"]["numerator"] == 1
    assert scores["refused 'no figure computed' and no quote"]["numerator"] == 1


def test_a_figure_note_stands_only_beside_a_verified_quote() -> None:
    with pytest.raises(ValueError):
        Answer.model_validate({"outcome": "refused", "reason": "x", "figure_note": "no figure computed: y"})


def test_the_web_app_shows_the_comparison_its_rule_and_a_figure_note(library: Path) -> None:
    from fastapi.testclient import TestClient

    from localqa.serve.app import ServeConfig, create_app

    config = ServeConfig(db=library, pdfs=library.parent, model="extractive")
    compared_question = "Does Nimbus Foods have an improving operating margin profile as of FY2022?"
    noted_question = "Did Acme Retail's advertising costs totaled in fiscal 2018 improve its DSO in FY2017?"
    with TestClient(create_app(config)) as client:
        compared_page = client.get("/ask", params={"question": compared_question, "as_of": "2026-01-01"})
        noted_page = client.get("/ask", params={"question": noted_question, "as_of": "2026-01-01"})
    assert compared_page.status_code == noted_page.status_code == 200
    assert (
        "Answer: <strong>declined \u2014 operating margin 13.00 % (FY2021) \u2192 12.00 % (FY2022)</strong>"
        in compared_page.text
    )
    assert "(rule: higher is better for operating margin" in compared_page.text
    assert "FY2021: 520 (millions)" in compared_page.text
    assert 'class="figure-note">(no figure computed: the evidence' in noted_page.text
