"""The probe's timed runs (`probe.timed_rounds`): every checked subtree on every engine
timed `repeat` times in rounds, each round a fresh order of all of them, one at a time;
an engine failing on a later run loses its times there; the tool's own errors propagate.
The probe on real engines is `tests/test_engines_probe.py`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placement_cli.core.errors import PlacementError
from placement_cli.engines.probe_runs import NodeProbe, Pending, timed_rounds


class _Table:
    num_rows = 1
    nbytes = 8


def _queue(n: int, warmup: int, calls: list[int]) -> tuple[list[NodeProbe], list[Pending]]:
    """`n` nodes on one engine each, checked by `NodeProbe.measure`: each call of a
    node's run appends the node's index to `calls`."""
    nodes = [NodeProbe() for _ in range(n)]
    later: list[Pending] = []

    def run(i: int) -> Any:
        calls.append(i)
        return _Table()

    for i, node in enumerate(nodes):
        assert node.measure("e", lambda i=i: run(i), warmup, later) is not None
    return nodes, later


@given(n=st.integers(1, 6), repeat=st.integers(1, 5), warmup=st.integers(0, 2))
def test_every_run_is_timed_repeat_times_in_rounds_of_every_run(
    n: int, repeat: int, warmup: int
) -> None:
    calls: list[int] = []
    nodes, later = _queue(n, warmup, calls)
    assert calls == [i for i in range(n) for _ in range(max(warmup, 1))]
    calls.clear()
    timed_rounds(later, repeat)
    assert all(len(node.runs["e"]) == repeat for node in nodes)
    # With no warm-up the checking run was the first timed one: a round fewer.
    rounds = repeat - (1 if warmup == 0 else 0)
    assert len(calls) == n * rounds
    for r in range(rounds):
        assert sorted(calls[r * n : (r + 1) * n]) == list(range(n))
    again: list[int] = []
    _, later2 = _queue(n, warmup, again)
    again.clear()
    timed_rounds(later2, repeat)
    assert again == calls  # seeded: the same order on every run


def test_the_order_changes_between_rounds() -> None:
    calls: list[int] = []
    _, later = _queue(6, 1, calls)
    calls.clear()
    timed_rounds(later, 4)
    rounds = [tuple(calls[r * 6 : (r + 1) * 6]) for r in range(4)]
    assert len(set(rounds)) > 1


def test_an_engine_failing_on_a_later_run_loses_its_times_there() -> None:
    node, other = NodeProbe(), NodeProbe()
    later: list[Pending] = []
    seen = {"n": 0}

    def flaky() -> Any:
        seen["n"] += 1
        if seen["n"] == 3:
            raise RuntimeError("out of memory\nmore")
        return _Table()

    node.measure("e", flaky, 1, later)
    other.measure("e", _Table, 1, later)
    timed_rounds(later, 4)
    assert "e" not in node.runs and node.failed["e"] == "RuntimeError: out of memory"
    assert len(other.runs["e"]) == 4


def test_the_tools_own_error_propagates() -> None:
    node = NodeProbe()
    later: list[Pending] = []
    state = {"n": 0}

    def gone() -> Any:
        state["n"] += 1
        if state["n"] > 1:
            raise PlacementError("the server is gone")
        return _Table()

    node.measure("e", gone, 1, later)
    with pytest.raises(PlacementError):
        timed_rounds(later, 2)
