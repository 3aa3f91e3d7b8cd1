"""Judging one run of the CLI: every rule it broke, as (category, signature), and the
outcome record a campaign keeps of it.

The rules: an exit among those a command may end with (0/3/4/5, and `diff`'s 7,
`explain`'s 2), no traceback, no partial output after a failure, an exit-3 message whose
every line names the input, and after a success outputs that read back with the status
the exit says and a finite cost (a lowered plan must load as `placement validate` would).
"""

from __future__ import annotations

import math
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path

import orjson

DIFF_OTHER = "b.json"  # the valid artifact `diff` compares its fuzzed input with
STAGES = ("prune", "scc", "solve", "fuse", "islands")
# The views write text or their own JSON, not an artifact with a status.
VIEWS = ("show", "explain", "diff")
OK_CODES = (0, 3, 4, 5)
STATUS_OF = {0: "ok", 4: "infeasible", 5: "unsolved"}


def ok_codes(command: str) -> tuple[int, ...]:
    """The exits a run may end with: `diff` says 7 for "different"; `explain` says 2 for a
    block the (valid) plan does not have, which a renamed id makes likely."""
    return OK_CODES + {"diff": (7,), "explain": (2,)}.get(command, ())


@dataclass
class Outcome:
    command: str
    kind: str
    index: int
    code: int
    seconds: float
    findings: list[tuple[str, str]] = field(default_factory=list)  # (category, signature)
    input: bytes = b""
    suffix: str = ""
    args: tuple[str, ...] = ()
    stderr: str = ""


def outcome(
    command: str,
    kind: str,
    index: int,
    code: int,
    seconds: float,
    found: list[tuple[str, str]],
    data: bytes,
    suffix: str,
    args: tuple[str, ...],
    stderr: bytes,
) -> Outcome:
    """The record of one judged run: the input and the end of stderr are kept only when
    something was found (a campaign holds thousands of outcomes)."""
    return Outcome(
        command,
        kind,
        index,
        code,
        seconds,
        found,
        data if found else b"",
        suffix,
        args,
        stderr.decode("utf-8", "replace")[-2000:] if found else "",
    )


_NUM = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def signature(text: str) -> str:
    """The line that names a failure, with numbers and quoted values blurred so that
    one bug is one finding.

    >>> signature("placement: internal error: KeyError: 'code' (rerun with --debug for a traceback)")
    'placement: internal error: KeyError: …'
    """
    text = text.split(" (rerun with --debug")[0]
    text = _QUOTED.sub("…", text)
    text = _NUM.sub("N", text)
    return text[:160]


def _last_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"


def judge(
    command: str,
    code: int,
    stdout: bytes,
    stderr: bytes,
    hung: bool,
    source: str,
    out: Path | None,
    out_dir: Path | None,
    fmt: str,
) -> list[tuple[str, str]]:
    """Every broken rule of a run, as (category, signature); empty when the run is fine."""
    err = stderr.decode("utf-8", "replace")
    found: list[tuple[str, str]] = []
    if hung:
        return [("hang", f"still running after the wall limit (exit {code})")]
    if "Traceback (most recent call last)" in err:
        found.append(("traceback", signature(_last_line(err))))
    if code == 1:
        cat = "memory" if "MemoryError" in err else "internal"
        found.append((cat, signature(_last_line(err))))
    elif code < 0:
        found.append(("signal", f"killed by signal {-code} ({signal.Signals(-code).name})"))
    elif code not in ok_codes(command):
        found.append((f"exit-{code}", signature(_last_line(err))))
    elif code == 2 and not err.startswith("placement: unknown block "):
        found.append(("exit-2", signature(_last_line(err))))
    if code == 3:
        # `diff` names whichever of its two files is wrong.
        sources = (source + ": ", DIFF_OTHER + ": ") if command == "diff" else (source + ": ",)
        bad = [ln for ln in err.split("\n")[:-1] if not ln.startswith(sources)]
        if bad or not err.endswith("\n"):
            found.append(("bad-error-line", signature(bad[0] if bad else err[-80:])))
    success = code in (0, 4, 5) or (command == "diff" and code == 7)
    files: list[Path] = []
    if out is not None:
        files = [out]
    elif out_dir is not None:
        files = [out_dir / f"{s}.{fmt}" for s in STAGES]
    if not success:
        left = [f for f in files if f.exists()]
        if out_dir is not None and out_dir.exists():
            left = [f for f in out_dir.iterdir()]
        elif out is not None and out.parent.exists():
            left += [f for f in out.parent.iterdir() if f.name.startswith("." + out.name)]
        if left:
            found.append(
                (
                    "partial-output",
                    f"exit {code} left {', '.join(sorted(f.name for f in left))[:80]}",
                )
            )
        return found
    if command == "validate":
        return found
    missing = [f.name for f in files if not f.exists()]
    if missing or (not files and not stdout):
        found.append(("missing-output", f"exit {code} without {', '.join(missing) or 'stdout'}"))
        return found
    if command in VIEWS:
        return found
    if command == "lower":
        return found + _check_lowered(files[0])
    outputs: list[Path | None] = list(files) if files else [None]
    for f in outputs:
        data = f.read_bytes() if f is not None else stdout
        # `run` exits with the last stage's status; an earlier stage may be "ok" before a
        # later one finds the plan infeasible or runs out of time.
        final = f is None or f == files[-1]
        found += _check_artifact(data, fmt, code, f.name if f is not None else "stdout", final)
    return found


