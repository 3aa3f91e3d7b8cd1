"""Cold CPU caches before every timed run (`--caches cold`, the default).

A run's time depends on what ran just before it: the data, code and pages it finds in
the CPU's caches. Interleaved rounds (`probe_runs.timed_rounds`,
`measure.execute_many`) spread that over every way of one measurement alike, but the
ways differ between measurements: the probe runs every subtree and the rest of the
query above each node, `execute` runs whole placements. So the same query on the same
engine was timed apart in the two, the same way each time (TPC-H SF 0.1, one thread
per engine, 2026-11-29; four probe and `execute` pairs of Q4: DataFusion 9-15% higher
in the probe, DuckDB 8-12% lower), and the latency model carried the difference into
its single-engine predictions.

With `cold`, each timed run is preceded by a read of a buffer twice the size of the
largest cache this CPU reports (`/sys/devices/system/cpu/cpu0/cache`; 32 MiB when it
reports none): whatever the last run left is evicted, and every run starts from the
same state, a query arriving among other work. Three such pairs of Q4 then differed
by +1 to +7% (DataFusion) and -9 to +8% (DuckDB), no longer one way; over the 22
queries, what the benchmarks measured is in the README ("Measuring so that a decision
holds"). The read costs about 1.8 ms here for 64 MiB, outside the timed span. `warm`
times runs as they fall, after whatever ran before. Which one a measurement used is
recorded with it (`query.caches` in the tree file, `caches` in `execute`'s report).
Not preceded by it: the checking run, which `--warmup 0` also times, and a cut's
hand-off (in a placement it follows the run that made its input, in warm caches).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from placement_cli.core.cache_modes import Caches

_CPU_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
_DEFAULT_LARGEST = 32 << 20
# A bound on the buffer (twice this): a size read from sysfs is not trusted to be sane.
_LARGEST_MAX = 256 << 20


def _size(text: str) -> int | None:
    """A sysfs cache size (`32768K`, `2M`, `512`) in bytes, None when unreadable.

    >>> _size("32768K"), _size("2M"), _size("512"), _size("big")
    (33554432, 2097152, 512, None)
    """
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KMG" else text
    return int(digits) * scale if digits.isdigit() else None


def largest_cache(folder: Path = _CPU_CACHES) -> int:
    """The largest cache (bytes) `folder` describes (`index*/size`), else 32 MiB; at
    most 256 MiB."""
    sizes = []
    try:
        for index in sorted(folder.glob("index*")):
            got = _size((index / "size").read_text())
            if got:
                sizes.append(got)
    except OSError:
        pass
    return min(max(sizes, default=_DEFAULT_LARGEST), _LARGEST_MAX)


@functools.cache
def _buffer() -> bytes:
    # Written, not zeroed: a zeroed allocation maps every page to the kernel's one
    # zero page, whose reads would evict nothing.
    return b"\x01" * (2 * largest_cache())


def flush() -> None:
    """Read every cache line of the buffer (`bytes.find` of a byte it does not hold is
    a scan of all of it): what the caches held is evicted. The buffer is made on the
    first call, once per process."""
    _buffer().find(b"\x00")


def _as_they_fall() -> None:
    """`warm`: nothing before a timed run."""


def before(caches: Caches) -> Callable[[], None]:
    """What every timed run is preceded by under `caches` (module doc).

    >>> before("cold") is flush, before("warm") is flush
    (True, False)
    """
    return flush if caches == "cold" else _as_they_fall
