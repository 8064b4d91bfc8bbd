"""What a part asks, read once (`read`): one `localqa.types.Reading` per part, its shape decided by
the first rule below that holds, its slots from its frame and its words.

| shape | rule (`localqa.question.cues`, `.lists`, `.acronyms`) |
|---|---|
| definition | "what does NARL stand for", "what is meant by ESG" (`acronym_asked`) |
| cause | "what drove", "why did", "reasons for" (`asks_cause`) |
| extreme | "which ... largest / fell most / which year ... highest" (`extreme_asked`) |
| comparison | "how did X compare to Y" (`compares_two_items`); a yes/no or "how has ... changed" |
| | part with a judgment, sign, improvement or change cue (`comparison_kind`) |
| total | arithmetic on stated figures: "how many more", "in total", "the average of" (`arithmetic_asked`) |
| count, list | "how many <things>", "list the", "what are the <plural>" (`lists.asked`) |
| yes/no | a part that opens with an auxiliary |
| figure | a year named and a quantity asked, and no cue above |
| value | a quantity, a duration, a time, a place, a person or a price asked |
| fact | none of these |

The stages after retrieval take their cue from the record (the figure planners run only for the
shapes that compute: `localqa.derived.deriving`); the reader sees it in one line (`Reading.describe`)
in the terminal, the JSON and the web app.
"""

from __future__ import annotations

import functools
import re

from localqa.question import cues, lists, periods
from localqa.question.acronyms import acronym_asked
from localqa.question.asked import Wanted, wanted
from localqa.question.frames import Frame
from localqa.types import Reading

# The shapes whose answer localqa computes in code (figures, comparisons, extremes, arithmetic,
# counts and lists): the evidence writes their operands, never the name of what is computed.
COMPUTED_SHAPES = frozenset(("figure", "comparison", "extreme", "total", "count", "list"))
# "What was/were ...": a figure when the part names a year.
_WHAT_WAS = re.compile(r"^\W*what\s+(?:is|was|are|were)\b", re.IGNORECASE)


@functools.lru_cache(maxsize=512)
def read(part: str) -> Reading:
    """What `part` asks (see the module's table); memoised, since retrieval, coverage and the
    figure planners each take it from the part's words, and a `Reading` is immutable."""
    asked = wanted(part)
    said = tuple(dict.fromkeys(m.text for m in periods.mentions(part)))
    frame = Frame.of(cues.asking(part).strip())
    owner = frame.owner if frame else None
    # What follows "is"/"was" names the topic; after another verb it is a clause, no topic.
    measure = frame.topic.rstrip(" ?") if frame and frame.copula else None

    def reading(
        shape: str,
        rule: str,
        *,
        about: str | None = measure,
        counted: str | None = None,
        kind: str | None = None,
    ) -> Reading:
        return Reading(
            shape=shape, rule=rule, owner=owner, measure=about, periods=said, counted=counted, kind=kind
        )

    acronym = acronym_asked(part)
    if acronym is not None:
        return reading("definition", "what an acronym stands for", about=acronym)
    cause = cues.asks_cause(part)
    if cause is not None:
        return reading("cause", f"'{cause}'")
    extreme = cues.extreme_asked(part)
    if extreme is not None:
        over = "of one row's periods" if extreme.over_periods else "of a table's rows"
        growth = " growth" if extreme.growth else ""
        kind = f"the {'smallest' if extreme.lowest else 'largest'}{growth}, {over}"
        return reading("extreme", f"'which ... {extreme.word}'", about=extreme.measure, kind=kind)
    if cues.compares_two_items(part):
        return reading("comparison", "'how did ... compare to'", kind="two items")
    compared = cues.comparison_kind(part)
    if compared is not None:
        return reading("comparison", f"a yes/no or 'how has ... changed' part: {compared}", kind=compared)
    operation = cues.arithmetic_asked(part)
    if operation is not None:
        return reading("total", f"arithmetic on stated figures: {operation}", kind=operation)
    listed = lists.asked(part)
    if listed is not None:
        return reading(listed.kind, f"'{listed.cue}'", counted=listed.noun)
    if cues.asks_yes_or_no(cues.asking(part)):
        return reading("yes/no", "it opens with an auxiliary")
    if asked.years and cues.asks_quantity(part) and (asked.quantity or _WHAT_WAS.match(cues.asking(part))):
        return reading("figure", "a year named and a figure asked")
    value = value_kind(asked)
    if value is not None:
        return reading("value", f"{value} asked", kind=value)
    return reading("fact", "no cue of another shape")


def value_kind(asked: Wanted) -> str | None:
    """The kind of value a part asks for, as the reader is told it, or None."""
    kinds = (
        (asked.who, "a person or role"),
        (asked.where, "a place"),
        (asked.when, "a time or date"),
        (asked.duration, "a duration"),
        (asked.price, "a price"),
        (asked.percent, "a percentage"),
        (asked.quantity, "a quantity"),
    )
    return next((name for held, name in kinds if held), None)
