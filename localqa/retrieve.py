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
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from localqa import embeddings
from localqa.errors import LocalQAError, QuestionError
from localqa.extract.text import identifiers, squash
from localqa.store.base import Chunking, Scope, Store
from localqa.types import Caller, Candidate, Document, PartResult

Retriever = Literal["auto", "lexical", "semantic", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = get_args(Retriever)


class RetrievalSettings(BaseModel):
    """Everything that changes which candidates come back; stored with every evaluation run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # "auto": hybrid when the index has embeddings (and the embedding model is installed),
    # lexical otherwise. Searching resolves it; runs record what was used.
    retriever: Retriever = "auto"
    k: int = 5
    k1: float = 1.2
    b: float = 0.75
    # "heading": a passage's document title and heading path are searchable with its text;
    # "body": its text only.
    chunking: Chunking = "heading"
    # A semantic neighbour: a passage at least this close (cosine) to the question. With no
    # neighbour and no shared meaningful word, retrieval abstains. Calibrated on BEIR SciFact
    # train claims (benchmarks/calibrate.py): see benchmarks/README.md.
    neighbour: float = 0.2
    # Hybrid: reciprocal rank fusion, score = sum of weight / (rrf_k + rank) over both rankings.
    rrf_k: int = 60
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    semantic_depth: int = 100  # how many semantic ranks take part in the fusion


def resolve(store: Store, settings: RetrievalSettings) -> RetrievalSettings:
    """The settings with `auto` decided for this index."""
    if settings.retriever != "auto":
        return settings
    usable = embeddings.is_available() and store.has_vectors(embeddings.MODEL_NAME)
    return settings.model_copy(update={"retriever": "hybrid" if usable else "lexical"})


_WH = r"(?:what|when|where|which|who|whom|whose|why|how|is|are|does|do|did|can|could|may|must|should|will)"
_CLAUSE = re.compile(rf"\s*(?:[,;]\s*(?:and\s+|or\s+)?|\s+and\s+)(?={_WH}\b)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[?!])\s+|(?<=[a-z0-9)%][.])\s+(?=[A-Z])")
_ASKS = re.compile(rf"^{_WH}\b", re.IGNORECASE)


def split_parts(question: str) -> list[str]:
    """Split a compound question on clause boundaries: "What is X, when is Y, and how Z?" gives
    three parts. A question with one clause is one part. A sentence that asks nothing ("Give
    the figure in USD millions.") is context: it stays with the question before it (or, when it
    comes first, the one after it), so that each part is retrieved and answered with it."""
    parts: list[str] = []
    context: list[str] = []
    for sentence in _SENTENCE.split(squash(question)):
        if not sentence.strip(" ,;"):
            continue
        if not (sentence.endswith("?") or _ASKS.match(sentence)):
            if parts:
                parts[-1] = f"{parts[-1]} {sentence}"
            else:
                context.append(sentence)
            continue
        pieces = [p.strip(" ,;") for p in _CLAUSE.split(sentence) if p.strip(" ,;")]
        for piece in pieces:
            text = piece[0].upper() + piece[1:]
            if sentence.endswith("?") and not text.endswith("?"):
                text += "?"
            parts.append(" ".join([*context, text]))
            context = []
    if context:  # nothing was asked as a question: the whole text is the one part
        text = " ".join(context)
        parts.append(text[0].upper() + text[1:])
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
    settings = resolve(store, settings or RetrievalSettings())
    if settings.retriever != "lexical" and store.lacks_vectors(embeddings.MODEL_NAME):
        raise LocalQAError(
            f"the index has no embeddings for {embeddings.MODEL_NAME}, which --retriever "
            f"{settings.retriever} needs; run 'localqa index --embed' (needs localqa[semantic])"
        )
    allowed = store.eligible(as_of, caller)
    results = [_retrieve_part(store, part, allowed, settings) for part in question_parts(question, parts)]
    return [r.model_copy(update={"retriever": settings.retriever}) for r in results]


@dataclass(frozen=True)
class _Ranking:
    """Passage ids with their scores, best first (ties: lower id first), and whether there is
    evidence that anything is about the question (a shared word, a neighbour)."""

    ids: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]
    relevant: bool

    @classmethod
    def of(cls, ids: npt.ArrayLike, scores: npt.ArrayLike, relevant: bool) -> _Ranking:
        ids = np.asarray(ids, dtype=np.int64)
        scores = np.asarray(scores, dtype=np.float64)
        order = np.lexsort((ids, -scores))
        return cls(ids[order], scores[order], relevant)

    def score_of(self, ids: list[int]) -> dict[int, float]:
        where = dict(zip(self.ids.tolist(), self.scores.tolist(), strict=True))
        return {pid: where.get(pid, 0.0) for pid in ids}


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
        known = ranking.score_of(list(carriers))
        ranked = sorted(carriers, key=lambda pid: (-len(carriers[pid]), -known[pid], pid))
    elif not len(ranking.ids) or not ranking.relevant:
        return PartResult(question=part, candidates=(), note=_abstention(store, part, settings))
    else:
        ranked = ranking.ids[: settings.k].tolist()
    top = ranked[: settings.k]
    return PartResult(
        question=part, candidates=tuple(_candidates(store, top, ranking.score_of(top), allowed))
    )


def _abstention(store: Store, part: str, settings: RetrievalSettings) -> str:
    if settings.retriever == "semantic":
        return "no eligible passage is close to the question in meaning"
    if not store.terms(part) and settings.retriever == "lexical":
        return "the question has no searchable words"
    if settings.retriever == "hybrid":
        return "no eligible passage shares a meaningful word with the question or is close to it in meaning"
    return "no eligible passage shares a meaningful word with the question"


def _rank(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    if settings.retriever == "lexical":
        return _lexical(store, part, scope, settings)
    if settings.retriever == "semantic":
        return _semantic(store, part, scope, settings)
    return _fuse(_lexical(store, part, scope, settings), _semantic(store, part, scope, settings), settings)


def _lexical(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    """BM25. Relevant when any eligible passage shares a meaningful word with the question: the
    absence of every such word holds on real text; how many words a real answer shares with a
    question does not (it is often the document's words, not the asker's)."""
    ids, scores = _bm25(store, store.terms(part), scope, settings)
    return _Ranking.of(ids, scores, bool(len(ids)))


def _semantic(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    """Cosine similarity of the part to every eligible passage (statistics-free, so nothing
    ineligible can influence it)."""
    ids, similarities = store.similarities(scope, embeddings.MODEL_NAME, embeddings.embed([part])[0])
    relevant = bool(len(ids)) and float(similarities.max()) >= settings.neighbour
    return _Ranking.of(ids, similarities, relevant)


def _fuse(lexical: _Ranking, semantic: _Ranking, settings: RetrievalSettings) -> _Ranking:
    """Reciprocal rank fusion of the two rankings (weights and k from the settings). Relevant
    when either is: a shared word, or a semantic neighbour. Whether the candidates answer the
    question is the answer stage's call. With no shared word at all, only the semantic
    neighbours take part."""
    semantic_ids = semantic.ids[: settings.semantic_depth]
    if not lexical.relevant:
        semantic_ids = semantic_ids[semantic.scores[: settings.semantic_depth] >= settings.neighbour]
    ids = np.concatenate((lexical.ids, semantic_ids))
    gains = np.concatenate(
        (
            settings.lexical_weight / (settings.rrf_k + np.arange(1, len(lexical.ids) + 1)),
            settings.semantic_weight / (settings.rrf_k + np.arange(1, len(semantic_ids) + 1)),
        )
    )
    fused, where = np.unique(ids, return_inverse=True)
    return _Ranking.of(fused, np.bincount(where, weights=gains), lexical.relevant or semantic.relevant)


def _bm25(
    store: Store, terms: list[str], scope: Scope, settings: RetrievalSettings
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """BM25 of every eligible passage matching at least one term, with statistics taken from the
    eligible passages only: (passage ids, scores)."""
    statistics = store.lexical_statistics(scope, settings.chunking)
    ids: list[npt.NDArray[np.int32]] = []
    gains: list[npt.NDArray[np.float64]] = []
    for term in terms:
        postings = store.postings(scope, term, settings.chunking)
        found = len(postings.ids)
        idf = math.log(1 + (statistics.passages - found + 0.5) / (found + 0.5))
        norm = settings.k1 * (1 - settings.b + settings.b * postings.lengths / statistics.average_length)
        ids.append(postings.ids)
        gains.append(idf * postings.frequencies * (settings.k1 + 1) / (postings.frequencies + norm))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    scored, where = np.unique(np.concatenate(ids), return_inverse=True)
    return scored.astype(np.int64), np.bincount(where, weights=np.concatenate(gains)).astype(np.float64)


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
