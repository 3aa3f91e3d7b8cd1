"""Diagnostics carried in every artifact: `{severity, code, message, blocks}`.

Every code is documented in `placement_cli/core/codes.py` (`CODES`), the source of
`placement codes` and of `docs/diagnostics.md` (`python -m placement_cli.core.diagnostics`).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Severity = Literal["error", "warning", "info"]


class Diagnostic(msgspec.Struct, frozen=True):
    severity: Severity
    code: str
    message: str
    blocks: tuple[str, ...] = ()
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "blocks": list(self.blocks),
        }
        d.update(self.extra)
        return d


if __name__ == "__main__":
    # `docs/diagnostics.md` (`make docs`). The registry is imported only here: every
    # pipeline command imports this module, and none of them needs the documentation.
    import sys

    from placement_cli.core.codes import markdown

    sys.stdout.write(markdown())
