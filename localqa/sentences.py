"""The sentence scorer: at question time, ranks the quotable units of a part's top passages.

A passage's quotable units are its sentences; a table row is one unit (`units`). Before any model
is asked, every unit of the `AnswerSettings.k` candidates is scored against the question part:

- BM25 over the units themselves (their statistics are the units': a term every unit shares
  tells them apart no better than none), with the question's meaningful terms, tokenized as the
  index tokenizes;
- the cosine between the question and the unit, both embedded by the MiniLM model retrieval
  already ships (`localqa.embeddings`), when the `semantic` extra is installed;

fused by reciprocal rank (each ranking contributes weight / (rrf_k + rank); a unit sharing no
term gets no lexical share). Ties go to the better-ranked passage, then to the earlier unit. The
model is shown the best `AnswerSettings.units` of them, in this order, and may override it; the
`extractive` backend answers with the first.

Without the `semantic` extra the scorer is BM25 over the units alone, and says so (`note`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from localqa import embeddings, parts
from localqa.retrieve import bm25_idf
from localqa.settings import AnswerSettings
from localqa.store.tokenizer import tokenizer
from localqa.types import Candidate, Kind, RankedUnit

# BM25's usual constants (as retrieval's defaults): how fast a repeated term saturates, and how
# much a long unit is discounted.
K1, B = 1.2, 0.75

LEXICAL = "bm25"
FUSED = "bm25+minilm"
NO_SEMANTIC = (
    f"sentences ranked by BM25 alone: the semantic extra is not installed ({embeddings.INSTALL_HINT})"
)


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
    lexical = _bm25(question, [text for _, _, text, _ in found])
    semantic: list[float] | None = None
    if embeddings.is_available() and settings.unit_semantic_weight > 0:
        semantic = _cosines(question, [text for _, _, text, _ in found])
    fused = _fuse(lexical, semantic, settings)
    order = sorted(range(len(found)), key=lambda i: (-fused[i], passage_rank(found[i][0]), found[i][1]))
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


def _bm25(question: str, texts: list[str]) -> list[float]:
    """BM25 of each unit for the question's meaningful terms, with the units' own statistics."""
    words = tokenizer()
    terms = words.terms(question)
    tokens = [words.tokens(text) for text in texts]
    if not texts or not terms:
        return [0.0] * len(texts)
    average = max(sum(len(t) for t in tokens) / len(tokens), 1.0)
    counts = [_counts(t) for t in tokens]
    idf = {term: bm25_idf(len(texts), sum(term in c for c in counts)) for term in terms}
    scores = []
    for unit_tokens, unit_counts in zip(tokens, counts, strict=True):
        norm = K1 * (1 - B + B * len(unit_tokens) / average)
        scores.append(
            sum(
                idf[term] * unit_counts[term] * (K1 + 1) / (unit_counts[term] + norm)
                for term in terms
                if term in unit_counts
            )
        )
    return scores


def _counts(tokens: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return counts


def _cosines(question: str, texts: list[str]) -> list[float]:
    vectors = embeddings.embed([question, *texts])
    return [float(v) for v in vectors[1:] @ vectors[0]]


def _fuse(lexical: list[float], semantic: list[float] | None, settings: AnswerSettings) -> list[float]:
    """Reciprocal rank fusion: weight / (rrf_k + rank) from each ranking. Only units sharing a
    term with the question take a lexical share; every unit takes a semantic one."""
    fused = [
        settings.unit_lexical_weight / (settings.unit_rrf_k + rank) if score > 0 else 0.0
        for score, rank in zip(lexical, _ranks(lexical), strict=True)
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
