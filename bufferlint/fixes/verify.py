"""Offer only fixes that work: each planned fix is tried on the project before any report
shows it, and a fix whose finding is still reported afterwards is never offered.

This is the one place where fixes are verified for showing: the JSON ``fix``, SARIF
``fixes``, the rdjson suggestion, the editor's code actions and ``--statistics``' fixable
counts all see the findings this returns, so none of them can offer what ``--fix`` would
reject. (``--fix`` applies fixes in rounds with its own verification: bufferlint.fixes.runner.)

How: the fixes are applied to a shadow copy of the project (the fix runner's ``_Shadow``:
nothing in the project is written) in batches, the project is analysed again, and each
fix of the batch must remove its finding (by ``finding_key``: rule, file, function and
subject). A fix that fails is dropped and the finding's fixer is asked for its next
candidate, which is tried in the next batch, all on the original text. Batches keep
verification close to "applied alone":

* fixes of rules whose fix changes what other findings depend on (``Rule.fix_reaches_callers``:
  a guard's fix removes the findings of every call it decides) are tried in a batch of
  their own, never together with the fixes they could make look good;
* two fixes whose edits overlap are never in one batch (the second waits for the next);
  when only some of the findings sharing one key went away, they are tried again one per
  batch (``runner.judge``).

A fix still untried after ``MAX_BATCHES`` batches is not offered, and the report's notices
say so (a limit is never silent).

``--fix`` works in rounds and plans again after each, so a fix that only works once a guard's
fix is in (``if guard(w): submit(...)`` around a call, while the guard ignores the marker) is
applied by ``--fix`` though never offered. So that counts of what ``--fix`` fixes are true,
such first-choice fixes are tried once more with the verified guard fixes applied, and those
that then remove their finding (which the guard's fix alone does not) are returned apart
(``Verified.after_guards``): counted, never shown.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bufferlint.catalog import RULES
from bufferlint.findings import AnalysisResult, Finding, Fix
from bufferlint.fixes.apply import encode
from bufferlint.fixes.base import Project, finding_key
from bufferlint.fixes.runner import Analyse, _apply_group, _File, _Shadow, attach_fixes, judge, one_per_key, present
from bufferlint.progress import announce

MAX_BATCHES = 6


@dataclass
class Verified:
    findings: list[Finding]  # every fix verified on its own, or none
    notices: list[str] = field(default_factory=list)
    # findings whose first-choice fix works only together with the guard fixes (and those guard
    # fixes' applicabilities): what --fix will also apply, never offered
    after_guards: list[tuple[Finding, tuple[str, ...]]] = field(default_factory=list)


def verify_fixes(
    result: AnalysisResult,
    project: Project,
    files: list[Path],
    report_files: list[Path],
    analyse: Analyse,
    progress: object = None,
    cancel: threading.Event | None = None,
) -> Verified:
    """``result.findings`` (fixes attached) with every fix that does not remove its finding
    replaced by the fixer's next candidate that does, or by none; and the notices to add
    to the report (fixes left untried). ``progress`` hears each round (bufferlint.progress);
    ``cancel``, once set, stops before the next round (the fixes not verified are dropped)."""
    findings = list(result.findings)
    pending = {i for i, finding in enumerate(findings) if finding.fix is not None}
    if not pending:
        return Verified(findings)
    before = present(result)
    rejected: set[tuple] = set()
    solo: set[tuple] = set()
    opened: dict[Path, _File] = {}
    shadow: _Shadow | None = None
    guards_alone: Counter | None = None  # the findings left with the guard fixes applied
    guard_fixes: dict[int, Fix] = {}  # verified guard fixes
    first_failed: dict[int, Fix] = {}  # other findings' first fix, where it failed alone
    after_guards: list[tuple[Finding, tuple[str, ...]]] = []
    try:
        for round_number in range(1, MAX_BATCHES + 1):
            if not pending or (cancel is not None and cancel.is_set()):
                break
            batch = _batch(findings, pending, solo)
            announce(progress, f"verifying {len(batch)} fixes (round {round_number})", len(files))
            proposal: dict[Path, tuple[str, list[int]]] = {}
            failed: list[int] = []
            for path, positions in _by_path(findings, batch).items():
                if path not in opened:
                    try:
                        opened[path] = _File(path)
                    except OSError:
                        failed += positions
                        continue
                position = {id(findings[i]): i for i in positions}
                new, chosen, broken = _apply_group(opened[path], [findings[i] for i in positions])
                failed += [position[id(finding)] for finding, _ in broken]
                kept = [position[id(finding)] for finding in chosen]
                if kept:
                    proposal[path] = (new, kept)
            if proposal:
                if shadow is None:
                    shadow = _Shadow(project.root, files, report_files)
                for path, (new, _) in proposal.items():
                    shadow.write(path, encode(new, opened[path].encoding))
                after = shadow.analyse(analyse, list(proposal))
                for path in proposal:
                    shadow.write(path, None)
                unanalysable = {e.path for e in after.errors}
                now = present(after)
                if all(_reaches_callers(findings[i].rule) for i in batch) and guards_alone is None:
                    guards_alone = now
                for path, (_, kept) in proposal.items():
                    if path in unanalysable:
                        failed += kept
                        continue
                    position = {id(findings[i]): i for i in kept}
                    fixed, not_fixed, undecided = judge([findings[i] for i in kept], before, now)
                    pending.difference_update(position[id(f)] for f in fixed)
                    for f in fixed:
                        if _reaches_callers(f.rule):
                            guard_fixes[position[id(f)]] = f.fix
                    for f in not_fixed:
                        if not _reaches_callers(f.rule) and (finding_key(f), f.fix.message) not in rejected:
                            first_failed.setdefault(position[id(f)], f.fix)
                    failed += [position[id(f)] for f in not_fixed]
                    solo.update(finding_key(f) for f in undecided)
            for i in failed:
                rejected.add((finding_key(findings[i]), findings[i].fix.message))
            findings = _replan(findings, failed, project, frozenset(rejected))
            pending = (pending - set(failed)) | {i for i in failed if findings[i].fix is not None}
        if guard_fixes and first_failed and guards_alone is not None and not (cancel is not None and cancel.is_set()):
            announce(progress, f"verifying {len(first_failed)} fixes after the guards' fixes", len(files))
            shadow = shadow or _Shadow(project.root, files, report_files)
            after_guards = _with_guard_fixes(findings, guard_fixes, first_failed, guards_alone, opened, shadow, analyse)
    finally:
        if shadow is not None:
            shadow.close()
    notices = []
    if pending and not (cancel is not None and cancel.is_set()):
        notices.append(f"{len(pending)} planned fixes could not be verified within {MAX_BATCHES} rounds "
                       "and are not offered")
    if pending:
        findings = [dataclasses.replace(f, fix=None) if i in pending else f for i, f in enumerate(findings)]
    return Verified(findings, notices, after_guards)


def _with_guard_fixes(findings: list[Finding], guard_fixes: dict[int, Fix], first_failed: dict[int, Fix],
                      guards_alone: Counter, opened: dict[Path, _File], shadow: _Shadow,
                      analyse: Analyse) -> list[tuple[Finding, tuple[str, ...]]]:
    """The ``first_failed`` fixes that remove their finding once the guard fixes are applied
    too, where the guard fixes alone leave it; with the guard fixes' applicabilities."""
    tried = {i: dataclasses.replace(findings[i], fix=fix) for i, fix in {**guard_fixes, **first_failed}.items()
             if guards_alone[finding_key(findings[i])] > 0 or i in guard_fixes}
    candidates = [i for i in tried if i in first_failed]
    if not candidates:
        return []
    groups: dict[Path, list[Finding]] = {}
    for i in sorted(tried, key=lambda i: tried[i].sort_key()):
        groups.setdefault(tried[i].path, []).append(tried[i])
    written = []
    for path, group in groups.items():
        new, chosen, _ = _apply_group(opened[path], group)
        if not all(any(c is g for c in chosen) for g in group if _reaches_callers(g.rule)):
            for done in written:
                shadow.write(done, None)
            return []  # a guard fix did not fit with the others: count nothing extra
        shadow.write(path, encode(new, opened[path].encoding))
        written.append(path)
        for g in group:
            if not any(c is g for c in chosen):
                tried = {k: v for k, v in tried.items() if v is not g}
    after = shadow.analyse(analyse, written)
    for path in written:
        shadow.write(path, None)
    if {e.path for e in after.errors} & set(written):
        return []
    now = present(after)
    applicabilities = tuple(sorted({fix.applicability for fix in guard_fixes.values()}))
    checked = [tried[i] for i in candidates if i in tried]
    fixed, _, _ = judge(checked, guards_alone, now)
    return [(finding, applicabilities) for finding in fixed]


