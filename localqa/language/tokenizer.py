"""Tokenising questions and passages exactly as the FTS5 index does.

The index uses FTS5's `porter unicode61` tokenizer. Questions and passage lengths must be
tokenised identically or BM25 statistics drift, so instead of a second tokenizer in Python this
module asks SQLite itself, through a private in-memory FTS5 table and its `fts5vocab` view.
"""

from __future__ import annotations

import sqlite3
import threading
from functools import lru_cache

TOKENIZE = "porter unicode61 remove_diacritics 2"

# Words that carry no topic; removed from questions before matching (after stemming, so that
# "does" and "do" both go).
STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just last
long many me might more most much must my myself no nor not now of off on once only or other our
ours ourselves out over own please same shall she should so some such tell than that the their
theirs them themselves then there these they this those through to too under until up upon very
was we were what when where which while who whom why will with would you your yours yourself
yourselves
""".split()
)


class Tokenizer:
    """Porter-stemmed tokens of arbitrary text, via SQLite's own FTS5 tokenizer."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        # One scratch row on one connection: callers on several threads (`localqa serve`) must
        # take turns, or one's DELETE/INSERT lands between another's INSERT and SELECT.
        self._turn = threading.Lock()
        self._db.execute(f"CREATE VIRTUAL TABLE scratch USING fts5(text, tokenize='{TOKENIZE}')")
        self._db.execute("CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, 'instance')")
        # All stop words in one text, one statement: the tokenizer splits them apart as it would
        # one at a time (a fresh process paid 137 statements, ~15 ms, for this set).
        self._stop = frozenset(self.tokens(" ".join(sorted(STOP_WORDS))))

    def tokens(self, text: str) -> list[str]:
        """Stemmed tokens of `text` in order (duplicates kept)."""
        with self._turn, self._db:
            self._db.execute("DELETE FROM scratch")
            self._db.execute("INSERT INTO scratch(rowid, text) VALUES (1, ?)", (text,))
            rows = self._db.execute("SELECT term FROM scratch_terms ORDER BY offset").fetchall()
        return [term for (term,) in rows]

    def terms(self, text: str) -> list[str]:
        """Distinct meaningful stemmed terms of a question, stop words removed, in order."""
        return self.meaningful(self.tokens(text))

    def meaningful(self, tokens: list[str]) -> list[str]:
        """The distinct tokens (of `tokens`, from `tokens()`) that are not stop words, in order."""
        return list(dict.fromkeys(t for t in tokens if t not in self._stop))


_MAKING = threading.Lock()


def tokenizer() -> Tokenizer:
    with _MAKING:  # made once, whichever thread asks first
        return _make()


@lru_cache(maxsize=1)
def _make() -> Tokenizer:
    return Tokenizer()
