"""Follow-ups rewritten on the previous question's frame, not its text (issue 47): a follow-up
that changes only whose figure is asked ("And Verizon's?"), only the period ("What about
FY2021?") or only the line item of the same owner ("And its net income?") fills that slot and
keeps the others; found on filings nobody here tuned on, where the text rewrite gave "What was 's
in FY2022?" and "And Amcor's net income?" (the year lost)."""

from __future__ import annotations

import pytest

from localqa.conversation import Turn, rewrite
from localqa.question.frames import Frame
from localqa.types import Caller

CALLER = Caller()


def chain(*questions: str) -> list[str]:
    """Each question as it is asked, after the turns before it."""
    turns: list[Turn] = []
    asked = []
    for question in questions:
        found = rewrite(question, turns, CALLER)
        asked.append(found.standalone)
        turns.append(Turn(question, found.standalone, CALLER))
    return asked


def test_another_owner_then_another_period() -> None:
    assert chain("What was Boeing's total revenue in FY2022?", "And Verizon's?", "What about FY2021?") == [
        "What was Boeing's total revenue in FY2022?",
        "What was Verizon's total revenue in FY2022?",
        "What was Verizon's total revenue in FY2021?",
    ]


def test_another_line_item_of_the_same_owner_keeps_the_period() -> None:
    assert chain("What was Amcor's net sales in FY2023?", "And its net income?")[1] == (
        "What was Amcor's net income in FY2023?"
    )


def test_another_owner_named_after_of() -> None:
    assert chain("What was the operating income of Amazon in FY2017?", "And Globex's?")[1] == (
        "What was the operating income of Globex in FY2017?"
    )


@pytest.mark.parametrize(
    ("question", "slots"),
    [
        (
            "What was Boeing's total revenue in FY2022?",
            ("What was ", "Boeing", "total revenue", " in FY2022"),
        ),
        ("What is the loan limit for EQ-314?", ("What is the ", None, "loan limit", " for EQ-314")),
    ],
)
def test_a_question_read_as_its_frame(question: str, slots: tuple[str, str | None, str, str]) -> None:
    frame = Frame.of(question)
    assert frame is not None and (frame.head, frame.owner, frame.topic, frame.tail) == slots
    assert frame.text() == question


def test_an_owner_follow_up_with_no_owner_to_replace_is_not_cut_and_pasted() -> None:
    asked = chain("What was the revenue in FY2017?", "And Globex's?")[1]
    assert not asked.startswith("What was 's")
