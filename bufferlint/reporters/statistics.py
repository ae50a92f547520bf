"""``--statistics``: how many findings each rule has, instead of the findings themselves
(text: one line per rule, then how many groups the findings form; JSON: a list of objects,
each with ``groups``, how many groups that rule's findings come from: bufferlint.grouping).
``fixable`` counts the findings whose (verified) fix ``--fix`` applies under the flags
given: safe fixes, and unsafe ones too with ``--unsafe-fixes``; so it is what ``--fix``
with the same flags would apply."""

from __future__ import annotations

import json
from collections import Counter

from pathlib import Path

from bufferlint.catalog import RULES
from bufferlint.findings import AnalysisResult, Finding
from bufferlint import grouping
from bufferlint.reporters.base import count


def fixable(result: AnalysisResult, unsafe: bool = False) -> list[Finding]:
    """The findings ``--fix`` fixes with (``unsafe``) or without ``--unsafe-fixes``: those
    whose verified fix it applies, and those whose fix works once the guards' fixes are in
    (a report's ``fixable_after_guards``), when it applies all of those fixes."""
    allowed = ("safe", "unsafe") if unsafe else ("safe",)  # the fixes' applicabilities (no LibCST import here)
    out = [f for f in result.findings if f.fix is not None and f.fix.applicability in allowed]
    counted = {(f.sort_key(), f.message) for f in out}
    for finding, guards in getattr(result, "fixable_after_guards", []):
        if finding.fix.applicability in allowed and set(guards) <= set(allowed) \
                and (finding.sort_key(), finding.message) not in counted:
            out.append(finding)
    return out


def rows(result: AnalysisResult, root: Path, unsafe: bool = False) -> list[dict]:
    """One row per rule: its findings, how many ``--fix`` fixes, and from how many groups
    (producers: one change at each removes its findings) they come."""
    counts = Counter(f.rule for f in result.findings)
    fixable_ones = Counter(f.rule for f in fixable(result, unsafe))
    groups = {(f.rule, group) for f, group in zip(result.findings, grouping.group_ids(result.findings, root))}
    per_rule = Counter(rule for rule, _ in groups)
    return [
        {"code": code, "name": RULES[code].name if code in RULES else "", "count": n, "fixable": fixable_ones[code],
         "groups": per_rule[code]}
        for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def render_text(result: AnalysisResult, root: Path, unsafe: bool = False) -> str:
    """The rules' rows, then the findings' total and how many groups they form."""
    table = rows(result, root, unsafe)
    if not table:
        return ""
    width = max(len(str(row["count"])) for row in table)
    lines = []
    for row in table:
        line = f"{row['count']:>{width}}  {row['code']}  {row['name']}"
        if row["fixable"]:
            line += f" ({row['fixable']} fixable)"
        lines.append(line.rstrip())
    groups = len(set(grouping.group_ids(result.findings, root)))
    lines.append(f"{count(len(result.findings), 'finding')} in {count(groups, 'group')} (one per producer)")
    return "".join(line + "\n" for line in lines)


def render_json(result: AnalysisResult, root: Path, unsafe: bool = False) -> str:
    return json.dumps(rows(result, root, unsafe), indent=2) + "\n"
