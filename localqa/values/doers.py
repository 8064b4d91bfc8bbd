"""Who a "who" question's value may be: a name, or a short phrase naming a role or body
(`names_a_doer`). Serves "who approves ...", "by whom ..." questions, whether their value is a
span ("approved by the finance controller", `localqa.values.spans`) or the rest of a sentence
(`localqa.values.phrases`).
"""

from __future__ import annotations

from localqa.language.lexicon import DOERS, MONTHS, WEEKDAYS
from localqa.language.words import WORD, is_name, singular

# A doer is named in a few words: a longer phrase is a clause, not who did it.
_DOER_WORDS = 8


def names_a_doer(text: str) -> bool:
    """Whether `text` names a person, team or organisation as a "who" question's value: a name
    ("Marcus Webb", `words.is_name`; never a day or month, "on Sundays"), or a short phrase whose
    last word is a role or body (`lexicon.DOERS`: "the finance controller", "HR director"). A
    phrase that opens with a preposition says when, where or how, not who; anything else ("and
    returned within 60 days, the fee is refunded") names no doer, and gives no value."""
    found = WORD.findall(text)
    if not found or len(found) > _DOER_WORDS or found[0].lower() in _NOT_A_DOER:
        return False
    if any(
        is_name(word, first=index == 0) and singular(word.lower()) not in _DATED
        for index, word in enumerate(found)
    ):
        return True
    return singular(found[-1].lower()) in DOERS


# A phrase opening with one of these says when, where or how ("on Sundays", "within 3 days").
_NOT_A_DOER = frozenset(
    "on in at from during for to until till before after within with without under over between "
    "and or but if when".split()
)
_DATED = MONTHS | WEEKDAYS
