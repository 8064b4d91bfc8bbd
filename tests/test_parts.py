"""Question parts: a part is a question that stands on its own. Real questions are almost never
compound; the table below holds the shapes real questions take (FinanceBench and MMLongBench
phrasing), which must stay whole, and the compound ones, which must split."""

from __future__ import annotations

import string
import tomllib
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from localqa.language.text import squash
from localqa.question import parts
from localqa.question.parts import is_instruction, search_text, split_parts

EQ314 = "What is the loan limit for EQ-314?"
MAPS = "When does the desk accept maps for the community map exchange?"
BOOK_LOAN = "How many days does a standard book loan last?"
COMPOUND = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
    "exchange, and how many days does a standard book loan last?"
)

WHOLE = [
    # a leading clause stays with the question it qualifies
    "If we exclude the impact of M&A, which segment has dragged down 3M's overall growth in 2022?",
    "According to this report, how many people were surveyed?",
    "Using only the information within the balance sheet, what is the year end FY2018 net PPNE for 3M?",
    "Basing your judgments off of the balance sheet, what is the year end FY2018 amount of accounts "
    "payable for MGM Resorts? Answer in USD millions.",
    "As of May 26, 2023, what is the total amount Pepsico may borrow under its unsecured revolving "
    "credit agreements?",
    "At the Pepsico AGM held on May 3, 2023, what was the outcome of the shareholder vote?",
    "When the policy changed in June, what was the loan limit?",
    "In the Leadership program section, how many male are there with glasses? Please write the "
    "answer in floqt format.",
    # a list inside a question is not a list of questions
    "Among operations, investing, and financing activities, which brought in the most cash flow for "
    "Best Buy in FY2023?",
    "Of the four missions of Indian Space Program's space mission from 2012 to 2017, which mission "
    "includes the launch of least number of satellites?",
    # initials and abbreviations do not end a sentence
    "Who among Mr. R.A. Shah, Mr. S.V. Shanbhag, and Mr. C.M. Maniar attended the most board meetings?",
    "What was the U.S. revenue of Inc. subsidiaries in Fig. 3 vs. Fig. 4?",
    # a relative clause is not a question
    "What is the fine for the EQ-314 camera, which was returned late?",
    # instructions and definitions are context of the question
    "What is FY2020 days payable outstanding (DPO) for Corning? DPO is defined as: 365 * (average "
    "accounts payable between FY2019 and FY2020) / (FY2020 COGS + change in inventory between FY2019 "
    "and FY2020). Round your answer to two decimal places.",
    "We need to calculate a reasonable approximation (or exact number if possible) of a financial "
    "metric. Basing your judgment by information plainly provided in the balance sheet and the P&L "
    "statement, what is Lockheed Martin's FY2020 asset turnover ratio?",
    "List the no. of chapters including research highlight. The answer shall be formatted as a list.",
    # an instruction that ends in a question mark is still an instruction
    "What is the FY2019 fixed asset turnover ratio for Activision Blizzard? Round your answer to three "
    "decimals?",
    "What is the FY2019 revenue for Activision Blizzard? Answer in USD millions?",
    # a question's options, as a second sentence that asks nothing of its own
    "Which group is greater in population in 2018? Republican who are hispanic, or no leans who are male?",
    "Which group is larger in 2018? Those who say the economy is good, or those who say it is poor?",
    # a lone question mark after a full stop ends the sentence before it
    "What is the FY2019 revenue for Activision Blizzard. ?",
    "How many datasets are used for experiments of this paper in all.?",
    "Who can borrow and return laptops?",
    "Laptops, cameras and tripods: what are the limits?",
]


