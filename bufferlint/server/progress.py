"""A long analysis in the editor's progress UI (``window/workDoneProgress``).

Only analyses of projects that are not warm are shown (the first one, or a large project
after an edit to a file the analysis reads): a sub-second analysis would only flicker. The
analysis reports (files parsed, functions analysed) from its worker thread; the reports
are thinned to two a second and handed to the event loop, which alone talks to the client.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

INTERVAL = 0.5  # seconds between reports
_tokens = itertools.count(1)


class AnalysisProgress:
    def __init__(self, server: LanguageServer, root: Path) -> None:
        self.server = server
        self.loop = asyncio.get_running_loop()
        self.token = f"bufferlint-analysis-{next(_tokens)}"
        self.title = f"bufferlint: analysing {root.name}"
        self.last = 0.0
        self.started = False

    async def begin(self) -> None:
        try:
            await self.server.work_done_progress.create_async(self.token)
        except Exception:  # the client refused the token: no progress, the analysis goes on
            return
        self.started = True
        self.server.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(title=self.title))

    def hear(self, parsed: int, functions: int) -> None:
        """``CheckOptions.progress``: called in the analysis' thread."""
        now = time.monotonic()
        if self.started and now - self.last >= INTERVAL:
            self.last = now
            message = f"{parsed} files parsed, {functions} functions analysed"
            self.loop.call_soon_threadsafe(self._report, message)

    def _report(self, message: str) -> None:
        self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def end(self) -> None:
        if self.started:
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd())
