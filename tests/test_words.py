"""Words (localqa/language/words.py): folding, the word and year patterns, and the one name rule that
routing and evidence coverage both read."""

from __future__ import annotations

import pytest

from localqa.answers.coverage import question_terms
from localqa.language import words
from localqa.question.routing import question_names

# (word as written, opens a sentence or phrase, written as a name, a name by itself)
NAME_RULE = [
    # capitalised inside a sentence: a name unless English writes it in lower case
    ("Boeing", False, True, True),
    ("Lufthansa", False, True, True),
    ("Singaporean", False, True, True),
    ("Müller", False, True, True),
    ("Health", False, True, False),  # "Consumer Health": ordinary words
    ("Consumer", False, True, False),
    ("Block", False, True, False),
    ("Martin", False, True, False),  # of "Lockheed Martin"; "Lockheed" is the name
    ("Mills", False, True, False),  # plural of an ordinary word
    ("Founded", False, True, False),  # inflected from an ordinary word
    # a capital that opens a sentence or phrase says nothing
    ("Boeing", True, False, False),
    ("Lufthansa", True, False, False),
    # acronyms are written as names and are never names by themselves (the explicit rule)
    ("ADBE", False, True, False),
    ("AMCOR", False, True, False),
    ("EBITDA", False, True, False),
    ("R&D", False, True, False),
    ("ADBE", True, True, False),
    # digits or mixed case: names wherever they stand
    ("3M", False, True, True),
    ("3M", True, True, True),
    ("CONLL03", False, True, True),
    ("JnJ", True, True, True),
    ("SoC", False, True, True),
    ("iPhone", False, True, True),
    # never names, however written
    ("2019", False, False, False),
    ("FY2022", False, False, False),
    ("FY21", False, False, False),
    ("Q32024", False, False, False),
    ("Q2", False, False, False),
    ("FY", False, False, False),
    ("1st", False, False, False),
    ("EQ-314", False, False, False),
    ("10-K", False, False, False),
    ("8k", False, False, False),
    ("USD", False, False, False),
    ("July", False, False, False),
    ("Sept", False, False, False),
    ("Monday", False, False, False),
    ("Mr", False, False, False),
    ("Inc", False, False, False),
    ("The", False, False, False),
    ("A", False, False, False),
    ("42", False, False, False),
]


@pytest.mark.parametrize(("word", "first", "written", "name"), NAME_RULE)
def test_the_name_rule(word: str, first: bool, written: bool, name: bool) -> None:
    assert words.written_as_name(word, first=first) is written
    assert words.is_name(word, first=first) is name


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("How did Lockheed Martin's revenue grow?", [("Lockheed Martin", ["Lockheed"])]),
        (
            "What is Johnson & Johnson's Consumer Health segment?",
            [("Johnson & Johnson", ["Johnson & Johnson"]), ("Consumer Health", [])],
        ),
        ("Did Hewlett-Packard report in FY2022 or Q3 2023?", [("Hewlett-Packard", ["Hewlett-Packard"])]),
        # a sentence's first word, and a phrase's (after a colon, inside quotes or brackets)
        ("Boeing sent how many Tweets to Airbus?", [("Tweets", []), ("Airbus", ["Airbus"])]),
        ('Which label: "Contact" or (Meet)?', []),
        # initials do not end a sentence (the parts' rule); an honorific is no name
        ("What did Mr. C.M. Maniar approve?", [("Maniar", ["Maniar"])]),
        # identifiers, periods, years and report types end a run
        ("Is AMCOR 2023Q4 EARNINGS in the 10-K of ADBE?", [("AMCOR", []), ("ADBE", [])]),
        # a possessive ends a name: "Boeing's" and "Commercial Airplanes" are two
        (
            "How did Boeing's Commercial Airplanes fare?",
            [("Boeing", ["Boeing"]), ("Commercial Airplanes", [])],
        ),
    ],
)
def test_runs_of_words_written_as_names(text: str, runs: list[tuple[str, list[str]]]) -> None:
    assert [(run.text, run.names()) for run in words.name_runs(text)] == runs


QUESTIONS = [
    "How many Tweets are attributed to Boeing?",
    "How did JnJ's Consumer Health sales change in FY2022?",
    "What is the FY2019 fixed asset turnover ratio for Activision Blizzard?",
    "What was the EBITDA of ADBE in FY2015?",
    "Did American Water Works or Lockheed Martin pay more in dividends?",
    "What is 3M's capital expenditure in USD millions?",
    "Where are the two plants of Cipla located according to Mr. C.M. Maniar?",
    "What was the key agenda of the AMCOR's 8k filing dated 1st July 2022?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_routing_and_coverage_agree_on_names(question: str) -> None:
    """The words routing lets route alone are exactly the words of the names coverage requires."""
    routed = [w.text for name in question_names(question) for w in name.written if w.is_name]
    required = [w for t in question_terms(question) if t.kind == "name" for w in words.ALNUM.findall(t.text)]
    assert routed == required


@pytest.mark.parametrize(
    ("text", "folded", "plain"),
    [
        ("Müller", "muller", "muller"),
        ("ZÜRICH's", "zurich's", "zurich s"),
        ("AT&T, Inc.", "at&t, inc.", "at t inc"),
    ],
)
def test_folding(text: str, folded: str, plain: str) -> None:
    assert words.fold(text) == folded
    assert words.plain(text) == plain


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("FY2022 and 2023Q4", ["2022", "2023"]),
        ("ACTIVISIONBLIZZARD_2019_10K", ["2019"]),
        ("12019 items, 2,019 units, 2019.5 points", []),
        ("in 1999 or 2101", ["1999"]),
    ],
)
def test_years_in_tokens(text: str, years: list[str]) -> None:
    assert words.YEAR.findall(text) == years


@pytest.mark.parametrize(
    ("word", "singular"),
    [("loans", "loan"), ("policies", "policy"), ("taxes", "tax"), ("status", "status"), ("class", "class")],
)
def test_singular(word: str, singular: str) -> None:
    assert words.singular(word) == singular


@pytest.mark.parametrize(
    ("text", "years"),
    [
        # a year after a title of ordinary words belongs to it; after a name it is a period
        (
            "What does the Health and Social Care Act 2008 require?",
            [("Health", None, None), ("Social Care Act", "2008", "2008")],
        ),
        ("Which goals does Vision 2030 set?", [("Vision", "2030", "2030")]),
        ("What was Boeing 2019 revenue?", [("Boeing", "2019", None)]),
        ("What did ADBE 2015 report?", [("ADBE", "2015", None)]),
        ("What did Boeing's 2019 filing say?", [("Boeing", None, None)]),
        ("Was the Act, 2008 edition, repealed?", [("Act", None, None)]),
    ],
)
def test_a_year_right_after_a_run(text: str, years: list[tuple[str, str | None, str | None]]) -> None:
    assert [(run.text, run.year, run.titled_year) for run in words.name_runs(text)] == years
