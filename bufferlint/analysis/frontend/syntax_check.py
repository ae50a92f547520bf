"""Check that every reported file reads and compiles (what CPython accepts), alongside the analysis.

The analysis parses only the files that can matter to borrowed values; a file the user
asked about must still be reported when it is not valid Python. On a large tree that check
is a large part of the work, so it runs in worker processes (all but one of the run's,
``--jobs``: bufferlint.jobs; none with ``--jobs 1``) while the main process analyses, and it compiles each file's text directly: CPython's parser and compiler without
building Python syntax-tree objects cost a third of ``ast.parse`` followed by ``compile``
(8.0 s vs 21.3 s on the sglang 0.5.16 tree). Only a file that fails is parsed and compiled
again step by step, so that its message says which step failed. When the analysis is done,
the main process takes back every chunk no worker has started and checks it itself; the
errors come back in file order, whoever checked them.
"""

from __future__ import annotations

import multiprocessing
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from bufferlint import jobs
from bufferlint.findings import FileError
from bufferlint.source import SourceFile, compile_error, parse_source, read_source

PARALLEL_FROM = 200  # files; below this a pool costs more than it saves
CHUNK = 32


def file_error(path: Path) -> FileError | None:
    """Why CPython would not run ``path`` (cannot read, decode, parse or compile), or None."""
    source = read_source(path)
    if not isinstance(source, SourceFile):
        return source
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings (invalid escapes, ...) are not errors
            compile(source.text, str(path), "exec", dont_inherit=True)
        return None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = parse_source(source)
        return tree if isinstance(tree, FileError) else compile_error(source, tree)


def _check(paths: list[Path]) -> list[FileError]:
    return [error for path in paths if (error := file_error(path)) is not None]


class SyntaxCheck:
    """Started before the analysis, collected after it."""

    def __init__(self, paths: list[Path]) -> None:
        self.chunks = [paths[i : i + CHUNK] for i in range(0, len(paths), CHUNK)]
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Future] = []
        # The main process keeps one of the run's processes for the analysis (``--jobs``,
        # bufferlint.jobs); the checkers share the others.
        workers = jobs.processes() - 1
        if len(paths) >= PARALLEL_FROM and workers >= 1 and jobs.can_fork():
            self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
            self.futures = [self.pool.submit(_check, chunk) for chunk in self.chunks]

    def errors(self) -> list[FileError]:
        if self.pool is None:
            return [error for chunk in self.chunks for error in _check(chunk)]
        try:
            # The workers take chunks from the front: this process takes back the ones not
            # started from the back, so that both work until they meet (waiting on the front
            # first would leave it idle while a worker checks everything in turn).
            found: list[list[FileError] | None] = [None] * len(self.chunks)
            for position in reversed(range(len(self.chunks))):
                if self.futures[position].cancel():
                    found[position] = _check(self.chunks[position])
            return [error for position, errors in enumerate(found)
                    for error in (errors if errors is not None else self.futures[position].result())]
        finally:
            self.pool.shutdown()
