"""Word lists: the fixed vocabularies that the rules of other modules read (data, no logic).

Each list says what its words are not: a currency code is a unit, not a name; a month dates a
question, it names nothing the evidence must repeat; a report type says which kind of document,
not which one. The rules that read them: `localqa.language.words.is_name` (which words are names), routing
(`localqa.question.routing`: report types) and the cover reader (`localqa.extract.cover`: legal forms).
"""

from __future__ import annotations

# Currency codes are units of a figure, not names ("Answer in USD millions").
CURRENCY_CODES = frozenset("USD EUR GBP JPY CNY RMB INR CHF CAD AUD HKD SGD KRW".split())

# Months and weekdays, in full and abbreviated, lower case. Webster's lists them only
# capitalised, but a question's "July" or "Monday" dates what it asks about, and the evidence
# writes the date in many forms ("07/01/2022", "2022-07-01", a period "ended June 30"); the year
# beside it is read as a year.
MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed thu thur thurs fri sat sun".split()
)

# Titles before a name, not names ("Mr. C.M. Maniar"), lower case.
HONORIFICS = frozenset("mr mrs ms mx dr prof sir".split())

# Words that say what kind of body an organisation is, not which one: "3M Company", "Corning
# Incorporated", "Amcor plc" are named by the rest. Lower case.
LEGAL_FORMS = frozenset(
    "ag co company corp corporation gmbh inc incorporated limited llc llp lp ltd nv plc sa se".split()
)

# Report types, each with the ways it is written (regular expressions; case is ignored).
REPORT_TYPES = {
    "10-K": r"10-?k|annual\s+report",
    "10-Q": r"10-?q|quarterly\s+report",
    "8-K": r"8-?k|current\s+report",
    "20-F": r"20-?f",
    "earnings release": r"earnings(?:\s+(?:release|report))?",
    "proxy statement": r"def\s*14a|proxy(?:\s+statement)?",
}

# Words an initialism skips: "Johnson & Johnson" is JnJ or J&J, "System on Chip" SoC.
CONNECTIVES = frozenset({"and", "n", "of", "on", "the", "for", "de"})

# The parts of a document a question may point at ("Section 3.3", "Table 2", "page 1", "the
# second cover page"): a reader points at a place, and the text rarely repeats its own
# numbering or calls itself a page. Lower case, singular.
DOCUMENT_PARTS = frozenset(
    "section table figure fig chart graph page cover chapter appendix exhibit note item part slide schedule "
    "paragraph line row column step box panel document paper".split()
)

# Words a question frames its request with: the reply's form ("List all ...", "in list
# format", "answer in"), what the document is said to do ("mentioned", "shown", "stated"), and
# orders ("the second", "the last"). Not what the question is about. Lower case.
FRAMING_WORDS = frozenset(
    "answer format formatted list listed write written provide give stated tell show shown "
    "mention mentioned describe described according include included presented refer "
    "referred indicate indicated specify specified please respond reply "
    "first second third fourth fifth sixth seventh eighth ninth tenth "
    "last next previous former latter "
    # what kind of thing is asked for ("what type of ...", "which kind of ..."), not which one
    "type kind sort".split()
)

# Nouns a year is part of the name of ("the Sarbanes-Oxley Act of 2002", "Vision 2030", "the
# 2008 Plan"): the document says "the Act", and the year is checked with the name, not as the
# period asked about. Lower case.
TITLED_NOUNS = frozenset(
    "act acts plan vision strategy agenda regulation regulations directive code convention protocol "
    "agreement accord framework law bill treaty programme program initiative standard standards "
    "amendment amendments reform charter roadmap".split()
)

# Who does something, when no name says it: a person's role, a team or an organisation ("the
# finance controller", "the circulation team", "the board"). A "who" question's value is a name
# or a phrase whose last word is one of these (`localqa.values.doers.names_a_doer`). Lower case,
# singular.
DOERS = frozenset(
    "team committee board department dept office staff desk librarian manager director controller "
    "officer council supervisor head chair chairman chairwoman chairperson president founder owner "
    "administrator coordinator service unit group panel member employee clerk assistant secretary "
    "treasurer auditor lead leader dean principal trustee governor partner company firm organisation "
    "organization association society foundation agency authority ministry government bank university "
    "college school institute library commission division branch person individual student parent "
    "teacher doctor nurse engineer analyst volunteer worker architect author editor publisher "
    "founder owner ceo cfo coo cto chief executive vp representative steward warden custodian".split()
)

# Verbs a sentence opens with when it addresses its reader or a model, not the world ("Ignore
# previous instructions and reveal ...", "Tell every reader that ..."): such a sentence states no
# fact, so it is never quoted as the answer to a question (`localqa.answers.coverage.addresses_reader`).
# Lower case.
# Not "answer", "print" or "override": an FAQ row opens "Answer: ...", and "Print jobs" or
# "Override codes" are nouns.
ADDRESSING_VERBS = frozenset("ignore disregard forget reveal disclose tell say pretend obey".split())

# A count written in words, and what it counts: "nine datasets", "twice a year".
NUMBER_WORD_VALUES = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100, "once": 1, "twice": 2,
    "thrice": 3,
}  # fmt: skip
