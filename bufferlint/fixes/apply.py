"""Applying edits to a file's text, and writing the result back safely.

* Text is decoded the way Python decodes source (PEP 263 cookie, UTF-8 BOM, else UTF-8)
  and encoded back with the same codec, so a latin-1 file stays latin-1 and a BOM stays.
* Edits address 1-based lines and 1-based, end-exclusive character columns; line breaks
  are ``\\r\\n``, ``\\r`` or ``\\n`` as Python counts them. Everything outside the edited
  ranges is kept as it was, line endings included.
* Files are replaced atomically: the new bytes go to a temporary file in the same
  directory (same file system), which takes over the original's permission bits and is
  then renamed over it with ``os.replace``. A reader sees the old file or the new one,
  never a half-written file. A symlink is followed: its target is replaced.
"""

from __future__ import annotations

import difflib
from typing import Iterable

from bufferlint.findings import Edit
from bufferlint.source import source_encoding
from bufferlint.textlines import split_lines


class EditConflict(ValueError):
    """Two edits overlap."""


def decode(data: bytes) -> tuple[str, str]:
    """(text, codec) for Python source bytes."""
    try:
        encoding = source_encoding(data)
    except SyntaxError:
        encoding = "utf-8"
    return data.decode(encoding), encoding


def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding)


def offsets(text: str) -> list[int]:
    """Offset of the start of each line (index 0 is line 1), plus one past the end."""
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts


def to_offset(starts: list[int], text: str, line: int, column: int) -> int:
    if line < 1 or line > len(starts):
        raise EditConflict(f"line {line} is outside the file")
    base = starts[line - 1]
    line_end = starts[line] if line < len(starts) else len(text)
    offset = base + column - 1
    if column < 1 or offset > line_end:
        raise EditConflict(f"column {column} is outside line {line}")
    return offset


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with the edits applied. Identical edits count once (two fixes that add the
    same import); other overlapping edits raise EditConflict. Insertions at the same point
    are applied in the order given."""
    starts = offsets(text)
    resolved: list[tuple[int, int, int, str]] = []
    seen: set[Edit] = set()
    for order, edit in enumerate(edits):
        if edit in seen:
            continue
        seen.add(edit)
        start = to_offset(starts, text, edit.line, edit.column)
        end = to_offset(starts, text, edit.end_line, edit.end_column)
        if end < start:
            raise EditConflict("edit ends before it starts")
        resolved.append((start, end, order, edit.replacement))
    resolved.sort()
    pieces, position = [], 0
    for start, end, _, replacement in resolved:
        if start < position:
            raise EditConflict("overlapping edits")
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def conflicts(a: Iterable[Edit], b: Iterable[Edit]) -> bool:
    """Whether two fixes' edits overlap (identical edits do not conflict)."""
    a, b = list(a), list(b)
    for x in a:
        for y in b:
            if x == y:
                continue
            x0, x1 = (x.line, x.column), (x.end_line, x.end_column)
            y0, y1 = (y.line, y.column), (y.end_line, y.end_column)
            if x0 == x1 == y0 == y1:
                return True  # two different insertions at one point: order would matter
            if x0 < y1 and y0 < x1:
                return True
            if (x0 == x1 and y0 < x0 < y1) or (y0 == y1 and x0 < y0 < x1):
                return True
    return False


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of one file (``--- name`` / ``+++ name``), with the
    ``\\ No newline at end of file`` marker where needed."""
    out = []
    for line in difflib.unified_diff(split_lines(old), split_lines(new), fromfile=name, tofile=name):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