@pytest.mark.parametrize("question", WHOLE)
def test_real_question_shapes_stay_one_part(question: str) -> None:
    assert split_parts(question) == [" ".join(question.split())]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (COMPOUND, [EQ314, MAPS, BOOK_LOAN]),
        ("What is X? When is Y?", ["What is X?", "When is Y?"]),
        ("What is X?  When is Y?\nWho is Z?", ["What is X?", "When is Y?", "Who is Z?"]),
        ("What is X and when is Y?", ["What is X?", "When is Y?"]),
        ("What is X; how is Y?", ["What is X?", "How is Y?"]),
        ("What is X, or where is Y?", ["What is X?", "Where is Y?"]),
        # terse questions with no question word, and a second sentence that opens a question in a
        # clause of its own, are questions
        ("Loan period? Late fee?", ["Loan period?", "Late fee?"]),
        (
            "What is X? According to the report, how many Y?",
            ["What is X?", "According to the report, how many Y?"],
        ),
        (
            "How much did Nike spend on R&D in FY2022, and which segment grew fastest?",
            ["How much did Nike spend on R&D in FY2022?", "Which segment grew fastest?"],
        ),
        # context goes with the question next to it
        (
            "What was revenue in 2022? Answer in USD millions. What was net income?",
            ["What was revenue in 2022? Answer in USD millions.", "What was net income?"],
        ),
        ("Answer in USD millions. What was revenue?", ["Answer in USD millions. What was revenue?"]),
        (EQ314, [EQ314]),
        ("loan limit EQ-314", ["Loan limit EQ-314"]),
        ("  What   is\tX?  ", ["What is X?"]),
    ],
)
def test_compound_questions_split(question: str, parts: list[str]) -> None:
    assert split_parts(question) == parts


@pytest.mark.parametrize(
    "sentence",
    [
        "Answer in USD millions.",
        "Round your answer to two decimal places.",
        'Please write the answer in list format, e.g., ["1","2"]',
        "Give a response to the question by relying on the details shown in the cash flow statement.",
        "Assume that you are a public equities analyst.",
        "We need to calculate a financial metric by using information only provided in the balance sheet.",
        'The answer shall be formatted as a list, for example, ["Chapter 5", "Chapter 8"].',
        "Do not round.",
        "Round your answer to three decimals?",
    ],
)
def test_instructions_are_recognised(sentence: str) -> None:
    assert is_instruction(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "DPO is defined as: 365 * (average accounts payable) / (COGS).",
        "Define net working capital as total current assets less total current liabilities.",
        "What is the answer to the loan question?",
        "Answer the following question using the balance sheet: what is the year end FY2018 net PPNE?",
        "List the no. of chapters including research highlight.",
        "Loan limit EQ-314",
    ],
)
def test_content_is_not_an_instruction(sentence: str) -> None:
    assert not is_instruction(sentence)


def test_instructions_are_kept_out_of_the_search() -> None:
    part = split_parts("What was revenue in FY2022? Answer in USD millions. Round your answer.")[0]
    assert search_text(part) == "What was revenue in FY2022?"
    assert search_text("Answer in USD millions.") == "Answer in USD millions."  # nothing else to search
    definition = "What is Corning's DPO? DPO is defined as: 365 * accounts payable / COGS."
    assert search_text(definition) == definition


# --- sentences: the texts taken whole without pysbd -------------------------------------------


def by_pysbd(text: str) -> list[str]:
    """What `parts.sentences` gives when pysbd segments the text."""
    return parts._segmented(squash(text))


PLAIN = string.ascii_letters + string.digits + " ,;:%$&/+'\u2019-"


@given(st.text(alphabet=PLAIN, min_size=1, max_size=60), st.booleans())
def test_a_text_taken_whole_is_one_sentence_to_pysbd_too(text: str, asked: bool) -> None:
    text = squash(text) + ("?" if asked else "")
    assume(parts._ONE_SENTENCE.fullmatch(text))
    assert parts.sentences(text) == by_pysbd(text)


def suite_questions() -> list[str]:
    evals = Path(__file__).resolve().parents[1] / "evals"
    found = [
        case["question"]
        for path in sorted(evals.glob("*/cases.toml"))
        for case in tomllib.loads(path.read_text(encoding="utf-8")).get("case", [])
    ]
    return [*found, *WHOLE, COMPOUND]


def test_the_suites_questions_split_into_the_sentences_pysbd_finds() -> None:
    questions = suite_questions()
    whole = [q for q in questions if parts._ONE_SENTENCE.fullmatch(squash(q))]
    assert len(whole) >= len(questions) // 2  # most questions skip pysbd
    assert [parts.sentences(q) for q in questions] == [by_pysbd(q) for q in questions]


@pytest.mark.parametrize(
    "text",
    [
        "What is X. And Y?",  # a period ends a sentence
        "Compare (a) revenue and (b) cost?",  # a parenthesis: a list item to pysbd
        "Why 'Q-' Then?",  # a hyphen and a quote before a capital end a sentence
        "What is it?!",  # more than one mark at the end
        "États financiers?",  # not ASCII
    ],
)
def test_other_texts_go_to_pysbd(text: str) -> None:
    assert not parts._ONE_SENTENCE.fullmatch(squash(text))
