"""The one error the MIR text reader raises, with a 1-based source position."""

from __future__ import annotations


class MirSyntaxError(Exception):
    """Malformed (or unrepresentable) MIR text at `line`:`col` (both 1-based).

    >>> e = MirSyntaxError("expected '='", 3, 9, "f.mir")
    >>> (e.line, e.col, e.message, str(e))
    (3, 9, "expected '='", "f.mir:3:9: expected '='")
    """

    def __init__(self, message: str, line: int, col: int, source: str = "<mir>") -> None:
        super().__init__(message, line, col, source)
        self.message = message
        self.line = line
        self.col = col
        self.source = source

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.col}: {self.message}"
