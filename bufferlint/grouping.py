"""One report per root cause: findings whose borrowed value comes from the same producer form
a group, because one change at that producer (raise the library's floor, have it hand out
owned values, copy where it hands them out) removes them all, where a fix per site would
take one edit per finding.

The producer is the trace's source step (the call or marker that hands out the borrowed
value); a finding with none (BL002, a guard) is a group of its own. Each group has an id
that is stable across runs and unrelated edits, built as fingerprints are
(bufferlint.fingerprint): the source's file relative to the project root, its line's text
normalized, the value's kind, and its occurrence among sources sharing those. The JSON and
SARIF reports carry it on every finding; the text report shows each group of two or more
once, with its sites under it.

A finding's trace is the one path the engine kept for it (the shortest): a site that two
producers reach is grouped under the one its trace starts from.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from bufferlint.catalog.words import source_fact, version_condition
from bufferlint.findings import Finding, TraceStep
from bufferlint.fingerprint import digest, fingerprints, normalize
from bufferlint.reporters.base import display_path
from bufferlint.textlines import SourceCache


@dataclass(frozen=True)
class Group:
    """Findings that one change at their producer removes, in report order."""

    id: str
    findings: tuple[Finding, ...]
    source: TraceStep | None  # the producer's step; None for a finding with no producer

    @property
    def condition(self) -> str:
        """The versions under which the producer lends, as each finding's message starts
        with it ("with pkg<0.17 only (...): "); "" when it lends in every version."""
        fact = self.source.fact if self.source is not None else ()
        return version_condition(fact) if len(fact) >= 6 else ""

    @property
    def versions(self) -> str:
        """Under which versions the producer lends and what the project admits of them
        ("with pkg<0.17 only (pkg>=0.15.7 in pyproject.toml ...)"); "" when it always lends."""
        fact = self.source.fact if self.source is not None else ()
        return f"{fact[3]} only ({fact[4]})" if len(fact) >= 6 else ""

    @property
    def fix(self) -> str:
        """The change at the producer that removes every finding of the group, in words."""
        return self.findings[0].source_fix

    def shared_trace(self) -> tuple[TraceStep, ...]:
        """The steps every finding's trace starts with: the path all of them share."""
        first, *others = (f.trace for f in self.findings)
        shared = len(first)
        for trace in others:
            same = next((i for i, (a, b) in enumerate(zip(first, trace)) if a != b), min(len(first), len(trace)))
            shared = min(shared, same)
        return first[:shared]


def source_step(finding: Finding) -> TraceStep | None:
    """The step of the finding's trace where its borrowed value was handed out."""
    return next((step for step in finding.trace if step.fact[:1] == ("source",)), None)


def group_ids(findings: Sequence[Finding], root: Path, sources: SourceCache | None = None) -> list[str]:
    """Each finding's group id, in the order given."""
    sources = sources or SourceCache()
    keys: list[tuple | None] = []
    for finding in findings:
        step = source_step(finding)
        if step is None:
            keys.append(None)
        else:
            text = normalize(sources.line(step.path, step.line) or "")
            keys.append((display_path(step.path, root), text, source_fact(finding)[1], step.line))
    # Sources that share file, text and kind are told apart by their order in the file.
    occurrence: dict[tuple, int] = {}
    seen: dict[tuple, int] = defaultdict(int)
    for key in sorted({k for k in keys if k is not None}, key=lambda k: (k[:3], k[3])):
        occurrence[key] = seen[key[:3]]
        seen[key[:3]] += 1
    alone = [i for i, key in enumerate(keys) if key is None]
    own = dict(zip(alone, fingerprints([findings[i] for i in alone], root, sources)))
    return [
        digest("finding", own[i]) if key is None else digest("source", *key[:3], str(occurrence[key]))
        for i, key in enumerate(keys)
    ]


def group_findings(findings: Sequence[Finding], root: Path, sources: SourceCache | None = None) -> list[Group]:
    """The findings' groups, each group's findings in report order, groups by their first."""
    ordered = sorted(findings, key=Finding.sort_key)
    members: dict[str, list[Finding]] = {}
    for finding, group in zip(ordered, group_ids(ordered, root, sources)):
        members.setdefault(group, []).append(finding)
    return [Group(group, tuple(found), source_step(found[0])) for group, found in members.items()]
