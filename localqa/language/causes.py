"""The words by which a sentence states the cause of a change ("due to", "driven by", "primarily
as a result of", "reflecting", "partially offset by"), and where the cause it states is written:
shared word rules, read by the sentence scorer (`localqa.answers.causes`) and the value chooser
(`localqa.values.phrases`)."""

from __future__ import annotations

import re

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


def states_cause(sentence: str) -> str | None:
    """The name of the first cue by which `sentence` states a cause, or None."""
    found = [(m.start(), name) for name, pattern in CAUSE_CUES if (m := pattern.search(sentence))]
    return min(found)[1] if found else None


def cause_span(sentence: str) -> tuple[int, int] | None:
    """Where the cause the sentence states is written: from its first cue to the sentence's end
    (its closing punctuation left out). None when it states none."""
    found = [m for _, pattern in CAUSE_CUES if (m := pattern.search(sentence))]
    if not found:
        return None
    start = min(m.start() for m in found)
    end = len(sentence.rstrip().rstrip(".;:!?").rstrip())
    return (start, end) if end > start else None
