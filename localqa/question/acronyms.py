"""Which question parts ask what an acronym stands for, and which acronym: "What does NARL stand
for", "What is NARL stand for", "what is the full form of GCIS", "What is EPS short for", "What
does the abbreviation RAG mean", "What is meant by ESG" (`ACRONYM_QUESTIONS`, a named table,
table-tested). The acronym is a word the part writes with a capital first (`ACRONYM`: letters,
maybe digits, inner hyphens or an ampersand, at least `MIN_CAPITALS` capital letters: "NARL",
"IoT", "SARS-CoV-2"), compared as written.

Read by the answer stage, which quotes the sentence that defines it (`localqa.answers.definitions`),
by the value of a sentence that defines it (`localqa.values.phrases`), and by evidence coverage,
for which the words that ask it frame the request (`cue_blanked`).
"""

from __future__ import annotations

import re

# An acronym as a part writes it: a capital, then letters (two capitals in all: `MIN_CAPITALS`), maybe
# digits or inner hyphens or an ampersand ("NARL", "NE-SAC", "COVID-19", "R&D", "IoT", "PhD",
# "SARS-CoV-2"), maybe quoted. Matched from the start of such a run only, and never
# given back (possessive): a run of thousands of "AB-AB-..." is read once, not once per letter.
ACRONYM = (
    r"[\"'\u2018\u201c]?(?<![\w&-])(?P<acronym>[A-Z][A-Za-z0-9&]*+(?:-[A-Za-z0-9]+)*+)[\"'\u2019\u201d]?"
)
_AN_ABBREVIATION = r"(?:(?i:the|an?)\s+)?(?:(?i:acronym|abbreviation|initialism|abbreviated\s+term|term)\s+)?"
# Each way a part asks what an acronym stands for, by name. Only the cue words fold case: the
# acronym is written in capitals.
ACRONYM_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "What does NARL stand for", "What is NARL stand for", "what NARL stands for"
    ("stand for", re.compile(rf"\b{_AN_ABBREVIATION}{ACRONYM}\s+(?i:stands?|stood)\s+(?i:for)\b")),
    # "What is EPS short for", "EPS is an abbreviation of what"
    (
        "short for",
        re.compile(
            rf"\b{_AN_ABBREVIATION}{ACRONYM},?\s+(?i:(?:is|was)\s+)?(?i:short|an?\s+abbreviation|an?\s+acronym)"
            r"\s+(?i:for|of)\b"
        ),
    ),
    # "what is the full form of GCIS", "the full name of the acronym NARL", "the expansion of RAG"
    (
        "full form",
        re.compile(
            r"\b(?i:full\s+(?:form|name|term)|long\s+form|expansion|expanded\s+form)\s+(?i:of|for)\s+"
            rf"{_AN_ABBREVIATION}{ACRONYM}"
        ),
    ),
    # "What does the abbreviation RAG mean", "what does NARL mean", "what NARL refers to"; not what it
    # means by, to or for something ("what does EBITDA mean for the company": its bearing, not its words)
    (
        "means",
        re.compile(
            rf"\b{_AN_ABBREVIATION}{ACRONYM}\s+(?i:means?|meant|refers?\s+to)\b(?!\s+(?i:that|by|to|for)\b)"
        ),
    ),
    # "What is meant by ESG", "what does the company mean by EBITDA", "what is meant by the abbreviation
    # RAG": the acronym ends what is asked ("in this report" may follow); "what is meant by ESG
    # investing" asks what a phrase means, not the acronym's words
    (
        "meant by",
        re.compile(
            rf"\b(?i:mean|meant)\s+(?i:by)\s+{_AN_ABBREVIATION}{ACRONYM}"
            r"(?=\s*(?:[?.!,;:)]|$)|\s+(?i:in|within|here)\b)"
        ),
    ),
    # "Expand NARL"
    ("expand", re.compile(rf"^\W*(?i:expand)\s+{_AN_ABBREVIATION}{ACRONYM}\W*$")),
)
# An acronym has at least this many capital letters ("A" and "I" are words).
MIN_CAPITALS = 2


def acronym_asked(part: str) -> str | None:
    """The acronym `part` asks the long form of (the module's rules), or None."""
    for _name, pattern in ACRONYM_QUESTIONS:
        for found in pattern.finditer(part):
            if _is_acronym(found["acronym"]):
                return found["acronym"]
    return None


def cue_blanked(part: str) -> str:
    """`part` with the words that ask for an acronym's long form blanked, the acronym kept ("What
    does NARL stand for?": "What does NARL ?"): they frame the request, and no passage need carry
    "stand" or "full form" (evidence coverage's word rule, `localqa.answers.coverage`)."""
    for _name, pattern in ACRONYM_QUESTIONS:
        part = pattern.sub(lambda m: f" {m['acronym']} " if _is_acronym(m["acronym"]) else m[0], part)
    return part


def _is_acronym(word: str) -> bool:
    return sum(c.isupper() for c in word) >= MIN_CAPITALS
