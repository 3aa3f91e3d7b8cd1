"""The one exception tree of the tool; `cli.run_guarded` maps it to exit codes."""

from __future__ import annotations

import msgspec

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_INFEASIBLE = 4
EXIT_UNSOLVED = 5
EXIT_IO = 6
EXIT_DIFFERS = 7
EXIT_INTERRUPTED = 130

# A problem line stays readable: longer messages are cut (after escaping).
MAX_MESSAGE_CHARS = 400


def escape(text: str) -> str:
    """Make `text` safe to print as part of one line: control characters (a newline,
    ESC, a line or paragraph separator, a bidi override) become visible escapes, so an
    id or a path in the input can neither split an error line nor fake one.

    >>> escape("bb1\\nplan.yaml: ok")
    'bb1\\\\nplan.yaml: ok'
    >>> escape("\\x1b[31mred")
    '\\\\x1b[31mred'
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
    return "".join(out)


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Cut `text` to `limit` characters, marking the cut.

    >>> clip("abcdef", 4)
    'abc…'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Problem(msgspec.Struct, frozen=True):
    """One input problem: where (a field path such as `blocks[3].id`, and the 1-based
    line and column when the reader knows them) and what."""

    path: str
    message: str
    line: int | None = None
    col: int | None = None

    def render(self, source: str) -> str:
        """One line, always: every part is escaped here, centrally. With a position it
        reads `FILE:LINE:COL: message`, as compilers write it.

        >>> Problem("blocks[0].id", "duplicate block id 'a\\nb'").render("p.yaml")
        "p.yaml: blocks[0].id: duplicate block id 'a\\\\nb'"
        >>> Problem("", "expected '='", 3, 9).render("q.mir")
        "q.mir:3:9: expected '='"
        """
        msg = clip(escape(self.message))
        src = escape(source)
        if self.line is not None:
            src = f"{src}:{self.line}:{self.col or 1}"
        return f"{src}: {clip(escape(self.path))}: {msg}" if self.path else f"{src}: {msg}"


class PlacementError(Exception):
    exit_code = EXIT_INTERNAL


class UsageError(PlacementError):
    exit_code = EXIT_USAGE


class IOFailure(PlacementError):
    """Reading input or writing output failed in the file system (exit 6).
    The message is `PATH: reason`; the CLI prefixes `placement: `."""

    exit_code = EXIT_IO


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
    """Render a pydantic/JSON location as `blocks[3].terminator.successors[0].block`.

    >>> format_loc(("blocks", 3, "terminator", "successors", 0, "block"))
    'blocks[3].terminator.successors[0].block'
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
