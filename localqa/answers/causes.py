"""Explanations: a part that asks what drove, caused or explains a change, and the sentences that
state a cause.

A part asks for a cause (`asks_cause`, `CAUSE_ASKED`) when it asks "what drove", "what caused",
"what explains", "what led to", "what contributed to", "why did/does/is ..." or "the reason(s)
for". A filing states a cause in the words of `CAUSE_CUES` ("due to", "driven by", "primarily as
a result of", "reflecting", "partially offset by"), in the section that discusses results
(`DISCUSSION_SECTIONS`: MD&A, results of operations, in a candidate's heading path).

The sentence scorer (`localqa.answers.sentences`) adds `CAUSE_WEIGHT` (a share as large as a first rank
in one of its rankings) to a sentence of such a part that shares a word with it and states a
cause, and `SECTION_WEIGHT` more when its section discusses results; nothing changes for any other
part. The value chooser (`localqa.values.phrases`) gives the cause as written (`cause_span`): the words
from the cue to the end of the sentence.
"""

from __future__ import annotations

import re

from localqa.types import Location

# Each way a sentence states the cause of a change, by name.
CAUSE_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "due to",
        re.compile(
            r"\b(?:primarily\s+|mainly\s+|largely\s+|partly\s+|partially\s+)?(?:due|owing)\s+to\b", re.I
        ),
    ),
    (
        "driven by",
        re.compile(r"\b(?:primarily\s+|mainly\s+|largely\s+)?driven\s+(?:primarily\s+|mainly\s+)?by\b", re.I),
    ),
    (
        "as a result of",
        re.compile(r"\b(?:primarily\s+|mainly\s+|largely\s+)?(?:as\s+a\s+result|a\s+result)\s+of\b", re.I),
    ),
    ("attributable to", re.compile(r"\b(?:attributable|attributed)\s+to\b", re.I)),
    ("resulting from", re.compile(r"\bresult(?:ing|ed)\s+from\b", re.I)),
    ("reflecting", re.compile(r"\breflect(?:ing|s|ed)\b", re.I)),
    ("offset by", re.compile(r"\b(?:partially\s+|partly\s+)?offset\s+by\b", re.I)),
    ("because", re.compile(r"\bbecause(?:\s+of)?\b", re.I)),
)
# The sections of a filing that discuss what changed and why (a candidate's heading path).
DISCUSSION_SECTIONS = re.compile(
    r"management['\u2019]?s\s+discussion|\bmd&a\b|results\s+of\s+operations|\boperating\s+results\b"
    r"|\bfinancial\s+review\b|\boutlook\b|\bguidance\b",
    re.I,
)
# What a cause sentence adds to its fused score: as much as a first rank in one of the scorer's
# rankings (weight 1 / (rrf_k + 1) at the default rrf_k of 60), and half that more in a section
# that discusses results. Enough to lift it over sentences ranked alike, not over a far better one.
CAUSE_WEIGHT = 1 / 61
SECTION_WEIGHT = 0.5 / 61


def states_cause(sentence: str) -> str | None:
    """The name of the first cue by which `sentence` states a cause, or None."""
    found = [(m.start(), name) for name, pattern in CAUSE_CUES if (m := pattern.search(sentence))]
    return min(found)[1] if found else None


def discusses(location: Location) -> bool:
    """Whether the passage sits in a section that discusses results (MD&A, results of operations)."""
    return location.section is not None and DISCUSSION_SECTIONS.search(location.section) is not None


def bonus(location: Location, sentence: str) -> float:
    """What a sentence of a cause part adds to its fused score (0 when it states no cause)."""
    if states_cause(sentence) is None:
        return 0.0
    return CAUSE_WEIGHT + (SECTION_WEIGHT if discusses(location) else 0.0)


def cause_span(sentence: str) -> tuple[int, int] | None:
    """Where the cause the sentence states is written: from its first cue to the sentence's end
    (its closing punctuation left out). None when it states none."""
    found = [m for _, pattern in CAUSE_CUES if (m := pattern.search(sentence))]
    if not found:
        return None
    start = min(m.start() for m in found)
    end = len(sentence.rstrip().rstrip(".;:!?").rstrip())
    return (start, end) if end > start else None
