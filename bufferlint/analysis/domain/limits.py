"""Analysis limits hit while analysing one function, as the user will be told them.

Every cap or give-up in the analysis is reported, never silent. Most limits are told
whenever they are hit; a few can only make a finding through their own function wrong
(a marker check left unevaluated refines its branch as if there were no check), and a
notice about code with no finding warns of nothing, so those are told only when a
finding is reported through that function (``ProjectAnalysis.limits_told``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limit:
    """One limit hit: ``text`` is the notice; ``if_reported``: told only when a finding's
    site or trace step lies in the function that hit it."""

    text: str
    if_reported: bool = False
    # With ``if_reported``: the function's file and first and last lines, so that whether a
    # finding goes through it is read off the limit itself (a warm run may not have indexed
    # the function: ``analysis.replay``).
    where: tuple | None = None


def function_lines(info: Any) -> tuple:
    """``Limit.where`` of a function (a ``FunctionInfo``): its file, first and last lines."""
    node = info.node
    return (info.module.path, getattr(node, "lineno", 1), getattr(node, "end_lineno", None))


def told_with(conditional: list[tuple], findings: list[Any]) -> set[str]:
    """The conditional notices (text, path, first, last) told with these findings: those
    whose function holds a finding's site or a step of its trace."""
    reported: dict[Any, set[int]] = {}
    for finding in findings:
        reported.setdefault(finding.span.path, set()).add(finding.span.line)
        for step in finding.trace:
            reported.setdefault(step.path, set()).add(step.line)
    told = set()
    for text, path, first, last in conditional:
        if any(first <= line and (last is None or line <= last) for line in reported.get(path, ())):
            told.add(text)
    return told
