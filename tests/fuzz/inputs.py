"""The inputs of a fuzz campaign: (command, kind, index) to the bytes of one input, seeded.

Plans, trees and bodies come from `gen`; artifacts to tamper with come from running the
CLI itself (in a child, `child.run_child`) on a few generated plans and trees.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import orjson

from tests.fuzz import edges, gen, keys
from tests.fuzz.child import Config, run_child
from tests.fuzz.judge import STAGES


class Inputs:
    """Generates the input of (command, kind, index); base artifacts come from running
    the CLI itself on a few plans and trees (once per process)."""

    def __init__(self, cfg: Config, workdir: Path, seed: int) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.seed = seed
        self._artifacts: list[dict[str, Any]] | None = None
        self._tree_artifacts: list[dict[str, Any]] | None = None

    def _make_artifacts(self, tree: bool) -> list[dict[str, Any]]:
        import random

        out: list[dict[str, Any]] = []
        d = Path(tempfile.mkdtemp(dir=self.workdir))
        try:
            for i in range(6):
                r = random.Random(f"{self.seed}:base:{i}")
                src = d / f"in{i}.json"
                src.write_bytes(orjson.dumps(gen.base_tree(r) if tree else gen.base_plan(r)))
                if tree:
                    args = ["tree", str(src), "-o", str(d / "t.json")]
                    files = [d / "t.json"]
                else:
                    args = ["run", str(src), "--out-dir", str(d / "o"), "--time-limit", "2"]
                    files = [d / "o" / f"{s}.json" for s in STAGES]
                code, *_ = run_child(self.cfg, args, os.devnull, d)
                if code in (0, 4, 5):
                    out += [orjson.loads(f.read_bytes()) for f in files if f.exists()]
        finally:
            shutil.rmtree(d, ignore_errors=True)
        return out

    def artifacts(self, tree: bool) -> list[dict[str, Any]]:
        if tree:
            if self._tree_artifacts is None:
                self._tree_artifacts = self._make_artifacts(True)
            return self._tree_artifacts
        if self._artifacts is None:
            self._artifacts = self._make_artifacts(False)
        return self._artifacts

    def diff_pair(self, index: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The artifact `diff` input `index` starts from, and the valid artifact it is
        compared with: the same one more often than not, else any (another plan, or
        another stage: exit 7 or 3)."""
        import random

        pool = self.artifacts(False)
        if not pool:
            return None, None
        r = random.Random(f"{self.seed}:diff-pair:{index}")
        a = r.choice(pool)
        return a, (a if r.random() < 0.6 else r.choice(pool))

    def make_keys(self, command: str, index: int) -> tuple[bytes, str, keys.Expect] | None:
        """An artifact with a top-level key dropped, renamed, mistyped or duplicated
        (`tests/fuzz/keys.py`); for `validate`, at times a tree artifact's."""
        import random

        r = random.Random(f"{self.seed}:{command}:keys:{index}")
        pool = self.artifacts(command == "validate" and r.random() < 0.2)
        if not pool:
            return None
        return keys.mutate_keys(r.choice(pool), r.choice(pool), r)

    def make(self, command: str, kind: str, index: int) -> tuple[bytes, str]:
        import random

        r = random.Random(f"{self.seed}:{command}:{kind}:{index}")
        tree = command == "tree"
        if tree:
            base = gen.base_tree(r)
        elif command == "lower":
            base = gen.base_body(r)
        else:
            base = gen.base_plan(r)
            if command == "diff":
                base = self.diff_pair(index)[0] or base
        if kind in ("plan", "tree", "body", "same"):
            return gen.serialise(base, r)
        if kind in ("mutated-plan", "mutated-tree", "mutated-body"):
            return gen.serialise(gen.mutate(base, r), r)
        if kind in ("artifact", "tree-artifact", "mutated-artifact"):
            pool = self.artifacts(tree)
            if not pool:
                return gen.serialise(base, r)
            art = base if kind == "mutated-artifact" else r.choice(pool)
            if r.random() < 0.85:
                # Tamper with the sections rather than the plan (the plan has its own kinds).
                sections = {k: v for k, v in art.items() if k not in ("plan", "tree")} or art
                picked = r.choice(sorted(sections))
                art = dict(art)
                got = gen.mutate({"x": art[picked]}, r)
                if isinstance(got, dict) and "x" in got:
                    art[picked] = got["x"]
                else:
                    del art[picked]
            else:
                art = gen.mutate(art, r)
            return gen.serialise(art, r)
        if kind == "yaml":
            return edges.yaml_edge(r, tree, body=command == "lower")
        if kind == "deep":
            return edges.deep_nesting(r, base)
        if kind == "numbers":
            return edges.numbers(r, base)
        if kind == "ids":
            return edges.ids(r, base)
        if kind == "bytes":
            data, _ = gen.serialise(base, r)
            return edges.raw_bytes(r, data)
        raise ValueError(kind)
