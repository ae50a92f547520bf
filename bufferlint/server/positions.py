"""bufferlint positions to LSP positions, for one text.

bufferlint counts 1-based lines and 1-based *character* columns (``Span``, ``Edit``);
LSP counts 0-based lines and columns in the code units the client chose at
initialisation (UTF-16 unless it offered another). Only ``\\r\\n``, ``\\r`` and ``\\n`` end a
line in both (``textlines.split_lines``; a form feed does not, whatever ``str.splitlines``
says).
"""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from bufferlint.textlines import split_lines


class Positions:
    """Converts positions of one text (the text the analysis read) into client units."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.codec = codec

    def position(self, line: int, column: int) -> types.Position:
        """The client position of 1-based ``line`` and character ``column``; past the end
        of the text, the end of the text (a line count or column from a stale analysis)."""
        if line > len(self.lines):
            return self.end()
        index = max(line - 1, 0)
        content = self.lines[index].rstrip("\r\n")
        character = min(max(column - 1, 0), len(content))
        return self.codec.position_to_client_units(self.lines, types.Position(line=index, character=character))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(start=self.position(line, column), end=self.position(end_line, end_column))

    def line(self, line: int) -> types.Range:
        """The whole of 1-based ``line`` (without its line ending)."""
        length = len(self.lines[line - 1].rstrip("\r\n")) if 1 <= line <= len(self.lines) else 0
        return self.range(line, 1, line, length + 1)

    def end(self) -> types.Position:
        if not self.lines:
            return types.Position(line=0, character=0)
        last = self.lines[-1]
        if last != last.rstrip("\r\n"):
            return types.Position(line=len(self.lines), character=0)
        return self.codec.position_to_client_units(self.lines, types.Position(line=len(self.lines) - 1, character=len(last)))


def text_edit(old: Positions, new: str) -> types.TextEdit:
    """One edit turning ``old``'s text into ``new``: the changed lines between the lines
    the two texts share at the start and at the end (a small edit keeps the client's
    cursor, folds and undo history where they were)."""
    before, after = old.lines, split_lines(new)
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    start = types.Position(line=head, character=0)
    stop = len(before) - tail
    end = old.end() if stop == len(before) else types.Position(line=stop, character=0)
    return types.TextEdit(range=types.Range(start=start, end=end), new_text="".join(after[head:len(after) - tail]))
