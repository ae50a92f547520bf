"""A syntax node's place in its module as a report gives it: lines, and character columns.

Why: ``ast`` counts columns in UTF-8 bytes, findings in characters. The conversion needs the
module's lines, split once per module and kept for the run; it is a pure function of the
module's text, so the analysis's program and the replaying one share this code (and a
recorded analysis need not log it).
"""

from __future__ import annotations

import ast
from pathlib import Path

from bufferlint.analysis.frontend.index import ModuleInfo
from bufferlint.findings import Span


class Spans:
    """Spans of nodes, with each module's lines split once (kept by path)."""

    def __init__(self) -> None:
        self._lines: dict[Path, list[str]] = {}

    def lines(self, module: ModuleInfo) -> list[str]:
        """The module's lines (``ModuleInfo.text`` ends every line with "\\n")."""
        lines = self._lines.get(module.path)
        if lines is None:
            lines = self._lines[module.path] = module.text.split("\n")
        return lines

    def span(self, module: ModuleInfo, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        return Span(
            module.path,
            line,
            self.column(module, line, getattr(node, "col_offset", 0)) + 1,
            end_line,
            self.column(module, end_line, getattr(node, "end_col_offset", 0) or 0) + 1,
        )

    def column(self, module: ModuleInfo, line: int, byte_offset: int) -> int:
        """The 0-based character column of ``byte_offset`` on 1-based ``line``."""
        lines = self.lines(module)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if text.isascii():
            return byte_offset
        encoded = text.encode("utf-8")
        if byte_offset > len(encoded):  # a line added by an edit, numbered after this one (``analysis.edits``)
            return len(text) + byte_offset - len(encoded)
        return len(encoded[:byte_offset].decode("utf-8", "replace"))
