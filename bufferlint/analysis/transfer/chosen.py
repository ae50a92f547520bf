"""Callables chosen by a conditional expression: ``run = pool.submit if offload(w) else
run_inline`` then ``run(load, dst, w)``. A join of a bound method and a function keeps only
the function (``values.join``), so the call would lose the pool's hand-off and the guard that
chose it; instead the call is analysed as the conditional call it is, ``pool.submit(load,
dst, w) if offload(w) else run_inline(load, dst, w)``, its test asked again where the choice
still holds (no name the test or either branch reads was bound since)."""

from __future__ import annotations

import ast

from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.values import Value

# The state variable listing the choices in force: (name, line, column, names read) each.
CHOSEN = "<chosen>"


def _choices(st: State) -> tuple:
    value = st.vars.get(CHOSEN)
    return value.const if value is not None and value.has_const and isinstance(value.const, tuple) else ()


def _callable_expr(node: ast.expr) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute))


def choose(st: State, stmt: ast.Assign) -> None:
    """``name = a if test else b`` of two callables (names or attributes): a call of ``name``
    is the conditional call while nothing it reads is bound again (``forget``)."""
    target, value = stmt.targets[0] if len(stmt.targets) == 1 else None, stmt.value
    if not (isinstance(target, ast.Name) and isinstance(value, ast.IfExp)
            and _callable_expr(value.body) and _callable_expr(value.orelse)):
        return
    names = frozenset(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
    if target.id in names:
        return
    entry = (target.id, value.lineno, value.col_offset, names)
    st.vars[CHOSEN] = Value(const=tuple(c for c in _choices(st) if c[0] != target.id) + (entry,), has_const=True)


def forget(st: State, name: str) -> None:
    """``name`` is bound again: a choice of that name, or one whose test reads it, ends."""
    choices = _choices(st)
    if choices and any(c[0] == name or name in c[3] for c in choices):
        kept = tuple(c for c in choices if c[0] != name and name not in c[3])
        st.vars[CHOSEN] = Value(const=kept, has_const=True)


def chosen_call(st: State, node: ast.Call, function: ast.AST, cache: dict[tuple, ast.IfExp | None]) -> ast.IfExp | None:
    """The conditional call ``node`` (a call of a name bound to a choice in force) stands
    for, located at ``node``; None for any other call. ``function``: the function's node,
    where the choice's expression is found by its position. The conditional call is built
    once per call and choice (``cache``, the function's ``FunctionTables.chosen_calls``), so
    that each visit of a loop evaluates the same nodes, as ``exit_callbacks`` does."""
    if not isinstance(node.func, ast.Name):
        return None
    found = next((c for c in _choices(st) if c[0] == node.func.id), None)
    if found is None:
        return None
    key = (id(node), found[1], found[2])
    if key not in cache:
        cache[key] = _conditional_call(node, function, found[1:3])
    return cache[key]


def _conditional_call(node: ast.Call, function: ast.AST, position: tuple) -> ast.IfExp | None:
    choice = next((n for n in ast.walk(function) if isinstance(n, ast.IfExp)
                   and (n.lineno, n.col_offset) == position), None)
    if choice is None:
        return None
    branches = [ast.copy_location(ast.Call(func=f, args=node.args, keywords=node.keywords), node)
                for f in (choice.body, choice.orelse)]
    return ast.copy_location(ast.IfExp(test=choice.test, body=branches[0], orelse=branches[1]), node)
