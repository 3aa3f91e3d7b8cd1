"""Measuring in fresh processes (`execute --forks K`): the same measurement run K times,
one after another, each in a process of its own, and their results handed back.

Why: on a machine of few cores a way's median moves from one process to the next by
more than the rounds inside one process show (the engines' memory layout and thread
placement, their caches, what ran before), so a decision measured in one process can
flip in the next. Runs pooled over K processes no longer rest on one process's luck,
as JMH's forks do for the JVM.

A child is started by `spawn` (a fresh interpreter, nothing inherited from this one:
no engine thread half-copied, as `fork` would leave the engines' pools) and runs
`fn(i, *args)` (a module-level function, its arguments picklable); only one runs at a
time, so that none is timed while another competes for the cores. A child ignores
Ctrl-C (held back while it starts, so that it is born ignoring it): this process
answers it by stopping the child, by its id, then raising.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from typing import Any

from placement_cli.core.errors import IOFailure


def in_processes(
    k: int,
    fn: Callable[..., Any],
    *args: Any,
    starting: Callable[[int, int], None] | None = None,
) -> list[Any]:
    """`fn(i, *args)` for i in 0..k-1, each in a fresh process, one after another (module
    doc): their results in order; `starting(i, k)` is called as each starts (progress).
    An exception raised in a child is raised here; a child that dies without a result
    (killed, out of memory) is an `IOFailure`."""
    ctx = multiprocessing.get_context("spawn")
    out: list[Any] = []
    for i in range(k):
        if starting is not None:
            starting(i, k)
        recv, send = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_child, args=(send, fn, i, args), daemon=True)
        # Ctrl-C held back while the child starts: one arriving then would leave it
        # running, its id not yet known; it is taken just after, and the child stopped.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            try:
                child.start()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            send.close()  # the child holds the writing end: EOF when it dies
            # Waited for in short polls: a Ctrl-C the kernel hands to another thread
            # (an engine's) would not wake a read blocked in this one.
            while not recv.poll(0.1):
                pass
            kind, value = recv.recv()
        except EOFError:
            child.join()
            raise IOFailure(
                f"measuring process {i + 1} of {k} ended without a result "
                f"(exit code {child.exitcode})"
            ) from None
        except BaseException:
            if child.pid is not None:
                child.kill()  # Ctrl-C here: the child (ignoring it) is stopped, by its id
                child.join()
            raise
        finally:
            send.close()
            recv.close()
        child.join()
        if kind == "raise":
            raise value
        out.append(value)
    return out


def _child(send: Any, fn: Callable[..., Any], i: int, args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers Ctrl-C (module doc)
    try:
        payload: tuple[str, Any] = ("ok", fn(i, *args))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent as it is
        payload = ("raise", exc)
    try:
        send.send(payload)
    except Exception as exc:  # noqa: BLE001 - a result that cannot cross: say so
        send.send(("raise", IOFailure(f"measuring process {i + 1}: {exc}")))
    finally:
        send.close()
