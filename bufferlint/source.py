"""Reading and parsing one Python file, turning every way it can fail into a FileError.

The analysis must keep going when one file of a large project is binary, mis-encoded,
unreadable or not valid Python: each problem becomes one line in the report and the
other files are still analysed. Both the engine and the CLI (for suppression comments)
read files through here, so they agree on what a file's text is.

An editor's open documents may differ from the files on disk: :func:`overlaid` makes
``read_bytes`` return their text instead, for the duration of one run, so every reader
(the analysis, the cache's content hashes, suppression comments, fix planning) sees the
same unsaved text without being told about it.
"""

from __future__ import annotations

import ast
import codecs
import os
import re
import stat
import threading
import tokenize
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from bufferlint.findings import FileError

MAX_BYTES = 5 * 1024 * 1024
"""Larger files are generated code or data; parsing them costs more than it can find. The
``check`` command sets it from ``--max-file-size`` / ``max-file-size`` (see ``set_max_bytes``)."""

_MIB = 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str


def set_max_bytes(limit: int) -> None:
    """The size above which files are not analysed, for this process (and the workers it forks)."""
    global MAX_BYTES
    MAX_BYTES = limit


def describe_size(size: float) -> str:
    return f"{round(size / _MIB, 2):g} MiB"


def read_source(path: Path, data: bytes | None = None) -> SourceFile | FileError:
    """Read ``path`` as Python source text, decoded the way the interpreter would decode it
    (PEP 263 coding cookie or UTF-8 BOM, else UTF-8). ``data``: its bytes, if already read."""
    if data is None:
        data = read_bytes(path)
    if isinstance(data, FileError):
        return data
    if b"\0" in data:
        return FileError(path, "contains a NUL byte (binary file?)")
    try:
        encoding = source_encoding(data)
    except SyntaxError as exc:
        if exc.msg.startswith("encoding problem"):
            return FileError(path, "bad encoding declaration: the coding comment contradicts the UTF-8 BOM")
        return FileError(path, f"bad encoding declaration: {exc.msg}")  # unknown encoding: NAME
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = len(_BREAK.findall(data, 0, exc.start)) + 1
        name = "utf-8" if encoding == "utf-8-sig" else encoding
        return FileError(
            path,
            f"cannot decode as {name} at line {line} (byte offset {exc.start}: {exc.reason}); "
            "declare the encoding with a PEP 263 coding comment",
        )
    return SourceFile(path, text)


_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""A line as Python's tokenizer ends it (``io.BytesIO.readline`` ends lines only at ``\n``)."""
_BREAK = re.compile(rb"\r\n|\r|\n")
_HEAD = 64 * 1024  # enough bytes for the two lines a coding cookie may be on
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK = re.compile(rb"^[ \t\f]*(?:[#\r\n]|\Z)")


def source_encoding(data: bytes) -> str:
    """The codec of Python source bytes as the interpreter chooses it: the PEP 263 coding
    cookie or UTF-8 BOM, else UTF-8 (lines end at CR, LF or CRLF). Raises SyntaxError for a
    declaration the interpreter rejects (unknown codec, cookie contradicting the BOM)."""
    try:
        encoding, _ = tokenize.detect_encoding(iter(_LINE.findall(data[:_HEAD])).__next__)
    except StopIteration:  # no lines at all
        return "utf-8"
    except SyntaxError as exc:
        if "invalid or missing" not in exc.msg:
            raise
        # the cookie's own line is not UTF-8 (CPython accepts `# coding: latin-1 -- café`),
        # or the first lines are not UTF-8 and declare nothing: decoding says where
        return _cookie(data) or "utf-8"
    return encoding


def _cookie(data: bytes) -> str | None:
    """The PEP 263 encoding declared on the first or second line, read as bytes."""
    for line in _LINE.findall(data[:_HEAD])[:2]:
        match = _COOKIE.match(line)
        if match:
            name = match.group(1).decode("ascii")
            try:
                return codecs.lookup(name).name
            except LookupError:
                return None
        if not _BLANK.match(line):
            return None
    return None


_overlays: dict[str, str] = {}  # absolute path (as given and resolved) -> text, during ``overlaid``
_overlay_lock = threading.RLock()


