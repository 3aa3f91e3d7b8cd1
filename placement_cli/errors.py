"""The one exception tree of the tool; `cli.run_guarded` maps it to exit codes."""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_INFEASIBLE = 4
EXIT_UNSOLVED = 5
EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class Problem:
    """One input problem: where (a field path such as `blocks[3].id`) and what."""

    path: str
    message: str

    def render(self, source: str) -> str:
        return f"{source}: {self.path}: {self.message}" if self.path else f"{source}: {self.message}"


class PlacementError(Exception):
    exit_code = EXIT_INTERNAL


class UsageError(PlacementError):
    exit_code = EXIT_USAGE


class InputError(PlacementError):
    """Invalid input. Carries every problem found, so users fix them all in one go."""

    exit_code = EXIT_INPUT

    def __init__(self, problems: list[Problem], source: str = "<input>") -> None:
        self.problems = problems
        self.source = source
        super().__init__("\n".join(p.render(source) for p in problems))

    def with_source(self, source: str) -> InputError:
        return InputError(self.problems, source)


def format_loc(loc: tuple[object, ...]) -> str:
    """Render a pydantic/JSON location as `blocks[3].terminator.successors[0].block`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
