"""Stable identities for findings, shared by the baseline and SARIF's
``partialFingerprints.primaryLocationLineHash``.

A fingerprint must survive unrelated edits: lines added above a finding, the function
moved within its file, reformatting of the reported line. So it is built from what the
finding *is*, not where it sits: the rule, the file's path relative to the project root,
the enclosing function (``Finding.function``), the reported line's text normalized (its
Python tokens joined by single spaces, so neither whitespace nor a trailing comment
matters: ``executor.submit( fn,w )  # TODO`` is ``executor.submit(fn, w)``), and the
finding's occurrence index among findings sharing all of those (two identical
``executor.submit(fn, w)`` lines in one function are told apart by their order).
It changes when the reported line itself changes, when the function is renamed or the
file is moved: those are new code, and a baseline should not hide them.
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from bufferlint.findings import Finding
from bufferlint.reporters.base import display_path
from bufferlint.textlines import SourceCache

LENGTH = 20  # hex digits: 80 bits, ample for any number of findings in one project


_LAYOUT = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


def normalize(line: str) -> str:
    """The line's tokens without comments, joined by single spaces. A line that does not
    tokenize on its own (it opens a multi-line string) keeps the tokens before that point,
    and falls back to its text with whitespace collapsed if there are none."""
    parts = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(line.strip()).readline):
            if token.type not in _LAYOUT:
                parts.append(token.string)
    except (tokenize.TokenError, SyntaxError):
        pass
    return " ".join(parts) if parts else " ".join(line.split())


def fingerprints(findings: Sequence[Finding], root: Path, sources: SourceCache | None = None) -> list[str]:
    """One fingerprint per finding, in the order given."""
    sources = sources or SourceCache()
    keys = [
        (f.rule, display_path(f.path, root), f.function, normalize(sources.line(f.path, f.span.line) or ""))
        for f in findings
    ]
    seen: dict[tuple, int] = defaultdict(int)
    result = [""] * len(findings)
    for i in sorted(range(len(findings)), key=lambda i: (keys[i], findings[i].span.line, findings[i].span.column)):
        occurrence = seen[keys[i]]
        seen[keys[i]] += 1
        result[i] = digest(*keys[i], str(occurrence))
    return result


def digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:LENGTH]
