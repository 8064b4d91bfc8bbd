"""Words: how questions, passages and document names are read word by word, in one place, so that
routing (which documents a question names, `localqa.question.routing`) and evidence coverage (which terms
the evidence must mention, `localqa.answers.coverage`) read a question alike.

- **Folding** (`fold`, `plain`): case and diacritics, as the index's FTS5 `unicode61
  remove_diacritics 2` tokenizer folds them.
- **Patterns**: a word (`WORD`: letters and digits, joined inside by "&" or an apostrophe: "R&D",
  "AT&T", "Macy's"), its possessive ending, and a year (`YEAR`: also inside a token, "FY2022",
  "ACTIVISIONBLIZZARD_2019_10K"; the digits are the period grammar's, `localqa.question.periods`).
- **Spelling variants**: a hyphenated word is also the word written whole (`compounds`, `whole`:
  "E-mail", "email"); a word cut short stands for the word it abbreviates (`abbreviations`,
  `abbreviates`: "Tel." for "telephone"); a long name misspelt by one letter is that name
  (`one_edit`, `misspellings`: "Activsion").
- **Inflection**: `singular` removes a plural ending ("policies", "taxes"); `base_forms` are the
  headwords a dictionary may list an inflected word under ("founded": "found").
- **Names**: which words of a question name something (`is_name`), and the runs of words written
  as names (`name_runs`), with a year written right after one ("the Care Act 2008").

The name rule. A word is *written as a name* when its spelling marks it: capitalised where a
sentence or phrase does not start ("Boeing"), all capitals ("AMCOR", "EBITDA"), mixed case ("JnJ",
"SoC", "iPhone") or letters with digits ("3M", "CONLL03"); and it is none of the words that never
name anything: numbers, years and periods ("2019", "Q2", "FY2022", "1st"), identifiers (EQ-314),
report types ("10-K", "8k"), single letters, stop words, legal forms ("Inc"), currency codes,
months, weekdays and honorifics (`localqa.language.lexicon`). A word written as a name **is a name** by
itself when

- it has digits or mixed case ("3M", "JnJ"): no English word is spelt so;
- it is capitalised and no ordinary English word: Webster's Second (the `english-words` package's
  `web2` list, which keeps proper nouns capitalised) does not list it, or the form it is inflected
  from, in lower case: "Boeing" and "Lufthansa" are names, "Health", "Block" and "Martin" are not;
- **never when it is an acronym** (all capitals, no digit): an acronym names a measure as often
  as an organisation (EBITDA, CAGR, DPO and R&D beside ADBE and AMCOR in the dev questions), so
  its capitals alone say nothing.

What each caller makes of it: coverage requires each run of names in the evidence ("Lebron
Brennan"); routing matches a run of words written as names against document names as a whole
("Consumer Health", "AMCOR", "Block") and each of its words alone only when it is a name, so a
common word inside an organisation's name never routes by itself.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import OSA

from localqa.language import lexicon
from localqa.language.text import IDENTIFIER, identifiers
from localqa.language.tokenizer import STOP_WORDS
from localqa.question import parts, periods

APOSTROPHES = "'\u2019"
# Letters and digits, as a word's pieces ("AT", "T" of "AT&T"; a file name's words).
ALNUM = re.compile(r"[^\W_]+")
WORD = re.compile(rf"[^\W_]+(?:[&{APOSTROPHES}][^\W_]+)*")
POSSESSIVE = re.compile(rf"[{APOSTROPHES}]s$")
# A year, also inside a token ("FY2022", "2023Q4", "_2019_"), but not inside a longer number or a
# figure ("12019", "2,019", "2019.5").
YEAR = re.compile(rf"(?<![\d.,])({periods.YEAR_DIGITS})(?![\d]|,\d|\.\d)")
# An ordinal ("1st", "22nd"): an order, not a name.
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)
# Report types as a question or a file name writes them ("10-K", "8k", "annual report").
REPORT_TYPE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(f"(?P<f{i}>{rx})" for i, rx in enumerate(lexicon.REPORT_TYPES.values()))
    + r")(?![\w-])",
    re.IGNORECASE,
)
# Where, inside a sentence (`parts.sentences`), a phrase starts whose first word may be capitalised:
# after a colon or semicolon, and a quoted or bracketed phrase.
_PHRASE = re.compile(r"(?<=[:;])\s+|\s*[\"(\[\u201c\u201d\u2018\u2019]\s*")
# What may join the words of one name: spaces, "&" ("Johnson & Johnson"), a hyphen ("Coca-Cola").
_JOINS = re.compile(r"[\s&-]*")
# What is never read as part of a name: identifiers, periods, years and report types.
_NOT_NAMES = (IDENTIFIER, periods.MENTIONS, YEAR, REPORT_TYPE)


# --- folding ----------------------------------------------------------------------------------


def fold(text: str) -> str:
    """Lower case, diacritics removed ("Müller": "muller")."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def plain(text: str) -> str:
    """`text` folded, its words separated by single spaces (punctuation dropped)."""
    return " ".join(ALNUM.findall(fold(text)))


