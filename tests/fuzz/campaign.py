"""The fuzz campaign's one job: a command and an index to an input (`inputs`), a command
line for it, a run of the CLI in a child (`child`), and the judged outcome (`judge`),
with the checks of a tampered top-level key (`keys`) on top.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import orjson

from tests.fuzz import gen, keys
from tests.fuzz.child import Config, preload, run_child
from tests.fuzz.inputs import Inputs
from tests.fuzz.judge import DIFF_OTHER, Outcome, judge, outcome

COMMANDS = (
    "validate",
    "prune",
    "scc",
    "solve",
    "fuse",
    "islands",
    "run",
    "tree",
    "lower",
    "show",
    "explain",
    "diff",
)
# Tampered artifacts come twice as often: every stage's section reader is a target.
PLAN_KINDS = (
    "plan",
    "mutated-plan",
    "artifact",
    "yaml",
    "artifact",
    "deep",
    "numbers",
    "ids",
    "bytes",
    "keys",
)
TREE_KINDS = ("tree", "mutated-tree", "tree-artifact", "yaml", "deep", "numbers", "ids", "bytes")
BODY_KINDS = ("body", "mutated-body", "yaml", "deep", "numbers", "ids", "bytes")
# `diff` compares the input with a second, valid artifact: its inputs start from an artifact
# ("same" is one unchanged, so the run must end 0 or 7).
DIFF_KINDS = (
    "same",
    "artifact",
    "mutated-artifact",
    "yaml",
    "deep",
    "numbers",
    "ids",
    "bytes",
    "keys",
)
# Stages without solver options.
NO_SOLVER = ("prune", "scc")


def kinds_for(command: str, only: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The input kinds of `command` (those in `only`, when given)."""
    kinds = {"tree": TREE_KINDS, "lower": BODY_KINDS, "diff": DIFF_KINDS}.get(command, PLAN_KINDS)
    return kinds if only is None else tuple(k for k in kinds if k in only)


def _outputs(args: list[str]) -> tuple[str | None, str | None]:
    """The output file (`-o`) and folder (`--out-dir`) a command line names."""
    out = args[args.index("-o") + 1] if "-o" in args else None
    out_dir = args[args.index("--out-dir") + 1] if "--out-dir" in args else None
    return out, out_dir


def _written(job: Path, out: str | None, out_dir: str | None) -> dict[str, bytes]:
    """Every file a run wrote, by name."""
    files = [job / out] if out else []
    if out_dir and (job / out_dir).is_dir():
        files = sorted((job / out_dir).iterdir())
    return {f.name: f.read_bytes() for f in files if f.is_file()}


