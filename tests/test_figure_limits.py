"""The bounds of a derived figure: a figure with more digits than localqa computes with is refused
with a reason, in the CLI and the API alike, never a traceback; a right figure above 2^53 passes
the check (its number is compared in Decimal, not through a float's shortest text); and a
question's own definitions, or a glossary's formulas, expand in bounded time and size."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from filings import write_filing
from loss_filing import write_loss_filing

from localqa import arithmetic, computing
from localqa.cli import cli
from localqa.computing import FigureProblem, figure_check
from localqa.index import refresh_index
from localqa.serve.app import ServeConfig, create_app
from localqa.types import Kind, Location, Operand, Value

AS_OF = "2026-01-01"
CATALOG = """
["zorblax-10k-fy2019.pdf"]
series = "zorblax-10k"
access = "public"
period = "FY2019"

["acme-10k-fy2018.pdf"]
series = "acme-10k"
access = "public"
period = "FY2018"
"""
BLOWUPS = [
    "What is Zorblax Widgets' FY2019 blowup? Blowup is defined as: net sales ^ 10.",
    "What is Zorblax Widgets' FY2019 blowup? Blowup is defined as: net sales * 1000000000000000000000000.",
]
TOO_MANY_DIGITS = f"the figure has more digits than the {arithmetic.PRECISION} localqa computes with"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("limits")
    write_loss_filing(folder / "zorblax-10k-fy2019.pdf")
    write_filing(folder / "acme-10k-fy2018.pdf")
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    path = folder / "index.sqlite3"
    report = refresh_index(folder, path, embed=False)
    assert not report.problems, report.problems
    return path


@pytest.mark.parametrize("question", BLOWUPS)
def test_a_figure_with_too_many_digits_is_refused_in_the_cli(db: Path, question: str) -> None:
    result = CliRunner().invoke(
        cli, ["ask", question, "--db", str(db), "--model", "extractive", "--as-of", AS_OF]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert f"no figure computed: {TOO_MANY_DIGITS}" in result.output


@pytest.mark.parametrize("question", BLOWUPS)
def test_a_figure_with_too_many_digits_is_a_json_refusal_from_the_api(db: Path, question: str) -> None:
    config = ServeConfig(db=db, pdfs=db.parent, model="extractive")
    with TestClient(create_app(config), raise_server_exceptions=False) as client:
        response = client.post("/api/ask", json={"question": question, "as_of": AS_OF})
    assert response.status_code == 200, response.text
    answer = response.json()["parts"][0]["answer"]
    assert answer["value"] is None and answer["reason"] == f"no figure computed: {TOO_MANY_DIGITS}"


def located(quote: str) -> Operand:
    at = Location(source="f.pdf", page=1, kind=Kind.TABLE, section=None, table=1, row=1, paragraph=None,
                  effective=None)  # fmt: skip
    return Operand(name="revenue_fy2019", value=Value(text=quote, number=float(quote.replace(",", ""))),
                   quote=f"Net sales: {quote}", citation=at)  # fmt: skip


ABOVE_2_53 = "9,007,199,254,740,993"  # 2^53 + 1: no float holds it


def test_a_right_figure_above_2_to_the_53_passes_the_check() -> None:
    cell = Value(text=ABOVE_2_53, number=float(ABOVE_2_53.replace(",", "")))
    assert figure_check(cell, f"Net sales: {ABOVE_2_53}") is None
    doubled = Value(
        text="18,014,398,509,481,986.00",
        number=18014398509481986.0,
        operands=(located(ABOVE_2_53),),
        expression="revenue_fy2019 * 2",
    )
    assert figure_check(doubled, "") is None
    wrong = doubled.model_copy(update={"text": "18,014,398,509,481,988.00", "number": 18014398509481988.0})
    assert figure_check(wrong, "") is FigureProblem.RECOMPUTED


def test_a_forged_figure_with_too_many_digits_fails_the_check_without_a_traceback() -> None:
    digits = "1" + "0" * 40
    forged = Value(text=f"{digits}.00", number=float(digits), operands=(located("10"),),
                   expression="revenue_fy2019 ^ 40")  # fmt: skip
    assert figure_check(forged, "") is FigureProblem.RECOMPUTED


def test_rounding_beyond_the_precision_is_an_expression_error() -> None:
    with pytest.raises(arithmetic.ExpressionError, match=TOO_MANY_DIGITS):
        arithmetic.rounded(Decimal(8000) ** 10, 2)
    assert arithmetic.rounded(Decimal("2.345"), 2) == Decimal("2.35")  # half up
    assert computing.Computed(None).value is None