@contextmanager
def overlaid(texts: Mapping[Path, str]) -> Iterator[None]:
    """Read ``texts`` (absolute path -> text) in place of those files until the block ends.

    The overlay is process-wide, like ``MAX_BYTES``, because the analysis runs in helper
    threads and forked workers that must all see it; so runs through here are serialised
    (a lock), and a run without overlays waits for one with them to end. A symlink to an
    overlaid file reads the overlay too (fixes are verified in a tree of symlinks to the
    project's files; a symlinked folder is not followed by discovery)."""
    global _overlays
    with _overlay_lock:
        saved = _overlays
        table: dict[str, str] = {}
        for path, text in texts.items():
            table[os.path.abspath(path)] = text
            table.setdefault(os.path.realpath(path), text)
        _overlays = table
        try:
            yield
        finally:
            _overlays = saved


def _overlay(path: Path) -> bytes | FileError | None:
    """The overlaid text of ``path`` as the bytes a file holding it would contain, or None."""
    text = _overlays.get(os.path.abspath(path))
    if text is None and os.path.islink(path):  # one lstat; realpath would take one per folder
        text = _overlays.get(os.path.realpath(path))
    if text is None:
        return None
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate then fails to decode, as on disk
    try:
        encoding = source_encoding(data)
    except SyntaxError:
        encoding = "utf-8"  # read_source reports the bad declaration
    if encoding not in ("utf-8", "utf-8-sig"):
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError as exc:
            return FileError(path, f"the editor's text cannot be encoded as {encoding}, its declared encoding "
                                   f"(character {exc.start + 1}: {exc.reason})")
    if len(data) > MAX_BYTES:
        return _too_large(path, len(data))
    return data


def _too_large(path: Path, size: int) -> FileError:
    return FileError(
        path,
        f"file too large to analyse ({size / _MIB:.1f} MiB; the limit is {describe_size(MAX_BYTES)}: "
        f"raise it with --max-file-size or max-file-size in [tool.bufferlint])",
    )


def is_overlaid(path: Path) -> bool:
    """Does ``path`` have an overlay now (an editor's document, on disk or not)?"""
    return bool(_overlays) and os.path.abspath(path) in _overlays


def overlays_active() -> bool:
    """Is some file read from an overlay now (``overlaid``), not from disk?"""
    return bool(_overlays)


def read_bytes(path: Path) -> bytes | FileError:
    """The file's bytes (its overlay's, inside ``overlaid``), or why they cannot be read."""
    if _overlays:
        overlay = _overlay(path)
        if overlay is not None:
            return overlay
    # O_NONBLOCK so that a FIFO named *.py fails the regular-file check instead of hanging.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        return FileError(path, f"cannot read file: {exc.strerror or exc}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return FileError(path, "not a regular file")
        if info.st_size > MAX_BYTES:
            return _too_large(path, info.st_size)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        return FileError(path, f"cannot read file: {exc.strerror or exc}")
    finally:
        os.close(fd)


def parse_source(src: SourceFile) -> ast.Module | FileError:
    """Parse the file's text; a file Python itself cannot parse yields a FileError, never
    an exception."""
    try:
        return ast.parse(src.text, filename=str(src.path), type_comments=False)
    except SyntaxError as exc:  # includes IndentationError and TabError
        return _syntax_error(src.path, exc)
    except ValueError as exc:
        return FileError(src.path, f"cannot parse: {exc}")
    except (RecursionError, MemoryError):
        return FileError(src.path, "cannot parse: expression nested too deeply")


def compile_error(src: SourceFile, tree: ast.Module) -> FileError | None:
    """Whether CPython accepts the parsed file: ``ast.parse`` only checks the grammar, while
    ``compile`` also rejects what its symbol table and compiler find (``name 'x' is used
    prior to global declaration``, ``'return' outside function``, a misplaced ``from
    __future__ import``). Those files never run, so they are reported like syntax errors."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings (invalid escapes, ...) are not errors
            compile(tree, str(src.path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _syntax_error(src.path, exc)
    except ValueError as exc:
        return FileError(src.path, f"cannot compile: {exc}")
    except (RecursionError, MemoryError):
        return FileError(src.path, "cannot compile: nested too deeply")
    return None


def _syntax_error(path: Path, exc: SyntaxError) -> FileError:
    where = f" at line {exc.lineno}" if exc.lineno else ""
    if exc.lineno and exc.offset:
        where += f", column {exc.offset}"
    return FileError(path, f"syntax error{where}: {exc.msg}")

