"""The sentence scorer: at question time, ranks the quotable units of a part's top passages.

A passage's quotable units are its sentences; a table row is one unit (`units`). Before any model
is asked, every unit of the `AnswerSettings.k` candidates is scored against the question part:

- BM25 over the units themselves (their statistics are the units': a term every unit shares
  tells them apart no better than none), with the question's meaningful terms, tokenized as the
  index tokenizes;
- the cosine between the question and the unit, both embedded by the MiniLM model retrieval
  already ships (`localqa.retrieval.embeddings`), when the `semantic` extra is installed;
- the rank retrieval gave the unit's passage (P1 first): retrieval read the passage whole, with
  its headings and document title, which a unit alone lacks;

fused by reciprocal rank (each ranking contributes weight / (rrf_k + rank); a unit sharing no
term gets no lexical share). Two rules then rank a unit that cannot be the answer below every
unit that can (`demoted` says why), whatever its score, as extractive QA does with the expected
answer type:

- a unit that only repeats the question: it carries no meaningful term the question lacks
  ("ACTIVISION BLIZZARD, INC." for a question about Activision Blizzard), unless the question
  asks yes or no, whose answer may restate it ("Visitors must not bring food into the garden.");
- for a question asking for a quantity ("how many", "what percentage", "ratio", "Answer in USD
  millions"), a unit stating none: no digit and no number word.

For a part that asks what drove, caused or explains a change (`localqa.answers.causes`), a unit sharing a
term with it that states a cause ("due to", "driven by", "partially offset by") gains
`causes.CAUSE_WEIGHT`, and `causes.SECTION_WEIGHT` more in a section that discusses results (MD&A);
such a part is not asking for a quantity, whatever item it names ("gross margin").

Ties go to the better-ranked passage, then to the earlier unit. The model is shown the best
`AnswerSettings.units` of them, in this order, and may override it; the `extractive` backend
answers with the first.

Without the `semantic` extra the scorer is BM25 over the units alone, and says so (`note`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from localqa.answers import causes
from localqa.language.tokenizer import tokenizer
from localqa.question import cues, parts
from localqa.retrieval import bm25, embeddings
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, RankedUnit

LEXICAL = "bm25"
FUSED = "bm25+minilm"
NO_SEMANTIC = (
    f"sentences ranked by BM25 alone: the semantic extra is not installed ({embeddings.INSTALL_HINT})"
)


REPEATS_QUESTION = "repeats the question"
STATES_NO_QUANTITY = "states no quantity"

_STATES_QUANTITY = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|"
    r"seventy|eighty|ninety|hundred|thousand|million|billion|trillion|half|dozen|once|twice)\b",
    re.IGNORECASE,
)


def states_quantity(text: str) -> bool:
    """Whether the text states a number, in digits or in words."""
    return _STATES_QUANTITY.search(text) is not None


def units(text: str, kind: Kind) -> list[str]:
    """What may be quoted from a passage's text: its sentences (as the question splitter finds
    them: pysbd, so "vs. 4", "Fig. 2", "Mr. C.M. Maniar" and decimals end none), whitespace
    squashed; or a table row as a whole."""
    if kind is Kind.TABLE:
        return [text]
    return parts.sentences(text) or [text]


def labels(candidates: Sequence[Candidate]) -> dict[str, Candidate]:
    """The passages as the model sees them: P1..Pn in rank order."""
    return {f"P{i}": candidate for i, candidate in enumerate(candidates, start=1)}


@dataclass(frozen=True)
class Ranking:
    """Every unit of the passages, best first; `scorer` names what ranked them (`bm25+minilm`,
    or `bm25` without the semantic extra, with `note` saying so); `seconds` is what it cost."""

    units: tuple[RankedUnit, ...]
    scorer: str
    seconds: float
    note: str | None = None


def rank(question: str, candidates: Sequence[Candidate], settings: AnswerSettings | None = None) -> Ranking:
    """Score and rank every quotable unit of `candidates` (labelled P1..Pn in their order)."""
    settings = settings or AnswerSettings()
    started = time.perf_counter()
    found = [
        (label, number, text, candidate)
        for label, candidate in labels(candidates).items()
        for number, text in enumerate(units(candidate.text, candidate.location.kind), start=1)
    ]
    texts = [text for _, _, text, _ in found]
    words = tokenizer()
    asked = words.terms(question)
    tokens = [words.tokens(text) for text in texts]  # once: BM25 and the demotions read them
    lexical = _bm25(asked, tokens, settings)
    semantic: list[float] | None = None
    if embeddings.is_available() and settings.unit_semantic_weight > 0:
        semantic = _cosines(question, texts)
    fused = _fuse(lexical, semantic, [passage_rank(label) for label, _, _, _ in found], settings)
    if cues.asks_cause(question):  # the cause rule: nothing changes for any other part
        fused = [
            score + (causes.bonus(candidate.location, text) if lexical[i] > 0 else 0.0)
            for i, (score, (_, _, text, candidate)) in enumerate(zip(fused, found, strict=True))
        ]
    demoted = _demotions(question, asked, texts, tokens)
    order = sorted(
        range(len(found)),
        key=lambda i: (demoted[i] is not None, -fused[i], passage_rank(found[i][0]), found[i][1]),
    )
    ranked = tuple(
        RankedUnit(
            rank=position,
            score=fused[i],
            lexical=lexical[i],
            semantic=None if semantic is None else semantic[i],
            label=found[i][0],
            sentence=found[i][1],
            location=found[i][3].location,
            text=found[i][2],
            demoted=demoted[i],
        )
        for position, i in enumerate(order, start=1)
    )
    scorer, note = (FUSED, None) if semantic is not None else (LEXICAL, _note(settings))
    return Ranking(ranked, scorer, time.perf_counter() - started, note)


def passage_rank(label: str) -> int:
    """The passage's rank among the candidates, read off its label (P3 is the third)."""
    return int(label[1:])