def _check_lowered(path: Path) -> list[tuple[str, str]]:
    """What `lower` wrote (`args_for` always gives it `-o`) must be a plan the stages
    accept: it is loaded and checked as `placement validate` would (in this process; the
    harness has the package imported)."""
    from placement_cli.core.errors import PlacementError
    from placement_cli.pipeline.run import load

    try:
        load(str(path))
    except PlacementError as exc:
        return [("invalid-output", signature(str(exc).split("\n")[0]))]
    except Exception as exc:  # noqa: BLE001 - any failure to read our own output is a finding
        return [("unreadable-output", f"lowered plan: {type(exc).__name__}")]
    return []


def _check_artifact(
    data: bytes, fmt: str, code: int, name: str, final: bool = True
) -> list[tuple[str, str]]:
    try:
        if fmt == "yaml":
            import yaml

            art = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
        else:
            art = orjson.loads(data)
    except Exception as exc:  # noqa: BLE001 - any failure to read our own output is a finding
        return [("unreadable-output", f"{name}: {type(exc).__name__}")]
    if not isinstance(art, dict):
        return [("unreadable-output", f"{name}: not a mapping")]
    found = []
    status = art.get("status")
    if (status != STATUS_OF[code]) if final else (status not in ("ok", STATUS_OF[code])):
        found.append(
            ("status-mismatch", f"{name.split('.')[0]}: exit {code} with status {status!r}")
        )
    sol = art.get("solve")
    if isinstance(sol, dict) and status == "ok" and art.get("kind") != "tree":
        cost = sol.get("cost")
        total = cost.get("total") if isinstance(cost, dict) else None
        if not (
            isinstance(total, (int, float)) and not isinstance(total, bool) and math.isfinite(total)
        ):
            found.append(
                ("false-answer", f"solve status ok with cost.total {type(total).__name__}")
            )
        lb = sol.get("lower_bound")
        if not (isinstance(lb, (int, float)) and not isinstance(lb, bool) and math.isfinite(lb)):
            found.append(("false-answer", f"solve status ok with lower_bound {type(lb).__name__}"))
        elif isinstance(total, (int, float)) and lb > total * (1 + 1e-9) + 1e-9:
            found.append(("false-answer", "solve lower_bound above cost.total"))
    return found


def report(outcomes: list[Outcome], input_chars: int = 200, stderr_chars: int = 300) -> str:
    """Each finding of `outcomes` with its command line, the start of its input and the
    end of its stderr: a failing fuzz test's message."""
    lines = []
    for o in outcomes:
        for cat, sig in o.findings:
            lines.append(
                f"[{cat}] {o.command} / {o.kind} #{o.index}: {sig}\n    placement {' '.join(o.args)}\n"
                f"    input {o.input[:input_chars]!r}\n    stderr {o.stderr[-stderr_chars:]!r}"
            )
    return "\n".join(lines)
