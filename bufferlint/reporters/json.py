"""Machine-readable output: ``{"version": 1, "findings": [...], "errors": [...], "notices": [...],
"groups": [...]}`` (``notices``: analysis limits hit, so results may be incomplete). Each
finding's ``severity`` is its rule's (``error`` or ``warning``), and its ``group`` the id of
the findings one change at their producer removes (bufferlint.grouping): ``groups`` lists
each once with ``{"id", "source": {"path", "line", "note"} or null, "versions", "fix",
"findings"}`` (``versions`` and ``fix`` null when there are none; ``findings`` a count).

The shape is a public contract (editor plugins and CI scripts parse it): fields are only
ever added, and a breaking change bumps ``version``. Each finding has a ``fix``: null, or
``{"applicability", "message", "edits": [{"line", "column", "end_line", "end_column",
"replacement"}]}`` with 1-based, end-exclusive character positions. ``fix_error`` is null,
or why a rule that has fixes could not offer one here (LibCST cannot parse the file).
``trace`` is the most direct path the engine found from a producer to the site (the fewest
calls resolved only by method name, then the shortest); ``other_paths`` counts the other
paths it found into the same site (at least that many: paths that meet inside one function
keep one trace).
"""

from __future__ import annotations

import json
from pathlib import Path

from bufferlint.catalog import severity
from bufferlint.findings import AnalysisResult, Fix
from bufferlint import grouping
from bufferlint.reporters.base import display_path

VERSION = 1


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    """``color`` is accepted for the common reporter signature (JSON is never coloured);
    group ids are relative to ``root`` (the current directory when not given)."""
    ordered = sorted(result.findings, key=lambda f: f.sort_key())
    groups = grouping.group_findings(ordered, root or cwd)
    group_of = {id(f): group.id for group in groups for f in group.findings}
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
            "group": group_of[id(f)],
            "other_paths": f.other_paths,
        }
        for f in ordered
    ]
    errors = [
        {"path": display_path(e.path, cwd), "message": e.message}
        for e in sorted(result.errors, key=lambda e: str(e.path))
    ]
    document = {"version": VERSION, "findings": findings, "errors": errors, "notices": list(result.notices),
                "groups": [group_object(group, cwd) for group in groups]}
    return json.dumps(document, indent=2) + "\n"


def group_object(group: grouping.Group, cwd: Path) -> dict:
    """A group as ``groups`` lists it: its id, its producer's step (null for a finding with
    no producer), the versions under which that lends, the fix there, how many findings."""
    source = group.source
    return {
        "id": group.id,
        "source": None if source is None else {"path": display_path(source.path, cwd), "line": source.line, "note": source.note},
        "versions": group.versions or None,
        "fix": group.fix or None,
        "findings": len(group.findings),
    }


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
