"""Evidence coverage: a quote is shown only when its evidence mentions what the question names.

Unanswerable questions are usually twins of answerable ones with one name, year or figure
changed ("How many Tweets are attributed to Boeing?" beside "... to Lufthansa?"); a small model
still quotes the nearest passage. So a verified quote is checked against the question part:

- its **names** (each run of words that are names by themselves, `words.is_name`: capitalised
  where English would not need it, mixed-case or letter-digit spellings such as "SoC" and "3M";
  never an all-capitals acronym), **identifiers** (`EQ-314`), **years** and **figures**
  (numbers with separators or decimals, percentages, amounts of money) must each appear in the
  quoted sentence, its passage, the passage's heading path or its document's title (a year also
  in its effective date);
- its **appearance** words (a colour, "colour" where it names none, a typeface: "the green box",
  "the italic numerals"; `localqa.language.appearance`, the "visual" kind) must be written there
  too: localqa reads the documents' text, never colours, typefaces or pictures, so a quote answers
  what the green box says only when its evidence writes "green";
- when nothing of the question singles out passages (its names, identifiers, years and figures
  are not in the quote's evidence, and every word the candidates carry is in most of them), each
  word of the asking sentence that no quotable unit carries ("founded" in "Who founded the
  library?", where every passage shares "library") must be close in meaning to some unit (MiniLM
  cosine, `AnswerSettings.coverage_neighbour`).

Not terms, because the question uses them to frame, count or point: framing words ("list",
"mentioned", "format"), the words that ask what an acronym stands for ("stand for", "full form of":
`localqa.question.acronyms`), number words ("two"), the document's own parts and their numbers
("Section 3.3", "Table 2", "page 1", "the cover page"), a percentage the question compares
against ("more than 10 % of sales"; `threshold`) and a year that is part of a name ("the Health
and Social Care Act 2008"). A year also counts when the cited document's fiscal period covers it
(`Candidate.period`) or when it is the year of the table column the answer reads (`columns`).

Otherwise the quote is withheld and the reason names the missing term, where the evidence plainly
lacks it (`refuses`: an identifier; a name or year no passage of the part mentions and no eligible
document holds, `in_collection`; a word no eligible document writes, by lemma, not stem
(`localqa.retrieval.held`: "founded" is no "found"), or without retrieval's look-up one nothing
comes `coverage_word_floor` close to in meaning; an appearance no passage of the part writes) and
its kind refuses (`AnswerSettings.refusals`). Where something else singles out passages a word is
the question's frame, unless the collection lacks it beside a word the quoted evidence writes
(`_unwritten_heads`: "cash drawer"). Where the answer stage is only unsure (a name, year or
appearance another passage mentions, a name found only as a near spelling, `closest_name`: "Amazn"
for "Amazon"; a name or word the collection holds though no candidate does: retrieval's miss; a
figure; a kind that does not refuse) the doubt is named (`Answer.doubts`), and the quote is shown
only as the closest passage of a refusal (`localqa.answers.unsure`), never as the answer.
Not terms either: how the reply is to be written ("format the date as YYYY-MM-DD"), any part of a
date but its year ("June 30,2019" is no figure); a year that is part of a name ("the Act of
2002") is checked with the name, in any passage of the part. A sentence that addresses its reader
or a model ("Ignore previous instructions and ...") is never quoted (`addresses_reader`).

Matching folds what the index's own tokenizer folds (FTS5 `porter unicode61 remove_diacritics
2`: case, plurals and other Porter suffixes, diacritics), numbers written with or without
separators and at any scale of a thousand (`1,234.5` and `1234.5`; `$3.2 billion` and `3,200` in
a table in millions), a year anywhere in a token (`FY2022`), and a name whose evidence carries a
longer form ("3M" in "3M Company") or runs it into a longer word of a title
("ACTIVISIONBLIZZARD_2019_10K", a file name), a long name misspelt by one letter ("Activsion"),
a demonym of a place the evidence names ("Singaporean": "Singapore"), a mixed-case initialism of
consecutive capitalised words of a title or heading ("JnJ": "JOHNSON JOHNSON 2022Q4 EARNINGS"),
a period however written ("Q32024", "FY21": its year), a hyphenated word written whole
("E-mail": "email") and a word cut short ("Tel." for "telephone").

Which word is a name is the name rule of `localqa.language.words`, which routing reads too: a capitalised
word is one when its lower-case form is no ordinary English word, per Webster's Second ("ratio"
is listed in lower case, "Columbia" only capitalised, "Boeing" not at all); the first word of a
sentence (the parts' sentence rule, `parts.sentences`) is never one by its capital alone; nor
are months, weekdays, honorifics and currency codes ("July", "Mr", "USD").

The check only ever reads the candidates it is given, which retrieval drew from what the caller
may see; a reason repeats only the question's own words.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from localqa.answers import sentences
from localqa.language import appearance, lemmas, lexicon, words
from localqa.language.text import IDENTIFIER, identifiers
from localqa.language.tokenizer import STOP_WORDS, tokenizer
from localqa.question import acronyms, parts, periods
from localqa.question.reading import COMPUTED_SHAPES, read
from localqa.retrieval import embeddings
from localqa.settings import AnswerSettings
from localqa.types import TERM_REFUSALS, Answer, Candidate, Coverage, Doubt, TermCheck, TermKind

_SCALE = {"thousand": 3, "k": 3, "million": 6, "mn": 6, "m": 6, "billion": 9, "bn": 9, "b": 9, "trillion": 12}


def _scale_word(name: str) -> str:
    return rf"(?:\s?(?P<{name}>thousand|million|billion|trillion|mn|bn|[kmb])\b)?"


_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# Figures in a question: amounts of money, percentages, numbers with separators or decimals.
_FIGURE = re.compile(
    rf"(?P<money>[$€£¥])\s?(?P<a>{_NUMBER}){_scale_word('scale_a')}"
    rf"|(?<![\w.,])(?P<b>{_NUMBER})\s?(?P<percent>%|percent\b|per cent\b)"
    rf"|(?<![\w.,])(?P<c>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+\.\d+)(?![\w.,]\d){_scale_word('scale_c')}",
    re.IGNORECASE,
)
# Any number in the evidence, with a scale word after it when there is one.
_EVIDENCE_NUMBER = re.compile(rf"(?<![\d.])(?P<a>{_NUMBER}){_scale_word('scale')}", re.IGNORECASE)
# A reference to the document's own structure, a part and its number ("Section 3.3", "Table 2",
# "page 1", "Item 7A", "Part II", "pages 4-5"): a reader points at a place, and the text rarely
# repeats its own numbering. Never a year ("does the plan cover 2019").
_PART_NUMBER = rf"(?!{periods.YEAR_DIGITS}\b)(?:\d+(?:\.\d+)*[a-z]?\b|[ivxlc]+\b)"
_POINTER = re.compile(
    r"\b(?:" + "|".join(sorted(lexicon.DOCUMENT_PARTS, key=len, reverse=True)) + r"|pp?)(?:e?s)?\.?\s*"
    rf"(?:no\.\s*)?#?\s*{_PART_NUMBER}(?:\s*(?:,|and|or|to|-|\u2013)\s*{_PART_NUMBER})*",
    re.IGNORECASE,
)
# A comparison a figure follows ("more than 10 % of sales", "within roughly 5 % each year"): the
# figure is a threshold the question applies, not a fact the evidence states.
_COMPARISON = re.compile(
    r"(?:\b(?:more|less|greater|fewer|higher|lower|larger|smaller)\s+than|\bexceed(?:s|ed|ing)?|\bover"
    r"|\bunder|\babove|\bbelow|\bbeyond|\bat\s+(?:least|most)|\bwithin|\bup\s+to)"
    r"(?:\s+(?:roughly|about|approximately|around|nearly|almost|some))?\s*$",
    re.IGNORECASE,
)


_MONTH = "|".join(sorted(lexicon.MONTHS, key=len, reverse=True))


def _year_group(number: int) -> str:
    return rf"(?P<year{number}>(?:19|20)\d\d)"


# A date in any written form ("June 30, 2019", "June 30,2019", "30 June 2019", "2019-06-30",
# "06/30/2019"): never a figure ("30,2019" is no amount), its year the period asked about.
_DATE = re.compile(
    rf"\b(?:{_MONTH})\b\.?\s*\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*{_year_group(1)}(?!\d)"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b\.?\s*,?\s*{_year_group(2)}(?!\d)"
    rf"|\b{_year_group(3)}[-/.]\d{{1,2}}[-/.]\d{{1,2}}\b"
    rf"|\b\d{{1,2}}[-/.]\d{{1,2}}[-/.]{_year_group(4)}\b",
    re.IGNORECASE,
)
# How the reply is to be written ("format the date as YYYY-MM-DD", "rounded to two decimals", "in
# the format of a list", "MM/DD/YYYY"): an instruction, whose words no passage need carry.
_INSTRUCTION = re.compile(
    r"\b(?:format(?:ted)?|express(?:ed)?|round(?:ed)?)\s+(?:(?:the|your|this|that|it|each|all)\s+)?"
    r"(?:[a-z]+\s+)?(?:as|in|to|using)\b[^.?!;]*"
    r"|\b(?:in|as)\s+(?:the\s+|a\s+)?(?:format|form)\b[^.?!;]*"
    r"|(?-i:\b[YMD]{1,4}(?:[-/. ][YMD]{1,4}){1,2}\b)",
    re.IGNORECASE,
)
_TITLED = "|".join(sorted(lexicon.TITLED_NOUNS, key=len, reverse=True))
# A year that is part of a name besides `words.Run.titled_year` ("Act 2008"): "the Sarbanes-Oxley
# Act of 2002", "the 2008 Plan", "ISO 14001:2015". Checked with the name: any of the part's
# passages may write it (`Term.titled`), not only the quoted one.
_NAMED_YEAR = re.compile(
    rf"\b(?-i:(?=[A-Z]))(?:{_TITLED})\s+of\s+{_year_group(1)}\b"
    rf"|\b{_year_group(2)}\s+(?-i:(?:[A-Z][\w-]*\s+){{0,3}}(?=[A-Z]))(?:{_TITLED})\b"
    rf"|\b[A-Z]{{2,}}\s?\d+[:/-]{_year_group(3)}\b",
    re.IGNORECASE,
)


def _year_span(match: re.Match[str]) -> tuple[int, int]:
    name = next(k for k, v in match.groupdict().items() if k.startswith("year") and v is not None)
    return match.span(name)


def _blanked(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _dates_blanked(text: str) -> str:
    """`text` with each date replaced by spaces but its year: the year stays a year, no part of
    the date a figure."""

    def keep_year(match: re.Match[str]) -> str:
        start, end = _year_span(match)
        return " " * (start - match.start()) + text[start:end] + " " * (match.end() - end)

    return _DATE.sub(keep_year, text)


@dataclass(frozen=True)
class Term:
    """One thing the question part names, as written, with what it is matched by."""

    text: str
    kind: TermKind
    tokens: tuple[str, ...] = ()  # folded tokens (names, words); the words that carry an appearance
    value: Decimal | None = None  # figures
    titled: bool = False  # a year that is part of a name: checked with it, in any of the passages


@dataclass(frozen=True)
class Place:
    """Where evidence is read: its kind ("quote", "passage", "heading", "title", "effective date")
    and text."""

    kind: str
    text: str


# ---------------------------------------------------------------------------------------------
# The question's terms


def asking_sentences(part: str) -> str:
    """The sentences of a part that ask (`parts.asks`, with the parts' own sentence rule), or the
    whole part when none does: an instruction beside the question ("Answer in USD millions.")
    names nothing the evidence needs."""
    pieces = parts.sentences(part)
    asking = [p for p in pieces if parts.asks(p)]
    return " ".join(asking or pieces)


def question_terms(part: str) -> list[Term]:
    """The names, identifiers, years and figures of a question part, in order. Not terms: what the
    question points at (`_POINTER`: "Section 3.3", "Table 2"), how the reply is to be written
    (`_INSTRUCTION`: "format the date as YYYY-MM-DD"), a percentage it compares against
    (`threshold`: "more than 10 % of sales"), and any part of a date but its year (`_DATE`:
    "June 30,2019" is no figure). A period however written ("FY2022", "Q32024", "FY21", "fiscal
    2022"; `localqa.question.periods`) is its year. An appearance ("green", "italic";
    `appearance.appearances`) is a `visual` term. A year that is part of a name ("the Health and Social
    Care Act 2008", `words.Run.titled_year`; "the Sarbanes-Oxley Act of 2002", `_NAMED_YEAR`) is a
    `titled` year, checked with the name."""
    text = _blanked(_blanked(asking_sentences(part), _POINTER), _INSTRUCTION)
    named_years = [text[slice(*_year_span(m))] for m in _NAMED_YEAR.finditer(text)]
    text = _dates_blanked(_blanked(text, _NAMED_YEAR))
    terms: list[Term] = [Term(code, "identifier") for code in identifiers(text)]
    spans = [m.span() for m in IDENTIFIER.finditer(text)]
    for match in _FIGURE.finditer(text):
        value = _figure_value(match)
        if value is not None:
            spans.append(match.span())
            if not threshold(text, match):
                terms.append(Term(match.group(0).strip(), "figure", value=value))
    runs = words.name_runs(text, skip=(_FIGURE,))
    years = _years(text, spans, runs)
    terms += [Term(year, "year") for year in years]
    titled = [run.titled_year for run in runs if run.titled_year] + named_years
    terms += [Term(year, "year", titled=True) for year in dict.fromkeys(titled) if year not in years]
    terms += [_name(name) for run in runs for name in run.names()]
    terms += [Term(a.text, "visual", tokens=tuple(sorted(a.carriers))) for a in appearance.appearances(text)]
    seen: set[tuple[TermKind, str]] = set()
    unique = []
    for term in terms:
        key = (term.kind, term.text.casefold())
        if key not in seen:
            seen.add(key)
            unique.append(term)
    return unique


def _years(text: str, spans: list[tuple[int, int]], runs: list[words.Run]) -> list[str]:
    """The years of `text` outside `spans` (identifiers, figures), in order: each year token
    ("2022", "FY2022"), then the year of each period written otherwise ("Q32024", "FY21"). A year
    written only as part of a name is none."""

    def outside(match: re.Match[str]) -> bool:
        return not any(start < match.end() and match.start() < end for start, end in spans)

    written = Counter(m.group(1) for m in words.YEAR.finditer(text) if outside(m))
    titled = Counter(run.titled_year for run in runs if run.titled_year)
    years = [year for year, count in written.items() if count > titled[year]]
    for match in filter(outside, periods.MENTIONS.finditer(text)):
        years += [str(m.year) for m in periods.mentions(match.group(0)) if str(m.year) not in written]
    return list(dict.fromkeys(years))


def threshold(text: str, figure: re.Match[str]) -> bool:
    """Whether a percentage of the question is a threshold it applies: it follows a comparison
    ("more than 10 % of sales", "within roughly 5 % each year"). A count or amount after one
    ("exceed 700,000") is still a figure to find: where a question asks when or whether a level
    was passed, the evidence states that level."""
    return bool(figure.group("percent")) and _COMPARISON.search(text, 0, figure.start()) is not None


def _name(text: str) -> Term:
    return Term(text, "name", tokens=tuple(tokenizer().tokens(text)))


def _decimal(number: str) -> Decimal | None:
    try:
        return Decimal(number.replace(",", ""))
    except InvalidOperation:
        return None


def _figure_value(match: re.Match[str]) -> Decimal | None:
    number = match.group("a") or match.group("b") or match.group("c")
    value = _decimal(number)
    scale = match.group("scale_a") or match.group("scale_c")
    if value is None:
        return None
    if scale:
        value *= Decimal(10) ** _SCALE[scale.lower()]
    return value


# ---------------------------------------------------------------------------------------------
# Matching against the evidence


def _places(candidate: Candidate, quote: str) -> list[Place]:
    places = [Place("quote", quote), Place("passage", candidate.text)]
    if candidate.location.section:
        places.append(Place("heading", candidate.location.section))
    if candidate.title:
        places.append(Place("title", candidate.title))
    if candidate.location.effective:  # printed with every citation: "effective 2026-11-01"
        places.append(Place("effective date", candidate.location.effective.isoformat()))
    return places


def _period_places(candidate: Candidate, columns: Collection[int] = ()) -> list[Place]:
    """Where a year is read besides the text: the fiscal years the candidate's document covers
    (its period, `periods.facts`; "FY2022", both "FY2019 FY2020" for a year ending in January),
    and the years of the table columns an answer reads (`columns`)."""
    places = []
    if candidate.period is not None:
        years = sorted({year for year, _ in periods.facts(candidate.period)})
        places.append(Place("period", " ".join(f"FY{year}" for year in years)))
    if columns:
        places.append(Place("column", " ".join(f"FY{year}" for year in sorted(set(columns)))))
    return places


def year_covered(year: int, cited: Candidate, columns: Collection[int] = ()) -> str | None:
    """Where `year` is covered besides the text, as `TermCheck.found` says it: "period" when the
    cited passage's document covers that fiscal year, "column" when it is the year of a table
    column the answer reads (`columns`: the hook for selecting a table cell by fiscal year);
    None otherwise."""
    term = Term(str(year), "year")
    return next((p.kind for p in _period_places(cited, columns) if _mentioned_in(term, p)), None)


def mentions(term: Term, text: str, *, title: bool = False) -> bool:
    """Whether `text` mentions `term`, with the foldings of the module docstring. A `title` (the
    document's title and file-name words) may also run a name into a longer word."""
    if term.kind == "identifier":
        return term.text in identifiers(text)
    if term.kind == "year":  # in a token ("FY2022"), or a period written otherwise ("FY22")
        return term.text in words.YEAR.findall(text) or any(
            str(m.year) == term.text for m in periods.mentions(text)
        )
    if term.kind == "figure":
        assert term.value is not None
        return any(_same_figure(term.value, number) for number in _numbers(text))
    if term.kind == "visual":
        return appearance.carried(appearance.Appearance(term.text, frozenset(term.tokens)), text)
    found = _folded(text)
    said = words.plain(text).split()
    if all(_word_mentioned(word, found, said) for word in words.plain(term.text).split()):
        return True
    # Run together, as in file names: "ACTIVISIONBLIZZARD_2019_10K", "MGMRESORTS_2018_10K".
    joined = words.plain(term.text).replace(" ", "")
    if title and len(joined) >= RUN_TOGETHER_MIN and any(w.startswith(joined) for w in said):
        return True
    return _misspelt(joined, said)


def _word_mentioned(word: str, found: frozenset[str], said: Sequence[str]) -> bool:
    """One word of a name: as the index folds it, as the demonym of a word in the evidence
    ("Singaporean": "Singapore", "Indian": "India"), or misspelt by one letter."""
    if all(t in found for t in tokenizer().tokens(word)):
        return True
    if any(len(w) >= DEMONYM_STEM_MIN and word.startswith(w) and len(word) - len(w) <= 3 for w in said):
        return True
    return _misspelt(word, said)


# A name at least this long also counts at the start of a longer word of a title (a file name's
# run-together words); shorter ones would match by accident ("3M" in "3mm").
RUN_TOGETHER_MIN = 3
# A name's word also counts as a demonym ("-an", "-ian", "-ese", "-i") of an evidence word at least
# this long; shorter stems would match by accident.
DEMONYM_STEM_MIN = 5


def _misspelt(name: str, said: Sequence[str]) -> bool:
    """Whether one of the words `said`, or its start (a run-together file name), is `name` within
    one edit (`words.one_edit`)."""
    n = len(name)
    if n < words.MISSPELT_MIN:
        return False
    for word in said:
        if len(word) < n - 1:
            continue
        starts = [word] if len(word) <= n + 1 else [word[: n - 1], word[:n], word[: n + 1]]
        if any(words.one_edit(name, start) for start in starts):
            return True
    return False


def _mentioned_in(term: Term, place: Place) -> bool:
    if place.kind in ("period", "column") and term.kind != "year":
        return False
    if mentions(term, place.text, title=place.kind == "title"):
        return True
    return (
        term.kind == "name"
        and place.kind in ("title", "heading")
        and words.initialism_of(term.text, place.text)
    )


@lru_cache(maxsize=128)
def _folded(text: str) -> frozenset[str]:
    """The index tokenizer's tokens of `text` (each place is read once per term otherwise)."""
    return frozenset(tokenizer().tokens(text))


def _numbers(text: str) -> Iterable[Decimal]:
    for match in _EVIDENCE_NUMBER.finditer(text):
        value = _decimal(match.group("a"))
        if value is None:
            continue
        yield value
        scale = match.group("scale")
        if scale:
            yield value * Decimal(10) ** _SCALE[scale.lower()]


def _same_figure(wanted: Decimal, found: Decimal) -> bool:
    """Equal at some scale of a thousand: tables state their unit once, in a header."""
    if found == 0:
        return wanted == 0
    return any(found * Decimal(10) ** exponent == wanted for exponent in (0, 3, 6, 9, 12, -3, -6, -9))


def _written_names(text: str, *, titled: bool = False) -> Iterator[str]:
    """The words `text` writes as names: capitalised inside a sentence, or, at its start, no
    ordinary English word ("Being" opening a sentence is no name; "Amazon" is); in a heading or
    title (`titled`), which names what it is about, every capitalised word ("Riverside")."""
    for match in words.WORD.finditer(text):
        word = match.group(0)
        if not word[:1].isupper() or any(ch.isdigit() for ch in word):
            continue
        before = text[: match.start()].rstrip()
        inside = bool(before) and before[-1] not in _OPENERS
        if titled or inside or not words.ordinary_word(words.fold(word)):
            yield word


_OPENERS = ".!?:;\"'(\u201c\u2018["


def closest_name(name: str, candidates: Sequence[Candidate]) -> str | None:
    """The name the candidates' evidence writes that `name`, which it never writes, is most likely
    a typo of ("Amazon" for "Amazn", "Microsoft" for "Microsfot"), word by word
    (`words.closest_spelling`, by length): the names the index holds, as far as the caller may see
    them, are those of the passages, headings and titles retrieval gave the part. None when a word
    of the name has no such match, or when every word is written as it is (nothing misspelt)."""
    written = {
        w
        for c in candidates
        for place in _places(c, "")
        for w in _written_names(place.text, titled=place.kind in ("heading", "title"))
    }
    folded = {words.fold(w) for w in written}
    replaced, changed = [], False
    for word in name.split():
        if words.fold(word) in folded:
            replaced.append(word)
            continue
        near = words.closest_spelling(word, written)
        if near is None:
            return None
        replaced.append(near)
        changed = True
    return " ".join(replaced) if changed else None


# ---------------------------------------------------------------------------------------------
# The verdict


def check(
    part: str,
    quote: str,
    cited: Candidate,
    candidates: Sequence[Candidate],
    settings: AnswerSettings,
    columns: Collection[int] = (),
    unheld: Collection[str] | None = None,
) -> Coverage:
    """The coverage verdict for a quote from `cited`, among the part's `candidates`; `columns`:
    the fiscal years of the table columns the answer reads, each a year covered; `unheld`: the
    part's search terms no eligible passage holds (`PartResult.unheld`; None: not looked up), which
    say whether a name no candidate mentions is in the collection at all (`TermCheck.collection`)."""
    kinds = set(settings.coverage)
    checks: list[TermCheck] = []
    places = [*_places(cited, quote), *_period_places(cited, columns)]
    # The appearance words beside a named colour ("colored" of "the quote colored in green") are
    # no words to judge by meaning either: the colour is checked as written.
    named: set[str] = set(appearance.appearance_words(asking_sentences(part)))
    anchored: list[str] = []  # the question's terms the quote's evidence mentions
    for term in question_terms(part):
        named.update(_word_forms(term.text))
        where = next((p.kind for p in places if _mentioned_in(term, p)), None)
        if (
            where is None
            and " " in term.text
            and mentions(term, "\n".join(p.text for p in places), title=True)
        ):
            where = "evidence"  # the words of a name in different places: "Singaporean", "ISEP"
        # An appearance written in the evidence singles out no passage: "green" is as often a
        # street's or a setting's word ("Green St", "Default: 'green'") as the colour asked about.
        if where is not None and term.kind != "visual":
            anchored.append(term.text)
        if term.kind not in kinds:
            continue
        elsewhere = where is None and any(
            _mentioned_in(term, p)
            for c in candidates
            if c is not cited
            for p in (*_places(c, ""), *_period_places(c))
        )
        if term.titled and elsewhere:  # checked with the name, wherever the part's passages write it
            where = "other passages"
        closest, collection = None, None
        if where is None and not elsewhere and term.kind == "name":
            closest = closest_name(term.text, [cited, *candidates])
        if where is None and not elsewhere and term.kind in ("name", "year"):
            collection = in_collection(term.text, unheld)
        checks.append(
            TermCheck(
                term=term.text,
                kind=term.kind,
                found=where,
                elsewhere=elsewhere,
                closest=closest,
                collection=collection,
            )
        )
    checks = _several(checks)
    note = None
    if "word" in kinds:
        judged, note = _distinctive_words(part, candidates, named, anchored, settings, unheld)
        judged += _unwritten_heads(part, candidates, judged, note, unheld)
        checks += judged
    return Coverage(terms=tuple(checks), note=note)


def in_collection(name: str, unheld: Collection[str] | None) -> bool | None:
    """Whether some eligible document holds `name` (a name, a year or a word): each of its search
    terms (as the index stems them) is held by some eligible passage, i.e. none is `unheld`
    ("ProgramFC" in a paper whose passage retrieval missed; not "Lebron Brennan" where only
    "Brennan" is written; a year as a word of its own, "2016", not "FY2016": a year no candidate
    mentions in any form and no document writes alone is taken as lacking). None when retrieval
    did not look (`unheld` None)."""
    if unheld is None:
        return None
    return not any(term in unheld for term in tokenizer().terms(name))


def _several(checks: list[TermCheck]) -> list[TermCheck]:
    """A question that compares or totals several names or several years ("How many more Tweets
    are attributed to Germanwings than Lufthansa?", "the FY2019 - FY2020 revenue growth", "a 3
    year average from FY2018 to FY2020") is answered from evidence that names each, row by row or
    column by column, and a quote is one sentence or row: when the quote's evidence mentions one
    of them, each other one of that kind counts where another of the part's passages mentions it
    ("other passages"). One missing from every passage is still missing ("than Boeing")."""
    for kind in ("name", "year"):
        several = [c for c in checks if c.kind == kind]
        if len(several) >= 2 and any(c.found for c in several):
            checks = [
                c.model_copy(update={"found": "other passages"}) if c.kind == kind and c.elsewhere else c
                for c in checks
            ]
    return checks


def _distinctive_words(
    part: str,
    candidates: Sequence[Candidate],
    named: set[str],
    anchored: list[str],
    settings: AnswerSettings,
    unheld: Collection[str] | None = None,
) -> tuple[list[TermCheck], str | None]:
    """The asking sentence's words that no quotable unit of any candidate carries, judged by their
    closeness in meaning to the units, when nothing else of the question singles out passages.

    What singles out passages: a name, identifier, year or figure of the question that the quote's
    evidence mentions (`anchored`; an identifier always is, retrieval's identifier channel let
    through only the passages that carry it), or a question word carried by at most half of the
    candidates (by their units, heading path or title). Then retrieval matched the question on
    what it is about, and a missing word is its frame ("how often", "fixed asset turnover"). When
    nothing does ("library" in every handbook passage), a missing word is what the question is
    about ("founded").

    A word is carried in its own form, up to case, diacritics and a plural ending: Porter stemming,
    which retrieval matches with, makes "founded" the "found" of "if a lost item is found".
    """
    asked = asked_words(part)
    units = {id(c): sentences.units(c.text, c.location.kind) for c in candidates}
    texts = {id(c): [*units[id(c)], *(p.text for p in _places(c, "")[2:])] for c in candidates}
    carries = [set().union(*(_word_forms(t) for t in texts[id(c)])) for c in candidates]
    # Read in the whole passage: a sentence splitter ends a unit at "Tel." and loses what follows.
    cut = [
        set().union(_abbreviations(c.text), *(_abbreviations(t) for t in texts[id(c)])) for c in candidates
    ]
    shortened = words.abbreviations(asking_sentences(part))
    held = {
        w: sum(_carried(w, found, short, w in shortened) for found, short in zip(carries, cut, strict=True))
        for w in asked
    }
    specific = anchored + [w for w in asked if 0 < held[w] <= len(candidates) / 2]
    missing = [w for w in asked if not held[w] and words.singular(w) not in named]
    if not missing:
        return [], None
    if specific:
        return [], f'words no passage carries were not judged: "{specific[0]}" singles out passages'
    every = [u for c in candidates for u in units[id(c)]]
    if not embeddings.is_available():
        # Nothing of the question outweighs the word and nothing can come close to it in meaning:
        # it is missing, as the full install finds "founded" in "Who founded the library?".
        note = "words no passage carries were judged by their form only (embeddings not installed)"
        return [
            TermCheck(term=w, kind="word", found=None, collection=in_collection(w, unheld)) for w in missing
        ], note
    vectors = embeddings.embed(missing + every)
    similarities = vectors[: len(missing)] @ vectors[len(missing) :].T
    checks = []
    for row, word in zip(similarities, missing, strict=True):
        best = float(row.max()) if len(every) else 0.0
        found = "meaning" if best >= settings.coverage_neighbour else None
        checks.append(
            TermCheck(
                term=word,
                kind="word",
                found=found,
                similarity=round(best, 3),
                collection=in_collection(word, unheld),
            )
        )
    return checks, None


def _unwritten_heads(
    part: str,
    candidates: Sequence[Candidate],
    judged: Sequence[TermCheck],
    note: str | None,
    unheld: Collection[str] | None,
) -> list[TermCheck]:
    """Where the word rule did not judge (something of the question singles out passages), the
    asked words no eligible document writes (`in_collection`, by lemma) in a pair of asked words
    with one the part's passages (their text, headings or titles) write, the first of them
    singular and the lacking one able to name a thing (`lemmas.can_name`: two nouns naming one
    thing, not a noun and its verb, "the report come from"): the question names a kind of the
    thing the evidence speaks of that the collection never mentions ("cash drawer" beside "Cash
    is accepted at the front desk only.", "closing shift" beside "Items returned after closing are
    checked in the next morning.", whichever sentence is quoted). A
    frame word the collection lacks stands beside stop words, a code or nothing ("How often is
    ...", "What does POL-21 require for ...", "when travelling"), or compares (`lemmas.degree`:
    "the highest price"), and is not judged."""
    if unheld is None or judged or note is None or not note.startswith(_NOT_JUDGED):
        return []
    # A part of a computed shape names what is computed ("gross margin", "in total"), which the
    # evidence writes as line items and cells, never by that name: not judged so.
    if read(part).shape in COMPUTED_SHAPES:
        return []
    # A comparative or superlative says how the question compares ("the highest price"); a modal
    # verb the stop words lack ("How many times may a loan be renewed?") names nothing.
    asked = {w for w in asked_words(part) if not lemmas.degree(w) and w not in _MODALS}
    said = words.plain(words.whole(asking_sentences(part))).split()
    evidence = [lemmas.written(place.text) for c in candidates for place in _places(c, "")[1:]]

    def written(word: str) -> bool:
        return any(place.writes(word) for place in evidence)

    def names_with(a: str, b: str) -> str | None:
        """Of two consecutive asked words that name one thing, the one the evidence lacks where the
        other is written: a noun or adjective, then a noun ("cash drawer", "closing shift", "legal
        team", "HR director"); the lacking one a dictionary word (`lemmas.can_name`); never a verb
        and its particle or object ("bring back"), nor a plural and the verb after it ("revenues
        fell")."""
        if written(a) == written(b):
            return None
        if written(a):  # the lacking word the head: a noun after a singular word naming with it
            return b if words.singular(a) == a and lemmas.may_name(a) and lemmas.can_name(b) else None
        return a if lemmas.can_name(a, modifier=True) and lemmas.may_name(b) else None

    pairs = [(a, b) for a, b in itertools.pairwise(said) if a in asked and b in asked]
    beside = [w for w in (names_with(a, b) for a, b in pairs) if w is not None]
    lacking = [w for w in dict.fromkeys(beside) if in_collection(w, unheld) is False]
    return [TermCheck(term=w, kind="word", found=None, collection=False) for w in lacking]


_NOT_JUDGED = "words no passage carries were not judged"
_MODALS = frozenset({"may", "might", "need", "ought", "dare"})


def asked_words(part: str) -> list[str]:
    """The words of a part's asking sentences the word rule may judge, folded, each once, a
    hyphenated word written whole ("email"): not a lone letter ("Retail's"), not stop words, not
    words with a digit (years, figures, codes and names, "fy2019", "3m": checked as such), not
    what the question points at (`_POINTER`), not how the reply is to be written
    (`_INSTRUCTION`), not a date's month (`_DATE`), not its framing (`framing`), and not the
    words that ask what an acronym stands for ("stand for", "full form of": `acronyms.cue_blanked`)."""
    asking = acronyms.cue_blanked(asking_sentences(part))
    text = _dates_blanked(_blanked(_blanked(asking, _POINTER), _INSTRUCTION))
    return [
        w
        for w in dict.fromkeys(words.plain(words.whole(text)).split())
        # A lone letter is no word: the "s" of "Acme Retail's", the "t" of "don't".
        if len(w) > 1 and w not in STOP_WORDS and not any(c.isdigit() for c in w) and not framing(w)
    ]


def framing(word: str) -> bool:
    """Whether a question's word frames, counts or points rather than says what it asks about:
    the reply's form and the document's acts ("list", "format", "mentioned"), orders ("second"),
    the document's own parts ("page", "section", "table", "cover"; `localqa.language.lexicon`) and number
    words ("two", "dozen"): no passage need carry it."""
    single = words.singular(word)
    return (
        single in lexicon.FRAMING_WORDS
        or single in lexicon.DOCUMENT_PARTS
        or word in lexicon.FRAMING_WORDS
        or sentences.states_quantity(word)
    )


def _carried(word: str, found: frozenset[str] | set[str], short: set[str], cut_in_question: bool) -> bool:
    """Whether a passage whose words are `found` and whose cut-short words are `short` carries a
    question's `word`: in its own form (`_word_forms`), cut short in the passage ("Tel.":
    "telephone"), or, cut short in the question, in full in the passage."""
    single = words.singular(word)
    if single in found or any(words.abbreviates(s, word) or words.abbreviates(s, single) for s in short):
        return True
    return cut_in_question and any(words.abbreviates(word, f) for f in found)


@lru_cache(maxsize=128)
def _word_forms(text: str) -> frozenset[str]:
    """The words of `text` as the word rule compares them (`words.plain`, then `words.singular`),
    each hyphenated word also written whole ("E-mail": "email")."""
    return frozenset(words.singular(w) for w in [*words.plain(text).split(), *words.compounds(text)])


@lru_cache(maxsize=128)
def _abbreviations(text: str) -> frozenset[str]:
    return frozenset(words.abbreviations(text))


def judge(
    part: str,
    answer: Answer,
    candidates: Sequence[Candidate],
    settings: AnswerSettings,
    columns: Collection[int] = (),
    unheld: Collection[str] | None = None,
) -> Answer:
    """`answer` with its coverage verdict; a verified quote whose evidence misses a term of the
    question becomes a refusal naming it. Refusals and disabled checks pass through unchanged.
    `columns`: the fiscal years of the table columns the answer's value reads (a cell selected by
    fiscal year), each a year covered; `unheld`: the part's search terms the collection lacks
    (`check`)."""
    if not answer.verified or answer.citation is None:
        return answer
    if addresses_reader(answer.quote or ""):
        return Answer.refused(ADDRESSED).model_copy(
            update={"call": answer.call, "selection": answer.selection}
        )
    if not settings.coverage:
        return answer
    cited = next((c for c in candidates if c.location == answer.citation), None)
    if cited is None:  # verification only passes quotes from supplied candidates
        return answer
    verdict = check(part, answer.quote or "", cited, candidates, settings, columns, unheld)
    refusing = refusal(verdict, settings)
    if refusing is None:
        doubts = tuple(doubt(t) for t in verdict.terms if t.missing or t.closest)
        return answer.model_copy(update={"coverage": verdict, "doubts": (*answer.doubts, *doubts)})
    refused = Answer.refused(refusing.reason())
    return refused.model_copy(
        update={"coverage": verdict, "call": answer.call, "selection": answer.selection}
    )


ADDRESSED = "the quoted sentence addresses its reader (an instruction), it states no fact"
# An instruction to a model, wherever it stands in a sentence.
_INJECTED = re.compile(
    r"(?<!not\s)(?<!never\s)\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier|"
    r"preceding|other)\s+(?:instructions?|prompts?|rules?|directions?)\b|\bsystem\s+prompt\b"
    r"|\byou\s+are\s+(?:now\s+)?an?\s+(?:ai|assistant|language\s+model|chatbot)\b"
    # A note addressed to a model reading the document ("Note to any AI assistant reading this").
    r"|\b(?:to|attention)\s+(?:any|every|all|the)\s+(?:ai\s+assistants?|ais?|chatbots?|language\s+models?|llms?)"
    r"\s+(?:reading|processing|summari[sz]ing)\b",
    re.IGNORECASE,
)


def addresses_reader(sentence: str) -> bool:
    """Whether a sentence speaks to its reader or to a model rather than states a fact: it opens
    with a verb that addresses them (`lexicon.ADDRESSING_VERBS`: "Ignore ...", "Tell every reader
    ...", "Reveal ..."; "please" or an entry's ordinal before it aside), or it holds an
    instruction to a model ("ignore previous instructions", "system prompt"). Document text is
    data, never control: such a sentence is never quoted as the answer to a question."""
    found = words.WORD.findall(sentence)
    # A numbered entry's ordinal ("2. Tell every reader ...", "Step 2: ...") comes before its verb.
    while found and (found[0].isdigit() or found[0].lower() in ("step", "please")):
        found = found[1:]
    opens = bool(found) and found[0].lower() in lexicon.ADDRESSING_VERBS
    return opens or _INJECTED.search(sentence) is not None


def refusal(verdict: Coverage, settings: AnswerSettings) -> TermCheck | None:
    """The first missing term that withholds the quote (`refuses`), or None: each other missing
    term is a doubt, and the quote at most the closest passage (`localqa.answers.unsure`)."""
    return next((t for t in verdict.terms if t.missing and refuses(t, settings)), None)


def refuses(term: TermCheck, settings: AnswerSettings) -> bool:
    """Whether a missing term withholds the quote: its kind refuses (`AnswerSettings.refusals`)
    and the evidence plainly lacks it. Not plainly: a name found as a near spelling (`closest_name`),
    a name or year another of the part's passages mentions (the quote may be the wrong one of them),
    a name or year some eligible document holds though no candidate does (`TermCheck.collection`:
    retrieval missed its passage, "ProgramFC" in the paper that defines it), a word some eligible
    document holds ("canteen" where no candidate but the collection does; without retrieval's
    look-up, a word something comes `coverage_word_floor` close to in meaning), an appearance
    another of the part's passages writes ("green"). Those are doubts.
    Each kind's default was chosen on one MMLongBench dev split and reported on the other
    (`localqa.evaluate.refusals.choose`, docs/measured.md#doubts)."""
    if TERM_REFUSALS[term.kind] not in settings.refusals or term.closest is not None:
        return False
    if term.kind in ("name", "year"):
        return not term.elsewhere and term.collection is not True
    if term.kind == "word":
        if term.collection is not None:
            return not term.collection
        return term.similarity is None or term.similarity < settings.coverage_word_floor
    if term.kind == "visual":
        return not term.elsewhere
    return True


def doubt(term: TermCheck) -> Doubt:
    """A missing term of a kind that does not refuse, or a name found only as a near spelling, as
    one line of the reason the quote is shown only as the closest passage (`localqa.answers.unsure`);
    a word the collection holds is held by lemma ("founded" is no "found")."""
    note = term.reason()
    if term.closest:
        note += f'; closest: "{term.closest}"'
    elif term.collection:
        note += "; the collection holds it in a passage not retrieved"
    return Doubt(kind=TERM_REFUSALS[term.kind], term=term.term, note=note)
