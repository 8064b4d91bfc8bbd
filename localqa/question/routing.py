"""Which document is a question about? A document-level match between what a question part names
and each eligible document's own names, so that "3M's FY2022 capital expenditure" is searched
mainly in 3M's filing for fiscal 2022 rather than in every filing that mentions capital
expenditure.

What a document is called: its file name (`ACTIVISIONBLIZZARD_2019_10K.pdf`; words glued
together or in CamelCase are read both ways), its catalog series, title and version, the title
found on its first page and the organisation its cover names (`Found`), which a mixed-case
initialism may abbreviate ("JnJ"). What it covers: its
period (the catalog's, else its cover's; `localqa.question.periods`), or else the years in its names; and
its report type (10-K, 10-Q, 8-K, an earnings release), from its names or its period.

What a question names: runs of words written as names (`words.name_runs`: capitalised inside a
sentence, upper case, mixed case, or letters mixed with digits: "Lockheed Martin", "AMCOR", "3M",
"JnJ"), each run glued together ("Activision Blizzard" finds `ACTIVISIONBLIZZARD`) and word by
word, where a word that is no name by itself (`words.is_name`: an ordinary English word or an
acronym, "Health" of "Consumer Health") counts only beside one that is or with its whole run;
fiscal periods ("FY2022", "Q2 of FY2023", "2019"); report types ("10-K", "8k", "annual
report"). A word that only shares a topic with a title ("the opening hours" and "Opening Hours
Notice") is not a name, so a question that names no document is ranked exactly as it would be
without this module.

Each document that matches a name scores the rarity of what it matches among the eligible
documents (idf = ln(1 + N / df)), summed over names, periods (weighted by how well they fit:
`periods.match`) and report types. The part is routed to the documents scoring at least
`SHARE_OF_BEST` of the best, unless that is every eligible document (then nothing is decided).
A period or report type alone never routes: they only choose among the documents a name found.

Only eligible documents take part (the caller passes them): a document the caller may not see is
never matched, counted in a rarity or named in a reason.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from localqa.indexing.catalog import dated_name
from localqa.language import lexicon, words
from localqa.language.tokenizer import STOP_WORDS
from localqa.question import periods
from localqa.types import Document, Found, Period, Route

# A document is routed to when it scores at least this share of the best-scoring document: the
# documents tied on what the question names (one company's filings, when no year tells them
# apart) stay together, and a document that matches a name but not the period asked about (at
# idf weights, a rare name alone is about half of a name plus its period) is left out.
SHARE_OF_BEST = 0.75

_FORM_NAMES = list(lexicon.REPORT_TYPES)
_PERIOD_FORMS = {"year": "10-K", "quarter": "10-Q"}
_FORMISH = re.compile(r"\d-?[kqf]|annual|quarterly|current|earnings|proxy|14a", re.IGNORECASE)
_YEARISH = re.compile(periods.YEAR_DIGITS)
_SEPARATORS = re.compile(r"[_\W]+")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class Name:
    """A name a question part writes (a run of words written as names, `words.name_runs`): the
    ways a document's names may spell it, each with how it was written: its `size` words, then
    (two or more) the words glued together; and its words, each knowing whether it is a name by
    itself (`words.is_name`)."""

    spellings: tuple[tuple[str, str], ...]  # (folded key, as written)
    size: int
    written: tuple[words.Written, ...]


class Directory:
    """The eligible documents' names, periods and report types, indexed for matching questions
    against (`localqa.retrieval.retrieve` builds one per eligible set, on first need, and keeps it)."""

    def __init__(self, documents: Iterable[Document], found: Mapping[str, Found]) -> None:
        self.sources: dict[str, str] = {}
        self.names: dict[str, set[str]] = defaultdict(set)
        self.facts: dict[str, set[periods.Fact]] = {}
        self.forms: dict[str, set[str]] = {}
        self.initials: dict[str, set[str]] = defaultdict(set)
        documents = list(documents)
        # A first-page title that several documents share is the kind of document they are
        # ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "Annual Report"), not a name.
        titles = Counter(words.fold(f.title) for d in documents if (f := found.get(d.doc_id)) and f.title)
        for document in documents:
            doc_id = document.doc_id
            seen = found.get(doc_id)
            title = seen.title if seen and seen.title and titles[words.fold(seen.title)] == 1 else None
            organisation = seen.name if seen else None
            self.sources[doc_id] = document.source
            texts = _name_texts(document, title)
            for text in [*texts, *([organisation] if organisation else [])]:
                for word in document_words(text):
                    self.names[word].add(doc_id)
                for letters in words.initials(text):
                    self.initials[letters].add(doc_id)
            period, _ = periods.of_document(document, seen)
            spaced = " ".join(_spaced(t) for t in texts)
            self.facts[doc_id] = periods.facts(period) if period else _named_facts(spaced)
            self.forms[doc_id] = _forms(spaced) | _period_form(period)

    def __len__(self) -> int:
        return len(self.sources)

    def route(self, part: str) -> tuple[frozenset[str], Route] | None:
        """The documents `part` names decisively (by id), and the route saying so; None when it
        names none, or names every eligible document alike."""
        total = len(self.sources)
        scores: dict[str, float] = defaultdict(float)
        named: dict[str, list[str]] = defaultdict(list)
        for name in question_names(part):
            for doc_id, (weight, written) in self._matches(name, total).items():
                scores[doc_id] += weight
                named[doc_id].append(written)
        if not scores:
            return None
        for mention in periods.mentions(part):
            fits = {d: _fit(mention, facts) for d, facts in self.facts.items()}
            holders = {d for d, fit in fits.items() if fit > 0}
            for doc_id in holders & scores.keys():
                scores[doc_id] += _idf(total, len(holders)) * fits[doc_id] / 2
                named[doc_id].append(mention.text)
        for form, written in question_forms(part).items():
            holders = {d for d, forms in self.forms.items() if form in forms}
            for doc_id in holders & scores.keys():
                scores[doc_id] += _idf(total, len(holders))
                named[doc_id].append(written)
        best = max(scores.values())
        chosen = frozenset(d for d, score in scores.items() if score >= SHARE_OF_BEST * best)
        if len(chosen) == total:
            return None
        sources = tuple(sorted(self.sources[d] for d in chosen))
        names = _distinct(w for d in sorted(chosen, key=lambda d: self.sources[d]) for w in named[d])
        return chosen, Route(sources=sources, names=names)

    def _holders(self, key: str, written: str) -> set[str]:
        """The documents a name word (or a run of them glued) names: exactly, else, misspelt by one
        letter in a long name (`words.misspellings`: "activsion"), the documents of the words it
        may be, else, written as a mixed-case initialism ("JnJ"), the documents one of whose names
        it abbreviates (`words.initials`, read once per document: `JOHNSON_JOHNSON_2022Q4_EARNINGS`)."""
        holders = self.names.get(key)
        if holders is not None:
            return holders
        near = set().union(*(self.names[n] for n in words.misspellings(key, self.names)))
        if near:
            return near
        capitals = words.initialism_capitals(written)
        return self.initials.get(capitals, set()) if capitals else set()

    def _matches(self, name: Name, total: int) -> dict[str, tuple[float, str]]:
        """What each document matching `name` scores for it, and the spelling it matched. A name
        counts once however it is spelt: its words glued together ("generalmills"), or its words
        apart, each worth its share of the name (so another company that shares one word of a
        three-word name, "American" Express for "American Water Works", scores a third of it). A word
        that is no name by itself (`words.is_name`: "Health" of "Consumer Health") counts only
        beside a word that is, or with every other word of the name."""
        alone, glued = name.spellings[: name.size], name.spellings[name.size :]
        found: dict[str, tuple[float, str]] = {}
        shares: dict[str, list[tuple[float, str, int]]] = defaultdict(list)
        for index, (key, written) in enumerate(alone):
            holders = self._holders(key, written)
            for doc_id in holders:
                shares[doc_id].append((_idf(total, len(holders)) / name.size, written, index))
        for doc_id, parts in shares.items():
            if len(parts) < name.size and not any(name.written[i].is_name for _, _, i in parts):
                continue  # a common word or an acronym of a longer name never routes alone ("Health")
            found[doc_id] = (sum(w for w, _, _ in parts), " ".join(t for _, t, _ in parts))
        for key, written in glued:
            holders = self._holders(key, written)
            for doc_id in holders:
                weight = _idf(total, len(holders))
                if weight >= found.get(doc_id, (0.0, ""))[0]:
                    found[doc_id] = (weight, written)
        return found


def _fit(mention: periods.Mention, facts: set[periods.Fact]) -> float:
    return max((periods.match(mention, fact) for fact in facts), default=0.0)


def _idf(total: int, holders: int) -> float:
    """How much matching a feature that `holders` of `total` documents have says (> 0 always:
    a name every eligible document has still tells them from nothing)."""
    return math.log(1 + total / holders)


def _distinct(written: Iterable[str]) -> tuple[str, ...]:
    """Each thing named once, longest first where one contains another ("Foot Locker", not also
    "Foot"), in the order the question names them."""
    kept: list[str] = []
    for text in dict.fromkeys(written):
        folded = text.casefold()
        if any(folded in k.casefold() for k in kept):
            continue
        kept = [k for k in kept if k.casefold() not in folded] + [text]
    return tuple(kept)


# --- the names of a document --------------------------------------------------------------------


def _name_texts(document: Document, found_title: str | None) -> list[str]:
    """The texts that name a document, besides the organisation its cover names (whose years
    are no period). A trailing date in the file name is its effective date, not a name."""
    source = document.source
    stem = source[: source.rfind(".")] if "." in source else source
    dated = dated_name(stem)
    texts = [dated[0] if dated else stem]
    for text in (document.series, document.title, document.version, found_title):
        if text and text not in texts:
            texts.append(text)
    return texts


def document_words(text: str) -> set[str]:
    """The name words of one of a document's names: each word folded, a CamelCase word also in
    its parts ("ActivisionBlizzard"); numbers, legal forms and stop words are not names."""
    found: set[str] = set()
    for raw in words.WORD.findall(text):
        if raw.isdigit():
            continue
        mixed = not (raw.islower() or raw.isupper())
        for word in (raw, *_CAMEL.findall(raw)) if mixed else (raw,):
            key = words.fold(word)
            if _is_name_word(key):
                found.add(key)
    return found


def _named_facts(spaced: str) -> set[periods.Fact]:
    """The periods a document's names give (`AMCOR_2023Q4_EARNINGS`), for a document whose period
    is not known otherwise. A year alone in a name may be when it was filed as well as the year it
    covers: it counts as some part of that year, never as the fiscal year itself."""
    if not _YEARISH.search(spaced):  # most names have none: spare them the full grammar
        return set()
    return {
        (m.year, periods.UNKNOWN_QUARTER if m.quarter is None else m.quarter)
        for m in periods.mentions(spaced)
    }


def _spaced(text: str) -> str:
    """A name with its separators as spaces (`AMCOR_2023Q4_EARNINGS`: "AMCOR 2023Q4 EARNINGS")."""
    return _SEPARATORS.sub(" ", text)


def _forms(text: str) -> set[str]:
    if not _FORMISH.search(text):
        return set()
    return {
        _FORM_NAMES[int(key[1:])]
        for m in words.REPORT_TYPE.finditer(text)
        for key, v in m.groupdict().items()
        if v
    }


def _period_form(period: Period | None) -> set[str]:
    kind = periods.span(period) if period else None
    return {_PERIOD_FORMS[kind]} if kind else set()


# --- what a question names ----------------------------------------------------------------------


def question_names(part: str) -> list[Name]:
    """The names a question part writes: its runs of words written as names (`words.name_runs`),
    each matched by its words and, two or more, by them glued together. Identifiers (EQ-314),
    periods (FY2022) and report types (10-K) are not names: they are matched on their own or not
    at all."""
    return list(dict.fromkeys(_name(run) for run in words.name_runs(part)))


def question_forms(part: str) -> dict[str, str]:
    """The report types a question part names: form -> as written."""
    found: dict[str, str] = {}
    for match in words.REPORT_TYPE.finditer(part):
        for key, value in match.groupdict().items():
            if value:
                found.setdefault(_FORM_NAMES[int(key[1:])], value)
    return found


def _name(run: words.Run) -> Name:
    spellings = [(words.fold(word.text), word.text) for word in run.words]
    if len(run.words) > 1:
        spellings.append(("".join(key for key, _ in spellings), run.text))
    return Name(tuple(spellings), len(run.words), run.words)


def _is_name_word(key: str) -> bool:
    return len(key) >= 2 and not key.isdigit() and key not in lexicon.LEGAL_FORMS and key not in STOP_WORDS
