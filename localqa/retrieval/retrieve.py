"""Retrieval: question parts, the eligibility filter, the identifier channel and BM25.

Order matters. The eligible documents are decided first (`localqa.retrieval.eligibility`), and every query
below is restricted to them, including the statistics BM25 is computed from (document count,
average length, document frequency). So an ineligible passage is never ranked or scored, and it
cannot even shift the score of an eligible one: nothing about it can leak through a number.
Scoping and routing only narrow that set: the documents a caller names (`localqa.question.scope`), then,
per part, the documents the part names (`localqa.question.routing`), searched first as if they were all
there is.

BM25 is computed here, from the store's per-term postings (term frequencies per passage,
tokenized by FTS5's own tokenizer) over the eligible passages only, rather than by FTS5's
`bm25()`, which takes its statistics from the whole table. Hybrid fuses the BM25 ranking with a
cosine ranking over the eligible rows of the vector matrix (reciprocal rank fusion).
"""

from __future__ import annotations

import re
import weakref
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from datetime import date
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from localqa.errors import LocalQAError, QuestionError
from localqa.indexing.catalog import searchable_title
from localqa.language.text import identifiers, squash
from localqa.question import periods, routing
from localqa.question.parts import search_text, split_parts
from localqa.question.reading import read
from localqa.question.scope import Chosen, DocumentNames, named
from localqa.retrieval import bm25, embeddings, held
from localqa.settings import MAX_PARTS, RetrievalSettings
from localqa.store.base import Scope, Store
from localqa.types import Caller, Candidate, Document, PartResult


def resolve(store: Store, settings: RetrievalSettings) -> RetrievalSettings:
    """The settings with `auto` decided for this index."""
    if settings.retriever != "auto":
        return settings
    usable = embeddings.is_available() and store.has_vectors(embeddings.MODEL_NAME)
    return settings.model_copy(update={"retriever": "hybrid" if usable else "lexical"})


# How deep below k the ranking is read when candidates are spread over pages (RetrievalSettings.
# per_page): deep enough for k passages from distinct pages on real documents.
DIVERSITY_DEPTH = 4


def question_parts(question: str, parts: Sequence[str] = ()) -> list[str]:
    """Explicit parts win; otherwise the question is split. Blank input, or more than
    MAX_PARTS parts, is a usage error."""
    if parts:
        chosen = [squash(_valid_text(p)) for p in parts]
        if not all(chosen):
            raise QuestionError("a --part is blank; give each part some words")
        return _at_most_max_parts(chosen)
    found = split_parts(_valid_text(question))
    if not found:
        raise QuestionError("the question is blank; ask something, e.g. 'What is the loan limit for EQ-314?'")
    return _at_most_max_parts(found)


def _at_most_max_parts(parts: list[str]) -> list[str]:
    # Each part is a search, and a model call under `ask`: a question of 300 parts would hold the
    # model for 300 calls.
    if len(parts) > MAX_PARTS:
        raise QuestionError(f"the question has {len(parts)} parts; ask at most {MAX_PARTS} at a time")
    return parts


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
    documents: Sequence[str] | DocumentNames | Chosen = (),
) -> list[PartResult]:
    """Candidates per question part, each list in rank order; an empty list means abstain.
    `documents` narrows the search to the eligible documents it holds: names a caller gave (file
    names, globs or series: `localqa.question.scope`), or documents the program chose (`Chosen`)."""
    settings = resolve(store, settings or RetrievalSettings())
    if settings.retriever != "lexical" and store.lacks_vectors(embeddings.MODEL_NAME):
        former = embeddings.earlier_encoders(store)
        if former:  # never compared with this encoder's vectors: they differ
            raise LocalQAError(
                f"the index's embeddings were computed by an earlier encoder ({', '.join(former)}), "
                f"and --retriever {settings.retriever} needs {embeddings.MODEL_NAME}'s; run "
                "'localqa index' to compute them again"
            )
        raise LocalQAError(
            f"the index has no embeddings for {embeddings.MODEL_NAME}, which --retriever "
            f"{settings.retriever} needs; run 'localqa index --embed' (needs localqa[semantic])"
        )
    eligible = _eligible(store, store.eligible(as_of, caller))
    if isinstance(documents, Chosen):
        eligible = eligible.within(documents.within(eligible.documents))
    elif documents:
        eligible = eligible.within(named(documents, eligible.documents, as_of, caller, store.listed(caller)))
    asked = question_parts(question, parts)
    # The model loads while the lexical side runs; not before the question is known to be good (a
    # usage error would wait for it), nor when no document is eligible (nothing to rank).
    if settings.retriever != "lexical" and eligible.documents:
        embeddings.warm_up()
    results = [_retrieve_part(store, part, eligible, settings) for part in asked]
    return [r.model_copy(update={"retriever": settings.retriever}) for r in results]


