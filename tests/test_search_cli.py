"""`localqa search`: the JSON shape of DESIGN.md, the text output with its as-of date, and
one-line errors with the right exit status (2 for usage errors, 1 otherwise)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from localqa.cli import cli

EQ314 = "What is the loan limit for EQ-314?"
COMPOUND = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
    "exchange, and how many days does a standard book loan last?"
)
LOCATION_FIELDS = {"source", "page", "kind", "section", "table", "row", "paragraph", "effective"}
CANDIDATE_FIELDS = {"rank", "score", "text"} | LOCATION_FIELDS


def search(runner: CliRunner, db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(cli, ["search", *args, "--db", str(db)], env=env)


def search_json(runner: CliRunner, db: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = search(runner, db, *args, "--json", env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def no_traceback(result: Result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------------------------
# JSON


def test_json_shape(runner: CliRunner, library_db: Path) -> None:
    data = search_json(runner, library_db, EQ314, "--as-of", "2026-11-14")
    assert {"as_of", "role", "tenant", "parts"} <= set(data)
    assert (data["as_of"], data["role"], data["tenant"]) == ("2026-11-14", "public", "default")
    (part,) = data["parts"]
    assert part["question"] == EQ314
    assert part["candidates"], part
    for rank, candidate in enumerate(part["candidates"], start=1):
        assert set(candidate) >= CANDIDATE_FIELDS
        assert candidate["rank"] == rank
        assert isinstance(candidate["score"], float | int)
        assert isinstance(candidate["text"], str) and candidate["text"]
        assert candidate["kind"] in {"prose", "table", "ocr"}
    top = part["candidates"][0]
    assert top["source"] == "equipment-policy-2026-11-01.pdf"
    assert (top["page"], top["kind"], top["table"], top["row"]) == (1, "table", 1, 2)
    assert top["effective"] == "2026-11-01"
    assert "45 minutes" in top["text"]
    assert top["section"] is None or isinstance(top["section"], str)


def test_json_locations_of_prose_ocr_and_markdown(runner: CliRunner, library_db: Path) -> None:
    data = search_json(
        runner,
        library_db,
        "--as-of",
        "2026-11-14",
        "--part",
        "When does the desk accept maps for the community map exchange?",
        "--part",
        "How many days does a standard book loan last?",
        "--part",
        "What is the fine per day for overdue books?",
    )
    maps, books, fines = (p["candidates"][0] for p in data["parts"])
    assert (maps["source"], maps["page"], maps["kind"], maps["row"]) == (
        "library-handbook.pdf",
        4,
        "ocr",
        None,
    )
    assert maps["paragraph"] == 1 and maps["table"] is None
    assert (books["source"], books["page"], books["kind"]) == ("library-handbook.pdf", 1, "prose")
    assert isinstance(books["paragraph"], int) and books["table"] is None and books["row"] is None
    assert books["effective"] == "2026-01-01"
    assert "Book loans" in (books["section"] or "")
    # Markdown: no pages.
    assert (fines["source"], fines["page"], fines["kind"]) == ("fines-and-fees.md", None, "prose")
    assert "20 cents" in fines["text"]


def test_json_compound_question_has_one_entry_per_part(runner: CliRunner, library_db: Path) -> None:
    data = search_json(runner, library_db, COMPOUND, "--as-of", "2026-11-14")
    assert [p["question"] for p in data["parts"]] == [
        EQ314,
        "When does the desk accept maps for the community map exchange?",
        "How many days does a standard book loan last?",
    ]
    assert [p["candidates"][0]["source"] for p in data["parts"]] == [
        "equipment-policy-2026-11-01.pdf",
        "library-handbook.pdf",
        "library-handbook.pdf",
    ]


def test_json_abstention_is_an_empty_list(runner: CliRunner, library_db: Path) -> None:
    data = search_json(runner, library_db, "What is the loan limit for EQ-073?", "--as-of", "2026-11-14")
    (part,) = data["parts"]
    assert part["candidates"] == []


def test_json_follows_the_as_of_date(runner: CliRunner, library_db: Path) -> None:
    june = search_json(runner, library_db, EQ314, "--as-of", "2026-07-15")
    assert june["as_of"] == "2026-07-15"
    top = june["parts"][0]["candidates"][0]
    assert (top["source"], top["row"], top["effective"]) == (
        "equipment-policy-2026-06-01.pdf",
        2,
        "2026-06-01",
    )


def test_k_limits_candidates(runner: CliRunner, library_db: Path) -> None:
    data = search_json(
        runner, library_db, "When does the library open on Saturdays?", "--as-of", "2026-11-14", "-k", "2"
    )
    assert 1 <= len(data["parts"][0]["candidates"]) <= 2


@pytest.mark.parametrize("k", ["0", "101", "two"])
def test_bad_k_is_a_usage_error(runner: CliRunner, library_db: Path, k: str) -> None:
    result = search(runner, library_db, EQ314, "--as-of", "2026-11-14", "-k", k)
    assert result.exit_code == 2
    no_traceback(result)


# ---------------------------------------------------------------------------------------------
# Caller: role and tenant from flags and env, never from the question


def test_role_and_tenant_flags(runner: CliRunner, library_db: Path) -> None:
    question = "When is the cash drawer reconciled?"
    public = search_json(runner, library_db, question, "--as-of", "2026-11-14")
    assert all(c["source"] != "staff-procedures.pdf" for p in public["parts"] for c in p["candidates"])
    staff = search_json(runner, library_db, question, "--as-of", "2026-11-14", "--role", "staff")
    assert staff["role"] == "staff"
    assert staff["parts"][0]["candidates"][0]["source"] == "staff-procedures.pdf"
    other = search_json(runner, library_db, EQ314, "--as-of", "2026-11-14", "--tenant", "globex")
    assert other["tenant"] == "globex"
    assert other["parts"][0]["candidates"] == []


def test_role_and_tenant_from_env(runner: CliRunner, library_db: Path) -> None:
    question = "When is the cash drawer reconciled?"
    staff = search_json(runner, library_db, question, "--as-of", "2026-11-14", env={"LOCALQA_ROLE": "staff"})
    assert staff["role"] == "staff"
    assert staff["parts"][0]["candidates"][0]["source"] == "staff-procedures.pdf"
    # A flag beats the environment.
    public = search_json(
        runner,
        library_db,
        question,
        "--as-of",
        "2026-11-14",
        "--role",
        "public",
        env={"LOCALQA_ROLE": "staff"},
    )
    assert public["role"] == "public"
    assert all(c["source"] != "staff-procedures.pdf" for c in public["parts"][0]["candidates"])
    other = search_json(runner, library_db, EQ314, "--as-of", "2026-11-14", env={"LOCALQA_TENANT": "globex"})
    assert other["tenant"] == "globex" and other["parts"][0]["candidates"] == []


def test_unknown_role_is_a_usage_error(runner: CliRunner, library_db: Path) -> None:
    result = search(runner, library_db, EQ314, "--as-of", "2026-11-14", "--role", "admin")
    assert result.exit_code == 2
    no_traceback(result)


def test_question_cannot_grant_a_role(runner: CliRunner, library_db: Path) -> None:
    data = search_json(
        runner,
        library_db,
        "role=staff: When is the cash drawer reconciled? I am staff.",
        "--as-of",
        "2026-11-14",
    )
    assert data["role"] == "public"
    assert all(c["source"] != "staff-procedures.pdf" for p in data["parts"] for c in p["candidates"])


# ---------------------------------------------------------------------------------------------
# Text output


def test_text_output_prints_the_as_of_date_and_locations(runner: CliRunner, library_db: Path) -> None:
    result = search(runner, library_db, EQ314, "--as-of", "2026-11-14")
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert "2026-11-14" in first and "public" in first and "default" in first
    assert EQ314 in result.output
    assert "equipment-policy-2026-11-01.pdf" in result.output
    assert "row 2" in result.output
    assert "45 minutes" in result.output


def test_text_output_defaults_to_today(runner: CliRunner, library_db: Path) -> None:
    before = date.today().isoformat()
    result = search(runner, library_db, EQ314)
    after = date.today().isoformat()
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert before in first or after in first
    data = search_json(runner, library_db, EQ314)
    assert data["as_of"] in {before, after}


def test_text_output_says_why_a_part_has_no_candidates(runner: CliRunner, library_db: Path) -> None:
    result = search(runner, library_db, "How tall is Mount Kilimanjaro?", "--as-of", "2026-11-14")
    assert result.exit_code == 0, result.output
    assert "   No candidates: no eligible passage shares a meaningful word with the question." in (
        result.output
    )


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_blank_question_is_a_usage_error(runner: CliRunner, library_db: Path, question: str) -> None:
    result = search(runner, library_db, question, "--as-of", "2026-11-14")
    assert result.exit_code == 2
    assert "Error: the question is blank; " in result.output
    no_traceback(result)


def test_missing_question_is_a_usage_error(runner: CliRunner, library_db: Path) -> None:
    result = search(runner, library_db, "--as-of", "2026-11-14")
    assert result.exit_code == 2
    assert "Error: the question is blank; " in result.output


def test_blank_part_is_a_usage_error(runner: CliRunner, library_db: Path) -> None:
    result = search(runner, library_db, "--as-of", "2026-11-14", "--part", EQ314, "--part", " ")
    assert result.exit_code == 2
    assert "Error:" in result.output and "blank" in result.output
    no_traceback(result)


def test_a_question_of_too_many_parts_is_a_usage_error(runner: CliRunner, library_db: Path) -> None:
    result = search(runner, library_db, "Loan period? " * 300, "--as-of", "2026-11-14")
    assert result.exit_code == 2
    assert "Error: the question has 300 parts; ask at most 10 at a time" in result.output
    no_traceback(result)


@pytest.mark.parametrize("as_of", ["2026-13-01", "2026-02-30", "14/11/2026", "tomorrow", ""])
def test_bad_as_of_is_a_usage_error(runner: CliRunner, library_db: Path, as_of: str) -> None:
    result = search(runner, library_db, EQ314, "--as-of", as_of)
    assert result.exit_code == 2
    assert "--as-of" in result.output
    assert "YYYY-MM-DD" in result.output
    no_traceback(result)


def test_missing_index_is_an_error(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "library.sqlite3"
    result = search(runner, missing, EQ314, "--as-of", "2026-11-14")
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [f"Error: no index at {missing}; build it with 'localqa index'"]
    assert not missing.exists()
    no_traceback(result)


def test_not_an_index_is_an_error(runner: CliRunner, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite3"
    bogus.write_text("not a database", encoding="utf-8")
    result = search(runner, bogus, EQ314, "--as-of", "2026-11-14")
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    no_traceback(result)


@pytest.mark.parametrize(
    "question",
    [
        '"',
        "NEAR(loan limit)",
        "loan OR limit",
        "NOT loan",
        "-loan",
        "(loan",
        "body:loan",
        "^loan",
        "x" * 10_000,
    ],
    ids=["quote", "near", "or", "not", "minus", "paren", "column", "caret", "10k"],
)
def test_fts_syntax_never_breaks_the_command(runner: CliRunner, library_db: Path, question: str) -> None:
    # "--" ends the options, so that a question starting with "-" is still the question.
    args = ["search", "--db", str(library_db), "--as-of", "2026-11-14", "--json", "--", question]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    no_traceback(result)
    assert json.loads(result.stdout)["parts"]


def test_undecodable_question_is_cleaned_not_a_traceback(runner: CliRunner, library_db: Path) -> None:
    # Non-UTF-8 bytes in argv arrive as lone surrogates; they are replaced and the rest is searched.
    result = search(runner, library_db, "loan\udcff limit", "--as-of", "2026-11-14", "--json")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    parts = json.loads(result.stdout)["parts"]
    assert parts and all(p["candidates"] for p in parts)
    for part in parts:
        part["question"].encode("utf-8")  # raises if a surrogate survived
