"""Whether the caller's collection holds a question's word by its lemma, not only by its stem.

Retrieval looks a part's search terms up as the index stems them (`retrieve._unheld`), and a Porter
stem joins words a reader keeps apart and parts words a reader joins: "founded" and the "found" of
"if a lost item is found" are both "found", while "lens" is "len" and "lenses" "lens". The answer
stage refuses a word no eligible document holds (`localqa.answers.coverage.in_collection`), so
each word of the part is decided by the passages that could write it, those holding its stem or
the stem of its plural spelled out ("lenses"): it is held when one of them writes the word in some
form (`localqa.language.lemmas`: as written, singular, plural, or by lemma), and its stem is unheld
for this part otherwise. Only passages in the caller's eligible scope are read, so nothing is said
of documents the caller may not see; terms that are no word of the question (a year inside a
period) keep the index's verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from localqa.indexing.catalog import searchable_title
from localqa.language import lemmas, words
from localqa.language.tokenizer import tokenizer
from localqa.settings import Chunking
from localqa.store.base import Postings, Scope, Store, StoredPassage
from localqa.types import Document

# At most this many passages that could write a word are read for it. A word more passages could
# write is taken as held: a word that common is almost surely written in its own form somewhere,
# and a refusal must rest on what the collection plainly lacks.
MAX_READ = 64


class Eligible(Protocol):
    """The documents a search may rank and their scope for the store (`retrieve._Eligible`)."""

    documents: dict[str, Document]
    scope: Scope


def unheld(
    store: Store, query: str, postings: Mapping[str, Postings], eligible: Eligible, chunking: Chunking
) -> tuple[str, ...]:
    """The terms of `postings` (the query's stems and what the index holds of each in the eligible
    scope) that the collection does not hold: by the index's postings for a term that is no word
    of the query, by `_written` for one that is. Under "heading" chunking a passage's heading path
    and its document's title are read with its text, as they are searched with it."""
    asked: dict[str, list[str]] = {}
    for word in dict.fromkeys(words.plain(query).split()):
        for stem in tokenizer().tokens(word):
            if stem in postings:
                asked.setdefault(stem, []).append(word)
    plurals = {w: _plural_stems(w) for forms in asked.values() for w in forms}
    extra = sorted({s for stems in plurals.values() for s in stems} - set(postings))
    found = {**postings, **dict(zip(extra, store.postings_of(eligible.scope, extra, chunking), strict=True))}
    lacking = []
    for stem, found_at in postings.items():
        forms = asked.get(stem)
        if forms is None:
            if not len(found_at.ids):
                lacking.append(stem)
            continue
        ids = {int(i) for w in forms for s in (stem, *plurals[w]) for i in found[s].ids}
        if not _written(store, ids, forms, eligible.documents, chunking == "heading"):
            lacking.append(stem)
    return tuple(lacking)


def _plural_stems(word: str) -> list[str]:
    return [s for plural in (f"{word}s", f"{word}es") for s in tokenizer().tokens(plural)]


def _written(
    store: Store, ids: set[int], forms: list[str], documents: Mapping[str, Document], heading: bool
) -> bool:
    if not ids:
        return False
    if len(ids) > MAX_READ:
        return True
    passages = store.passages(sorted(ids)).values()
    return any(_writes(p, documents, word, heading) for p in passages for word in forms)


def _writes(passage: StoredPassage, documents: Mapping[str, Document], word: str, heading: bool) -> bool:
    texts: list[str | None] = [passage.text]
    if heading:
        document = documents.get(passage.doc_id)
        texts += [passage.section, searchable_title(passage.source, document.title if document else None)]
    return any(lemmas.written(text).writes(word) for text in texts if text)
