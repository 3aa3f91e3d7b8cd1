"""Running one fuzz input through the real CLI in a child process, under limits.

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

import os
import resource
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Config:
    time_limit: float = 1.0  # --time-limit given to solving commands
    hang_seconds: float = 30.0  # wall clock after which a child is a hang
    memory_mb: int = 2048  # RLIMIT_AS of each child
    max_input_bytes: int = 64 << 20  # PLACEMENT_MAX_INPUT_BYTES of each child
    spawn: bool = False


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
