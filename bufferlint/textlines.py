"""Lines of a source file as the reporters, the baseline and ``--add-noqa`` see them.

Positions follow ``Span`` and ``Edit``: 1-based lines, 1-based character columns, end
exclusive. Only ``\\r\\n``, ``\\r`` and ``\\n`` end a line (as for Python's tokenizer; a form
feed does not), and every line keeps its ending so that text can be rebuilt byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path

from bufferlint.source import SourceFile, read_source

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, each with its line ending (the last one may have none)."""
    return _LINE.findall(text)


def line_ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def utf8_column(line: str, column: int) -> int:
    """The 1-based UTF-8 byte column of a 1-based character column (reviewdog counts bytes)."""
    return len(line[: max(column - 1, 0)].encode("utf-8", "surrogatepass")) + 1


class SourceCache:
    """The text of each file, read once (through ``read_source``, so decoded exactly as the
    engine decoded it); ``None`` for a file that cannot be read any more."""

    def __init__(self) -> None:
        self._texts: dict[Path, str | None] = {}
        self._lines: dict[Path, list[str]] = {}

    def text(self, path: Path) -> str | None:
        if path not in self._texts:
            source = read_source(path)
            self._texts[path] = source.text if isinstance(source, SourceFile) else None
        return self._texts[path]

    def lines(self, path: Path) -> list[str]:
        if path not in self._lines:
            text = self.text(path)
            self._lines[path] = split_lines(text) if text is not None else []
        return self._lines[path]

    def line(self, path: Path, number: int) -> str | None:
        """Line ``number`` (1-based) without its line ending, or None if there is no such line."""
        lines = self.lines(path)
        return lines[number - 1].rstrip("\r\n") if 1 <= number <= len(lines) else None
