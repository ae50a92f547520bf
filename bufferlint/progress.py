"""What a run says about itself on stderr while and after it runs: the progress line on a
terminal, and the ``--verbose`` line.

The progress line exists for people watching a long run in a terminal. It is drawn only
when stderr is a terminal, only once the run has taken more than a moment (``DELAY``), and
it is erased before anything else is printed; so it never reaches a pipe, a file, CI logs or
the report itself (which goes to stdout or ``--output-file``), and a quick run prints nothing.

It says the phase and how far it is (``bufferlint: analysing: 427 of 4,719 files parsed,
1,234 functions analysed (12 s)``), and it moves while work runs even when nothing reports:
a thread redraws it every ``TICK`` seconds (the elapsed time at least changes), and when one
function's analysis has taken more than ``SLOW_FUNCTION`` seconds the line names it
(``; in pkg.loader:load_weights for 5 s``), so a long step never looks like a hang.

What reports to it: the analysis calls it as ``progress(files parsed, functions analysed)``
(any callable will do: the language server's is one), and when the object also has them,
``function_started(name)`` as each function's analysis starts and ``phase(label, total)``
as each phase starts (``announce``): analysing, planning fixes, verifying fixes, fixing.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, TextIO

from bufferlint.discovery import ProjectRoot

DELAY = 0.5  # seconds before the first progress line: a quick run shows none
RATE = 10  # redraws per second at most
TICK = 0.5  # seconds between redraws while nothing reports
SLOW_FUNCTION = 2.0  # seconds one function's analysis takes before the line names it
_ERASE = "\r\x1b[K"  # back to the start of the line, clear to its end

Tick = Callable[[int, int], None]
"""(files parsed, functions analysed) so far."""


def announce(progress: object, label: str, total_files: int | None = None) -> None:
    """Tell ``progress`` (a ``CheckOptions.progress``) that a phase starts, if it listens
    for phases; ``total_files``: how many files the phase may parse."""
    phase = getattr(progress, "phase", None)
    if phase is not None:
        phase(label, total_files)


class Progress:
    """A context manager around a long step: ``callback`` (None when nothing will be shown,
    so the analysis pays nothing) is what the analysis reports to; leaving the block stops
    the redrawing thread and erases the line."""

    def __init__(self, stream: TextIO, enabled: bool = True, delay: float = DELAY) -> None:
        self.stream = stream
        self.enabled = enabled and _is_terminal(stream)
        self.start = time.monotonic()
        self.first_draw = self.start + delay
        self.next_draw = self.first_draw
        self.drawn = False
        self.last_draw = 0.0
        self.label, self.total = "analysing", None
        self.parsed = self.functions = 0
        self.current: str | None = None
        self.current_since = 0.0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def callback(self) -> Progress | None:
        return self if self.enabled else None

    def __call__(self, files_parsed: int, functions_analysed: int) -> None:
        self.update(files_parsed, functions_analysed)

    def update(self, files_parsed: int, functions_analysed: int) -> None:
        self.parsed, self.functions = files_parsed, functions_analysed
        self.current = None
        self._draw_if_due()

    def function_started(self, name: str) -> None:
        self.current, self.current_since = name, time.monotonic()

    def phase(self, label: str, total_files: int | None = None) -> None:
        self.label, self.total = label, total_files
        self.parsed = self.functions = 0
        self.current = None
        self._draw_if_due()

    def line(self, now: float) -> str:
        parsed = f"{self.parsed:,} of {self.total:,} files parsed" if self.total else f"{_count(self.parsed, 'file')} parsed"
        line = f"bufferlint: {self.label}: {parsed}, {_count(self.functions, 'function')} analysed ({now - self.start:.0f} s)"
        current = self.current
        if current is not None and now - self.current_since > SLOW_FUNCTION:
            line += f"; in {current} for {now - self.current_since:.0f} s"
        return line

    def _draw_if_due(self) -> None:
        now = time.monotonic()
        if now >= self.next_draw:
            self._draw(now)

    def _draw(self, now: float) -> None:
        with self.lock:
            if self.stopped.is_set():
                return
            self.next_draw = now + 1 / RATE
            self.last_draw = now
            self.stream.write(_ERASE + self.line(now)[: _columns(self.stream) - 1])  # a wrapped line could not be erased
            self.stream.flush()
            self.drawn = True

    def _keep_moving(self) -> None:
        """The redrawing thread: the line is redrawn when nothing has drawn it for ``TICK``
        seconds, so it changes at least every second while work runs."""
        if self.stopped.wait(max(0.0, self.first_draw - time.monotonic())):
            return
        while not self.stopped.wait(TICK):
            now = time.monotonic()
            if now - self.last_draw >= TICK:
                self._draw(now)

    def __enter__(self) -> Progress:
        if self.enabled:
            self.thread = threading.Thread(target=self._keep_moving, name="bufferlint-progress", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self.lock:
            self.stopped.set()
            if self.drawn:
                self.stream.write(_ERASE)
                self.stream.flush()
                self.drawn = False
        if self.thread is not None:
            self.thread.join()


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80  # a terminal that does not know its size says 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def verbose_line(root: ProjectRoot, analysed: int, parsed: int, reported: int, cache: str | None = None) -> str:
    """``-v``: where the project was taken to be and how much of it was read.
    ``cache``: how the cache was used, when there is one (one short phrase)."""
    line = (
        f"bufferlint: project root {root.path} ({root.reason}); {analysed} files analysed, "
        f"{parsed} parsed, {reported} reported on"
    )
    return f"{line}; cache: {cache}" if cache is not None else line
