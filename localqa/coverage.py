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
- when nothing of the question singles out passages (its names, identifiers, years and figures
  are not in the quote's evidence, and every word the candidates carry is in most of them), each
  word of the asking sentence that no quotable unit carries ("founded" in "Who founded the
  library?", where every passage shares "library") must be close in meaning to some unit (MiniLM
  cosine, `AnswerSettings.coverage_neighbour`).

Otherwise the quote is withheld and the reason names the missing term. Matching folds what the
index's own tokenizer folds (FTS5 `porter unicode61 remove_diacritics 2`: case, plurals and other
Porter suffixes, diacritics), numbers written with or without separators and at any scale of a
thousand (`1,234.5` and `1234.5`; `$3.2 billion` and `3,200` in a table in millions), a year
anywhere in a token (`FY2022`), and a name whose evidence carries a longer form ("3M" in "3M
Company") or runs it into a longer word of a title ("ACTIVISIONBLIZZARD_2019_10K", a file
name), a long name misspelt by one letter ("Activsion"), a demonym of a place the evidence
names ("Singaporean": "Singapore"), and a mixed-case initialism of consecutive capitalised words
of a title or heading ("JnJ": "JOHNSON JOHNSON 2022Q4 EARNINGS").

Which word is a name is the name rule of `localqa.words`, which routing reads too: a capitalised
word is one when its lower-case form is no ordinary English word, per Webster's Second ("ratio"
is listed in lower case, "Columbia" only capitalised, "Boeing" not at all); the first word of a
sentence (the parts' sentence rule, `parts.sentences`) is never one by its capital alone; nor
are months, weekdays, honorifics and currency codes ("July", "Mr", "USD").

The check only ever reads the candidates it is given, which retrieval drew from what the caller
may see; a reason repeats only the question's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from localqa import embeddings, lexicon, parts, sentences, words
from localqa.settings import AnswerSettings
from localqa.store.tokenizer import STOP_WORDS, tokenizer
from localqa.text import IDENTIFIER, identifiers
from localqa.types import Answer, Candidate, Coverage, TermCheck, TermKind

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


@dataclass(frozen=True)
class Term:
    """One thing the question part names, as written, with what it is matched by."""

    text: str
    kind: TermKind
    tokens: tuple[str, ...] = ()  # folded tokens (names, words)
    value: Decimal | None = None  # figures


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
    """The names, identifiers, years and figures of a question part, in order."""
    text = asking_sentences(part)
    terms: list[Term] = [Term(code, "identifier") for code in identifiers(text)]
    spans = [m.span() for m in IDENTIFIER.finditer(text)]
    for match in _FIGURE.finditer(text):
        value = _figure_value(match)
        if value is not None:
            terms.append(Term(match.group(0).strip(), "figure", value=value))
            spans.append(match.span())
    for match in words.YEAR.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            terms.append(Term(match.group(1), "year"))
    # The runs of names (`words.name_runs`); a figure is no part of one ("$3.2bn").
    terms += [_name(name) for run in words.name_runs(text, skip=(_FIGURE,)) for name in run.names()]
    seen: set[tuple[TermKind, str]] = set()
    unique = []
    for term in terms:
        key = (term.kind, term.text.casefold())
        if key not in seen:
            seen.add(key)
            unique.append(term)
    return unique


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


def mentions(term: Term, text: str, *, title: bool = False) -> bool:
    """Whether `text` mentions `term`, with the foldings of the module docstring. A `title` (the
    document's title and file-name words) may also run a name into a longer word."""
    if term.kind == "identifier":
        return term.text in identifiers(text)
    if term.kind == "year":
        return term.text in words.YEAR.findall(text)
    if term.kind == "figure":
        assert term.value is not None
        return any(_same_figure(term.value, number) for number in _numbers(text))
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
    if mentions(term, place.text, title=place.kind == "title"):
        return True
    return term.kind == "name" and place.kind in ("title", "heading") and initialism_of(term.text, place.text)


def initialism_of(name: str, text: str) -> bool:
    """Whether `name`, a mixed-case initialism ("JnJ", "AmEx", "SoC": its capitals are the
    initials), stands for consecutive capitalised words of `text`, connectives skipped. Read only in
    a title or heading, where a document names its subject in full ("JOHNSON JOHNSON 2022Q4
    EARNINGS"); an all-capitals acronym is no name by itself (`words.is_name`)."""
    capitals = "".join(c for c in name if c.isupper())
    if len(capitals) < 2 or name.isupper() or not name.isalpha():
        return False
    found = [w for w in words.ALNUM.findall(text) if w.casefold() not in lexicon.CONNECTIVES]
    n = len(capitals)
    return any(
        all(w[0].isupper() for w in found[i : i + n]) and "".join(w[0] for w in found[i : i + n]) == capitals
        for i in range(len(found) - n + 1)
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


# ---------------------------------------------------------------------------------------------
# The verdict


def check(
    part: str, quote: str, cited: Candidate, candidates: Sequence[Candidate], settings: AnswerSettings
) -> Coverage:
    """The coverage verdict for a quote from `cited`, among the part's `candidates`."""
    kinds = set(settings.coverage)
    checks: list[TermCheck] = []
    places = _places(cited, quote)
    named: set[str] = set()
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
        if where is not None:
            anchored.append(term.text)
        if term.kind not in kinds:
            continue
        elsewhere = where is None and any(
            _mentioned_in(term, p) for c in candidates if c is not cited for p in _places(c, "")
        )
        checks.append(TermCheck(term=term.text, kind=term.kind, found=where, elsewhere=elsewhere))
    note = None
    if "word" in kinds:
        judged, note = _distinctive_words(part, candidates, named, anchored, settings)
        checks += judged
    return Coverage(terms=tuple(checks), note=note)


def _distinctive_words(
    part: str, candidates: Sequence[Candidate], named: set[str], anchored: list[str], settings: AnswerSettings
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
    text = asking_sentences(part)
    # Words with a digit are years, figures, codes and names ("fy2019", "3m"): checked as such.
    asked = [
        w
        for w in dict.fromkeys(words.plain(text).split())
        if w not in STOP_WORDS and not any(c.isdigit() for c in w)
    ]
    units = {id(c): sentences.units(c.text, c.location.kind) for c in candidates}
    carries = [
        set().union(
            *(_word_forms(u) for u in units[id(c)]), *(_word_forms(p.text) for p in _places(c, "")[2:])
        )
        for c in candidates
    ]
    held = {w: sum(words.singular(w) in found for found in carries) for w in asked}
    specific = anchored + [w for w in asked if 0 < held[w] <= len(candidates) / 2]
    missing = [w for w in asked if not held[w] and words.singular(w) not in named]
    if not missing:
        return [], None
    if specific:
        return [], f'words no passage carries were not judged: "{specific[0]}" singles out passages'
    every = [u for c in candidates for u in units[id(c)]]
    if not embeddings.is_available():
        note = "words no passage carries were not judged by meaning (embeddings not installed)"
        return [TermCheck(term=w, kind="word", found=None, judged=False) for w in missing], note
    vectors = embeddings.embed(missing + every)
    similarities = vectors[: len(missing)] @ vectors[len(missing) :].T
    checks = []
    for row, word in zip(similarities, missing, strict=True):
        best = float(row.max()) if len(every) else 0.0
        found = "meaning" if best >= settings.coverage_neighbour else None
        checks.append(TermCheck(term=word, kind="word", found=found, similarity=round(best, 3)))
    return checks, None


@lru_cache(maxsize=128)
def _word_forms(text: str) -> frozenset[str]:
    """The words of `text` as the word rule compares them (`words.plain`, then `words.singular`)."""
    return frozenset(words.singular(w) for w in words.plain(text).split())


def judge(part: str, answer: Answer, candidates: Sequence[Candidate], settings: AnswerSettings) -> Answer:
    """`answer` with its coverage verdict; a verified quote whose evidence misses a term of the
    question becomes a refusal naming it. Refusals and disabled checks pass through unchanged."""
    if not answer.verified or answer.citation is None or not settings.coverage:
        return answer
    cited = next((c for c in candidates if c.location == answer.citation), None)
    if cited is None:  # verification only passes quotes from supplied candidates
        return answer
    verdict = check(part, answer.quote or "", cited, candidates, settings)
    missing = verdict.missing
    if missing is None:
        return answer.model_copy(update={"coverage": verdict})
    refused = Answer.refused(missing.reason())
    return refused.model_copy(
        update={"coverage": verdict, "call": answer.call, "selection": answer.selection}
    )
