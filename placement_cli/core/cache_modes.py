"""The values of `--caches`, the CPU caches each timed run starts with
(`engines/caches.py`): the one definition, read by the formats that record it (the tree
file's `query.caches`, `execute`'s report) and by the engine layer above them. Standard
library only: the commands' help reads it."""

from typing import Literal

Caches = Literal["cold", "warm"]
