"""`engines/forks.py`: a function run in fresh processes, one after another; their
results in order, a child's exception raised here, a child that dies an `IOFailure`.
Real processes (spawned interpreters), nothing stands in for them."""

from __future__ import annotations

import os

import pytest

from placement_cli.core.errors import IOFailure, UsageError
from placement_cli.engines.forks import in_processes


def _who(i: int, base: int) -> tuple[int, int, int]:
    return i, base + i, os.getpid()


def _fails(i: int) -> None:
    raise UsageError(f"process {i} refuses")


def _dies(i: int) -> None:
    os._exit(3)


def test_each_call_is_a_fresh_process_and_results_come_back_in_order() -> None:
    out = in_processes(3, _who, 10)
    assert [(i, v) for i, v, _ in out] == [(0, 10), (1, 11), (2, 12)]
    pids = {pid for _, _, pid in out}
    assert len(pids) == 3 and os.getpid() not in pids


def test_an_exception_in_a_child_is_raised_here_as_it_was() -> None:
    with pytest.raises(UsageError, match="process 0 refuses"):
        in_processes(2, _fails)


def test_a_child_that_dies_without_a_result_is_an_io_failure() -> None:
    with pytest.raises(IOFailure, match=r"process 1 of 2 ended without a result \(exit code 3\)"):
        in_processes(2, _dies)
