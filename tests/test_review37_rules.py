"""Review of this stop's answer-stage rules (acronyms, ordinals): bounded work on pathological
input (each rule reads a 10k-character part in well under a second: no catastrophic
backtracking), and ordinary questions that ask, or do not ask, for a long form or a place."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from localqa.answers import ordinals
from localqa.language.acronyms import definitions, long_form
from localqa.question import acronyms

PATHOLOGICAL = {
    "capitals and hyphens": "AB-" * 3400,
    "capitals": "A" * 10_000,
    "capitals and digits and hyphens": "COVID-19-" * 1200,
    "capitals before stand": "AB " * 3400 + "stands",
    "quotes then capitals": "'" * 5000 + "AB" * 2500,
    "the first": "the first " * 1000,
    "the first 2": "the first 2 " * 850,
    "the first 2 then spaces": "the first 2" + " " * 10_000 + "x",
    "the first 2 then hyphens": "the first 2 " + "-" * 10_000,
    "the first 2 then s": "the first 2 " + "s" * 10_000 + "!",
    "the 2nd": "the 2nd " * 1250,
    "the abbreviation": "the abbreviation " * 600 + "AB",
    "full form of": "full form of " * 800,
    "parentheses": "(" * 5000 + "AB" + ")" * 5000,
    "words then a parenthesis": "word " * 2000 + "(AB)",
    "many parentheses": " (AB)" * 2000,
    "a long parenthesis": "x (" + "a " * 5000 + ")",
}
RULES: dict[str, Callable[[str], object]] = {
    "acronym_asked": acronyms.acronym_asked,
    "cue_blanked": acronyms.cue_blanked,
    "position_asked": ordinals.position_asked,
    "definitions": lambda text: list(definitions(text)),
    "long_form": lambda text: long_form("AB", text),
}


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("text", sorted(PATHOLOGICAL))
def test_a_rule_reads_a_pathological_part_in_bounded_time(rule: str, text: str) -> None:
    started = time.perf_counter()
    RULES[rule](PATHOLOGICAL[text])
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    ("part", "acronym"),
    [
        ("What does NE-SAC stand for?", "NE-SAC"),
        ("What does COVID-19 stand for?", "COVID-19"),
        ("What does R&D stand for?", "R&D"),
        ("What does 'NARL' stand for?", "NARL"),
        ("What is the full form of B2B?", "B2B"),
        ("What does " + "AB-" * 50 + "CD stand for?", "AB-" * 50 + "CD"),
        ("What does e-NARL stand for?", None),  # a capital after a hyphen starts no acronym
        # Acronyms written with small letters too, two capitals at least.
        ("What does SARS-CoV-2 stand for?", "SARS-CoV-2"),
        ("What does IoT stand for?", "IoT"),
        ("What does PhD stand for?", "PhD"),
        ("What does Gadanki stand for?", None),  # one capital: a name
        # What it means to or for someone is its bearing, not its words.
        ("What does NARL mean to the staff?", None),
        ("What does EBITDA mean for the company?", None),
        ("What does EBITDA mean?", "EBITDA"),
        ("What does the term NPS refer to?", "NPS"),
    ],
)
def test_an_acronym_is_read_whole_from_where_it_starts(part: str, acronym: str | None) -> None:
    assert acronyms.acronym_asked(part) == acronym


@pytest.mark.parametrize(
    ("part", "place"),
    [
        ("When was the first time the company reported a loss?", None),
        ("What was revenue in the second half of 2023?", None),
        ("What is the first quarter revenue?", None),
        ("Who is the second largest shareholder?", None),
        ("What is the second to last step?", None),
        ("What was the first year of operation?", None),
        ("What are the first three steps?", (1, 3, False)),
        ("What is the 2nd step?", (2, 1, False)),
        ("What are the last 99 chapters?", (1, 99, True)),
        ("What is the 0th chapter?", None),
    ],
)
def test_ordinary_questions_ask_for_a_place_only_in_a_list(
    part: str, place: tuple[int, int, bool] | None
) -> None:
    found = ordinals.position_asked(part)
    assert (None if found is None else (found.start, found.count, found.from_end)) == place
