"""Whether two words are the same word: by dictionary lemma, never by stem.

The index stems with Porter (`localqa.language.tokenizer`), which is right for ranking and wrong for
deciding what a text holds: Porter makes "founded" and the "found" of "if a lost item is found"
one token, and "Who founded the library?" then reads as asked of a passage about lost property.
A lemma keeps them apart: "founded" is a form of "found" (to establish), "found" of "find".
simplemma gives one lemma per word from its dictionary, with no part of speech needed (lemminflect,
the other field library, needs one and gives "found" both "find" and "found": docs/measured.md).

Which parts of speech a word can be comes from lemminflect's lexicon (`can_name`), no tagger: the
readings of the word alone, enough to tell a noun the collection lacks ("drawer") from a verb
("come").

A word outside the dictionary is its own lemma, so a name, a code or a new coinage is compared as
written, and a plural ending is removed first (`words.singular`), as the word rule always did.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import lemminflect
import simplemma

from localqa.language import words


@lru_cache(maxsize=16384)
def lemma(word: str) -> str:
    """The dictionary lemma of one folded word (`words.plain`): "founded": "found", "found":
    "find", "reconciled": "reconcile", "studies": "study"; a word the dictionary does not hold,
    as written."""
    found = simplemma.lemmatize(word, lang="en").lower()
    if not found.isalnum():
        return word
    # The dictionary keeps the doubled "l" of British inflections ("travelling": "travell",
    # "cancelled": "cancell") and not of the word itself ("travel"): one "l" on both sides.
    return found[:-1] if found.endswith("ll") else found


def can_name(word: str, *, modifier: bool = False) -> bool:
    """Whether a folded word is a dictionary word that can name a thing, by the parts of speech
    lemminflect's lexicon gives it (no tagger: every reading counts): a noun ("drawer", "shift",
    "cars"), a gerund ("parking"), or, as the first of two words (`modifier`), an adjective
    ("legal team"). "come" and "require" are only verbs. A word the lexicon does not hold is
    none: an acronym ("AGM", "FCF"), a compound run together ("passthrough" for "pass-through"),
    a typo ("requiremnt") may be written otherwise in the documents."""
    readings = set(lemminflect.getAllLemmas(word))
    if readings & {"NOUN", "PROPN"} or (modifier and "ADJ" in readings):
        return True
    # A gerund names an activity ("visitor parking", "the housing allowance"); "bring" is none.
    return word.endswith("ing") and "VERB" in readings and lemma(word) != word


def may_name(word: str) -> bool:
    """Whether a folded word may be part of a name of a thing: `can_name` as a modifier, or a
    word the lexicon does not hold (an acronym, "HR director"; a code). Not a word that is only a
    verb, adverb or particle ("bring back")."""
    return can_name(word, modifier=True) or not lemminflect.getAllLemmas(word)


def degree(word: str) -> bool:
    """Whether a folded word is a comparative or superlative ("highest", "larger", "better",
    "latest"): the dictionary gives it another lemma and it ends as one does. It says how the
    question compares, not what it asks about; "founder" and "drawer" are their own lemmas."""
    return word.endswith(("est", "er")) and lemma(word) != word


def _own(word: str) -> frozenset[str]:
    return frozenset((word, words.singular(word)))


@dataclass(frozen=True)
class Written:
    """The words a text writes, as the same-word rule compares them: each as written and singular
    (`forms`), and each word's lemma (`lemmas`). Kept apart: "found" written in a text is not the
    lemma of "founded" asked about."""

    forms: frozenset[str]
    lemmas: frozenset[str]

    def writes(self, word: str) -> bool:
        """Whether the text writes `word` (folded) in some form: as written, singular or plural
        ("lenses" for "lens", which the dictionary makes "lense"), across "-ly" ("remotely" for
        "remote"), or by lemma ("returned" for "returning", "studies" for "study"; not "found"
        for "founded")."""
        # Its plural spelled out, and its adverb or adjective across "-ly" ("remote work" where
        # the text writes "work remotely"), which Porter stems apart and a reader reads as one.
        own = _own(word) | {f"{word}s", f"{word}es", f"{word}ly"}
        if word.endswith("ly") and len(word) > 4:
            own |= {word[:-2]}
        return bool(own & self.forms) or lemma(word) in self.lemmas


@lru_cache(maxsize=4096)
def written(text: str) -> Written:
    """The words of `text` (folded, punctuation dropped), for `Written.writes`."""
    said = words.plain(text).split()
    return Written(frozenset().union(*map(_own, said)), frozenset(map(lemma, said)))
