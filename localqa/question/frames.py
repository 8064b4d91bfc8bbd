"""A question as the slots a follow-up fills and a reading names: its head ("What was "), whose
figure it asks ("Boeing's"), the line item or topic ("total revenue") and the rest ("in FY2022":
periods, identifiers, "of Amazon"), read once from its words (`Frame.of`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The shape of a question whose topic a follow-up may replace: a question word and an auxiliary,
# the topic, and its slots after a preposition ("What is | the loan limit | for EQ-314?").
AUX = r"(?:is|are|was|were|does|do|did|can|may|must|will|should)"
SHAPE = re.compile(
    rf"^(?P<head>(?:what|which|how\s+(?:much|many|long|often)|when|where|who)\s+(?:\w+\s+)?(?P<aux>{AUX})\s+"
    rf"(?:(?P<owner>[^\s?]+['\u2019]s)\s+)?(?:the\s+)?)(?P<topic>.+?)"
    rf"(?P<tail>\s+(?:for|of|under|in|at|on|from|during|per)\s+.+?)?\s*\?*\s*$",
    re.IGNORECASE,
)
# Only after "is"/"are" is what follows a topic a noun can replace ("How many times can a book be
# renewed" has none).
COPULAS = frozenset({"is", "are", "was", "were"})


@dataclass(frozen=True)
class Frame:
    """A question as the slots a follow-up fills: its head ("What was "), whose ("Boeing's"), the
    line item asked ("total revenue") and the rest ("in FY2022": periods, identifiers, "of
    Amazon"). Parsed once from the previous standalone question (`SHAPE`), so a follow-up replaces
    a slot and keeps the others, never cutting and pasting words."""

    head: str
    owner: str | None
    topic: str
    tail: str
    copula: bool  # the auxiliary is "is"/"was": what follows is a noun a follow-up may replace

    @classmethod
    def of(cls, question: str) -> Frame | None:
        found = SHAPE.match(question)
        if not found:
            return None
        head = found["head"] if not found["owner"] else found["head"][: found.start("owner")]
        owner = found["owner"][:-2] if found["owner"] else None
        return cls(head, owner, found["topic"], found["tail"] or "", found["aux"].lower() in COPULAS)

    def text(self) -> str:
        owner = f"{self.owner}'s " if self.owner else ""
        return f"{self.head}{owner}{self.topic}{self.tail}?"
