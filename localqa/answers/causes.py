"""Explanations: a part that asks what drove, caused or explains a change, and the sentences that
state a cause.

A part asks for a cause (`asks_cause`, `CAUSE_ASKED`) when it asks "what drove", "what caused",
"what explains", "what led to", "what contributed to", "why did/does/is ..." or "the reason(s)
for". A filing states a cause in the words of `localqa.language.causes` ("due to", "driven by",
"primarily as a result of", "reflecting", "partially offset by"), in the section that discusses
results (`DISCUSSION_SECTIONS`: MD&A, results of operations, in a candidate's heading path).

The sentence scorer (`localqa.answers.sentences`) adds `CAUSE_WEIGHT` (a share as large as a first rank
in one of its rankings) to a sentence of such a part that shares a word with it and states a
cause, and `SECTION_WEIGHT` more when its section discusses results; nothing changes for any other
part. The value chooser (`localqa.values.phrases`) gives the cause as written (`cause_span`): the words
from the cue to the end of the sentence.
"""

from __future__ import annotations

import re

from localqa.language.causes import states_cause
from localqa.types import Location

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


def discusses(location: Location) -> bool:
    """Whether the passage sits in a section that discusses results (MD&A, results of operations)."""
    return location.section is not None and DISCUSSION_SECTIONS.search(location.section) is not None


def bonus(location: Location, sentence: str) -> float:
    """What a sentence of a cause part adds to its fused score (0 when it states no cause)."""
    if states_cause(sentence) is None:
        return 0.0
    return CAUSE_WEIGHT + (SECTION_WEIGHT if discusses(location) else 0.0)
