"""The same-word rule by lemma (localqa/language/lemmas.py): "founded" is no "found", whatever
Porter makes of them, and the forms a reader takes for one word are one."""

from __future__ import annotations

import pytest

from localqa.language import lemmas
from localqa.language.tokenizer import tokenizer


@pytest.mark.parametrize(
    ("text", "word", "writes"),
    [
        ("If a lost item is found and returned within 60 days.", "founded", False),
        ("The library was founded in 1901.", "founded", True),
        ("If a lost item is found and returned within 60 days.", "found", True),
        ("If a lost item is found and returned within 60 days.", "returning", True),
        ("Fragile equipment, such as camera lenses, may be borrowed.", "lens", True),
        ("The cash drawer is reconciled at closing.", "reconciled", True),
        ("Staff reconcile the drawer.", "reconciled", True),
        ("Two studies were published.", "study", True),
        ("Travel is booked by the office.", "travelling", True),  # the British doubled "l"
        ("Cash is accepted at the front desk only.", "drawer", False),
        ("Employees may work remotely on two days.", "remote", True),
        ("Remote work is allowed.", "remotely", True),
    ],
)
def test_a_text_writes_a_word_in_some_form(text: str, word: str, writes: bool) -> None:
    assert lemmas.written(text).writes(word) is writes


def test_the_stem_joins_what_the_lemma_keeps_apart() -> None:
    """Why the rule reads lemmas: the index's Porter stems make these one token."""
    assert tokenizer().tokens("founded") == tokenizer().tokens("found")
    assert lemmas.lemma("founded") != lemmas.lemma("found")


@pytest.mark.parametrize(
    ("word", "modifier", "names"),
    [
        ("drawer", False, True),
        ("shift", False, True),
        ("parking", False, True),  # a gerund
        ("biketowork", False, False),  # no dictionary word
        ("agm", False, False),
        ("come", False, False),
        ("bring", True, False),  # no gerund
        ("require", False, False),
        ("legal", True, True),
        ("legal", False, False),
    ],
)
def test_whether_a_word_can_name_a_thing(word: str, modifier: bool, names: bool) -> None:
    assert lemmas.can_name(word, modifier=modifier) is names


@pytest.mark.parametrize(
    ("word", "degree"),
    [
        ("highest", True),
        ("larger", True),
        ("latest", True),
        ("better", True),
        ("founder", False),
        ("drawer", False),
        ("interest", False),
    ],
)
def test_a_comparative_or_superlative(word: str, degree: bool) -> None:
    assert lemmas.degree(word) is degree
