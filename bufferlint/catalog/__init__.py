"""The rule catalog: one module per rule, each with its docs and the examples that are
its executable specification (tests run them through the engine)."""

from __future__ import annotations

from bufferlint.catalog import bl001, bl002, bl003, bl004, bl005, bl006
from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.hazards import Hazard

RULES: dict[str, Rule] = {
    rule.code: rule for rule in (bl001.RULE, bl002.RULE, bl003.RULE, bl004.RULE, bl005.RULE, bl006.RULE)
}
# The rule that reports each hazard: the engine's findings carry hazards, findings and
# reporters carry this rule's code.
_BY_HAZARD: dict[Hazard, Rule] = {rule.hazard: rule for rule in RULES.values()}

__all__ = ["RULES", "Invalid", "Rule", "Valid", "get_rule", "rule_for", "severity"]


def rule_for(hazard: Hazard) -> Rule:
    """The rule that reports ``hazard`` (every hazard has exactly one: tests/test_catalog.py)."""
    return _BY_HAZARD[hazard]


def severity(code: str) -> str:
    """The rule's severity, ``error`` or ``warning`` (``error`` for a code no rule has): the
    one table (each rule's ``severity``) every output format and the editor take it from."""
    rule = RULES.get(code)
    return rule.severity if rule is not None else "error"


def get_rule(code: str) -> Rule:
    """The rule with this code (case-insensitive) or kebab-case name; KeyError otherwise."""
    wanted = code.strip()
    for rule in RULES.values():
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    raise KeyError(code)
