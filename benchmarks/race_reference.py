"""The reference side of `benchmarks/bench_race.py`: one process that solves one model
file with HiGHS or toulbar2 and prints what it proved, as a user runs a solver on a file.

    python benchmarks/race_reference.py highs MODEL.mps [TIME_LIMIT]
    python benchmarks/race_reference.py toulbar2 MODEL.cfn [TIME_LIMIT]

Prints one line: `optimal COST`, `infeasible`, or `unproven` (a limit stopped it). It
imports the standard library and the solver's package only (highspy with numpy, or
pytoulbar2), never this project: its start-up is the solver's own. It is run as a file
(`python PATH`), not with `-m`, so that the `benchmarks` package is not imported either.
"""

from __future__ import annotations

import math
import os
import sys
import time


def _quiet_fds() -> tuple[int, int]:
    """Send C-level stdout and stderr to /dev/null (HiGHS prints a banner when built,
    toulbar2 may print while reading); returns the saved descriptors."""
    sys.stdout.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    return saved


def _restore(saved: tuple[int, int]) -> None:
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)


def highs(path: str, time_limit: float) -> str:
    import highspy

    saved = _quiet_fds()
    try:
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        # What `bench_exact.run_highs` sets: a proven optimum, not a gap.
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-7)
        h.setOptionValue("time_limit", time_limit)
        h.readModel(path)
        h.run()
    finally:
        _restore(saved)
    status = h.getModelStatus()
    ms = highspy.HighsModelStatus
    if status == ms.kOptimal:
        return f"optimal {h.getInfo().objective_function_value!r}"
    return "infeasible" if status == ms.kInfeasible else "unproven"


def toulbar2(path: str, time_limit: float) -> str:
    import pytoulbar2

    limit = max(1, math.ceil(time_limit))
    saved = _quiet_fds()
    try:
        cfn = pytoulbar2.CFN(verbose=-1)
        try:
            cfn.Read(path)
            start = time.perf_counter()
            res = cfn.Solve(timeLimit=limit)
        except cfn.Contradiction:
            return "infeasible"  # proven while reading or at the root
    finally:
        _restore(saved)
    # toulbar2's limit is wall time: a run that reached it returned an unproven incumbent.
    if time.perf_counter() - start >= 0.99 * limit:
        return "unproven"
    return "infeasible" if res is None else f"optimal {float(res[1])!r}"


def main(argv: list[str]) -> None:
    solver, path = argv[0], argv[1]
    time_limit = float(argv[2]) if len(argv) > 2 else 60.0
    out = {"highs": highs, "toulbar2": toulbar2}[solver](path, time_limit)
    sys.stdout.write(out + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