# --- spelling variants ------------------------------------------------------------------------

# A word written with hyphens is also the word written whole ("E-mail": "email").
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+")
# A word cut short: three letters or more before a full stop that ends no sentence (a digit,
# a lower-case word or a bracket follows: "Tel. 6516", "Dept. of"), or three before a colon, as
# a form labels a field ("Tel:", "Fax:").
_ABBREVIATED = re.compile(r"(?<![\w.])(?:([^\W\d_]{3,})\.(?=\s*[\d(a-z])|([^\W\d_]{3}):)")
# What a word cut short leaves out: at least this many letters ("tel" of "telephone"); less is an
# inflection ("change" of "changed", "quarter" of "quarterly").
_CUT_MIN = 3


def compounds(text: str) -> list[str]:
    """The hyphenated words of `text`, folded and written whole ("E-mail": "email")."""
    return [fold(m.group(0)).replace("-", "") for m in _COMPOUND.finditer(text)]


def whole(text: str) -> str:
    """`text` with its hyphenated words written whole ("E-mail address": "Email address")."""
    return _COMPOUND.sub(lambda m: m.group(0).replace("-", ""), text)


def abbreviations(text: str) -> set[str]:
    """The words `text` writes cut short (`_ABBREVIATED`), folded."""
    return {fold(m.group(1) or m.group(2)) for m in _ABBREVIATED.finditer(text)}


def abbreviates(short: str, word: str) -> bool:
    """Whether `short` (folded, written cut short) may stand for `word` (folded): it leaves out
    `_CUT_MIN` letters or more, starts with the same letter and keeps the rest of its letters in
    order ("tel": "telephone", "dept": "department", "mgr": "manager"; not "change": "changed")."""
    if len(short) < 3 or len(word) - len(short) < _CUT_MIN or short[0] != word[0]:
        return False
    letters = iter(word[1:])
    return all(c in letters for c in short[1:])


# --- misspellings ----------------------------------------------------------------------------

# A name at least this long also counts within one edit (insertion, deletion, substitution or
# transposition: "Activsion" for "Activision"). Twins differ by a whole name; short codes differ by
# one letter ("TACREV" and "TACRED", two datasets), so they never match approximately.
MISSPELT_MIN = 8


def one_edit(name: str, other: str) -> bool:
    """Whether `other` is `name` (folded, `MISSPELT_MIN` letters or more) within one edit."""
    return len(name) >= MISSPELT_MIN and OSA.distance(name, other, score_cutoff=1) <= 1


def misspellings(name: str, known: Iterable[str]) -> list[str]:
    """The words of `known` that are `name` within one edit (`one_edit`), `name` itself aside."""
    if len(name) < MISSPELT_MIN:
        return []
    return [
        other
        for other in known
        if abs(len(other) - len(name)) <= 1 and other != name and one_edit(name, other)
    ]


# A name the evidence never writes may be a typo of one it does ("Amazn" for "Amazon"): the edits
# allowed grow with the name's length, (shortest length, edits) in order; a shorter name is never
# matched approximately (codes and tickers differ by one letter: "TACREV", "TACRED"), and two
# companies' names one or two letters apart stay apart ("Ameren" and "Amgen": two edits in six
# letters). The match is shown to the reader as a doubt, never taken silently for a mention.
NEAR_SPELLING_EDITS: tuple[tuple[int, int], ...] = ((5, 1), (9, 2))


def near_spelling_edits(name: str) -> int:
    """The edits a name of this length may be from the evidence's word (`NEAR_SPELLING_EDITS`)."""
    return max((edits for length, edits in NEAR_SPELLING_EDITS if len(name) >= length), default=0)


def closest_spelling(name: str, written: Iterable[str]) -> str | None:
    """The one word of `written` (words the evidence writes as names, as written) that `name` is a
    typo of: the same first letter, within `near_spelling_edits` (optimal string alignment:
    a swapped pair is one edit), and nearer than any other; None when there is none, or a tie."""
    folded = fold(name)
    allowed = near_spelling_edits(folded)
    if not allowed:
        return None
    best: dict[int, set[str]] = {}
    for word in written:
        other = fold(word)
        if other == folded or not other or other[0] != folded[0] or abs(len(other) - len(folded)) > allowed:
            continue
        distance = OSA.distance(folded, other, score_cutoff=allowed)
        if distance <= allowed:
            best.setdefault(distance, set()).add(word)
    if not best:
        return None
    nearest = best[min(best)]
    if len({fold(w) for w in nearest}) != 1:
        return None
    return min(nearest, key=lambda w: (w.isupper(), w))  # "Amazon" rather than a title's "AMAZON"