class Fuzzer:
    def __init__(
        self,
        cfg: Config,
        seed: int,
        workdir: Path | None = None,
        kinds: tuple[str, ...] | None = None,
    ) -> None:
        if not cfg.spawn:
            preload()
        self.kinds = kinds  # the input kinds to draw from (None: every kind)
        self.cfg = cfg
        self.seed = seed
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="placement-fuzz-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.inputs = Inputs(cfg, self.workdir, seed)

    def args_for(
        self, command: str, src: str, index: int
    ) -> tuple[list[str], str | None, str | None, str]:
        import random

        r = random.Random(f"{self.seed}:args:{command}:{index}")
        fmt = "yaml" if r.random() < 0.1 else "json"
        if command == "validate":
            return [command, src], None, None, fmt
        if command == "tree":
            args = [command, src, "-o", "out/a." + fmt, "--format", fmt]
            if r.random() < 0.3:
                args += ["--budget", str(r.choice((0, 1, 3, 10**6, 2**63, 2**64, 2**70)))]
            if r.random() < 0.2:
                args.append("--expand-dag")
            return args, "out/a." + fmt, None, fmt
        if command == "lower":
            args = [command, src, "-o", "out/a." + fmt, "--format", fmt]
            if r.random() < 0.5:
                args += ["--split", r.choice(("runs", "intersection", "per-statement"))]
            if r.random() < 0.2:
                args += ["--size-cap", r.choice(("0", "1", "64", "1e308"))]
            if r.random() < 0.2:
                args += ["--body", r.choice(("filter", "cosine", "f", "nope"))]
            return args, "out/a." + fmt, None, fmt
        limit = ["--time-limit", str(self.cfg.time_limit)]
        if command == "show":
            out = "out/a.txt"
            args = [
                command,
                src,
                "--view",
                r.choice(("cfg", "islands", "graph")),
                "--format",
                r.choice(("dot", "mermaid", "text")),
                "-o",
                out,
                *limit,
            ]
            return args, out, None, "text"
        if command == "explain":
            out = "out/a.txt"
            block = r.choice(("bb0", "bb1", "bb2", "bb3", "bb5", "n0", "zz"))
            return (
                [command, src, block, "--format", r.choice(("json", "text")), "-o", out, *limit],
                out,
                None,
                "text",
            )
        if command == "diff":
            out = "out/a.txt"
            return (
                [command, src, DIFF_OTHER, "--format", r.choice(("json", "text")), "-o", out],
                out,
                None,
                "text",
            )
        method = r.choice(("auto", "auto", "exact", "heuristic"))
        common = ["--format", fmt, "--method", method, "--time-limit", str(self.cfg.time_limit)]
        if command in NO_SOLVER:
            common = ["--format", fmt]
        if command == "run":
            return [command, src, "--out-dir", "out", *common], None, "out", fmt
        return [command, src, "-o", "out/a." + fmt, *common], "out/a." + fmt, None, fmt

    def _reference(
        self, job: Path, name: str, data: bytes, args: list[str], stdin: str
    ) -> tuple[int, bytes, bytes, dict[str, bytes]]:
        """The run of `args` on `data` (the document a duplicated key is read as), under
        the same file names in a folder of its own: exit, stdout, stderr, outputs."""
        ref = job / "reference"
        ref.mkdir()
        for f in job.iterdir():
            if f.is_file() and not f.name.startswith("."):
                shutil.copy(f, ref / f.name)
        (ref / name).write_bytes(data)
        if stdin != os.devnull:
            stdin = str(ref / name)
        out, out_dir = _outputs(args)
        if out:
            (ref / out).parent.mkdir(exist_ok=True)  # -o creates no folder
        code, stdout, stderr, _, _ = run_child(self.cfg, args, stdin, ref)
        return code, stdout, stderr, _written(ref, out, out_dir)

    def run(self, command: str, index: int) -> Outcome:
        kinds = kinds_for(command, self.kinds)
        kind = kinds[index % len(kinds)]
        expect: keys.Expect | None = None
        try:
            made = self.inputs.make_keys(command, index) if kind == "keys" else None
            if made is not None:
                data, suffix, expect = made
            else:
                data, suffix = self.inputs.make(command, kind, index)
        except Exception as exc:  # noqa: BLE001 - a generator bug is reported, not fatal
            return Outcome(
                command,
                kind,
                index,
                -1,
                0.0,
                [("harness-error", f"{type(exc).__name__}: {exc}"[:160])],
            )
        job = Path(tempfile.mkdtemp(dir=self.workdir, prefix=f"{command}-"))
        try:
            src_file = job / f"input{suffix}"
            src_file.write_bytes(data)
            if command == "diff":
                other = self.inputs.diff_pair(index)[1]
                (job / DIFF_OTHER).write_bytes(orjson.dumps(other if other is not None else {}))
            import random

            r = random.Random(f"{self.seed}:via:{command}:{index}")
            via = r.random()
            if kind == "bytes" and via < 0.03:
                src, stdin = "/dev/zero", os.devnull
            elif via < 0.2:
                src, stdin = "-", str(src_file)
            else:
                src, stdin = str(src_file.name), os.devnull
            args, out, out_dir, fmt = self.args_for(command, src, index)
            if out:
                (job / out).parent.mkdir(exist_ok=True)  # -o creates no folder
            if expect is not None and command == "solve" and r.random() < 0.3:
                # The artifact as a warm start: only its assignment is read.
                (job / "plan.json").write_bytes(orjson.dumps(gen.base_plan(r)))
                args[1:2] = ["plan.json", "--warm-start", src]
                expect = keys.Expect(expect.how, expect.key, same_as=expect.same_as)
            code, stdout, stderr, seconds, hung = run_child(self.cfg, args, stdin, job)
            source = "<stdin>" if src == "-" else src
            found = judge(
                command,
                code,
                stdout,
                stderr,
                hung,
                source,
                job / out if out else None,
                job / out_dir if out_dir else None,
                fmt,
            )
            if expect is not None and not hung:
                found += keys.check(expect, code, stderr)
                if expect.same_as is not None:
                    got = (code, stdout, stderr, _written(job, out, out_dir))
                    want = self._reference(job, src_file.name, expect.same_as, args, stdin)
                    if got != want:
                        found.append(
                            (
                                "duplicate-key-differs",
                                f"{expect.key} twice: exit {code}, its last value alone: exit {want[0]}",
                            )
                        )
            return outcome(
                command, kind, index, code, seconds, found, data, suffix, tuple(args), stderr
            )
        finally:
            shutil.rmtree(job, ignore_errors=True)