Number = TypeVar("Number", np.int64, np.float64)


def _distinct(values: npt.NDArray[Number]) -> npt.NDArray[Number]:
    """The distinct values, ascending (no NaN among them): `np.unique`, without the import of
    `numpy.ma` its first call costs a fresh process (numpy 2 checks for a masked array; 0.06 s
    under load)."""
    ordered = np.sort(values)
    first = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


class _Ranking:
    """Passage ids with their scores, and whether there is evidence that anything is about the
    question (a shared word, a neighbour). Rank order is best first, ties to the lower id; only
    as much of it is worked out as is asked for: sorting every passage that shares a word with
    the question costs more than the rest of a search once the collection is large."""

    def __init__(self, ids: npt.ArrayLike, scores: npt.ArrayLike, relevant: bool) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)  # distinct, in no particular order
        self.scores = np.asarray(scores, dtype=np.float64)
        self.relevant = relevant

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The `n` best ids and their scores, in rank order."""
        chosen = np.arange(len(self.ids))
        if n < len(self.ids):
            # Everything scoring at least the n-th best score, ties at the boundary included,
            # so that the order below decides them exactly as a full sort would.
            threshold = -np.partition(-self.scores, n - 1)[n - 1] if n > 0 else np.inf
            chosen = np.flatnonzero(self.scores >= threshold)
        order = chosen[np.lexsort((self.ids[chosen], -self.scores[chosen]))][:n]
        return self.ids[order], self.scores[order]

    def positions(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Where each of `ids` is in `self.ids`; -1 for an id the ranking does not hold."""
        where = np.full(len(ids), -1, dtype=np.int64)
        if len(ids) and len(self.ids):
            found = np.flatnonzero(np.isin(self.ids, ids))
            index = dict(zip(self.ids[found].tolist(), found.tolist(), strict=True))
            where[:] = [index.get(pid, -1) for pid in ids.tolist()]
        return where

    def ranks(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The 1-based rank of the entries at `positions`: one more than the number of entries
        scoring higher, or as high with a lower id. Counted against a handful of score levels
        rather than by sorting the whole ranking."""
        if not len(positions):
            return np.zeros(0, dtype=np.int64)
        if len(positions) > 1000:  # most of the ranking: sorting it is cheaper
            ranks = np.empty(len(self.ids), dtype=np.int64)
            ranks[np.lexsort((self.ids, -self.scores))] = np.arange(1, len(self.ids) + 1)
            return ranks[positions]
        scores = self.scores[positions]
        levels = _distinct(scores)  # ascending
        below = np.searchsorted(levels, self.scores, side="left")  # levels strictly below each score
        # above[j]: entries with more than j levels strictly below them, i.e. scoring above level j
        above = np.cumsum(np.bincount(below, minlength=len(levels) + 1)[::-1])[::-1]
        level = np.searchsorted(levels, scores)
        higher = above[level + 1]
        # Among the entries tied with a level, sorted by (score, id), an entry's position counts
        # the lower levels' ties and then its own level's lower ids; subtract the former.
        tied = np.flatnonzero(levels[np.minimum(below, len(levels) - 1)] == self.scores)
        order = tied[np.lexsort((self.ids[tied], self.scores[tied]))]
        position = np.empty(len(self.ids), dtype=np.int64)
        position[order] = np.arange(len(order))
        before = position[positions] - np.searchsorted(self.scores[order], scores, "left")
        return higher + before + 1

    def score_of(self, ids: list[int]) -> dict[int, float]:
        where = self.positions(np.asarray(ids, dtype=np.int64))
        return {
            pid: (float(self.scores[at]) if at >= 0 else 0.0)
            for pid, at in zip(ids, where.tolist(), strict=True)
        }


class _Fused:
    """Reciprocal rank fusion of a lexical ranking and the best semantic ids, computed for the
    ids asked about: a fused score needs the id's lexical rank, not the whole lexical order."""

    def __init__(
        self,
        lexical: _Ranking,
        semantic_ids: npt.NDArray[np.int64],
        relevant: bool,
        settings: RetrievalSettings,
    ) -> None:
        self.lexical = lexical
        self.semantic = semantic_ids  # in semantic rank order
        self.relevant = relevant
        self.settings = settings
        self._semantic_rank = {pid: rank for rank, pid in enumerate(semantic_ids.tolist(), start=1)}

    def __len__(self) -> int:
        return len(self.lexical) + int(np.count_nonzero(self.lexical.positions(self.semantic) < 0))

    def _scores(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Each id's fused score, added up in the order a fusion of the two full rankings adds
        them (lexical gain, then semantic), so that the floats are the same."""
        settings = self.settings
        scores = np.zeros(len(ids), dtype=np.float64)
        where = self.lexical.positions(ids)
        held = where >= 0
        scores[held] += settings.lexical_weight / (settings.rrf_k + self.lexical.ranks(where[held]))
        semantic = np.array([self._semantic_rank.get(pid, 0) for pid in ids.tolist()], dtype=np.int64)
        near = semantic > 0
        scores[near] += settings.semantic_weight / (settings.rrf_k + semantic[near])
        return scores

    def top(self, n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        if self.settings.lexical_weight > 0 and self.settings.rrf_k >= 0:
            # An id outside the semantic list scores by its lexical rank alone, so the best n
            # fused ids are among the semantic ones and the best n + |semantic| lexical ones.
            lexical, _ = self.lexical.top(n + len(self.semantic))
        else:
            lexical = self.lexical.ids
        candidates = _distinct(np.concatenate((lexical, self.semantic)))
        scores = self._scores(candidates)
        order = np.lexsort((candidates, -scores))[:n]
        return candidates[order], scores[order]

    def score_of(self, ids: list[int]) -> dict[int, float]:
        scores = self._scores(np.asarray(ids, dtype=np.int64))
        return dict(zip(ids, scores.tolist(), strict=True))


class _Eligible:
    """A set of documents a search may rank, with what is derived from it: its scope for the
    store, its routing directory, and its subsets (named by the caller or routed to) with theirs.
    Kept per store for each set `Store.eligible` hands out (the same dict for a caller and date):
    a frozenset of every eligible id per question part (tens of milliseconds with 100k
    documents, and the store's caches keyed by it compare it whole) would be most of a search."""

    SUBSETS = 64  # subsets kept per set, the least recently used dropped first

    def __init__(self, documents: dict[str, Document]) -> None:
        self.documents = documents
        self.scope = Scope(doc_ids=frozenset(documents))
        self._directory: routing.Directory | None = None
        self._subsets: OrderedDict[frozenset[str], _Eligible] = OrderedDict()

    def directory(self, store: Store) -> routing.Directory:
        if self._directory is None:
            self._directory = routing.Directory(self.documents.values(), store.found())
        return self._directory

    def within(self, doc_ids: Iterable[str]) -> _Eligible:
        """The subset of these documents with the given ids."""
        key = frozenset(doc_ids) & self.scope.doc_ids
        if key == self.scope.doc_ids:
            return self
        subset = self._subsets.pop(key, None) or _Eligible({d: self.documents[d] for d in key})
        self._subsets[key] = subset
        if len(self._subsets) > self.SUBSETS:
            self._subsets.popitem(last=False)
        return subset


_ELIGIBLE: weakref.WeakKeyDictionary[Store, dict[int, tuple[dict[str, Document], _Eligible]]] = (
    weakref.WeakKeyDictionary()
)


def _eligible(store: Store, allowed: dict[str, Document]) -> _Eligible:
    kept = _ELIGIBLE.setdefault(store, {})
    found = kept.get(id(allowed))
    if found is None or found[0] is not allowed:  # the dict is kept with it, so its id is not reused
        found = (allowed, _Eligible(allowed))
        kept[id(allowed)] = found
    return found[1]


def _retrieve_part(store: Store, part: str, eligible: _Eligible, settings: RetrievalSettings) -> PartResult:
    """The part's candidates. When it names some of the eligible documents (`localqa.question.routing`),
    they are searched on their own first, as if they were all there is, and the others' best
    candidates only fill the places they leave among the first k."""
    query = search_text(part)
    unheld = _unheld(store, query, eligible, settings)
    reading = read(part)  # what the part asks, read once: every later stage takes it from here
    # The directory is built on first need: a part that writes no name cannot be routed.
    writes_names = eligible.documents and routing.question_names(query)
    routed = eligible.directory(store).route(query) if writes_names else None
    if routed is None:
        return _ranked(store, part, eligible, settings).model_copy(
            update={"unheld": unheld, "reading": reading}
        )
    doc_ids, route = routed
    first = _ranked(store, part, eligible.within(doc_ids), settings).model_copy(
        update={"route": route, "unheld": unheld, "reading": reading}
    )
    if len(first.candidates) >= settings.k:
        return first
    others = [c for c in _ranked(store, part, eligible, settings).candidates if c.doc_id not in doc_ids]
    filled = [*first.candidates, *others][: settings.k]
    if not filled:
        return first
    ranked = tuple(c.model_copy(update={"rank": rank}) for rank, c in enumerate(filled, start=1))
    return first.model_copy(update={"candidates": ranked, "note": None})


# A year inside a longer token ("FY2016", "Q32024"): coverage checks it as a year of its own.
_YEAR_INSIDE = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def _unheld(store: Store, query: str, eligible: _Eligible, settings: RetrievalSettings) -> tuple[str, ...]:
    """The query's search terms no eligible passage holds (with its title and heading path under
    "heading" chunking), whatever retriever ranks: the answer stage refuses a name only the
    collection lacks (`localqa.answers.coverage`). Read from the eligible scope alone, so it says
    nothing of documents the caller may not see. A year written inside a period ("FY2016") is
    looked up on its own too ("2016"), as the answer stage checks it. A word's stem held only by
    passages that never write the word ("found" for "founded") is unheld too (`held`)."""
    terms = list(dict.fromkeys([*store.terms(query), *store.terms(" ".join(_YEAR_INSIDE.findall(query)))]))
    if not eligible.documents or not terms:
        return tuple(terms)
    postings = dict(zip(terms, store.postings_of(eligible.scope, terms, settings.chunking), strict=True))
    return held.unheld(store, query, postings, eligible, settings.chunking)


def _ranked(store: Store, part: str, eligible: _Eligible, settings: RetrievalSettings) -> PartResult:
    allowed = eligible.documents
    if not allowed:
        return PartResult(
            question=part, candidates=(), note="no document is eligible for this caller and date"
        )
    scope = eligible.scope
    query = search_text(part)  # the part without instructions about the reply
    codes = identifiers(query)
    carriers = store.carriers(scope, codes, settings.chunking) if codes else {}
    if codes and not carriers:
        return PartResult(
            question=part, candidates=(), note=f"no eligible passage carries {', '.join(codes)}"
        )
    ranking = _rank(store, query, scope, settings)
    if codes:
        # The identifier decides which passages qualify; the retriever only orders them.
        known = ranking.score_of(list(carriers))
        ranked = sorted(carriers, key=lambda pid: (-len(carriers[pid]), -known[pid], pid))
    elif not len(ranking) or not ranking.relevant:
        return PartResult(question=part, candidates=(), note=_abstention(store, query, settings))
    else:
        depth = settings.k * DIVERSITY_DEPTH if settings.per_page else settings.k
        ranked = ranking.top(depth)[0].tolist()
    top = _spread(store, ranked, settings)
    return PartResult(
        question=part, candidates=tuple(_candidates(store, top, ranking.score_of(top), allowed))
    )


def _spread(store: Store, ranked: list[int], settings: RetrievalSettings) -> list[int]:
    """The first k of `ranked`, at most `per_page` of them from one page (a Markdown or text file
    is one page), in rank order. On real documents one page often holds many matching passages
    (the rows of one statement, one section's paragraphs); k candidates spread over more pages
    show more of the evidence, and a conflict elsewhere. When too few pages match, the passages
    passed over fill the remaining places, so the cap never returns fewer candidates."""
    if not settings.per_page or len(ranked) <= settings.k:
        return ranked[: settings.k]
    stored = store.passages(ranked)
    taken: set[int] = set()
    on_page: Counter[tuple[str, int | None]] = Counter()
    for passage_id in ranked:
        page = (stored[passage_id].source, stored[passage_id].page)
        if on_page[page] < settings.per_page:
            on_page[page] += 1
            taken.add(passage_id)
            if len(taken) == settings.k:
                break
    passed_over = [pid for pid in ranked if pid not in taken]
    taken.update(passed_over[: settings.k - len(taken)])
    return [pid for pid in ranked if pid in taken]


def _abstention(store: Store, part: str, settings: RetrievalSettings) -> str:
    if settings.retriever == "semantic":
        return "no eligible passage is close to the question in meaning"
    if not store.terms(part) and settings.retriever == "lexical":
        return "the question has no searchable words"
    if settings.retriever == "hybrid":
        return "no eligible passage shares a meaningful word with the question or is close to it in meaning"
    return "no eligible passage shares a meaningful word with the question"


def _rank(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking | _Fused:
    if settings.retriever == "lexical":
        return _lexical(store, part, scope, settings)
    if settings.retriever == "semantic":
        return _semantic(store, part, scope, settings)
    # Fusion reads only the best `semantic_depth` semantic ranks.
    lexical = _lexical(store, part, scope, settings)
    semantic = _semantic(store, part, scope, settings, limit=settings.semantic_depth, lexical=lexical)
    return _fuse(lexical, semantic, settings)


def _lexical(store: Store, part: str, scope: Scope, settings: RetrievalSettings) -> _Ranking:
    """BM25. Relevant when any eligible passage shares a meaningful word with the question: the
    absence of every such word holds on real text; how many words a real answer shares with a
    question does not (it is often the document's words, not the asker's)."""
    ids, scores = _bm25(store, store.terms(part), scope, settings)
    return _Ranking(ids, scores, bool(len(ids)))


def _semantic(
    store: Store,
    part: str,
    scope: Scope,
    settings: RetrievalSettings,
    limit: int | None = None,
    lexical: _Ranking | None = None,
) -> _Ranking:
    """Cosine similarity of the part to every eligible passage, or (a `limit`) to at least the
    `limit` closest ones (statistics-free, so nothing ineligible can influence it). While a
    refresh is still embedding, the `lexical` top `semantic_depth` passages that have no vector
    yet are embedded now (issue 21: SciFact nDCG@10 0.7147 with only those against 0.7151 fully
    embedded), so a passage the lexical side found ranks as it will once its vector is stored."""
    vector = embeddings.embed([part])[0]
    ids, similarities = store.similarities(scope, embeddings.MODEL_NAME, vector, limit)
    if lexical is not None:
        top = lexical.top(settings.semantic_depth)[0].tolist()
        missing = store.missing_vectors(embeddings.MODEL_NAME, top)
        if missing:
            texts = [embeddings.passage_text(p.context, p.section, p.text) for p in missing]
            ids = np.concatenate((ids, np.array([p.id for p in missing], dtype=np.int64)))
            similarities = np.concatenate((similarities, embeddings.embed_cached(texts) @ vector))
    relevant = bool(len(ids)) and float(similarities.max()) >= settings.neighbour
    return _Ranking(ids, similarities, relevant)


def _fuse(lexical: _Ranking, semantic: _Ranking, settings: RetrievalSettings) -> _Fused:
    """Reciprocal rank fusion of the two rankings (weights and k from the settings). Relevant
    when either is: a shared word, or a semantic neighbour. Whether the candidates answer the
    question is the answer stage's call. With no shared word at all, only the semantic
    neighbours take part."""
    semantic_ids, similarities = semantic.top(settings.semantic_depth)
    if not lexical.relevant:
        semantic_ids = semantic_ids[similarities >= settings.neighbour]
    return _Fused(lexical, semantic_ids, lexical.relevant or semantic.relevant, settings)


def _bm25(
    store: Store, terms: list[str], scope: Scope, settings: RetrievalSettings
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """BM25 of every eligible passage matching at least one term, with statistics taken from the
    eligible passages only: (passage ids, scores)."""
    statistics = store.lexical_statistics(scope, settings.chunking)
    ids: list[npt.NDArray[np.int32]] = []
    gains: list[npt.NDArray[np.float64]] = []
    for postings in store.postings_of(scope, terms, settings.chunking):
        weight = bm25.idf(statistics.passages, len(postings.ids))
        ids.append(postings.ids)
        gains.append(
            bm25.gain(
                weight,
                postings.frequencies,
                postings.lengths,
                statistics.average_length,
                settings.k1,
                settings.b,
            )
        )
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    # Summed per passage in arrays indexed by passage id (ids are rowids, dense enough): grouping
    # the postings by sorting them costs more once common terms have 100k postings. The gains
    # are added in the same order either way, so the scores are the same floats. Every gain is
    # positive (idf > 0 in its "+1" form, a posting's frequency > 0), so the passages scored are
    # exactly those with a score above zero.
    scores = np.bincount(np.concatenate(ids), weights=np.concatenate(gains))
    scored = np.flatnonzero(scores)
    return scored.astype(np.int64), scores[scored].astype(np.float64)


def _candidates(
    store: Store, ids: list[int], scores: dict[int, float], allowed: dict[str, Document]
) -> list[Candidate]:
    stored = store.passages(ids)
    found = store.found() if ids else {}
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
                boxes=passage.boxes,
                title=searchable_title(document.source, document.title),
                period=periods.of_document(document, found.get(passage.doc_id))[0],
            )
        )
    return candidates
