"""One diagnostic code's record (`Code`), shared by the registry of the tool's
diagnostics (`codes.py`) and that of `lower`'s eligibility rules (`rule_codes.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What a code's `severities` may hold: the artifact's three, and explain's reasons.
SEVERITIES = ("error", "warning", "info", "reason")


@dataclass(frozen=True, slots=True)
class Code:
    """One code: the severities it is raised with, the stages or commands that raise
    it, a one-line title, a paragraph (what it means, why it happens, what to do), and
    the exit codes it leads to when it is an error (empty: it does not decide the exit)."""

    code: str
    severities: tuple[str, ...]
    raised_by: tuple[str, ...]
    title: str
    text: str
    exits: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severities": list(self.severities),
            "raised_by": list(self.raised_by),
            "title": self.title,
            "text": self.text,
            "exit_codes": list(self.exits),
        }
