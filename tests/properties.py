"""How many examples a property test draws.

`make test` (and CI) draws every example a test asks for. `make test-fast`, the edit loop, sets
LOCALQA_QUICK_PROPERTIES=1 and draws a fifth of them (at least 10): the property tests are a quarter
of that loop's time, and a fifth of their examples still reaches each strategy's edge cases
(Hypothesis tries those first), while the full count runs on every CI run.
"""

from __future__ import annotations

import os

QUICK_SHARE = 5


def examples(full: int) -> int:
    """`full` in a full run; a fifth of it, at least 10, in `make test-fast`."""
    if os.environ.get("LOCALQA_QUICK_PROPERTIES") == "1":
        return max(10, full // QUICK_SHARE)
    return full
