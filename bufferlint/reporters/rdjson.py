"""reviewdog's Diagnostic Format: ``rdjson`` (one ``DiagnosticResult`` object) and
``rdjsonl`` (one ``Diagnostic`` per line).

    bufferlint check --format rdjson . | reviewdog -f=rdjson -reporter=github-pr-review

Each finding is an ERROR or WARNING diagnostic (its rule's severity) with its rule as ``code``, the trace as
``related_locations`` and, when it has a fix, one suggestion: reviewdog's GitHub reporters
post a suggestion as a ```` ```suggestion ```` block, which GitHub turns into a one-click
"Commit suggestion" and which must replace whole lines, all of them at once. So a fix is
rendered as a single line-wise suggestion over the lines its edits touch, holding those
lines as they read after the fix. (A fix that also adds an import spans from the import
to the call: one larger suggestion, but never half a fix. reviewdog posts it as a
suggestion only when those lines are in the pull request's diff.) rdjson counts columns
in UTF-8 bytes; bufferlint's character columns are converted with the file's text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bufferlint.catalog import severity
from bufferlint.findings import AnalysisResult, FileError, Finding, Fix
from bufferlint.fixes.apply import EditConflict, apply_edits
from bufferlint.reporters.base import display_path, json_text
from bufferlint.textlines import SourceCache, split_lines, utf8_column

SOURCE = {"name": "bufferlint"}


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    report = {"source": SOURCE, "severity": "ERROR", "diagnostics": diagnostics(result, cwd)}
    return json_text(report, indent=2) + "\n"


def render_lines(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    return "".join(json_text(d) + "\n" for d in diagnostics(result, cwd))


def diagnostics(result: AnalysisResult, cwd: Path) -> list[dict]:
    sources = SourceCache()
    found = [_finding(f, cwd, sources) for f in sorted(result.findings, key=lambda f: f.sort_key())]
    return found + [_error(e, cwd) for e in sorted(result.errors, key=lambda e: str(e.path))]


def _finding(f: Finding, cwd: Path, sources: SourceCache) -> dict:
    def position(line: int, column: int) -> dict:
        text = sources.line(f.path, line)
        return {"line": line, "column": utf8_column(text, column) if text is not None else column}

    diagnostic: dict[str, Any] = {
        "message": f.message,
        "location": {
            "path": display_path(f.path, cwd),
            "range": {"start": position(f.span.line, f.span.column), "end": position(f.span.end_line, f.span.end_column)},
        },
        "severity": severity(f.rule).upper(),
        "source": SOURCE,
        "code": {"value": f.rule},
    }
    if f.fix is not None and f.fix.edits:
        diagnostic["suggestions"] = _suggestions(f.fix, sources.text(f.path), position)
    if f.trace:
        diagnostic["related_locations"] = [
            {"message": s.note, "location": {"path": display_path(s.path, cwd), "range": {"start": {"line": s.line}}}}
            for s in f.trace
        ]
    return diagnostic


def _suggestions(fix: Fix, text: str | None, position) -> list[dict]:
    try:
        fixed = apply_edits(text, fix.edits) if text is not None else None
    except EditConflict:  # the file changed since the fix was planned
        fixed = None
    if fixed is None or text is None:  # the file is gone or changed: the edits as they are, for tools that can apply them
        return [
            {"range": {"start": position(e.line, e.column), "end": position(e.end_line, e.end_column)}, "text": e.replacement}
            for e in fix.edits
        ]
    lines = split_lines(text)
    first = min(e.line for e in fix.edits)
    # an edit ending at column 1 of a line ends with the line break before it
    last = max(e.end_line - 1 if e.end_column == 1 and e.end_line > e.line else e.end_line for e in fix.edits)
    first, last = max(1, min(first, len(lines))), max(1, min(last, len(lines)))
    new_lines = split_lines(fixed)
    block = new_lines[first - 1 : len(new_lines) - (len(lines) - last)]
    replacement = "".join(line.rstrip("\r\n") + "\n" for line in block)[:-1]  # whole lines, without the last break
    return [{"range": {"start": {"line": first}, "end": {"line": last}}, "text": replacement}]


def _error(error: FileError, cwd: Path) -> dict:
    return {
        "message": f"could not be analysed: {error.message}",
        "location": {"path": display_path(error.path, cwd)},
        "severity": "ERROR",
        "source": SOURCE,
    }
