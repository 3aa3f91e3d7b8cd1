"""The time and memory budget every search of `solve` observes (`Budget`), and the
tolerance (`slack`) below which two costs count as equal. Kept apart from the engine
(`solvers.search`) that checks it, so callers build a budget without importing search.
"""

from __future__ import annotations

import os
import sys
import time

from placement_cli.algorithms.solve.instance import INF


def slack(best: float) -> float:
    """How much better than `best` a cost must be to count as an improvement. Float sums
    in different orders differ in the last bits; a relative 1e-9 keeps B&B from chasing
    (and proving) differences that are rounding noise."""
    return 1e-9 * (1.0 + abs(best))


def _rss_bytes() -> int:
    """Resident set size of this process now (Linux /proc), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak) * (1 if sys.platform == "darwin" else 1024)


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE = 4096


class Budget:
    """The deadline and memory bound every search of `solve` observes.

    `deadline` is a `time.monotonic()` instant (None: no deadline); `memory_bytes`
    bounds how much the process may grow beyond its size when the budget was made
    (None: no bound), so parsing a large plan does not count against the search.
    Searches call `exceeded()` every few hundred nodes; the first limit that fires is
    remembered in `reason` ("time-limit" or "memory-limit"), so the caller can say
    honestly why it stopped.

    >>> b = Budget(deadline=0.0)
    >>> b.exceeded(), b.reason
    (True, 'time-limit')
    >>> Budget().exceeded()
    False
    """

    __slots__ = ("deadline", "memory_bytes", "_base", "_calls", "reason")

    def __init__(self, deadline: float | None = None, memory_bytes: int | None = None) -> None:
        self.deadline = deadline
        self.memory_bytes = memory_bytes
        self._base = _rss_bytes() if memory_bytes is not None else 0
        self._calls = 0
        self.reason: str | None = None

    def exceeded(self) -> bool:
        if self.reason is not None:
            return True
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.reason = "time-limit"
            return True
        if self.memory_bytes is not None:
            # Reading /proc costs microseconds: only every 16th call.
            self._calls += 1
            if self._calls & 15 == 0 and _rss_bytes() - self._base > self.memory_bytes:
                self.reason = "memory-limit"
                return True
        return False

    def remaining(self) -> float:
        """Seconds left before the deadline (inf without one, never negative)."""
        if self.deadline is None:
            return INF
        return max(0.0, self.deadline - time.monotonic())
