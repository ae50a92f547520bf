"""When analyses run: one at a time, coalesced per project, debounced while typing.

An analysis reads every open document of a project at the moment it starts. So a request
for a project that is already waiting adds nothing, and a request that arrives while that
project is being analysed makes it run once more afterwards (with the newer text). A
delayed request (typing) restarts its timer on every keystroke; an immediate one (open,
save, an applied action) replaces a pending timer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Awaitable, Callable


class Scheduler:
    def __init__(self, run: Callable[[Path], Awaitable[None]], on_error: Callable[[Path, Exception], None]) -> None:
        self._run = run
        self._on_error = on_error  # hears an analysis that raised; the next ones still run
        self._timers: dict[Path, asyncio.TimerHandle] = {}
        self._due: list[Path] = []  # in request order, each project once
        self._worker: asyncio.Task | None = None

    def request(self, root: Path, delay: float = 0.0) -> None:
        """Analyse the project at ``root`` after ``delay`` seconds without another request."""
        timer = self._timers.pop(root, None)
        if timer is not None:
            timer.cancel()
        if delay > 0:
            self._timers[root] = asyncio.get_running_loop().call_later(delay, self._make_due, root)
        else:
            self._make_due(root)

    def _make_due(self, root: Path) -> None:
        self._timers.pop(root, None)
        if root not in self._due:
            self._due.append(root)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._due:
            root = self._due.pop(0)
            try:
                await self._run(root)
            except Exception as exc:
                self._on_error(root, exc)
