"""Retrieval: question parts, the eligibility filter, the identifier channel and BM25.

Order matters. The eligible documents are decided first (`localqa.eligibility`), and every query
below is restricted to them, including the statistics BM25 is computed from (document count,
average length, document frequency). So an ineligible passage is never ranked or scored, and it
cannot even shift the score of an eligible one: nothing about it can leak through a number.

BM25 runs over FTS5's own index (the `fts5vocab` instance table gives term frequencies) rather
than FTS5's `bm25()`, because `bm25()` takes its statistics from the whole table.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from localqa import embeddings
from localqa.eligibility import eligible
from localqa.errors import LocalQAError, QuestionError
from localqa.extract.text import identifiers, squash
from localqa.tokens import tokenizer
from localqa.types import Caller, Candidate, Document, Kind, Location, PartResult, Status

Chunking = Literal["heading", "body"]
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


def load_documents(db: sqlite3.Connection) -> list[Document]:
    rows = db.execute(
        "SELECT doc_id, source, series, version, effective, status, access, tenant, title FROM documents"
    )
    return [
        Document(
            doc_id=r[0],
            source=r[1],
            series=r[2],
            version=r[3],
            effective=date.fromisoformat(r[4]) if r[4] else None,
            status=Status(r[5]),
            access=r[6],
            tenant=r[7],
            title=r[8],
        )
        for r in rows
    ]


def search(
    db: sqlite3.Connection,
    question: str,
    *,
    as_of: date,
    caller: Caller,
    parts: Sequence[str] = (),
    settings: RetrievalSettings | None = None,
) -> list[PartResult]:
    """Candidates per question part, each list in rank order; an empty list means abstain."""
    settings = settings or RetrievalSettings()
    if settings.retriever != "lexical" and embeddings.lacks_embeddings(db):
        raise LocalQAError(
            f"the index has no embeddings for {embeddings.MODEL_NAME}, which --retriever "
            f"{settings.retriever} needs; run 'localqa index --embed' (needs localqa[semantic])"
        )
    allowed = {d.doc_id: d for d in eligible(load_documents(db), as_of, caller)}
    return [_retrieve_part(db, part, allowed, settings) for part in question_parts(question, parts)]


@dataclass
class _Scored:
    score: float
    matched: set[str]


@dataclass
class _Ranking:
    scores: dict[int, float]  # passage id -> score, higher is better
    relevant: bool  # the best candidate clears this retriever's relevance floor


def _retrieve_part(
    db: sqlite3.Connection, part: str, allowed: dict[str, Document], settings: RetrievalSettings
) -> PartResult:
    if not allowed:
        return PartResult(
            question=part, candidates=(), note="no document is eligible for this caller and date"
        )
    scope = json.dumps(sorted(allowed))
    codes = identifiers(part)
    carriers = _carriers(db, codes, scope, settings.chunking) if codes else {}
    if codes and not carriers:
        return PartResult(
            question=part, candidates=(), note=f"no eligible passage carries {', '.join(codes)}"
        )
    ranking = _rank(db, part, scope, settings)
    if codes:
        # The identifier decides which passages qualify; the retriever only orders them.
        ranked = sorted(carriers, key=lambda pid: (-len(carriers[pid]), -ranking.scores.get(pid, 0.0), pid))
    elif not ranking.scores or not ranking.relevant:
        return PartResult(question=part, candidates=(), note=_abstention(part, settings))
    else:
        ranked = sorted(ranking.scores, key=lambda pid: (-ranking.scores[pid], pid))
    top = ranked[: settings.k]
    scores = {pid: ranking.scores.get(pid, 0.0) for pid in top}
    return PartResult(question=part, candidates=tuple(_candidates(db, top, scores, allowed)))


def _abstention(part: str, settings: RetrievalSettings) -> str:
    if settings.retriever != "lexical":
        return "no eligible passage is close enough to the question"
    if not tokenizer().terms(part):
        return "the question has no searchable words"
    return "no eligible passage shares enough meaningful words"


def _rank(db: sqlite3.Connection, part: str, scope: str, settings: RetrievalSettings) -> _Ranking:
    if settings.retriever == "lexical":
        return _lexical(db, part, scope, settings)
    if settings.retriever == "semantic":
        return _semantic(db, part, scope, settings)
    return _fuse(_lexical(db, part, scope, settings), _semantic(db, part, scope, settings), settings)


def _lexical(db: sqlite3.Connection, part: str, scope: str, settings: RetrievalSettings) -> _Ranking:
    terms = tokenizer().terms(part)
    scored, idf = _bm25(db, terms, scope, settings)
    best = max(scored.values(), key=lambda s: s.score, default=None)
    relevant = best is not None and _clears_floor(best.matched, idf, settings.floor)
    return _Ranking({pid: s.score for pid, s in scored.items()}, relevant)


def _semantic(db: sqlite3.Connection, part: str, scope: str, settings: RetrievalSettings) -> _Ranking:
    """Cosine similarity of the part to every eligible passage (statistics-free, so nothing
    ineligible can influence it)."""
    ids, vectors = embeddings.load_vectors(db, scope)
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
    db: sqlite3.Connection, terms: list[str], scope: str, settings: RetrievalSettings
) -> tuple[dict[int, _Scored], dict[str, float]]:
    """BM25 of every eligible passage matching at least one term, with statistics taken from the
    eligible passages only; also each term's IDF (used by the relevance floor)."""
    heading = settings.chunking == "heading"
    length = "p.section_len + p.body_len" if heading else "p.body_len"
    count, total_length = db.execute(
        f"SELECT count(*), coalesce(sum({length}), 0) FROM passages p "
        "WHERE doc_id IN (SELECT value FROM json_each(?))",
        (scope,),
    ).fetchone()
    average = total_length / count if count else 1.0
    columns = "('section', 'body')" if heading else "('body')"
    scored: dict[int, _Scored] = {}
    idf: dict[str, float] = {}
    for term in terms:
        # CROSS JOIN pins the join order: look the term up in the FTS index first, then filter.
        postings = db.execute(
            f"SELECT v.doc, count(*), {length} "
            "FROM passages_terms v CROSS JOIN passages p ON p.id = v.doc "
            f"WHERE v.term = ? AND v.col IN {columns} "
            "AND p.doc_id IN (SELECT value FROM json_each(?)) GROUP BY v.doc",
            (term, scope),
        ).fetchall()
        idf[term] = math.log(1 + (count - len(postings) + 0.5) / (len(postings) + 0.5))
        for passage_id, frequency, passage_length in postings:
            norm = settings.k1 * (1 - settings.b + settings.b * passage_length / average)
            gain = idf[term] * frequency * (settings.k1 + 1) / (frequency + norm)
            entry = scored.setdefault(passage_id, _Scored(0.0, set()))
            entry.score += gain
            entry.matched.add(term)
    return scored, idf


