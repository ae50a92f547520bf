"""What a run says about itself on stderr while and after it runs: the progress line on a
terminal, and the ``--verbose`` line.

The progress line exists for people watching a long run in a terminal. It is drawn only
when stderr is a terminal, only once the run has taken more than a moment (``DELAY``), at
most ``1 / RATE`` times a second, and it is erased before anything else is printed; so it
never reaches a pipe, a file, CI logs or the report itself (which goes to stdout or
``--output-file``), and a quick run prints nothing at all.
"""

from __future__ import annotations

import os
import time
from typing import Callable, TextIO

from bufferlint.discovery import ProjectRoot

DELAY = 0.5  # seconds before the first progress line: a quick run shows none
RATE = 10  # redraws per second at most
_ERASE = "\r\x1b[K"  # back to the start of the line, clear to its end

Tick = Callable[[int, int], None]
"""(files parsed, functions analysed) so far."""


class Progress:
    """A context manager around a long step: ``callback`` (None when nothing will be shown,
    so the analysis pays nothing) redraws the line; leaving the block erases it."""

    def __init__(self, stream: TextIO, enabled: bool = True, delay: float = DELAY) -> None:
        self.stream = stream
        self.enabled = enabled and _is_terminal(stream)
        self.start = time.monotonic()
        self.next_draw = self.start + delay
        self.drawn = False

    @property
    def callback(self) -> Tick | None:
        return self.update if self.enabled else None

    def update(self, files_parsed: int, functions_analysed: int) -> None:
        now = time.monotonic()
        if now < self.next_draw:
            return
        self.next_draw = now + 1 / RATE
        line = f"bufferlint: {files_parsed} files parsed, {functions_analysed} functions analysed ({now - self.start:.0f} s)"
        self.stream.write(_ERASE + line[: _columns(self.stream) - 1])  # a wrapped line could not be erased
        self.stream.flush()
        self.drawn = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.drawn:
            self.stream.write(_ERASE)
            self.stream.flush()
            self.drawn = False


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
