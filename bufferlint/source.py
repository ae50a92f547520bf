"""Reading and parsing one source file, turning every way it can fail into a FileError."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from bufferlint.findings import FileError

MAX_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str


def read_source(path: Path, data: bytes | None = None) -> SourceFile | FileError:
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            return FileError(path, f"cannot read file: {exc.strerror or exc}")
    if len(data) > MAX_BYTES:
        return FileError(path, f"file too large to analyse ({len(data) / 2**20:.1f} MiB)")
    if b"\0" in data:
        return FileError(path, "contains a NUL byte (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except SyntaxError as exc:
        return FileError(path, f"bad encoding declaration: {exc.msg}")
    except (LookupError, UnicodeDecodeError) as exc:
        return FileError(path, f"cannot decode file: {exc}")
    return SourceFile(path, text.lstrip("\ufeff"))


def parse_source(source: SourceFile) -> ast.Module | FileError:
    try:
        return ast.parse(source.text, filename=str(source.path))
    except SyntaxError as exc:
        return FileError(source.path, f"syntax error at line {exc.lineno}, column {exc.offset}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return FileError(source.path, f"cannot parse file: {type(exc).__name__}: {exc}")