# --- inflection -------------------------------------------------------------------------------


def singular(word: str) -> str:
    """A plural ending removed ("loans", "policies", "taxes"); other words unchanged."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plural_stem(noun: str) -> str:
    """What every form of a counted noun starts with, folded ("policies": "polic", "items":
    "item"): a count's noun is matched as this prefix ("policy", "policies")."""
    word = noun.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


# Endings a dictionary headword may have lost besides a plural's (`singular`), each with what
# replaces it: a lookup may try several ("stabilizes": "stabilize", "bureaus": "bureau").
_INFLECTIONS = (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))


def base_forms(word: str) -> Iterator[str]:
    """`word` and the headwords it may be inflected from: "tweets", "founded" and "sales" are
    listed as "tweet", "found", "sale". Candidates, not a stemmer: a form counts only where a
    dictionary has it."""
    yield word
    yield singular(word)
    for suffix, replacement in _INFLECTIONS:
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            yield word[: -len(suffix)] + replacement


def ordinary_word(word: str) -> bool:
    """Whether `word` is an ordinary English word: Webster's Second lists it (or the form it is
    inflected from) in lower case."""
    dictionary = _dictionary()
    return any(form in dictionary for form in base_forms(word.lower()))


_LOADING = threading.Lock()


def _dictionary() -> frozenset[str]:
    with _LOADING:
        return _load_dictionary()


@lru_cache(maxsize=1)
def _load_dictionary() -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(w for w in get_english_words_set(["web2"]) if w.islower())


# --- names ------------------------------------------------------------------------------------


def never_a_name(word: str) -> bool:
    """Whether `word` (possessive removed) is one of the words that never name anything, however
    written (the module docstring)."""
    letters = sum(c.isalpha() for c in word)
    if letters == 0 or len(word) < 2 or YEAR.fullmatch(word) or identifiers(word):
        return True
    if periods.MENTIONS.fullmatch(word) or periods.PERIOD_WORD.fullmatch(word) or _ORDINAL.fullmatch(word):
        return True
    if REPORT_TYPE.fullmatch(word):
        return True
    lower = word.lower()
    return (
        lower in STOP_WORDS
        or lower in lexicon.LEGAL_FORMS
        or lower in lexicon.MONTHS
        or lower in lexicon.WEEKDAYS
        or lower in lexicon.HONORIFICS
        or word.upper() in lexicon.CURRENCY_CODES
    )


def is_acronym(word: str) -> bool:
    """All capitals and no digit: "EBITDA", "ADBE", "R&D"."""
    return word.isupper() and not any(c.isdigit() for c in word)


def written_as_name(word: str, *, first: bool) -> bool:
    """Whether `word` (possessive removed) is spelt as a name, `first` when it opens a sentence
    or phrase (where a capital says nothing)."""
    if never_a_name(word):
        return False
    if any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]):
        return True
    return word[0].isupper() and not first


def is_name(word: str, *, first: bool) -> bool:
    """Whether `word` (possessive removed) names something by itself, `first` when it opens a
    sentence or phrase: the name rule of the module docstring."""
    if not written_as_name(word, first=first) or is_acronym(word):
        return False
    if any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]):
        return True
    return not ordinary_word(word)


@dataclass(frozen=True)
class Written:
    """A word written as a name: as written (possessive removed), where it stands in its run's
    text, whether it opens a sentence or phrase, and whether it is a name by itself (`is_name`,
    decided on first need: it reads the dictionary)."""

    text: str
    start: int
    first: bool

    @property
    def is_name(self) -> bool:
        return _is_name(self.text, self.first)


@lru_cache(maxsize=4096)
def _is_name(word: str, first: bool) -> bool:
    return is_name(word, first=first)


