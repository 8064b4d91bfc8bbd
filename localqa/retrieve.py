"""Retrieval: question parts, the eligibility filter, the identifier channel and BM25.

Order matters. The eligible documents are decided first (`localqa.eligibility`), and every query
below is restricted to them, including the statistics BM25 is computed from (document count,
average length, document frequency). So an ineligible passage is never ranked or scored, and it
cannot even shift the score of an eligible one: nothing about it can leak through a number.

BM25 runs over FTS5's own index (the `fts5vocab` instance table gives term frequencies) rather
than FTS5's `bm25()`, because `bm25()` takes its statistics from the whole table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from localqa import embeddings
from localqa.eligibility import eligible
from localqa.errors import LocalQAError, QuestionError
from localqa.extract.text import identifiers, squash
from localqa.store.base import Chunking, Scope, Store
from localqa.types import Caller, Candidate, Document, PartResult

Retriever = Literal["lexical", "semantic", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = ("lexical", "semantic", "hybrid")


class RetrievalSettings(BaseModel):
    """Everything that changes which candidates come back; stored with every evaluation run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    retriever: Retriever = "lexical"
    k: int = 5
    k1: float = 1.2
    b: float = 0.75
    # Share of the question's term weight (IDF) the best candidate must match, else abstain.
    floor: float = 0.5
    # "heading": a passage's heading path is searchable with its text; "body": text only.
    chunking: Chunking = "heading"
    # Semantic: the best cosine similarity must reach this, or stand out from the eligible
    # passages (z >= sqrt(2 ln N)), else abstain.
    semantic_floor: float = 0.6
    # Hybrid: reciprocal rank fusion, score = sum of weight / (rrf_k + rank) over both rankings.
    fusion: Literal["rrf"] = "rrf"
    rrf_k: int = 60
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    semantic_depth: int = 100  # how many semantic ranks take part in the fusion


_WH = r"(?:what|when|where|which|who|whom|whose|why|how|is|are|does|do|did|can|could|may|must|should|will)"
_CLAUSE = re.compile(rf"\s*(?:[,;]\s*(?:and\s+|or\s+)?|\s+and\s+)(?={_WH}\b)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=\?)\s+")


def split_parts(question: str) -> list[str]:
    """Split a compound question on clause boundaries: "What is X, when is Y, and how Z?" gives
    three parts. A question with one clause is one part."""
    parts: list[str] = []
    for sentence in _SENTENCE.split(squash(question)):
        pieces = [p.strip(" ,;") for p in _CLAUSE.split(sentence) if p.strip(" ,;")]
        for piece in pieces:
            text = piece[0].upper() + piece[1:]
            if sentence.endswith("?") and not text.endswith("?"):
                text += "?"
            parts.append(text)
    return parts


def question_parts(question: str, parts: Sequence[str] = ()) -> list[str]:
    """Explicit parts win; otherwise the question is split. Blank input is a usage error."""
    if parts:
        chosen = [squash(_valid_text(p)) for p in parts]
        if not all(chosen):
            raise QuestionError("a --part is blank; give each part some words")
        return chosen
    found = split_parts(_valid_text(question))
    if not found:
        raise QuestionError("the question is blank; ask something, e.g. 'What is the loan limit for EQ-314?'")
    return found


def _valid_text(text: str) -> str:
    # Undecodable bytes in argv arrive as lone surrogates, which SQLite cannot take.
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def search(
    store: Store,
    question: str,
    *,
    as_of: date,
    caller: Caller,
    parts: Sequence[str] = (),
    settings: RetrievalSettings | None = None,
) -> list[PartResult]:
    """Candidates per question part, each list in rank order; an empty list means abstain."""
    settings = settings or RetrievalSettings()
    if settings.retriever != "lexical" and store.lacks_vectors(embeddings.MODEL_NAME):
        raise LocalQAError(
            f"the index has no embeddings for {embeddings.MODEL_NAME}, which --retriever "
            f"{settings.retriever} needs; run 'localqa index --embed' (needs localqa[semantic])"
        )
    allowed = {d.doc_id: d for d in eligible(store.documents(), as_of, caller)}
    return [_retrieve_part(store, part, allowed, settings) for part in question_parts(question, parts)]


@dataclass
class _Scored:
    score: float
    matched: set[str]


@dataclass
class _Ranking:
    scores: dict[int, float]  # passage id -> score, higher is better
    relevant: bool  # the best candidate clears this retriever's relevance floor


def _retrieve_part(
    store: Store, part: str, allowed: dict[str, Document], settings: RetrievalSettings
) -> PartResult:
    if not allowed:
        return PartResult(
            question=part, candidates=(), note="no document is eligible for this caller and date"
        )
    scope = Scope(doc_ids=frozenset(allowed))
    codes = identifiers(part)
    carriers = store.carriers(scope, codes, settings.chunking) if codes else {}
    if codes and not carriers:
        return PartResult(
            question=part, candidates=(), note=f"no eligible passage carries {', '.join(codes)}"
        )
    ranking = _rank(store, part, scope, settings)
    if codes:
        # The identifier decides which passages qualify; the retriever only orders them.
        ranked = sorted(carriers, key=lambda pid: (-len(carriers[pid]), -ranking.scores.get(pid, 0.0), pid))
    elif not ranking.scores or not ranking.relevant:
        return PartResult(question=part, candidates=(), note=_abstention(store, part, settings))
    else:
        ranked = sorted(ranking.scores, key=lambda pid: (-ranking.scores[pid], pid))
    top = ranked[: settings.k]
    scores = {pid: ranking.scores.get(pid, 0.0) for pid in top}
    return PartResult(question=part, candidates=tuple(_candidates(store, top, scores, allowed)))


