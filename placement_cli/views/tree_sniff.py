"""Is this input a tree artifact? Answered without importing the tree DP or pydantic:
`validate`, `show` and `diff` ask it of every input before the pipeline's loader reads
it, and a plan or a pipeline artifact must not pay for the tree's modules."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import msgspec

from placement_cli.core.errors import InputError
from placement_cli.core.io import parse_document, source_name
from placement_cli.pipeline.kinds import read_again, read_input

# Only a document that may say `kind: tree` is parsed here; anything else goes to the
# pipeline's loader untouched.
# Compiled where used (`re.search` keeps it): a plan without "tree" in it compiles none.
_MAYBE_TREE = rb"""["']?kind["']?\s*:\s*["']?tree\b"""


class TreeArtifact(msgspec.Struct, frozen=True):
    source: str  # as messages name it
    path: str  # as given ("-" for stdin)
    doc: dict[str, Any]

    @property
    def section(self) -> dict[str, Any]:
        sec = self.doc.get("tree")
        return sec if isinstance(sec, dict) else {}

    @property
    def input_ref(self) -> dict[str, Any]:
        """The tree file it names (`tree.input_ref`: name, path, sha256), or {}."""
        r = self.section.get("input_ref")
        return r if isinstance(r, dict) else {}


def sniff(path: str) -> tuple[TreeArtifact | None, contextlib.AbstractContextManager[None]]:
    """The tree artifact at `path`, or None; and a context in which the pipeline's
    loader reads `path` again: the bytes read here, not the file a second time
    (`kinds.read_again`; standard input is kept by `read_input`)."""
    source = source_name(path)
    data = read_input(path)
    again = read_again(path, data)
    # A plain substring test first (memchr speed): a plan never needs the regex.
    if b"tree" not in data or not re.search(_MAYBE_TREE, data):
        return None, again
    try:
        doc = parse_document(path, data)
    except InputError:
        return None, again  # the loader says what is wrong, in its words
    if isinstance(doc, dict) and doc.get("kind") == "tree" and "format_version" in doc:
        return TreeArtifact(source, path, doc), again
    return None, again
