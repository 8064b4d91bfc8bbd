"""BM25, the one formula: what a term that a unit holds `frequency` times adds to the unit's score.

Retrieval scores passages with it (`localqa.retrieval.retrieve`, statistics from the eligible passages
only) and the sentence scorer scores a part's quotable units (`localqa.answers.sentences`, statistics from
those units); each reads its own k1 and b from the settings. `gain` takes plain floats or numpy
arrays alike and computes the same floats either way (same operations, same order).
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy.typing as npt

Value = TypeVar("Value", float, npt.NDArray[Any])


def idf(total: int, containing: int) -> float:
    """Inverse document frequency (the non-negative "+1" form, as Lucene has it) of a term that
    `containing` of `total` units hold."""
    return math.log(1 + (total - containing + 0.5) / (containing + 0.5))


def gain(weight: float, frequency: Value, length: Value, average_length: float, k1: float, b: float) -> Value:
    """A term's contribution to a unit's score: its `weight` (`idf`) saturated by how often the
    unit holds it (`frequency`, k1) and discounted by the unit's `length` against the average (b)."""
    norm = k1 * (1 - b + b * length / average_length)
    result: Value = weight * frequency * (k1 + 1) / (frequency + norm)
    return result
