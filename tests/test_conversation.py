"""Follow-ups rewritten into standalone questions (`localqa.conversation`): the rules as a table,
the check for words from nowhere, a model's rewrite refused when it invents, and turns of another
caller never carried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_model import FakeModel

from localqa.cli import cli
from localqa.conversation import Turn, carried_turns, from_nowhere, is_follow_up, rewrite, turn_of
from localqa.evaluate.conversations import load_conversations
from localqa.types import Answer, Caller, Kind, Location

PUBLIC = Caller()
STAFF = Caller(role="staff")


def asked(question: str, value: str | None = None, caller: Caller = PUBLIC) -> Turn:
    return Turn(question, question, caller, (), value)


# (previous question, its answer's value, follow-up, what it must be understood as, how)
REWRITES = [
    ("What is the loan limit for EQ-314?", None, "And EQ-502?", "What is the loan limit for EQ-502?", "rule"),
    ("What is the loan limit for EQ-314?", None, "EQ-404?", "What is the loan limit for EQ-404?", "rule"),
    (
        "What is the loan limit for EQ-314?",
        None,
        "What about the deposit?",
        "What is the deposit for EQ-314?",
        "rule",
    ),
    (
        "What was Amazon's revenue growth from FY2016 to FY2017?",
        None,
        "And operating income?",
        "What was Amazon's operating income from FY2016 to FY2017?",
        "rule",
    ),
    (
        "What was Amazon's revenue growth from FY2016 to FY2017?",
        None,
        "Same for FY2018",
        "What was Amazon's revenue growth from FY2017 to FY2018?",
        "rule",
    ),
    (
        "What was Amazon's revenue growth from FY2016 to FY2017?",
        None,
        "What about Microsoft?",
        "What was Microsoft's revenue growth from FY2016 to FY2017?",
        "rule",
    ),
    (
        "What was Amazon's revenue growth from FY2016 to FY2017?",
        None,
        "What drove it?",
        "What drove Amazon's revenue growth from FY2016 to FY2017?",
        "rule",
    ),
    (
        "What is the loan limit for EQ-314?",
        "45 minutes",
        "Why?",
        "Why is the loan limit for EQ-314 45 minutes?",
        "rule",
    ),
    ("What is the loan limit for EQ-314?", None, "What is its deposit?", "What is EQ-314's deposit?", "rule"),
    (
        "What is the hotel cap under POL-12?",
        None,
        "And under POL-13?",
        "What is the hotel cap under POL-13?",
        "rule",
    ),
    ("What is the loan limit for EQ-314?", None, "And now?", "What is the loan limit for EQ-314?", "rule"),
    (
        "What are the Saturday opening hours?",
        None,
        "Same again?",
        "What are the Saturday opening hours?",
        "rule",
    ),
    (
        "What is the Acme payroll date?",
        None,
        "What about the hotel cap?",
        "What is the Acme hotel cap?",
        "rule",
    ),
    # Needs nothing from before: left alone (the subject changes; later turns carry from it).
    (
        "What is the loan limit for EQ-314?",
        None,
        "How many days does a standard book loan last?",
        "How many days does a standard book loan last?",
        "standalone",
    ),
    # No topic the rules can replace, no language model: the carrying form.
    ("How many times can a book be renewed?", None, "And DVDs?", "DVDs?", "carried"),
]


@pytest.mark.parametrize(("previous", "value", "follow_up", "understood", "how"), REWRITES)
def test_a_follow_up_is_rewritten_by_the_rules(
    previous: str, value: str | None, follow_up: str, understood: str, how: str
) -> None:
    made = rewrite(follow_up, [asked(previous, value)], PUBLIC)
    assert (made.standalone, made.how) == (understood, how)
    assert from_nowhere(made.standalone, follow_up, [asked(previous, value)]) == []


def test_the_first_question_is_asked_as_it_stands() -> None:
    assert rewrite("And EQ-502?", [], PUBLIC).standalone == "And EQ-502?"


@pytest.mark.parametrize(
    ("question", "follows"),
    [
        ("And EQ-502?", True),
        ("Why?", True),
        ("What drove it?", True),
        ("What is the loan limit for EQ-314?", False),
        ("Audio recorder deposit and overdue book fine", False),
        ("Is it allowed to bring food into the reading room?", False),
        ("Does it apply to DVDs?", True),
    ],
)
def test_what_marks_a_follow_up(question: str, follows: bool) -> None:
    assert is_follow_up(question) is follows


def test_a_name_year_identifier_or_figure_from_nowhere_is_found() -> None:
    turns = [asked("What is the hotel cap under POL-12?")]
    assert from_nowhere(
        "What is the Globex hotel cap under POL-13 in FY2019 for 300 nights?", "And?", turns
    ) == [
        "POL-13",
        "2019",
        "300",
        "Globex",
    ]


def test_a_models_rewrite_naming_a_company_from_nowhere_is_refused() -> None:
    """The rules cannot decide ("How many times can ..." has no topic to replace); the model's
    rewrite names Globex, which no turn holds: refused, the carrying form is used instead."""
    model = FakeModel().enqueue(json.dumps({"question": "How many times can Globex DVDs be renewed?"}))
    made = rewrite("And DVDs?", [asked("How many times can a book be renewed?")], PUBLIC, model)
    assert made.how == "carried" and "Globex" not in made.standalone
    assert made.refused is not None and "Globex" in made.refused
    # The model is shown only the conversation: the earlier question, nothing retrieved.
    assert "Globex" not in json.dumps(model.history[0].messages)


def test_a_models_rewrite_from_the_conversations_words_is_used() -> None:
    model = FakeModel().enqueue(json.dumps({"question": "How many times can DVDs be renewed?"}))
    made = rewrite("And DVDs?", [asked("How many times can a book be renewed?")], PUBLIC, model)
    assert (made.standalone, made.how) == ("How many times can DVDs be renewed?", "model")


def test_another_callers_turns_are_not_carried() -> None:
    """A role change starts afresh: a staff answer is never carried into a public turn."""
    staff_turn = Turn(
        "When is the cash drawer reconciled?",
        "When is the cash drawer reconciled?",
        STAFF,
        ("17:30",),
        "17:30",
    )
    assert carried_turns([staff_turn], PUBLIC) == []
    assert rewrite("Why?", [staff_turn], PUBLIC).standalone == "Why?"


def test_a_refused_answer_keeps_nothing_to_carry() -> None:
    made = rewrite("What is the Globex hotel cap?", [], PUBLIC)
    turn = turn_of(made, PUBLIC, [Answer.refused("no eligible passage matches this part")])
    assert turn.shown == () and turn.value is None
    quoted = Answer.verified_quote(
        "Overdue books incur a fine of 20 cents per day.",
        Location(
            source="fines-and-fees.md",
            page=None,
            kind=Kind.PROSE,
            section=None,
            table=None,
            row=None,
            paragraph=2,
            effective=None,
        ),
    )
    assert turn_of(made, PUBLIC, [quoted]).shown == (quoted.quote, "fines-and-fees.md")


def test_chat_reads_turns_line_by_line_and_starts_over_on_new(library_db: Path) -> None:
    lines = "What is the loan limit for EQ-314?\nAnd EQ-502?\n/new\nAnd EQ-404?\n"
    result = CliRunner().invoke(
        cli,
        ["chat", "--model", "extractive", "--as-of", "2026-11-14", "--db", str(library_db), "--json"],
        input=lines,
    )
    assert result.exit_code == 0, result.output
    turns = [json.loads(line) for line in result.output.splitlines()]
    assert [t["rewrite"]["understood_as"] for t in turns] == [
        "What is the loan limit for EQ-314?",
        "What is the loan limit for EQ-502?",
        "And EQ-404?",  # a new conversation: nothing to carry
    ]
    text = CliRunner().invoke(
        cli, ["chat", "--model", "extractive", "--as-of", "2026-11-14", "--db", str(library_db)], input=lines
    )
    assert "Understood as: What is the loan limit for EQ-502?" in text.output


def test_the_conversation_suites_load() -> None:
    repo = Path(__file__).resolve().parent.parent
    library = load_conversations(repo / "evals" / "conversations" / "library")
    tenants = load_conversations(repo / "evals" / "conversations" / "tenants")
    assert len(library.conversations) + len(tenants.conversations) >= 20
    assert tenants.docs is not None and tenants.docs.is_dir()


def test_a_bad_question_in_a_chat_is_an_error_line_and_the_chat_goes_on(library_db: Path) -> None:
    lines = "x" * 5000 + "\nWhat is the loan limit for EQ-314?\n"
    result = CliRunner().invoke(
        cli, ["chat", "--model", "extractive", "--as-of", "2026-11-14", "--db", str(library_db)], input=lines
    )
    assert result.exit_code == 0
    assert "Error:" in result.output and "45 minutes" in result.output
    assert "Traceback" not in result.output


def test_eval_scores_a_conversation_suite_turn_by_turn(library_db: Path, tmp_path: Path) -> None:
    """The sample library's conversations with the extractive baseline: every rewrite as written
    in the suite, no word from nowhere, no leak, nothing unverified shown."""
    repo = Path(__file__).resolve().parent.parent
    saved = tmp_path / "run.json"
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            str(repo / "evals" / "conversations" / "library"),
            "--model",
            "extractive",
            "--db",
            str(library_db),
            "--save",
            str(saved),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Understood as (rule): What is the loan limit for EQ-502?" in result.output
    totals = json.loads(saved.read_text())["totals"]
    assert totals["rewrites_correct"]["numerator"] == totals["rewrites_correct"]["denominator"] > 0
    assert totals["from_nowhere"] == 0
    assert totals["cases"]["leaks"] == 0 and totals["cases"]["unverified_shown"] == 0
