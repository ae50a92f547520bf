"""Check that every reported file reads and compiles (what CPython accepts), alongside the analysis.

The analysis parses only the files that can matter to borrowed values; a file the user
asked about must still be reported when it is not valid Python. On a large tree that check
is most of the work, so it runs in worker processes while the main process analyses.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from bufferlint.findings import FileError
from bufferlint.source import SourceFile, compile_error, parse_source, read_source

PARALLEL_FROM = 200  # files; below this a pool costs more than it saves
CHUNK = 64


def _check(paths: list[Path]) -> list[FileError]:
    errors = []
    for path in paths:
        source = read_source(path)
        tree = parse_source(source) if isinstance(source, SourceFile) else source
        if isinstance(tree, FileError):
            errors.append(tree)
        elif (error := compile_error(source, tree)) is not None:
            errors.append(error)
    return errors


class SyntaxCheck:
    """Started before the analysis, collected after it."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Future] = []
        # The main process keeps one core for the analysis; the checkers share the others
        # (on 2 cores one checker beats two: 5.5 s vs 6.7 s on sglang 0.5.16).
        workers = (os.cpu_count() or 1) - 1
        if len(paths) >= PARALLEL_FROM and workers >= 1 and "fork" in multiprocessing.get_all_start_methods():
            self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
            self.futures = [self.pool.submit(_check, paths[i : i + CHUNK]) for i in range(0, len(paths), CHUNK)]

    def errors(self) -> list[FileError]:
        if self.pool is None:
            return _check(self.paths)
        try:
            return [error for future in self.futures for error in future.result()]
        finally:
            self.pool.shutdown()