def _abstention(store: Store, part: str, settings: RetrievalSettings) -> str:
    if settings.retriever != "lexical":
        return "no eligible passage is close enough to the question"
    if not store.terms(part):
        return "the question has no searchable words"
    return "no eligible passage shares enough meaningful words"


def _rank(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    if settings.retriever == "lexical":
        return _lexical(store, part, scope, settings)
    if settings.retriever == "semantic":
        return _semantic(store, part, scope, settings)
    return _fuse(_lexical(store, part, scope, settings), _semantic(store, part, scope, settings), settings)


def _lexical(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    terms = store.terms(part)
    scored, idf = _bm25(store, terms, scope, settings)
    best = max(scored.values(), key=lambda s: s.score, default=None)
    relevant = best is not None and _clears_floor(best.matched, idf, settings.floor)
    return _Ranking({pid: s.score for pid, s in scored.items()}, relevant)


def _semantic(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    """Cosine similarity of the part to every eligible passage (statistics-free, so nothing
    ineligible can influence it)."""
    ids, vectors = store.vectors(scope, embeddings.MODEL_NAME)
    if not ids:
        return _Ranking({}, False)
    similarities = vectors @ embeddings.embed([part])[0]
    scores = {pid: float(sim) for pid, sim in zip(ids, similarities, strict=True)}
    return _Ranking(scores, _stands_out(similarities, settings.semantic_floor))


def _stands_out(similarities: Any, floor: float) -> bool:
    """Is the best passage about the question? Absolute cosine alone cannot tell: a near-topic
    question ("rare books" vs the book club) scores as high as a true paraphrase. So the best must
    reach `floor`, or stand out from the eligible passages further than the largest of N
    unrelated similarities would: z >= sqrt(2 ln N), the usual bound on the maximum of N
    normal draws."""
    best = float(similarities.max())
    if best >= floor:
        return True
    count = len(similarities)
    spread = float(similarities.std())
    if count < 3 or spread == 0.0:
        return False
    return (best - float(similarities.mean())) / spread >= math.sqrt(2 * math.log(count))


def _fuse(lexical: _Ranking, semantic: _Ranking, settings: RetrievalSettings) -> _Ranking:
    """Reciprocal rank fusion of the two rankings (weights and k from the settings). Relevant
    when lexical clears its floor, or semantic clears its own and its best passage also shares a
    meaningful word with the question: a paraphrase keeps some vocabulary, while a merely
    neighbouring topic in a small collection can look like an outlier to the embedding alone."""
    fused: dict[int, float] = {}
    semantic_ranked = sorted(semantic.scores, key=lambda pid: (-semantic.scores[pid], pid))[
        : settings.semantic_depth
    ]
    lexical_ranked = sorted(lexical.scores, key=lambda pid: (-lexical.scores[pid], pid))
    for weight, ranked in (
        (settings.lexical_weight, lexical_ranked),
        (settings.semantic_weight, semantic_ranked),
    ):
        for rank, pid in enumerate(ranked, start=1):
            fused[pid] = fused.get(pid, 0.0) + weight / (settings.rrf_k + rank)
    best_semantic = semantic_ranked[0] if semantic_ranked else None
    supported = semantic.relevant and best_semantic in lexical.scores
    return _Ranking(fused, lexical.relevant or supported)


def _clears_floor(matched: set[str], idf: dict[str, float], floor: float) -> bool:
    """Is the best candidate about the question at all? It must carry at least `floor` of the
    question's IDF weight, and two of its terms when it has two or more: one shared word (often a
    stemming accident, "founded" ~ "found") is not evidence."""
    if floor <= 0:
        return True  # floor 0 switches abstention off (benchmarks rank every query)
    enough_terms = len(matched) >= min(2, len(idf))
    return enough_terms and sum(idf[t] for t in matched) >= floor * sum(idf.values())


def _bm25(
    store: Store, terms: list[str], scope: Scope, settings: RetrievalSettings
) -> tuple[dict[int, _Scored], dict[str, float]]:
    """BM25 of every eligible passage matching at least one term, with statistics taken from the
    eligible passages only; also each term's IDF (used by the relevance floor)."""
    statistics = store.lexical_statistics(scope, settings.chunking)
    scored: dict[int, _Scored] = {}
    idf: dict[str, float] = {}
    for term in terms:
        postings = store.postings(scope, term, settings.chunking)
        found = len(postings.ids)
        idf[term] = math.log(1 + (statistics.passages - found + 0.5) / (found + 0.5))
        for passage_id, frequency, length in zip(
            postings.ids, postings.frequencies, postings.lengths, strict=True
        ):
            norm = settings.k1 * (1 - settings.b + settings.b * length / statistics.average_length)
            gain = idf[term] * frequency * (settings.k1 + 1) / (frequency + norm)
            entry = scored.setdefault(passage_id, _Scored(0.0, set()))
            entry.score += gain
            entry.matched.add(term)
    return scored, idf


def _candidates(
    store: Store, ids: list[int], scores: dict[int, float], allowed: dict[str, Document]
) -> list[Candidate]:
    stored = store.passages(ids)
    candidates = []
    for rank, passage_id in enumerate(ids, start=1):
        passage = stored[passage_id]
        document = allowed[passage.doc_id]
        candidates.append(
            Candidate(
                rank=rank,
                score=scores[passage_id],
                location=passage.location(document),
                text=passage.text,
                doc_id=passage.doc_id,
                tenant=document.tenant,
                identifiers=tuple(identifiers(passage.text)),
                boxes=passage.boxes,
            )
        )
    return candidates
