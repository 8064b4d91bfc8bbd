"""Whether the caller's collection holds a question's word by its lemma, not only by its stem.

Retrieval looks a part's search terms up as the index stems them (`retrieve._unheld`), and a Porter
stem joins words a reader keeps apart: "founded" and the "found" of "if a lost item is found" are
both "found". The answer stage refuses a word no eligible document holds
(`localqa.answers.coverage.in_collection`), so for each word of the part whose stem some eligible
passage holds, the passages holding it are read, and the stem counts as unheld for this part when
none of them writes the word in any form (`localqa.language.lemmas`: as written, singular, or by
lemma). Only passages in the caller's eligible scope are read, so nothing is said of documents the
caller may not see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from localqa.indexing.catalog import searchable_title
from localqa.language import lemmas, words
from localqa.store.base import Postings, Store, StoredPassage
from localqa.store.tokenizer import STOP_WORDS, tokenizer
from localqa.types import Document

# At most this many passages holding a stem are read for one word. A stem more passages hold is
# taken as held: a word that common is almost surely written in its own form somewhere, and a
# refusal must rest on what the collection plainly lacks.
MAX_READ = 64


def stems_unwritten(
    store: Store,
    query: str,
    postings: Mapping[str, Postings],
    documents: Mapping[str, Document],
    *,
    heading: bool,
) -> list[str]:
    """The stems of `postings` (held by some eligible passage) that no word of `query` written
    with that stem is written by any passage holding it: "found" for "Who founded the library?"
    where only "found" (of "find") is written. `heading`: the chunking searches a passage's
    heading path and title with its text, so they are read too."""
    asked: dict[str, list[str]] = {}
    for word in dict.fromkeys(words.plain(query).split()):
        if word in STOP_WORDS or any(c.isdigit() for c in word):
            continue
        for stem in tokenizer().tokens(word):
            if stem in postings:
                asked.setdefault(stem, []).append(word)
    unwritten = []
    for stem, forms in asked.items():
        ids = postings[stem].ids
        if not len(ids) or len(ids) > MAX_READ:
            continue
        passages = store.passages(int(i) for i in ids).values()
        if not any(_writes(p, documents, word, heading) for p in passages for word in forms):
            unwritten.append(stem)
    return unwritten


def _writes(passage: StoredPassage, documents: Mapping[str, Document], word: str, heading: bool) -> bool:
    texts: Sequence[str | None] = [passage.text]
    if heading:
        document = documents.get(passage.doc_id)
        title = searchable_title(passage.source, document.title if document else None)
        texts = [passage.text, passage.section, title]
    return any(lemmas.written(text).writes(word) for text in texts if text)
