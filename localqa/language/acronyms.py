"""Abbreviation definitions a text gives: "National Atmospheric Research Laboratory (NARL)".

The rule is the field's standard, Schwartz & Hearst's: A. S. Schwartz and M. A. Hearst, "A simple
algorithm for identifying abbreviation definitions in biomedical text", Pacific Symposium on
Biocomputing 8:451-462 (2003). A definition is written one of two ways:

- **long form (short form)**: "Physical Research Laboratory (PRL)";
- **short form (long form)**: "PRL (Physical Research Laboratory)", when the parenthesis holds
  more than two words or is longer than what precedes it; the short form is then the word before
  the parenthesis, and it has a capital letter.

A short form (`is_short_form`) has 2 to 10 characters, at most two words, a letter, and starts
with a letter or a digit. Its long form is found among the words just before it (at most
min(|A| + 5, 2|A|) of them, |A| the short form's letters and digits, never past the previous
parenthesis): read right to left, each letter or digit of the short form is a character of the
long form, in order, and its first is the first character of a word (`best_long_form`). A long form
that holds the short form as a word, is shorter than it, or has more words than the bound is none.

So "(2019)" (no letter), "(see page 4)" (no word before it whose letters it matches) and "the
annual report (NARL)" (no "n" starting a word) define nothing. The PyPI package `abbreviations`
implements the first way only, configures the root logger when imported and was last released in
2019; this module is the algorithm, typed, and both ways.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# A short form's length in characters, and its words (Schwartz & Hearst, section 2.1).
SHORT_FORM_CHARACTERS = (2, 10)
SHORT_FORM_WORDS = 2
# A long form has at most min(|A| + LONG_FORM_EXTRA_WORDS, LONG_FORM_WORD_FACTOR * |A|) words.
LONG_FORM_EXTRA_WORDS = 5
LONG_FORM_WORD_FACTOR = 2

# A parenthesis opened after a space (not "f(x)"), holding no other parenthesis.
_PARENTHESIS = re.compile(r"(?<=\s)\(([^()]*)\)")
_WORD_SPLIT = re.compile(r"[\s-]+")


@dataclass(frozen=True)
class Definition:
    """One abbreviation a text defines: its `short` form and `long` form, each as the text writes
    it (the long form is a span of the text)."""

    short: str
    long: str


def is_short_form(text: str) -> bool:
    """Whether `text` can be a short form: 2 to 10 characters, at most two words, a letter, and a
    letter or digit first."""
    low, high = SHORT_FORM_CHARACTERS
    return (
        low <= len(text) <= high
        and len(text.split()) <= SHORT_FORM_WORDS
        and any(c.isalpha() for c in text)
        and text[0].isalnum()
    )


def best_long_form(short: str, long: str) -> str | None:
    """The shortest ending of `long` that `short` abbreviates (Schwartz & Hearst's
    findBestLongForm), or None: read right to left, each letter or digit of `short` is a
    character of it, in order, the first one at the start of a word."""
    s_index, l_index = len(short) - 1, len(long) - 1
    while s_index >= 0:
        char = short[s_index].lower()
        if not char.isalnum():
            s_index -= 1
            continue
        while l_index >= 0 and (
            long[l_index].lower() != char or (s_index == 0 and l_index > 0 and long[l_index - 1].isalnum())
        ):
            l_index -= 1
        if l_index < 0:
            return None
        l_index -= 1
        s_index -= 1
    start = max(long.rfind(" ", 0, l_index + 1) + 1, 0)
    return long[start:]


def _letters(short: str) -> int:
    return sum(c.isalnum() for c in short)


def _pair(short: str, before: str) -> Definition | None:
    """The definition of `short` by the words at the end of `before`, or None (the bounds of the
    module's rule)."""
    short = short.strip()
    if not is_short_form(short):
        return None
    letters = _letters(short)
    bound = min(letters + LONG_FORM_EXTRA_WORDS, LONG_FORM_WORD_FACTOR * letters)
    words = list(re.finditer(r"\S+", before))
    if not words:
        return None
    window = before[words[max(len(words) - bound, 0)].start() :].rstrip()
    long = best_long_form(short, window)
    if long is None:
        return None
    long = long.strip()
    if (
        len(long) < len(short)
        or short in long.split()
        or long.endswith(short)
        or len([w for w in _WORD_SPLIT.split(long) if w]) > bound
    ):
        return None
    return Definition(short=short, long=long)


def definitions(text: str) -> Iterator[Definition]:
    """Every abbreviation `text` defines, in order, by either way of the module's rule."""
    after = 0  # a long form never reaches back past the previous parenthesis
    for found in _PARENTHESIS.finditer(text):
        inside = found[1].strip()
        # A parenthesis may go on past the short form: "(NARL; formerly NMRF)", "(NARL, 1992)".
        inside = re.split(r"[,;] ", inside, maxsplit=1)[0]
        before = text[after : found.start()].rstrip()
        after = found.end()
        if not inside or not before:
            continue
        if len(inside.split()) > SHORT_FORM_WORDS or len(inside) > len(before):
            # short form (long form): the word before the parenthesis, written with a capital.
            word = before.split()[-1].strip(",;:")
            if any(c.isupper() for c in word):
                pair = _pair(word, inside)
                if pair is not None:
                    yield pair
            continue
        pair = _pair(inside, before)
        if pair is not None:
            yield pair


def long_form(short: str, text: str) -> str | None:
    """The long form `text` gives `short` (compared exactly: "NARL", not "Narl"), or None."""
    return next((d.long for d in definitions(text) if d.short == short), None)
