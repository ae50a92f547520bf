"""Fix planning within bounds: a file whose fixes cannot be planned in time gets none, and
each of its findings says why (``fix_error``), instead of holding up the report.

Fixes are planned on LibCST trees, and LibCST's parser is native code that cannot be
interrupted; its cost grows much faster than an expression's nesting (a generated sum of
1,000 terms parses in 0.6 s, 2,000 in 3.5 s, 6,000 in over a minute). Two bounds:

* **nesting**: a file with an expression nested deeper than ``MAX_NESTING`` levels is not
  planned at all. Deterministic and nearly free (CPython's own parser reads the file);
* **time**: planning runs in forked worker processes, one file after another, and a file
  still planning after ``Budget.per_file`` seconds, or when the run's ``Budget.total`` is
  spent, has its worker killed; the worker's other files go on in a new one.

The command plans with ``COMMAND`` (a generous safety net: what a machine under load needs
for a large ordinary file), the language server with ``EDITOR``, and cancels a project's
planning when the project is analysed again (``cancel``): its diagnostics never wait for it. Where the operating system cannot fork, files are planned in this
process and only the nesting bound applies.
"""

from __future__ import annotations

import ast
import multiprocessing
import os
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Sequence

MAX_NESTING = 1_000


@dataclass(frozen=True)
class Budget:
    per_file: float  # seconds one file's planning may take
    total: float | None = None  # seconds the whole run's planning may take (None: no bound)


COMMAND = Budget(per_file=10.0)
EDITOR = Budget(per_file=5.0, total=10.0)
POLL = 0.1  # seconds between looks at ``cancel`` while workers plan


def too_deep(text: str) -> str | None:
    """Why the fixes of ``text`` are not planned (an expression nested past ``MAX_NESTING``),
    or None. Text that CPython cannot parse is left to the planner to reject."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    deepest, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            return (f"not planned: the file nests code more than {MAX_NESTING} levels deep (LibCST, which "
                    f"plans fixes, takes minutes on such files; bufferlint.fixes.budget.MAX_NESTING)")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return None


_live: set[int] = set()  # process ids of the workers of the plans in progress (any thread)


def stop_workers() -> None:
    """Kill the workers still planning: a process ending without its normal teardown (the
    language server's prompt exit) must not leave them running."""
    for pid in list(_live):
        _kill(pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _live.discard(pid)


def plan_all(jobs: Sequence[Any], plan: Callable[[Any], Any], exhausted: Callable[[Any, str], Any],
             budget: Budget, workers: int = 1, cancel: threading.Event | None = None) -> list[Any]:
    """``[plan(job) for job in jobs]``, each in a forked worker within ``budget``; a job that
    ran out of time (or was cancelled: ``cancel`` set) is answered by ``exhausted(job, why)``.
    ``workers``: processes at once."""
    if not jobs:
        return []
    if not hasattr(os, "fork"):
        return [plan(job) for job in jobs]
    results: list[Any] = [None] * len(jobs)
    done = [False] * len(jobs)
    started = time.monotonic()
    queues = [list(range(w, len(jobs), workers)) for w in range(min(workers, len(jobs)))]
    running: dict[Connection, tuple[int, list[int], float]] = {}  # -> (worker's pid, its jobs left, current's start)

    def start(queue: list[int]) -> None:
        if not queue:
            return
        receive, send = multiprocessing.Pipe(duplex=False)
        pid = os.fork()  # not multiprocessing.Process: its child closes sys.stdin, whose lock
        if pid == 0:     # another thread (the server's reader) may hold: a deadlock
            try:
                receive.close()
                _work(send, jobs, queue, plan)
            finally:
                os._exit(0)
        _live.add(pid)
        send.close()
        running[receive] = (pid, queue, time.monotonic())

    def stop(connection: Connection, why: str | None) -> None:
        pid, queue, _ = running.pop(connection)
        _kill(pid)
        connection.close()
        if why is not None and queue:
            results[queue[0]], done[queue[0]] = exhausted(jobs[queue[0]], why), True
            start(queue[1:])

    for queue in queues:
        start(queue)
    spent = f"not planned: the run's {budget.total:g} s fix planning budget was spent" if budget.total else ""
    while running:
        now = time.monotonic()
        if (budget.total is not None and now - started >= budget.total) or (cancel is not None and cancel.is_set()):
            for connection in list(running):
                stop(connection, None)
            if cancel is not None and cancel.is_set():
                spent = "not planned: a newer analysis replaced this one"
            break
        deadlines = [begun + budget.per_file for _, _, begun in running.values()]
        if budget.total is not None:
            deadlines.append(started + budget.total)
        if cancel is not None:
            deadlines.append(now + POLL)
        for connection in wait(list(running), timeout=max(0.0, min(deadlines) - now)):
            pid, queue, _ = running[connection]
            try:
                index, result = connection.recv()
            except (EOFError, OSError):  # the worker is done (or died: its current job is lost)
                stop(connection, "not planned: the fix planner's process ended unexpectedly")
                continue
            if isinstance(result, _Failed):  # a bug in a planner: as if it had run here
                for other in list(running):
                    stop(other, None)
                raise result.error
            results[index], done[index] = result, True
            running[connection] = (pid, queue[1:], time.monotonic())
        now = time.monotonic()
        for connection, (_, queue, begun) in list(running.items()):
            if queue and now - begun >= budget.per_file:
                stop(connection, f"not planned: planning this file ran past its {budget.per_file:g} s budget")
    return [results[i] if done[i] else exhausted(jobs[i], spent) for i in range(len(jobs))]


@dataclass(frozen=True)
class _Failed:
    error: Exception


def _work(send: Connection, jobs: Sequence[Any], queue: list[int], plan: Callable[[Any], Any]) -> None:
    """A worker: plan its jobs in order, sending each result as soon as it is known. Its
    stdin and stdout are /dev/null: a worker forked by the language server must never hold
    (or write to) the LSP stream, which the client reads until every holder has closed it."""
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    for index in queue:
        try:
            result = plan(jobs[index])
        except Exception as exc:
            result = _Failed(exc)
        send.send((index, result))
    send.close()