def _batch(findings: list[Finding], pending: set[int], solo: set[tuple]) -> set[int]:
    """The fixes to try together next: those whose fix reaches callers first, apart; one
    per key of ``solo``."""
    reaching = {i for i in pending if _reaches_callers(findings[i].rule)}
    chosen = reaching or pending
    position = {id(findings[i]): i for i in chosen}
    return {position[id(f)] for f in one_per_key([findings[i] for i in chosen], solo)}


def _reaches_callers(code: str) -> bool:
    rule = RULES.get(code)
    return rule is not None and rule.fix_reaches_callers


def _by_path(findings: list[Finding], positions: set[int]) -> dict[Path, list[int]]:
    groups: dict[Path, list[int]] = {}
    for i in sorted(positions, key=lambda i: findings[i].sort_key()):
        groups.setdefault(findings[i].path, []).append(i)
    return groups


def _replan(findings: list[Finding], failed: list[int], project: Project, rejected: frozenset) -> list[Finding]:
    """The failed findings with the fixer's next candidate not yet rejected (or none)."""
    if not failed:
        return findings
    cleared = [dataclasses.replace(findings[i], fix=None) for i in failed]
    replanned = attach_fixes(cleared, project, rejected=rejected)
    out = list(findings)
    for i, finding in zip(failed, replanned):
        out[i] = finding
    return out
