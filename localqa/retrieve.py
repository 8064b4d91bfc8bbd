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

from pydantic import BaseModel, ConfigDict

from localqa import embeddings
from localqa.eligibility import eligible
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
    allowed = {d.doc_id: d for d in eligible(store.documents(), as_of, caller)}
    results = [_retrieve_part(store, part, allowed, settings) for part in question_parts(question, parts)]
    return [r.model_copy(update={"retriever": settings.retriever}) for r in results]


@dataclass
class _Ranking:
    scores: dict[int, float]  # passage id -> score, higher is better
    relevant: bool  # evidence something is about the question (a shared word, a neighbour)


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
    scored = _bm25(store, store.terms(part), scope, settings)
    return _Ranking(scored, bool(scored))


def _semantic(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    """Cosine similarity of the part to every eligible passage (statistics-free, so nothing
    ineligible can influence it)."""
    ids, vectors = store.vectors(scope, embeddings.MODEL_NAME)
    if not ids:
        return _Ranking({}, False)
    similarities = vectors @ embeddings.embed([part])[0]
    scores = {pid: float(sim) for pid, sim in zip(ids, similarities, strict=True)}
    return _Ranking(scores, float(similarities.max()) >= settings.neighbour)


def _fuse(lexical: _Ranking, semantic: _Ranking, settings: RetrievalSettings) -> _Ranking:
    """Reciprocal rank fusion of the two rankings (weights and k from the settings). Relevant
    when either is: a shared word, or a semantic neighbour. Whether the candidates answer the
    question is the answer stage's call."""
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
    if not lexical.relevant:
        semantic_ranked = [pid for pid in semantic_ranked if semantic.scores[pid] >= settings.neighbour]
        fused = {pid: score for pid, score in fused.items() if pid in semantic_ranked}
    return _Ranking(fused, lexical.relevant or semantic.relevant)


def _bm25(store: Store, terms: list[str], scope: Scope, settings: RetrievalSettings) -> dict[int, float]:
    """BM25 of every eligible passage matching at least one term, with statistics taken from the
    eligible passages only."""
    statistics = store.lexical_statistics(scope, settings.chunking)
    scored: dict[int, float] = {}
    for term in terms:
        postings = store.postings(scope, term, settings.chunking)
        found = len(postings.ids)
        idf = math.log(1 + (statistics.passages - found + 0.5) / (found + 0.5))
        for passage_id, frequency, length in zip(
            postings.ids, postings.frequencies, postings.lengths, strict=True
        ):
            norm = settings.k1 * (1 - settings.b + settings.b * length / statistics.average_length)
            scored[passage_id] = scored.get(passage_id, 0.0) + idf * frequency * (settings.k1 + 1) / (
                frequency + norm
            )
    return scored


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