def _carriers(
    db: sqlite3.Connection, codes: list[str], scope: str, chunking: Chunking
) -> dict[int, set[str]]:
    """Eligible passages carrying any of the identifiers, exactly (no prefix or fuzzy match), in
    the columns the chunking makes searchable."""
    rows = db.execute(
        "SELECT i.passage_id, i.identifier FROM identifiers i JOIN passages p ON p.id = i.passage_id "
        "WHERE i.identifier IN (SELECT value FROM json_each(?)) AND (i.col = 'body' OR ?) "
        "AND p.doc_id IN (SELECT value FROM json_each(?))",
        (json.dumps(codes), chunking == "heading", scope),
    )
    found: dict[int, set[str]] = {}
    for passage_id, code in rows:
        found.setdefault(passage_id, set()).add(code)
    return found


def _candidates(
    db: sqlite3.Connection, ids: list[int], scores: dict[int, float], allowed: dict[str, Document]
) -> list[Candidate]:
    rows = {
        r[0]: r
        for r in db.execute(
            "SELECT id, doc_id, kind, source, page, section, paragraph, table_no, row_no, text, boxes "
            "FROM passages WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        )
    }
    candidates = []
    for rank, passage_id in enumerate(ids, start=1):
        _, doc_id, kind, source, page, section, paragraph, table, row, text, boxes = rows[passage_id]
        document = allowed[doc_id]
        location = Location(
            source=source,
            page=page,
            kind=Kind(kind),
            section=section,
            table=table,
            row=row,
            paragraph=paragraph,
            effective=document.effective,
        )
        candidates.append(
            Candidate(
                rank=rank,
                score=scores[passage_id],
                location=location,
                text=text,
                doc_id=doc_id,
                tenant=document.tenant,
                identifiers=tuple(identifiers(text)),
                boxes=tuple(tuple(box) for box in json.loads(boxes)),
            )
        )
    return candidates
