"""`placement profile show [NAME]`: a built-in target profile as YAML (its options:
`app/commands.py`), to copy and edit into a profile file for `--targets FILE`."""

from __future__ import annotations

from typing import Any

from placement_cli.core.errors import UsageError
from placement_cli.core.io import dumps, write_output
from placement_cli.frontends.lower.profile import BUILTIN


def command(name: str, v: dict[str, Any]) -> int:
    """Write the profile named (default hashql) as YAML to stdout or -o FILE.

    >>> command("profile", {"action": "list", "profile_name": None, "output": None})
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.UsageError: unknown action 'list': the one action is 'show'
    """
    if v["action"] != "show":
        raise UsageError(f"unknown action {v['action']!r:.40}: the one action is 'show'")
    profile = v["profile_name"] or "hashql"
    if profile not in BUILTIN:
        raise UsageError(f"no built-in profile {profile!r:.40}; built in: {', '.join(BUILTIN)}")
    write_output(dumps(BUILTIN[profile], "yaml"), v["output"])
    return 0
