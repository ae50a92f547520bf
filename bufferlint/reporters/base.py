"""What every reporter shares: the call signature and how paths are shown."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Protocol

from bufferlint.findings import AnalysisResult


class Reporter(Protocol):
    """``cwd``: paths are shown relative to it. ``root``: the project root, which
    fingerprints (SARIF) are relative to; the current directory when not given."""

    def __call__(self, result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str: ...


def display_path(path: Path, base: Path) -> str:
    """Relative to ``base`` when under it, else absolute; always with ``/`` separators, so
    output is stable across platforms and clickable in editors and CI logs. Every path
    bufferlint writes goes through here: relative to the current directory in reports,
    relative to the project root in baselines and fingerprints."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.path.abspath(base)).as_posix()
    except ValueError:
        return absolute.as_posix()


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 finding``, ``2 findings``: every count bufferlint shows a user (summaries, the
    command's notes) is worded here, so that they agree."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_UNPRINTABLE_BUT_BREAKS = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (os.fsdecode)
        return f"\\x{code - 0xDC00:02x}"
    return _NAMED.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def printable(text: str, line_breaks: bool = False) -> str:
    """``text`` safe to print as part of one line in any locale: control characters (a file
    named ``a\\nb.py`` would split its line, ``\\x1b`` would drive the terminal) and the raw
    bytes of file names that are not UTF-8 are escaped as Python writes them (``\\n``,
    ``\\x1b``, ``\\xff``). ``line_breaks``: keep ``\\r`` and ``\\n`` (a format that escapes them itself)."""
    return (_UNPRINTABLE_BUT_BREAKS if line_breaks else _UNPRINTABLE).sub(_escape, text)


def shown_path(path: Path, cwd: Path) -> str:
    """``display_path``, printable (for the line-oriented formats)."""
    return printable(display_path(path, cwd))


def json_text(data: object, indent: int | None = None) -> str:
    """JSON for any data bufferlint reports, as valid UTF-8 text: the undecodable bytes of a
    file name (lone surrogates, which no UTF-8 encoder accepts) become ``\\udcXX`` escapes,
    which JSON readers (Python's among them) decode back to the same string."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
