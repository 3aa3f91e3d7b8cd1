"""Running one fuzz input through the real CLI in a child process, and judging it.

Two ways to start the child:

* `fork` (default): a worker that has imported the CLI once forks a child per input;
  the child rebinds stdin/stdout/stderr to files, sets its limits and calls the CLI's
  `main()` exactly as the `placement` script does. ~20x faster than a fresh
  interpreter, which is what makes 10k inputs per command affordable.
* `spawn`: `python -m placement_cli ...` in a fresh interpreter (slower; the check that
  nothing depends on the fork).

Each child gets an address-space limit (`RLIMIT_AS`), a CPU limit and a wall-clock
limit; a child still running at the wall limit is killed and counted as a hang.
"""

from __future__ import annotations

import math
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.fuzz import gen, keys

ROOT = gen.ROOT
DIFF_OTHER = "b.json"  # the valid artifact `diff` compares its fuzzed input with
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
STAGES = ("prune", "scc", "solve", "fuse", "islands")
# The views write text or their own JSON, not an artifact with a status.
VIEWS = ("show", "explain", "diff")
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
OK_CODES = (0, 3, 4, 5)
STATUS_OF = {0: "ok", 4: "infeasible", 5: "unsolved"}


def kinds_for(command: str, only: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The input kinds of `command` (those in `only`, when given)."""
    kinds = {"tree": TREE_KINDS, "lower": BODY_KINDS, "diff": DIFF_KINDS}.get(command, PLAN_KINDS)
    return kinds if only is None else tuple(k for k in kinds if k in only)


def ok_codes(command: str) -> tuple[int, ...]:
    """The exits a run may end with: `diff` says 7 for "different"; `explain` says 2 for a
    block the (valid) plan does not have, which a renamed id makes likely."""
    return OK_CODES + {"diff": (7,), "explain": (2,)}.get(command, ())


@dataclass(frozen=True)
class Config:
    time_limit: float = 1.0  # --time-limit given to solving commands
    hang_seconds: float = 30.0  # wall clock after which a child is a hang
    memory_mb: int = 2048  # RLIMIT_AS of each child
    max_input_bytes: int = 64 << 20  # PLACEMENT_MAX_INPUT_BYTES of each child
    spawn: bool = False


@dataclass
class Outcome:
    command: str
    kind: str
    index: int
    code: int
    seconds: float
    findings: list[tuple[str, str]] = field(default_factory=list)  # (category, signature)
    input: bytes = b""
    suffix: str = ""
    args: tuple[str, ...] = ()
    stderr: str = ""


# --------------------------------------------------------------------------- child processes


def _preexec(cfg: Config, forked: bool = False) -> None:
    """The child's limits. A forked child keeps its parent's address space (a pytest
    worker that has loaded Arrow or DataFusion maps gigabytes it never touches), so its
    limit is what it inherited plus `memory_mb`: the bound is on what the CLI allocates.
    A spawned child is limited before `exec` empties its address space."""
    mem = cfg.memory_mb << 20
    if forked:
        with open("/proc/self/statm") as fh:
            mem += int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    cpu = int(cfg.hang_seconds) + 5
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child_env(cfg: Config) -> dict[str, str]:
    env = dict(os.environ)
    env["PLACEMENT_MAX_INPUT_BYTES"] = str(cfg.max_input_bytes)
    env.pop("PYTHONHASHSEED", None)
    return env


def run_child(
    cfg: Config, args: list[str], stdin_path: str, cwd: Path
) -> tuple[int, bytes, bytes, float, bool]:
    """(exit code or -signal, stdout, stderr, seconds, timed out)."""
    out_path, err_path = cwd / ".stdout", cwd / ".stderr"
    start = time.monotonic()
    with open(stdin_path, "rb") as fin, open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
        if cfg.spawn:
            proc = subprocess.Popen(
                [sys.executable, "-m", "placement_cli", *args],
                stdin=fin,
                stdout=fout,
                stderr=ferr,
                cwd=cwd,
                env=_child_env(cfg),
                preexec_fn=lambda: _preexec(cfg),
            )
            try:
                code = proc.wait(timeout=cfg.hang_seconds)
                hung = False
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
                hung = True
        else:
            code, hung = _fork_run(cfg, args, fin.fileno(), fout.fileno(), ferr.fileno(), cwd)
    seconds = time.monotonic() - start
    return code, out_path.read_bytes(), err_path.read_bytes(), seconds, hung


def _fork_run(
    cfg: Config, args: list[str], fin: int, fout: int, ferr: int, cwd: Path
) -> tuple[int, bool]:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: become `placement ARGS` and never return
        code = 1
        try:
            os.dup2(fin, 0)
            os.dup2(fout, 1)
            os.dup2(ferr, 2)
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(_child_env(cfg))
            _preexec(cfg, forked=True)
            sys.argv = ["placement", *args]
            from placement_cli.app.launch import main

            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # what `python -m placement_cli` would print
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    deadline = time.monotonic() + cfg.hang_seconds
    hung = False
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    try:
        while True:
            left = deadline - time.monotonic()
            if pidfd >= 0:
                ready, _, _ = select.select([pidfd], [], [], max(0.0, left))
                done, status = os.waitpid(pid, os.WNOHANG) if ready else (0, 0)
            else:
                done, status = os.waitpid(pid, os.WNOHANG)
                if not done:
                    time.sleep(0.005)
            if done:
                return os.waitstatus_to_exitcode(status), hung
            if time.monotonic() >= deadline and not hung:
                hung = True
                os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 30
    finally:
        if pidfd >= 0:
            os.close(pidfd)


# --------------------------------------------------------------------------- inputs


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
            return gen.yaml_edge(r, tree, body=command == "lower")
        if kind == "deep":
            return gen.deep_nesting(r, base)
        if kind == "numbers":
            return gen.numbers(r, base)
        if kind == "ids":
            return gen.ids(r, base)
        if kind == "bytes":
            data, _ = gen.serialise(base, r)
            return gen.raw_bytes(r, data)
        raise ValueError(kind)


# --------------------------------------------------------------------------- judging


_NUM = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def signature(text: str) -> str:
    """The line that names a failure, with numbers and quoted values blurred so that
    one bug is one finding.

    >>> signature("placement: internal error: KeyError: 'code' (rerun with --debug for a traceback)")
    'placement: internal error: KeyError: …'
    """
    text = text.split(" (rerun with --debug")[0]
    text = _QUOTED.sub("…", text)
    text = _NUM.sub("N", text)
    return text[:160]


def _last_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"


def judge(
    command: str,
    code: int,
    stdout: bytes,
    stderr: bytes,
    hung: bool,
    source: str,
    out: Path | None,
    out_dir: Path | None,
    fmt: str,
) -> list[tuple[str, str]]:
    """Every broken rule of a run, as (category, signature); empty when the run is fine."""
    err = stderr.decode("utf-8", "replace")
    found: list[tuple[str, str]] = []
    if hung:
        return [("hang", f"still running after the wall limit (exit {code})")]
    if "Traceback (most recent call last)" in err:
        found.append(("traceback", signature(_last_line(err))))
    if code == 1:
        cat = "memory" if "MemoryError" in err else "internal"
        found.append((cat, signature(_last_line(err))))
    elif code < 0:
        found.append(("signal", f"killed by signal {-code} ({signal.Signals(-code).name})"))
    elif code not in ok_codes(command):
        found.append((f"exit-{code}", signature(_last_line(err))))
    elif code == 2 and not err.startswith("placement: unknown block "):
        found.append(("exit-2", signature(_last_line(err))))
    if code == 3:
        # `diff` names whichever of its two files is wrong.
        sources = (source + ": ", DIFF_OTHER + ": ") if command == "diff" else (source + ": ",)
        bad = [ln for ln in err.split("\n")[:-1] if not ln.startswith(sources)]
        if bad or not err.endswith("\n"):
            found.append(("bad-error-line", signature(bad[0] if bad else err[-80:])))
    success = code in (0, 4, 5) or (command == "diff" and code == 7)
    files: list[Path] = []
    if out is not None:
        files = [out]
    elif out_dir is not None:
        files = [out_dir / f"{s}.{fmt}" for s in STAGES]
    if not success:
        left = [f for f in files if f.exists()]
        if out_dir is not None and out_dir.exists():
            left = [f for f in out_dir.iterdir()]
        elif out is not None and out.parent.exists():
            left += [f for f in out.parent.iterdir() if f.name.startswith("." + out.name)]
        if left:
            found.append(
                (
                    "partial-output",
                    f"exit {code} left {', '.join(sorted(f.name for f in left))[:80]}",
                )
            )
        return found
    if command == "validate":
        return found
    missing = [f.name for f in files if not f.exists()]
    if missing or (not files and not stdout):
        found.append(("missing-output", f"exit {code} without {', '.join(missing) or 'stdout'}"))
        return found
    if command in VIEWS:
        return found
    if command == "lower":
        return found + _check_lowered(files[0])
    for f in files or [None]:
        data = f.read_bytes() if f is not None else stdout
        # `run` exits with the last stage's status; an earlier stage may be "ok" before a
        # later one finds the plan infeasible or runs out of time.
        final = f is None or f == files[-1]
        found += _check_artifact(data, fmt, code, f.name if f is not None else "stdout", final)
    return found


def _check_lowered(path: Path) -> list[tuple[str, str]]:
    """What `lower` wrote (`args_for` always gives it `-o`) must be a plan the stages
    accept: it is loaded and checked as `placement validate` would (in this process; the
    runner has the package imported)."""
    from placement_cli.core.errors import PlacementError
    from placement_cli.pipeline.run import load

    try:
        load(str(path))
    except PlacementError as exc:
        return [("invalid-output", signature(str(exc).split("\n")[0]))]
    except Exception as exc:  # noqa: BLE001 - any failure to read our own output is a finding
        return [("unreadable-output", f"lowered plan: {type(exc).__name__}")]
    return []


def _check_artifact(
    data: bytes, fmt: str, code: int, name: str, final: bool = True
) -> list[tuple[str, str]]:
    try:
        if fmt == "yaml":
            import yaml

            art = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
        else:
            art = orjson.loads(data)
    except Exception as exc:  # noqa: BLE001 - any failure to read our own output is a finding
        return [("unreadable-output", f"{name}: {type(exc).__name__}")]
    if not isinstance(art, dict):
        return [("unreadable-output", f"{name}: not a mapping")]
    found = []
    status = art.get("status")
    if (status != STATUS_OF[code]) if final else (status not in ("ok", STATUS_OF[code])):
        found.append(
            ("status-mismatch", f"{name.split('.')[0]}: exit {code} with status {status!r}")
        )
    sol = art.get("solve")
    if isinstance(sol, dict) and status == "ok" and art.get("kind") != "tree":
        cost = sol.get("cost")
        total = cost.get("total") if isinstance(cost, dict) else None
        if not (
            isinstance(total, (int, float)) and not isinstance(total, bool) and math.isfinite(total)
        ):
            found.append(
                ("false-answer", f"solve status ok with cost.total {type(total).__name__}")
            )
        lb = sol.get("lower_bound")
        if not (isinstance(lb, (int, float)) and not isinstance(lb, bool) and math.isfinite(lb)):
            found.append(("false-answer", f"solve status ok with lower_bound {type(lb).__name__}"))
        elif isinstance(total, (int, float)) and lb > total * (1 + 1e-9) + 1e-9:
            found.append(("false-answer", "solve lower_bound above cost.total"))
    return found


# --------------------------------------------------------------------------- one job


def preload() -> None:
    """Import everything a command needs, once: each forked child starts from here
    instead of paying the imports (~0.3 s) itself."""
    import importlib

    for name in (
        "placement_cli.app.cli",
        "placement_cli.pipeline.run",
        "placement_cli.app.summary",
        "placement_cli.core.yaml_core",
        "placement_cli.algorithms.prune",
        "placement_cli.algorithms.scc",
        "placement_cli.algorithms.solve.driver",
        "placement_cli.algorithms.fuse",
        "placement_cli.algorithms.islands",
        "placement_cli.algorithms.tree",
        "placement_cli.ir.tree",
        "placement_cli.pipeline.tree_artifact",
        "placement_cli.frontends.lower",
        "placement_cli.views",
        "yaml",
        "rich.console",
    ):
        importlib.import_module(name)


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
            return Outcome(
                command,
                kind,
                index,
                code,
                seconds,
                found,
                data if found else b"",
                suffix,
                tuple(args),
                stderr.decode("utf-8", "replace")[-2000:] if found else "",
            )
        finally:
            shutil.rmtree(job, ignore_errors=True)
