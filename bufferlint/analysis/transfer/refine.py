"""Branch refinement: the state on the paths where a test has a given truth."""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.values import ParamRef, Value, clean, clear_leaf, fact_tags


def refine(st: State, test: ast.expr, branch: bool, values: dict[int, Value]) -> State | None:
    """Narrow ``st`` (in place) to the paths where ``test`` has the given truth value, using
    the values its parts evaluated to (``values``: recorded when the test ran). None: no
    path has it (the branch is unreachable)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return refine(st, test.operand, not branch, values)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == branch:
        for operand in test.values:
            refined = refine(st, operand, branch, values)
            if refined is None:
                return None
        return st
    value = values.get(id(test))
    if value is None:
        return st
    if value.has_const and bool(value.const) != branch and not isinstance(value.const, str):
        return None
    if value.cond is not None:
        done = value.cond.settles_if_true if branch else value.cond.settles_if_false
        if done:  # ``if tracker.done:``: that work is finished on this branch
            st.pending = frozenset(p for p in st.pending if p.key not in done)
        assume_clean(st, value.cond.clean_if_true if branch else value.cond.clean_if_false)
    params = [leaf for leaf in value.leaves if isinstance(leaf, ParamRef) and leaf.path == ()]
    if len(params) == 1 and len(value.leaves) == 1:
        st.assume = st.assume | {(params[0].index, branch)}
    return st


def assume_clean(st: State, facts: frozenset[tuple[object, object]]) -> State:
    """Narrow ``st`` (in place) to the paths where guard ``facts`` hold: the objects they
    name are not borrowed (for their tags) in its variables and its pending work."""
    if facts:
        st.vars = {k: clean(v, facts) for k, v in st.vars.items()}
        st.cleaned = st.cleaned | facts
        tags = fact_tags(facts)
        st.pending = frozenset(
            replace(p, leaves=frozenset(filter(None, (clear_leaf(leaf, tags.get(leaf.base)) for leaf in p.leaves))))
            for p in st.pending
        )
    return st


def truth_tested(test: ast.expr) -> list[ast.expr]:
    """The expressions whose truth a branch test takes (``bool(t)`` reads a tensor's bytes):
    the test itself, through ``not`` and the operands of ``and`` / ``or``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return truth_tested(test.operand)
    if isinstance(test, ast.BoolOp):
        return [part for operand in test.values for part in truth_tested(operand)]
    return [test]
