"""Bounds on what one passage holds, applied to every file's passages before they are indexed.

A passage is the unit of search, and a sentence (or table row) the unit of a quote: a file whose
text never breaks (one 50 MB line of Markdown) was indexed as one passage, printed whole by
`search`, and made `ask` read and quote 50 MB. So no passage is longer than MAX_PASSAGE_CHARS and
no sentence or row longer than MAX_SENTENCE_CHARS, and the file of one over either is named in a
warning. A passage over MAX_PASSAGE_CHARS is cut in pieces no longer than a sentence may be, where
a sentence-ending mark and a space are (else where a word ends); a shorter one with a sentence over
MAX_SENTENCE_CHARS keeps its other sentences (pysbd's, as answers split them) and that sentence is
cut where words end. Both bounds are above every passage of the dev sets, so a real document is
never split (docs/usage.md, Index).

A piece of a sentence cut in pieces is a passage of its own, so that no sentence found in a
passage at answer time can be longer than the bound; a piece of a table row is a prose passage
(a row is quoted whole, and its pieces are not rows). The pieces of a passage take its place, its
page, heading and boxes; the paragraphs of its page are numbered again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from localqa.language.text import squash
from localqa.question import parts
from localqa.types import Kind, Passage

MAX_PASSAGE_CHARS = 20_000
MAX_SENTENCE_CHARS = 8_000
# Where a passage over the bound is cut first: after a sentence's end in the last part of the
# window when there is one (so that a sentence is rarely cut), else after a word.
_SENTENCE_END = re.compile(r"[.!?]['\")\]]* ")


def bounded(passages: Sequence[Passage]) -> tuple[list[Passage], int]:
    """`passages` within the bounds, and how many of them had to be split (0: all as given)."""
    kept: list[Passage] = []
    split = 0
    touched: set[tuple[int | None, Kind]] = set()  # (page, kind) whose paragraphs are numbered again
    for passage in passages:
        pieces = _pieces(passage)
        if pieces is None:
            kept.append(passage)
            continue
        split += 1
        touched |= {(piece.page, piece.kind) for piece in pieces}
        kept += pieces
    return (_renumbered(kept, touched) if split else kept), split


def _pieces(passage: Passage) -> list[Passage] | None:
    """The passages `passage` is split into, or None when it is within the bounds."""
    if len(passage.text) <= MAX_SENTENCE_CHARS:  # nothing in it can be over either bound
        return None
    text = squash(passage.text)
    if len(text) > MAX_PASSAGE_CHARS:
        # Megabytes are not read sentence by sentence (pysbd takes a tenth of a second per
        # passage's worth): pieces no longer than a sentence may be, cut where one seems to end.
        texts = list(_cut(text, MAX_SENTENCE_CHARS, sentences=True))
    else:
        units = [text] if passage.kind is Kind.TABLE else parts.sentences(text)
        if all(len(unit) <= MAX_SENTENCE_CHARS for unit in units):
            return None
        texts = []
        run: list[str] = []
        for unit in units:
            if len(unit) <= MAX_SENTENCE_CHARS:
                run.append(unit)
                continue
            texts += [" ".join(run)] if run else []
            run = []
            texts += list(_cut(unit, MAX_SENTENCE_CHARS, sentences=False))
        texts += [" ".join(run)] if run else []
    kind = Kind.PROSE if passage.kind is Kind.TABLE else passage.kind
    return [
        passage.model_copy(update={"text": piece, "kind": kind, "table": None, "row": None})
        for piece in texts
        if piece
    ]


def _cut(text: str, most: int, *, sentences: bool) -> Iterator[str]:
    """`text` in pieces of at most `most` characters, each cut after a sentence's end in the
    window's last half (`sentences`), else after a word, else where the window ends."""
    while len(text) > most:
        window = text[: most + 1]
        ends = [m.end() for m in _SENTENCE_END.finditer(window, most // 2)] if sentences else []
        cut = ends[-1] if ends else window.rfind(" ") + 1 or most
        yield text[:cut].strip()
        text = text[cut:].lstrip()
    if text:
        yield text


def _renumbered(passages: list[Passage], touched: set[tuple[int | None, Kind]]) -> list[Passage]:
    """The paragraphs of the `touched` pages and kinds numbered again, in order."""
    numbers: dict[tuple[int | None, Kind], int] = {}
    found = []
    for passage in passages:
        key = (passage.page, passage.kind)
        if key not in touched:
            found.append(passage)
            continue
        numbers[key] = numbers.get(key, 0) + 1
        found.append(passage.model_copy(update={"paragraph": numbers[key]}))
    return found
