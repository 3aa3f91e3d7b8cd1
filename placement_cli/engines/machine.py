"""What else the machine did while placements were timed: the cores this process may
use, and the CPU time the other processes took meanwhile.

Engines timed on shared cores are slower and noisier, and a report must say so. The
load average says it late and counts this process's own earlier work; instead the
busy time of every CPU (`/proc/stat`, Linux) is read before and after, and this
process's own CPU time (every thread: the in-process engines; and its measuring
processes, `execute --forks`, once ended) is taken from it. What
remains is the other processes' work, PostgreSQL's server among them when it runs here
(it is not this process). A share of 0.25 cores or more over the run is flagged.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

SHARED = 0.25  # cores' worth of other processes' work that makes the run "shared"


def _busy_seconds() -> float | None:
    """Seconds every CPU spent on anything but idling since boot, or None off Linux."""
    try:
        with open("/proc/stat", "rb") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != b"cpu" or len(fields) < 8:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
    steal = int(fields[8]) if len(fields) > 8 else 0
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    return (user + nice + system + irq + softirq + steal) / hz


def _own_seconds() -> float:
    # Children waited for count as this process's own: the measuring processes of
    # `execute --forks` are its runs, not other work on the cores.
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass
class Meter:
    """Started before the runs, read after them (module doc)."""

    wall: float
    busy: float | None
    own: float

    @staticmethod
    def start() -> Meter:
        return Meter(time.perf_counter(), _busy_seconds(), _own_seconds())

    def state(self) -> dict[str, Any]:
        """`{cores, seconds, other_cores, shared}`: the cores this process may use, the
        wall seconds measured, the other processes' average CPU use over them in cores
        (None off Linux), and whether that reached `SHARED`."""
        wall = time.perf_counter() - self.wall
        busy = _busy_seconds()
        other = None
        if busy is not None and self.busy is not None and wall > 0:
            other = max(0.0, (busy - self.busy) - (_own_seconds() - self.own)) / wall
        return {
            "cores": cores(),
            "seconds": round(wall, 3),
            "other_cores": None if other is None else round(other, 3),
            "shared": other is not None and other >= SHARED,
        }
