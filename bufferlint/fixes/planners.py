"""Which fixer plans the fixes of which rule, and planning one finding's fix.

Each fixer module names the catalog rule it repairs (``RULE``, the catalog's entry itself)
and plans with ``candidates(finding, text, context)``, best first; this module is the one
registry of them. The catalog does not import the fixers (they need LibCST, which a plain
``check`` never loads); the fixers import the catalog, and the fix runner, the verifier and
the language server look planners up here by a finding's rule code.
"""

from __future__ import annotations

import os
from types import ModuleType

from bufferlint.findings import Finding, Fix
from bufferlint.fixes import bl001, bl002, bl003, bl005, bl006
from bufferlint.fixes.base import FixContext, Planner, finding_key

FIXERS: tuple[ModuleType, ...] = (bl001, bl002, bl003, bl005, bl006)


def planners() -> dict[str, Planner]:
    """Rule code -> its fixer's ``candidates``: the possible fixes, best first (read from
    the modules on each call, so a test may replace a fixer's ``candidates``)."""
    return {fixer.RULE.code: fixer.candidates for fixer in FIXERS}


def plan_fix(finding: Finding, source_text: str, context: FixContext) -> Fix | None:
    """A fix for ``finding`` in ``source_text`` (the text of ``context.path``), or None when
    the rule has no fixer or this occurrence cannot be fixed mechanically: the fixer's best
    candidate that has not failed verification in this run (``context.rejected``). Never raises for a
    file it cannot handle (``BUFFERLINT_DEBUG=1`` re-raises, for bug reports)."""
    planner = planners().get(finding.rule)
    if planner is None:
        return None
    try:
        key = finding_key(finding)
        for fix in planner(finding, source_text, context):
            if (key, fix.message) not in context.rejected:
                return fix
        return None
    except Exception:
        if os.environ.get("BUFFERLINT_DEBUG") == "1":
            raise
        return None