def _note(settings: AnswerSettings) -> str | None:
    return NO_SEMANTIC if settings.unit_semantic_weight > 0 else None


def _demotions(
    question: str, asked: list[str], texts: list[str], tokens: list[list[str]]
) -> list[str | None]:
    """Why each unit cannot be the answer (`REPEATS_QUESTION`, `STATES_NO_QUANTITY`), or None;
    `asked` are the question's meaningful terms, `tokens` each unit's."""
    words = tokenizer()
    question_terms = set(asked)
    # "What drove the decline in gross margin?" asks for a cause, which may state no number.
    quantity = cues.asks_for_a_number(question) and cues.asks_cause(question) is None
    yes_or_no = cues.asks_yes_or_no(question)

    def demotion(text: str, unit_tokens: list[str]) -> str | None:
        if not yes_or_no and not set(words.meaningful(unit_tokens)) - question_terms:
            return REPEATS_QUESTION
        if quantity and not states_quantity(text):
            return STATES_NO_QUANTITY
        return None

    return [demotion(text, unit_tokens) for text, unit_tokens in zip(texts, tokens, strict=True)]


def _bm25(terms: list[str], tokens: list[list[str]], settings: AnswerSettings) -> list[float]:
    """BM25 of each unit (its `tokens`) for the question's meaningful `terms`, with the units' own
    statistics."""
    if not tokens or not terms:
        return [0.0] * len(tokens)
    average = max(sum(len(t) for t in tokens) / len(tokens), 1.0)
    counts = [_counts(t) for t in tokens]
    idf = {term: bm25.idf(len(tokens), sum(term in c for c in counts)) for term in terms}
    k1, b = settings.unit_k1, settings.unit_b
    return [
        sum(
            bm25.gain(idf[term], float(unit_counts[term]), float(len(unit_tokens)), average, k1, b)
            for term in terms
            if term in unit_counts
        )
        for unit_tokens, unit_counts in zip(tokens, counts, strict=True)
    ]


def _counts(tokens: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return counts


def _cosines(question: str, texts: list[str]) -> list[float]:
    vectors = embeddings.embed([question, *texts])
    return [float(v) for v in vectors[1:] @ vectors[0]]


def _fuse(
    lexical: list[float], semantic: list[float] | None, passages: list[int], settings: AnswerSettings
) -> list[float]:
    """Reciprocal rank fusion: weight / (rrf_k + rank) from each ranking. Only units sharing a
    term with the question take a lexical share; every unit takes a semantic one and its
    passage's (`passages`: retrieval's rank of each unit's passage)."""
    fused = [
        (settings.unit_lexical_weight / (settings.unit_rrf_k + rank) if score > 0 else 0.0)
        + settings.unit_passage_weight / (settings.unit_rrf_k + passage)
        for score, rank, passage in zip(lexical, _ranks(lexical), passages, strict=True)
    ]
    if semantic is not None:
        for i, rank in enumerate(_ranks(semantic)):
            fused[i] += settings.unit_semantic_weight / (settings.unit_rrf_k + rank)
    return fused


def _ranks(scores: list[float]) -> list[int]:
    """Each score's rank, best first; equal scores share the better rank (1, 2, 2, 4)."""
    ordered = sorted(scores, reverse=True)
    first: dict[float, int] = {}
    for position, score in enumerate(ordered, start=1):
        first.setdefault(score, position)
    return [first[score] for score in scores]
