"""Machine-readable output: ``{"version": 1, "findings": [...], "errors": [...], "notices": [...]}``
(``notices``: analysis limits hit, so results may be incomplete). Each finding's
``severity`` is its rule's (``error`` or ``warning``).

The shape is a public contract (editor plugins and CI scripts parse it): fields are only
ever added, and a breaking change bumps ``version``. Each finding has a ``fix``: null, or
``{"applicability", "message", "edits": [{"line", "column", "end_line", "end_column",
"replacement"}]}`` with 1-based, end-exclusive character positions. ``fix_error`` is null,
or why a rule that has fixes could not offer one here (LibCST cannot parse the file).
"""

from __future__ import annotations

import json
from pathlib import Path

from bufferlint.catalog import severity
from bufferlint.findings import AnalysisResult, Fix
from bufferlint.reporters.base import display_path

VERSION = 1


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    """``color`` and ``root`` are accepted for the common reporter signature; JSON is never coloured."""
    findings = [
        {
            "rule": f.rule,
            "path": display_path(f.path, cwd),
            "line": f.span.line,
            "column": f.span.column,
            "end_line": f.span.end_line,
            "end_column": f.span.end_column,
            "message": f.message,
            "function": f.function,
            "trace": [{"path": display_path(s.path, cwd), "line": s.line, "note": s.note} for s in f.trace],
            "fix": fix_object(f.fix),
            "fix_error": f.fix_error,
            "severity": severity(f.rule),
        }
        for f in sorted(result.findings, key=lambda f: f.sort_key())
    ]
    errors = [
        {"path": display_path(e.path, cwd), "message": e.message}
        for e in sorted(result.errors, key=lambda e: str(e.path))
    ]
    document = {"version": VERSION, "findings": findings, "errors": errors, "notices": list(result.notices)}
    return json.dumps(document, indent=2) + "\n"


def fix_object(fix: Fix | None) -> dict | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {
                "line": e.line,
                "column": e.column,
                "end_line": e.end_line,
                "end_column": e.end_column,
                "replacement": e.replacement,
            }
            for e in fix.edits
        ],
    }
