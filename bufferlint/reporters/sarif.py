"""SARIF 2.1.0, the format GitHub code scanning (``github/codeql-action/upload-sarif``) and
most code-review tools ingest.

One run: the tool driver lists every rule of the catalog with its documentation; each
finding is a result with one location, a ``primaryLocationLineHash`` fingerprint (the same
one baselines use, so code scanning keeps tracking an alert across line moves), the
borrowed value's trace as a code flow (source, hops, sink), its fix when there is one, and
in its property bag the ``group`` of the findings one change at their producer removes
(bufferlint.grouping; ``correlationGuid`` is for one result across runs, not for a group).
Files that could not be analysed are tool execution notifications (errors), and make the
invocation unsuccessful; a finding whose fix could not be planned is a warning notification.

Locations are relative URIs against ``%SRCROOT%`` (the current directory, where CI runs
from the checkout root); files outside it get absolute ``file:`` URIs. Columns count
Unicode code points (``columnKind``), as bufferlint's own columns do.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from bufferlint import __version__
from bufferlint.catalog import RULES, Rule, severity
from bufferlint.findings import AnalysisResult, Finding, Span
from bufferlint import fingerprint as fingerprinting  # a module: it imports reporters.base
from bufferlint import grouping
from bufferlint.reporters.base import display_path, json_text

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
DOCS_URL: str | None = None
"""Where the rule docs are published, if anywhere; each rule then gets ``helpUri``
``{DOCS_URL}/{code}``. Until then `bufferlint rule CODE` prints them, and SARIF carries
them in full in ``help``."""


def render(result: AnalysisResult, cwd: Path, *, color: bool = False, root: Path | None = None) -> str:
    rules = list(RULES.values())
    index = {rule.code: i for i, rule in enumerate(rules)}
    findings = sorted(result.findings, key=lambda f: f.sort_key())
    prints = fingerprinting.fingerprints(findings, root or cwd)
    groups = grouping.group_ids(findings, root or cwd)
    run = {
        "tool": {
            "driver": {
                "name": "bufferlint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_descriptor(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(os.path.abspath(cwd)).as_uri().rstrip("/") + "/"}},
        "invocations": [
            {
                "executionSuccessful": not result.errors,
                "toolExecutionNotifications": [
                    {
                        "level": "error",
                        "message": {"text": error.message},
                        "locations": [{"physicalLocation": {"artifactLocation": _artifact(error.path, cwd)}}],
                    }
                    for error in sorted(result.errors, key=lambda e: str(e.path))
                ]
                + [_lost_fix(f, cwd) for f in findings if f.fix_error]
                + [{"level": "warning", "message": {"text": notice}} for notice in result.notices],
            }
        ],
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, fp, group, index, cwd) for f, fp, group in zip(findings, prints, groups)],
    }
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json_text(log, indent=2) + "\n"


def _lost_fix(finding: Finding, cwd: Path) -> dict:
    """A warning for a finding whose fix could not be planned: the finding is still reported."""
    return {
        "level": "warning",
        "message": {"text": f"no fix for {finding.rule}: {finding.fix_error}"},
        "locations": [{
            "physicalLocation": {"artifactLocation": _artifact(finding.path, cwd), "region": _region(finding.span)},
        }],
        "associatedRule": {"id": finding.rule},
    }


def _descriptor(rule: Rule) -> dict:
    descriptor = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _what_it_does(rule.doc) or rule.summary},
        "help": {"text": rule.doc, "markdown": f"# {rule.code} {rule.name}\n\n{rule.summary}\n\n{rule.doc}"},
        "defaultConfiguration": {"level": rule.severity},
        "properties": {"tags": ["correctness", "concurrency", "buffer-ownership"]},
    }
    if DOCS_URL:
        descriptor["helpUri"] = f"{DOCS_URL.rstrip('/')}/{rule.code}"
    return descriptor


def _what_it_does(doc: str) -> str:
    """The "What it does" section as one paragraph of text."""
    match = re.search(r"^## What it does\s*\n(.*?)(?=^## |\Z)", doc, re.MULTILINE | re.DOTALL)
    return " ".join(match.group(1).split()) if match else ""


def _result(finding: Finding, fingerprint: str, group: str, index: dict[str, int], cwd: Path) -> dict:
    kind = "function" if ":" in finding.function else "module"
    result: dict = {"ruleId": finding.rule}
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    result.update({
        "level": severity(finding.rule),
        "message": {"text": finding.message},
        "locations": [{
            "physicalLocation": {"artifactLocation": _artifact(finding.path, cwd), "region": _region(finding.span)},
            "logicalLocations": [{"fullyQualifiedName": finding.function, "kind": kind}],
        }],
        "partialFingerprints": {"primaryLocationLineHash": fingerprint},
        "properties": {"group": group, "other_paths": finding.other_paths},
    })
    if finding.trace:
        last = len(finding.trace) - 1
        result["codeFlows"] = [{
            "message": {"text": "where the borrowed value comes from and where it goes"},
            "threadFlows": [{
                "locations": [
                    {
                        "location": {
                            "physicalLocation": {
                                "artifactLocation": _artifact(step.path, cwd),
                                "region": {"startLine": step.line},
                            },
                            "message": {"text": step.note},
                        },
                        "importance": "essential" if i in (0, last) else "important",
                    }
                    for i, step in enumerate(finding.trace)
                ]
            }],
        }]
    if finding.fix is not None and finding.fix.edits:
        result["fixes"] = [{
            "description": {"text": finding.fix.message},
            "artifactChanges": [{
                "artifactLocation": _artifact(finding.path, cwd),
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": e.line,
                            "startColumn": e.column,
                            "endLine": e.end_line,
                            "endColumn": e.end_column,
                        },
                        **({"insertedContent": {"text": e.replacement}} if e.replacement else {}),
                    }
                    for e in finding.fix.edits
                ],
            }],
            "properties": {"applicability": finding.fix.applicability},
        }]
    return result


def _artifact(path: Path, cwd: Path) -> dict:
    shown = display_path(path, cwd)
    if Path(shown).is_absolute():  # outside the current directory
        return {"uri": Path(shown).as_uri()}
    return {"uri": quote(os.fsencode(shown), safe="/"), "uriBaseId": SRCROOT}  # the name's raw bytes


def _region(span: Span) -> dict:
    return {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line, "endColumn": span.end_column}
