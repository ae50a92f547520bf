"""A branch's test evaluated once per class a variable may be.

``if needs_key_filter and not chosen.supports_key_filter: chosen = FALLBACK`` passes over
the classes that cannot skip keys, but only when the flag is set. When ``chosen`` holds
class values (``Value.classes``) whose attribute is a literal of the class
(``IndexView.class_constant``), the test is decided for each class alone: a class for
which the branch cannot be taken leaves it, and one for which it is taken only when a
parameter test holds keeps that test as its condition (``(qualname, when)``). After the
branch the variable is ``{Streaming when not needs_key_filter, Mapped}``, and what is built
from it carries the condition each caller decides (``conditions.decide_at_call``).

Each part of the test is an outcome ``(when true, when false)``: a conjunction of
parameter tests under which it can have that truth, or None when it cannot. ``and`` and
``or`` combine them; a disjunction that is no conjunction is widened to the tests both
sides share (the branch then holds more often, never less).
"""

from __future__ import annotations

import ast
from typing import Callable

from bufferlint.analysis.domain.conditions import ParamTest
from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.values import Value, evolve
from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.world import IndexView

Outcome = tuple["frozenset | None", "frozenset | None"]
ALWAYS: frozenset = frozenset()
UNDECIDED: Outcome = (ALWAYS, ALWAYS)
# A part of the test as a test of a parameter as the caller passed it (``refine``'s reading).
ParameterTest = Callable[[ast.expr], "ParamTest | None"]


def narrow_classes(st: State, test: ast.expr, branch: bool, index: IndexView, parameter_test: ParameterTest) -> None:
    """Narrow the class values of the one variable whose attributes ``test`` reads to the
    classes that take this branch, each under the parameter tests it needs (in place).
    When no class does, the state is left as it was: the branch is not pruned, since a
    join may have met a path whose value says nothing of its class (``values.join_classes``)."""
    name = _tested_variable(test, st)
    if name is None:
        return
    value = st.vars[name]
    kept = []
    for qualname, when in sorted(value.classes, key=lambda c: c[0]):
        outcome = _outcome(test, name, qualname, index, parameter_test)[0 if branch else 1]
        if outcome is not None:
            kept.append((qualname, when | outcome))
    classes = frozenset(kept)
    if kept and classes != value.classes:
        st.vars = dict(st.vars)
        ref = value.ref if value.ref in {qualname for qualname, _ in kept} else None
        st.vars[name] = evolve(value, classes=classes, ref=ref)


def _tested_variable(test: ast.expr, st: State) -> str | None:
    """The variable holding class values whose attribute the test reads, if just one."""
    names = {
        node.value.id for node in walk(test)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id in st.vars and st.vars[node.value.id].classes and not st.vars[node.value.id].leaves
    }
    return names.pop() if len(names) == 1 else None


def _outcome(node: ast.expr, name: str, qualname: str, index: IndexView, parameter_test: ParameterTest) -> Outcome:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        true, false = _outcome(node.operand, name, qualname, index, parameter_test)
        return false, true
    if isinstance(node, ast.BoolOp):
        parts = [_outcome(v, name, qualname, index, parameter_test) for v in node.values]
        result = parts[0]
        for part in parts[1:]:
            result = _both(result, part) if isinstance(node.op, ast.And) else _either(result, part)
        return result
    attribute = _class_attribute(node, name, qualname, index)
    if attribute is not None:
        return (ALWAYS, None) if attribute[0] else (None, ALWAYS)
    test = parameter_test(node)
    if test is not None:
        negated = test.negate()
        return frozenset({test}), frozenset({negated}) if negated is not None else ALWAYS
    return UNDECIDED


def _class_attribute(node: ast.expr, name: str, qualname: str, index: IndexView) -> tuple[bool] | None:
    """The truth of ``node`` for this class when it is ``name.attr`` (or compares it with a
    literal: ``==``, ``!=``, ``is``, ``is not``) and the attribute is a literal of the class."""
    compared: object = _NOTHING
    op = None
    read = node
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant):
        read, op, compared = node.left, type(node.ops[0]), node.comparators[0].value
    if not (isinstance(read, ast.Attribute) and isinstance(read.value, ast.Name) and read.value.id == name):
        return None
    known, constant = index.class_constant(qualname, read.attr)
    if not known:
        return None
    if compared is _NOTHING:
        return (bool(constant),)
    decide = {ast.Eq: lambda: constant == compared, ast.NotEq: lambda: constant != compared,
              ast.Is: lambda: constant is compared, ast.IsNot: lambda: constant is not compared}.get(op)  # type: ignore[arg-type]
    return (bool(decide()),) if decide is not None else None


_NOTHING = object()


def _both(a: Outcome, b: Outcome) -> Outcome:
    """``a and b``: true when both are; false when ``a`` is, or ``a`` is true and ``b`` false."""
    true = None if a[0] is None or b[0] is None else a[0] | b[0]
    second = None if a[0] is None or b[1] is None else a[0] | b[1]
    return true, _or_else(a[1], second)


def _either(a: Outcome, b: Outcome) -> Outcome:
    """``a or b``: true when ``a`` is, or ``a`` is false and ``b`` true; false when both are."""
    second = None if a[1] is None or b[0] is None else a[1] | b[0]
    false = None if a[1] is None or b[1] is None else a[1] | b[1]
    return _or_else(a[0], second), false


def _or_else(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    """A disjunction of two conjunctions, widened to the tests they share."""
    if a is None or b is None:
        return b if a is None else a
    return a & b

