"""Syntax trees shared by the analyses of one run that analyses the project several times.

Verifying fixes (``fixes/verify.py``) analyses the shadow project again after each batch, and
``--fix`` after each round: each analysis parsed the same unchanged files again, a quarter
of its time (sglang 0.5.16 as JSON: 5 analyses, 13 of 63 CPU seconds in ``ast.parse``). Within
``shared_trees()`` a file whose text an earlier analysis parsed gets that tree back.

A tree is keyed by the file's path below the analysis's root and its whole text: the shadow
project keeps every path below its root, so a file no fix wrote finds its tree, and one a fix
wrote is parsed anew; two files of one analysis never share a tree (the engine keys facts by
node). Sharing is sound because no analysis changes a tree it is given: the engine's own
memos of a node (``index._own_body``, ``interpreter.may_wait``, ``guard_judge._marker_text``)
are functions of the node's text, so they are reused too. Outside the scope (a plain check,
the language server's analyses) nothing is kept.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from bufferlint.findings import FileError
from bufferlint.source import SourceFile, parse_source

_shared: dict[tuple[str, str], ast.Module] | None = None


@contextmanager
def shared_trees() -> Iterator[None]:
    """Analyses run inside share the trees of the files they read alike (nested: the
    outermost scope's)."""
    global _shared
    if _shared is not None:
        yield
        return
    _shared = {}
    try:
        yield
    finally:
        _shared = None


def parse_tree(source: SourceFile, root: Path) -> ast.Module | FileError:
    """``source``'s tree (``source.parse_source``), shared within ``shared_trees()``. A file
    that does not parse is not kept: its error names its own path."""
    if _shared is None:
        return parse_source(source)
    try:
        place = str(source.path.relative_to(root))
    except ValueError:
        place = str(source.path)
    key = (place, source.text)
    tree = _shared.get(key)
    if tree is None:
        parsed = parse_source(source)
        if isinstance(parsed, FileError):
            return parsed
        tree = _shared[key] = parsed
    return tree
