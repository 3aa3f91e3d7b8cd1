"""Cold CPU caches before every timed run (`engines/caches.py`): the largest cache read
from a sysfs-like folder, a buffer that really holds memory (not the kernel's zero page),
and the probe's rounds preceded by the flush before every timed run, never inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement_cli.engines import caches
from placement_cli.engines.probe_runs import NodeProbe, Pending, timed_rounds


def _sysfs(folder: Path, sizes: dict[str, str]) -> Path:
    for index, size in sizes.items():
        (folder / index).mkdir()
        (folder / index / "size").write_text(size + "\n")
    return folder


def test_the_largest_cache_is_the_largest_size_listed(tmp_path: Path) -> None:
    folder = _sysfs(tmp_path, {"index0": "48K", "index1": "32K", "index2": "1024K", "index3": "32768K"})  # fmt: skip
    assert caches.largest_cache(folder) == 32 << 20


@pytest.mark.parametrize(
    "sizes", [{}, {"index0": "unknown"}, {"index0": ""}], ids=["none", "text", "empty"]
)
def test_a_folder_without_a_readable_size_gives_32_mib(
    tmp_path: Path, sizes: dict[str, str]
) -> None:
    assert caches.largest_cache(_sysfs(tmp_path, sizes)) == 32 << 20
    assert caches.largest_cache(tmp_path / "absent") == 32 << 20


def test_a_size_past_256_mib_is_read_as_256_mib(tmp_path: Path) -> None:
    folder = _sysfs(tmp_path, {"index0": "48K", "index3": "999999999G"})
    assert caches.largest_cache(folder) == 256 << 20


def test_the_buffer_is_twice_the_largest_cache_and_written() -> None:
    buf = caches._buffer()
    assert len(buf) == 2 * caches.largest_cache()
    # A zeroed allocation would map every page to one zero page: reading it evicts nothing.
    assert buf.find(b"\x00") == -1
    caches.flush()  # reads it whole: returns, changes nothing
    assert caches._buffer() is buf


@pytest.mark.parametrize(("mode", "flushes"), [("cold", True), ("warm", False)])
def test_the_probe_runs_before_each_timed_run_and_never_inside_it(mode: str, flushes: bool) -> None:
    events: list[str] = []
    nodes = [NodeProbe(runs={"e": []}), NodeProbe(runs={"e": []})]
    pending = [Pending(n, "e", lambda i=i: events.append(f"run{i}")) for i, n in enumerate(nodes)]
    chosen = caches.before(mode)  # type: ignore[arg-type]
    assert (chosen is caches.flush) is flushes

    def recorded() -> None:
        events.append("before")
        chosen()

    timed_rounds(pending, 3, seed=1, before=recorded)
    assert [len(n.runs["e"]) for n in nodes] == [3, 3]
    # Every timed run right after its own `before`: 6 of each, alternating.
    assert events[0::2] == ["before"] * 6
    assert sorted(events[1::2]) == ["run0"] * 3 + ["run1"] * 3