@dataclass(frozen=True)
class Run:
    """Consecutive words written as names, one name as the question writes it ("Lockheed
    Martin", "Johnson & Johnson"): `text` is that span of its sentence; `year` a year written
    right after it ("Care Act 2008", "Boeing 2019"), None when there is none."""

    words: tuple[Written, ...]
    text: str
    year: str | None = None

    def names(self) -> list[str]:
        """The runs of its words that are names by themselves, as written ("Lockheed" of
        "Lockheed Martin"; none of "Consumer Health")."""
        found: list[str] = []
        current: list[Written] = []
        for word in (*self.words, None):
            if word is not None and word.is_name:
                current.append(word)
            elif current:
                found.append(self.text[current[0].start : current[-1].start + len(current[-1].text)])
                current = []
        return found

    @property
    def titled_year(self) -> str | None:
        """Its year when the year is part of the name: after a last word that is no name by
        itself, as in the title of an act, a plan or an event ("the Health and Social Care Act
        2008", "Vision 2030"), where the evidence says "the Act"; after a name ("Boeing 2019
        revenue") a year is the period asked about."""
        last = self.words[-1]
        return self.year if self.year and not last.is_name and not is_acronym(last.text) else None


def name_runs(text: str, skip: Sequence[re.Pattern[str]] = ()) -> list[Run]:
    """The runs of words written as names in `text`, in order: words joined only by spaces, "&"
    or a hyphen; a sentence or phrase boundary (`parts.sentences`; a colon or semicolon, a quote
    or bracket), a possessive, any other character and whatever never names (identifiers,
    periods, years, report types, and what matches `skip`) end a run."""
    runs: list[Run] = []
    for sentence in parts.sentences(text):
        # Blanked with commas: positions are kept, and no run spans what was blanked.
        blanked = _blank(sentence, (*_NOT_NAMES, *skip))
        start = 0
        for boundary in (*_PHRASE.finditer(blanked), None):
            end = len(blanked) if boundary is None else boundary.start()
            runs += _runs(sentence, blanked, start, end)
            start = 0 if boundary is None else boundary.end()
    return runs


def _blank(text: str, patterns: Iterable[re.Pattern[str]]) -> str:
    """`text` with every match of `patterns` replaced by commas."""
    for pattern in patterns:
        text = pattern.sub(lambda m: "," * len(m.group(0)), text)
    return text


# A year right after a run, one space between ("Act 2008"), not the start of a longer token.
_YEAR_AFTER = re.compile(rf" ({periods.YEAR_DIGITS})(?![\w]|[.,]\d)")


def _runs(sentence: str, blanked: str, phrase_start: int, phrase_end: int) -> list[Run]:
    """The runs of one phrase of a sentence (`blanked[phrase_start:phrase_end]`; the sentence
    itself gives a year after a run)."""
    runs: list[Run] = []
    run: list[Written] = []
    start = end = 0

    def close() -> None:
        year = _YEAR_AFTER.match(sentence, end)
        runs.append(Run(tuple(run), sentence[start:end], year.group(1) if year else None))
        run.clear()

    for position, match in enumerate(WORD.finditer(blanked, phrase_start, phrase_end)):
        raw = match.group(0)
        word = POSSESSIVE.sub("", raw)
        if run and not _JOINS.fullmatch(blanked, end, match.start()):
            close()
        if written_as_name(word, first=position == 0):
            if not run:
                start = match.start()
            run.append(Written(word, match.start() - start, position == 0))
            end = match.start() + len(word)
            if word != raw:  # a possessive ends the name: "Boeing's Commercial Airplanes"
                runs.append(Run(tuple(run), sentence[start:end]))
                run.clear()
        elif run:
            close()
    if run:
        close()
    return runs


def initialism_of(name: str, text: str) -> bool:
    """Whether `name`, a mixed-case initialism ("JnJ", "AmEx", "SoC": its capitals are the
    initials), stands for consecutive capitalised words of `text`, connectives skipped. Read only in
    a document's title, heading or file name, where it names its subject in full ("JOHNSON JOHNSON
    2022Q4 EARNINGS"): coverage and routing (`localqa.question.routing`) both read it here; an
    all-capitals acronym is no name by itself (`is_name`)."""
    capitals = initialism_capitals(name)
    return capitals is not None and capitals in initials(text)


def initialism_capitals(name: str) -> str | None:
    """The capitals of `name` when it is written as a mixed-case initialism ("JnJ": "JJ"), else None."""
    capitals = "".join(c for c in name if c.isupper())
    if len(capitals) < 2 or name.isupper() or not name.isalpha():
        return None
    return capitals


def initials(text: str) -> set[str]:
    """The initials of every run of two or more consecutive capitalised words of `text`,
    connectives skipped ("JOHNSON JOHNSON 2022Q4 EARNINGS": "JJ", "JJ2", "JJ2E", ...): what a
    mixed-case initialism may stand for there."""
    found = [w for w in ALNUM.findall(text) if w.casefold() not in lexicon.CONNECTIVES]
    runs: set[str] = set()
    for start in range(len(found)):
        letters = ""
        for word in found[start:]:
            if not word[0].isupper():
                break
            letters += word[0]
            if len(letters) >= 2:
                runs.add(letters)
    return runs
