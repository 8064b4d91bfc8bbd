"""Which financial statement a table is, recognised from the filing's own words: the title over
it and the headings of its page ("CONSOLIDATED BALANCE SHEETS", "Note 21. Guarantor Financial
Information", "Summarized Statements of Income").

A filing repeats its line items in many tables: the registrant's consolidated statements, segment
tables, quarterly data, the five-year summary, non-GAAP reconciliations, and the statements of
other entities (guarantor groups, parent-only schedules, variable-interest entities). A figure
about the company reads its operands from the first kind (`Scope.PRIMARY`), else from a table
under no statement's title (`Scope.OTHER`), and from the others only when the question names one
(`asked_scopes`). The rule reads words any filing uses for these tables; no company's layout is
special.

Serves the derived figures' operands (`localqa.derived.operands`), their cross-checks
(`localqa.derived.crosschecks`) and the citation each operand shows ("consolidated balance sheet").
It reads words only, and sits below extraction and indexing, so that an index may recognise each
table's statement when it is built (today it is recognised when operands are read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

# How a question or a table's title names each statement.
STATEMENT_WORDS = {
    "balance sheet": r"balance\s+sheets?|statements?\s+of\s+financial\s+position|financial\s+position",
    "income statement": r"income\s+statements?|statements?\s+of\s+(?:consolidated\s+)?"
    r"(?:income|operations|earnings)|p\s?&\s?l|profit\s+and\s+loss|statements?\s+of\s+comprehensive\s+income",
    "cash flow": r"cash\s+flows?\s+statements?|statements?\s+of\s+(?:consolidated\s+)?cash\s*flo\s?ws?"
    r"|statement\s+of\s+cash\s+flo\s?w\s?s",
    "equity": r"statements?\s+of\s+(?:changes\s+in\s+)?(?:shareholders|stockholders|shareowners)"
    r"['\u2019]?\s+equity",
}
# What each statement is called in a citation.
_NAMES = {
    "balance sheet": "balance sheet",
    "income statement": "income statement",
    "cash flow": "statement of cash flows",
    "equity": "statement of equity",
}


class Scope(Enum):
    """Whose figures a table states, and how: the registrant's own statements, or another table
    that repeats their lines."""

    PRIMARY = "primary"  # the registrant's (condensed) consolidated statements
    OTHER_ENTITY = "other entity"  # a guarantor group, the parent alone, a VIE, an investee
    SEGMENT = "segment"
    QUARTER = "quarter"  # a 10-K's quarterly data
    SUMMARY = "summary"  # selected financial data, a five-year summary, highlights
    ADJUSTED = "adjusted"  # a non-GAAP reconciliation, pro forma figures
    OTHER = "other"  # a table no statement title stands over


# The words that say a table is not the registrant's own statement, by what it is instead: in the
# title or a heading over it on its page. Checked in this order (a guarantor group's quarterly
# data is another entity's).
_QUALIFIERS: tuple[tuple[Scope, re.Pattern[str]], ...] = (
    (
        Scope.OTHER_ENTITY,
        re.compile(
            r"\b(?:non-?)?guarantors?\b|\bobligors?\b|\bobligor\s+group\b|\bconsolidating\b|"
            r"\bparent\s+(?:company|only|entity)\b|\bregistrant\s+only\b|"
            r"\b(?:condensed\s+)?financial\s+information\s+of\s+(?:the\s+)?registrant\b|"
            r"\bvariable\s+interest\s+entit(?:y|ies)\b|\bunconsolidated\b|\bequity[- ]method\s+investees?\b|"
            r"\bjoint\s+ventures?\b|\bsummarized\b|\bcombined\s+(?:financial\s+)?(?:statements?|information)\b",
            re.IGNORECASE,
        ),
    ),
    (Scope.SEGMENT, re.compile(r"\bsegments?\b|\bgeographic(?:al)?\b|\breportable\b", re.IGNORECASE)),
    (
        Scope.QUARTER,
        re.compile(
            r"\bquarterly\s+(?:financial\s+|operating\s+)?(?:data|results|information|summary)\b|"
            r"\bresults\s+by\s+quarter\b",
            re.IGNORECASE,
        ),
    ),
    (
        Scope.SUMMARY,
        re.compile(
            r"\bselected\s+(?:consolidated\s+)?financial\s+data\b|\bfive[- ]year\b|"
            r"\bfinancial\s+highlights\b|\b(?:financial|historical)\s+summary\b",
            re.IGNORECASE,
        ),
    ),
    (
        Scope.ADJUSTED,
        re.compile(r"\bnon[- ]?gaap\b|\breconciliations?\b|\badjusted\b|\bpro\s+forma\b", re.IGNORECASE),
    ),
)
_CONSOLIDATED = re.compile(r"\bconsolidated\b", re.IGNORECASE)
# A line longer than this is prose, not a title or a heading: a sentence near a table ("... is a
# non-GAAP measure ...") says nothing of whose figures the table states.
MAX_HEADING = 120


@dataclass(frozen=True)
class Statement:
    """The statement a table is: its `kind` (a key of `STATEMENT_WORDS`, None when no title names
    one), whose figures it states (`scope`) and the title it was recognised from."""

    kind: str | None
    scope: Scope
    title: str = ""

    @property
    def primary(self) -> bool:
        return self.scope is Scope.PRIMARY

    def describe(self) -> str:
        """How a citation names it: "consolidated balance sheet"; another table by its title and
        what it is ("Summarized Statements of Income (other entity)")."""
        if self.primary and self.kind is not None:
            return f"consolidated {_NAMES[self.kind]}"
        if self.title:
            return f"{self.title} ({self.scope.value})"
        return f"a table under no statement's title ({self.scope.value})"


# A passage no title stands over (a sentence of prose).
UNRECOGNISED = Statement(None, Scope.OTHER)


# A word's last letter set apart, as some filings' text layers write a title ("Statement of Incom e").
_SPLIT_LETTER = re.compile(r"(?<=[a-z]{3}) (?=[a-z]\b)", re.IGNORECASE)


def kind_named(text: str) -> str | None:
    """The statement `text` names ("CONSOLIDATED STATEMENTS OF CASH FLOWS", "Consolidated
    Statement of Incom e"), or None."""
    joined = _SPLIT_LETTER.sub("", text)
    return next((k for k, words in STATEMENT_WORDS.items() if re.search(words, joined, re.IGNORECASE)), None)


def recognise(words: Iterable[str], headings: Iterable[str] = ()) -> Statement:
    """The statement a table is, from what stands over it, nearest first: `words`, the table's
    own (its caption, its column headers) and the lines of prose above it on its page; then
    `headings`, the heading paths it and those lines sit under. The title is the nearest line
    that names a statement. The scope is another entity's, a segment's, a quarter's, a summary's
    or an adjusted measure's when the title or one of `words` says so (`_QUALIFIERS`), or a note's
    numbered heading among `headings` ("21. Guarantor Financial Information"): a heading path runs
    on from earlier pages and headings a layout misread ("segment of business" over a statement of
    earnings), so its other headings never qualify a statement. Else primary when the title names
    a consolidated statement, else other."""
    own = _lines(words)
    paths = _lines(headings)
    title = next((line for line in (*own, *paths) if kind_named(line) is not None), "")
    kind = kind_named(title) if title else None
    telling = [title, *own, *(h for h in paths if _NOTE_HEADING.match(h))]
    for scope, qualifier in _QUALIFIERS:
        if any(qualifier.search(line) for line in telling if line):
            return Statement(kind, scope, title or next(iter(own or paths), ""))
    # The registrant's statements say they are consolidated; a statement titled without the word
    # ("Statement of operations" of an investee in a note) may be anyone's.
    primary = kind is not None and _CONSOLIDATED.search(title) is not None
    return Statement(kind, Scope.PRIMARY if primary else Scope.OTHER, title)


# A note's heading: "Note 18 - Segment Information", "21. Guarantor Financial Information".
_NOTE_HEADING = re.compile(r"^\s*(?:note\s+\d+|\d{1,2}\s*[.:\u2013\u2014-])", re.IGNORECASE)


def _lines(texts: Iterable[str]) -> list[str]:
    return [t.strip() for t in texts if t and t.strip() and len(t.strip()) <= MAX_HEADING]


# Words of a question that name a table other than the registrant's statements: a segment, a
# quarter, another entity. A question naming none is about the company's consolidated figures.
_ASKED = {
    Scope.OTHER_ENTITY: re.compile(
        r"\bguarantors?\b|\bobligors?\b|\bparent\s+(?:company|only)\b|\bsubsidiar(?:y|ies)\b|"
        r"\bvariable\s+interest\b|\bjoint\s+ventures?\b|\binvestees?\b",
        re.IGNORECASE,
    ),
    Scope.SEGMENT: re.compile(r"\bsegments?\b|\bdivisions?\b|\bgeographic|\bregions?\b", re.IGNORECASE),
    Scope.QUARTER: re.compile(r"\bquarters?\b|\bQ[1-4]\b|\b[1-4]Q\b|\bquarterly\b", re.IGNORECASE),
    Scope.SUMMARY: re.compile(r"\bselected\s+financial\s+data\b|\bfive[- ]year\b", re.IGNORECASE),
    Scope.ADJUSTED: re.compile(r"\badjusted\b|\bnon[- ]?gaap\b|\bpro\s+forma\b", re.IGNORECASE),
}


# The scopes every figure may read: the registrant's statements, and tables under no statement's
# title (a statement whose title its page does not carry).
DEFAULT_SCOPES = frozenset({Scope.PRIMARY, Scope.OTHER})


def asked_scopes(question: str) -> frozenset[Scope]:
    """The scopes of table a question may read its operands from: the registrant's statements and
    tables under no statement's title always; a segment's, a quarter's, another entity's, a
    summary's or an adjusted measure's only when the question names it."""
    named = {scope for scope, words in _ASKED.items() if words.search(question)}
    return DEFAULT_SCOPES | named
