"""Documents passed as documents (issue 36.4): a file whose name holds glob characters is that
file, to `--doc` and to a derived figure's operand searches; a figure routed to more documents
than a caller may name is no usage error; a hidden document's exact name is a missing one's.

Filings drawn as filings are (tests/filings.py) and indexed for real, with the program's own
`ask` and `search`."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import filings as drawn
import pytest
from click.testing import CliRunner, Result

from localqa.cli import cli
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.question.scope import MAX_NAMES
from localqa.types import Caller

AS_OF = "2026-01-01"
GLOBBED = "Zorblax Annual Report [2019].pdf"  # as a glob, it matches the file below and not itself
LOOKALIKE = "Zorblax Annual Report 2.pdf"
MARGIN = "What is Zorblax Widgets' FY2018 gross margin? Round to one decimal place."
SALES = "What were Zorblax Widgets' FY2018 net sales?"


def write_zorblax(path: Path, net_sales: str, cost_of_sales: str) -> Path:
    """A filing of Zorblax Widgets whose FY2018 net sales and cost of sales are these, and its
    gross profit their difference (a margin is checked against the statement's own arithmetic)."""
    statements = {title: list(rows) for title, rows in drawn.STATEMENTS.items()}
    operations = statements["CONSOLIDATED STATEMENTS OF OPERATIONS"]
    operations[0] = ("Net sales", net_sales, "7,000")
    operations[1] = ("Cost of sales", cost_of_sales, "4,000")
    gross = int(net_sales.replace(",", "")) - int(cost_of_sales.replace(",", ""))
    operations[2] = ("Gross profit", f"{gross:,}", "3,000")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(drawn, "STATEMENTS", statements)
        return drawn.write_filing(path, "Zorblax Widgets Inc.")


def indexed(folder: Path, catalog: str = "") -> Path:
    if catalog:
        (folder / "catalog.toml").write_text(catalog, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    # Only the warning that files without an entry are public by default may be reported.
    assert not [p for p in report.problems if "no catalog entry" not in p.message], report.problems
    return db


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file named like a glob (gross margin 37.5 %) beside the file its glob matches (88.9 %)."""
    folder = tmp_path_factory.mktemp("both")
    write_zorblax(folder / GLOBBED, "8,000", "5,000")
    write_zorblax(folder / LOOKALIKE, "9,000", "1,000")
    return indexed(folder)


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file named like a glob, with a filing of another company and no lookalike."""
    folder = tmp_path_factory.mktemp("alone")
    write_zorblax(folder / GLOBBED, "8,000", "5,000")
    drawn.write_filing(folder / "acme-10k-fy2018.pdf", "Acme Retail Inc.")
    return indexed(folder)


def ask(db: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["ask", *args, "--db", str(db), "--as-of", AS_OF, "--model", "extractive", "--json"]
    )


def search(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["search", *args, "--db", str(db), "--as-of", AS_OF, "--json"])


def answer_of(result: Result) -> dict[str, object]:
    assert result.exit_code == 0, result.output
    answer: dict[str, object] = json.loads(result.stdout)["parts"][0]["answer"]
    return answer


def operands(answer: dict[str, object]) -> list[tuple[str, str]]:
    value = answer["value"]
    assert isinstance(value, dict), answer
    return [(o["value"]["text"], o["citation"]["source"]) for o in value["operands"]]


def test_a_figure_within_a_file_named_like_a_glob_reads_that_file_only(both: Path) -> None:
    answer = answer_of(ask(both, MARGIN, "--doc", GLOBBED))
    value = answer["value"]
    assert isinstance(value, dict) and value["text"] == "37.5 %"  # (8,000 - 5,000) / 8,000, not 88.9 %
    assert operands(answer) == [("8,000", GLOBBED), ("5,000", GLOBBED)]


def test_a_figure_within_a_file_named_like_a_glob_with_no_lookalike(alone: Path) -> None:
    answer = answer_of(ask(alone, MARGIN, "--doc", GLOBBED))
    value = answer["value"]
    assert isinstance(value, dict) and value["text"] == "37.5 %"
    assert {source for _, source in operands(answer)} == {GLOBBED}


@pytest.mark.parametrize("name", [GLOBBED, "zorblax annual report [2019]"])
def test_search_doc_names_a_file_named_like_a_glob(both: Path, name: str) -> None:
    result = search(both, SALES, "--doc", name)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {c["source"] for c in data["parts"][0]["candidates"]} == {GLOBBED}


def test_a_glob_still_matches_when_no_file_is_named_so(both: Path) -> None:
    result = search(both, SALES, "--doc", "Zorblax Annual Report [0-9].pdf")
    assert result.exit_code == 0, result.output
    assert {c["source"] for c in json.loads(result.stdout)["parts"][0]["candidates"]} == {LOOKALIKE}


def test_a_hidden_files_exact_name_is_a_missing_ones(tmp_path: Path) -> None:
    """Staff-only, the file named like a glob leaves its lookalike to a public caller, exactly as
    if it did not exist: the name is then a glob over what the caller may search."""
    write_zorblax(tmp_path / GLOBBED, "8,000", "5,000")
    write_zorblax(tmp_path / LOOKALIKE, "9,000", "1,000")
    db = indexed(tmp_path, f'["{GLOBBED}"]\naccess = "staff"\n\n["{LOOKALIKE}"]\naccess = "public"\n')
    without = tmp_path / "without"
    without.mkdir()
    shutil.copy(tmp_path / LOOKALIKE, without / LOOKALIKE)
    missing_db = indexed(without)
    for question in (MARGIN, SALES):
        hidden = ask(db, question, "--doc", GLOBBED)
        missing = ask(missing_db, question, "--doc", GLOBBED)
        assert hidden.exit_code == missing.exit_code == 0, hidden.output
        assert hidden.stdout == missing.stdout
    # Staff may search it, by its exact name with or without its extension.
    with Library(db) as library:
        staff = library.search(
            SALES, as_of=date(2026, 1, 1), caller=Caller(role="staff"), documents=[GLOBBED[:-4]]
        )
    assert {c.location.source for c in staff[0].candidates} == {GLOBBED}


def test_a_hidden_files_exact_name_without_a_lookalike_is_a_missing_ones(tmp_path: Path) -> None:
    hidden, absent = tmp_path / "hidden", tmp_path / "absent"
    for folder in (hidden, absent):
        folder.mkdir()
        drawn.write_filing(folder / "acme-10k-fy2018.pdf", "Acme Retail Inc.")
    write_zorblax(hidden / GLOBBED, "8,000", "5,000")
    hidden_db = indexed(hidden, f'["{GLOBBED}"]\naccess = "staff"\n')
    absent_db = indexed(absent)
    for run in (search, ask):
        refused, missing = run(hidden_db, SALES, "--doc", GLOBBED), run(absent_db, SALES, "--doc", GLOBBED)
        assert refused.exit_code == missing.exit_code == 1
        assert refused.output == missing.output
        assert f"no document named {GLOBBED!r}" in refused.output


def test_documents_chosen_by_the_program_never_widen_what_a_caller_sees(tmp_path: Path) -> None:
    from localqa.question.scope import Chosen

    write_zorblax(tmp_path / GLOBBED, "8,000", "5,000")
    db = indexed(tmp_path, f'["{GLOBBED}"]\naccess = "staff"\n')
    with Library(db) as library:
        (part,) = library.search(SALES, as_of=date(2026, 1, 1), documents=Chosen.of([GLOBBED]))
    assert part.candidates == ()


def test_a_figure_routed_to_more_documents_than_a_caller_may_name(tmp_path: Path) -> None:
    """Forty filings of one company, routed to by its name: not the caller's `40 document names
    given` usage error, but a figure computed from them."""
    first = write_zorblax(tmp_path / "zorblax-10k-01.pdf", "8,000", "5,000")
    many = 40
    assert many > MAX_NAMES
    for number in range(2, many + 1):
        shutil.copy(first, tmp_path / f"zorblax-10k-{number:02}.pdf")
    drawn.write_filing(tmp_path / "acme-10k-fy2018.pdf", "Acme Retail Inc.")
    result = ask(indexed(tmp_path), MARGIN)
    answer = answer_of(result)
    route = json.loads(result.stdout)["parts"][0]["route"]
    assert route is not None and len(route["sources"]) == many
    value = answer["value"]
    assert isinstance(value, dict) and value["text"] == "37.5 %"
