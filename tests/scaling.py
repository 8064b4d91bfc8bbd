"""Whether work grows linearly with its input, measured against itself in the same run, so no
test depends on this machine's speed: a rule read on an input four times as long takes about
four times as long when linear, sixteen when quadratic (catastrophic backtracking)."""

from __future__ import annotations

import time
from collections.abc import Callable

# An input this many times as long...
FACTOR = 4
# ...may take at most this many times as long: twice linear, half of quadratic. The stated
# tolerance for a shared machine's noise, on the best of `REPEATS` runs of each size.
MAX_GROWTH = 2 * FACTOR
REPEATS = 5
# Below this, a run is timer noise, not work: both sizes this fast are linear enough.
NOISE_SECONDS = 0.002


def best_seconds(work: Callable[[], object]) -> float:
    """The fastest of `REPEATS` runs of `work`: the least disturbed by the rest of the machine."""
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def grows_linearly(read: Callable[[str], object], make: Callable[[int], str]) -> bool:
    """Whether `read` on `make(FACTOR)` takes at most `MAX_GROWTH` times as long as on `make(1)`
    (`make(k)`: the input at scale k)."""
    small = best_seconds(lambda: read(make(1)))
    large = best_seconds(lambda: read(make(FACTOR)))
    return large <= NOISE_SECONDS or large <= MAX_GROWTH * max(small, NOISE_SECONDS / MAX_GROWTH)
