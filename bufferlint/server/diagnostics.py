"""A report's findings, file errors and suppression warnings for one file, as LSP diagnostics.

Severity is the rule's (``Rule.severity``, the one table every format uses; README's Rules
table shows it): Error or Warning. A file that cannot be analysed (a syntax error in the buffer)
is an Error at the place CPython reports; a malformed, unknown or unused suppression
comment is a Warning.

Each finding's trace becomes ``relatedInformation``, one entry per step (``path:line`` and
the step's note), so the editor can walk from the producer to the consumer; and the message
ends with where the trace starts (`` (from `streamer.get_tensors(...)` at weights.py:10)``)
for the editors that do not show ``relatedInformation`` (eglot, Neovim's float).
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Callable

from lsprotocol import types
from pygls.uris import from_fs_path

from bufferlint.api import Report
from bufferlint.catalog import severity
from bufferlint.findings import FileError, Finding
from bufferlint.server.positions import Positions
from bufferlint.server.ruledocs import rule_docs_uri

SOURCE = "bufferlint"
SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


def file_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def file_diagnostics(report: Report, path: Path, text: Positions,
                     uri_of: Callable[[Path], str] = file_uri) -> list[types.Diagnostic]:
    """Everything ``report`` says about ``path``, whose analysed text is ``text``; ``uri_of``:
    the URI of a path a trace goes through (an open document's is the client's)."""
    out = [finding_diagnostic(finding, text, uri_of) for finding in report.findings_in(path)]
    out += [error_diagnostic(error, text) for error in report.errors if error.path == path]
    out += [
        types.Diagnostic(range=text.range(w.line, w.column, w.line, w.column + 1), message=w.message,
                         severity=types.DiagnosticSeverity.Warning, source=SOURCE)
        for w in report.suppression_warnings if w.path == path
    ]
    return out


def finding_key(finding: Finding) -> str:
    """What a diagnostic's ``data`` carries to find its finding again (code actions)."""
    span = finding.span
    return f"{finding.rule}:{span.line}:{span.column}:{span.end_line}:{span.end_column}"


def finding_diagnostic(finding: Finding, text: Positions, uri_of: Callable[[Path], str] = file_uri) -> types.Diagnostic:
    span = finding.span
    docs = rule_docs_uri(finding.rule)
    return types.Diagnostic(
        range=text.range(span.line, span.column, span.end_line, span.end_column),
        message=finding.message + origin(finding),
        severity=SEVERITY[severity(finding.rule)],
        code=finding.rule,
        code_description=types.CodeDescription(href=docs) if docs else None,
        source=SOURCE,
        related_information=[
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=uri_of(step.path),
                    range=types.Range(start=types.Position(line=step.line - 1, character=0),
                                      end=types.Position(line=step.line, character=0)),
                ),
                message=step.note,
            )
            for step in finding.trace
        ] or None,
        data=finding_key(finding),
    )


def origin(finding: Finding) -> str:
    """Where the finding's trace starts, in a few words for the message: `` (from
    `streamer.get_tensors(...)` at weights.py:10)``. Editors that do not show
    ``relatedInformation`` (eglot, Neovim's default float) still say where the view came from;
    the path is relative to the finding's own folder."""
    if not finding.trace:
        return ""
    step = finding.trace[0]
    quoted = re.search(r"`[^`]+`", step.note)
    what = quoted.group(0) if quoted else step.note
    return f" (from {what} at {os.path.relpath(step.path, finding.path.parent)}:{step.line})"


def error_diagnostic(error: FileError, text: Positions) -> types.Diagnostic:
    """The error at the place CPython reports for the text (its first line otherwise: an
    unreadable or undecodable file, or an error only bufferlint's compile check sees)."""
    where = text.line(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text.text, str(error.path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        if exc.lineno:
            line, column = exc.lineno, exc.offset or 1
            end_line, end_column = exc.end_lineno or line, exc.end_offset or column + 1
            if (end_line, end_column) <= (line, column):
                end_line, end_column = line, column + 1
            where = text.range(line, column, end_line, end_column)
    except (ValueError, RecursionError, MemoryError):
        pass
    return types.Diagnostic(range=where, message=error.message, severity=types.DiagnosticSeverity.Error, source=SOURCE)
