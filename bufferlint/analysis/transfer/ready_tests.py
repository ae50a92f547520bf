"""Tests of what a source's ``ready-after`` call returned: ``while (layout :=
chan.next_layout()) is not None:``. The writer has refilled the buffer only when the call hands
something back; on the branch where it returned None (the channel is closed, the loop ends)
nothing new arrived, and the views the last ``advances`` call let the writer refill stay out of
date (``Effects.ready`` is applied on the other branch only). Read off the syntax once per
function: the call tested right where it is made (itself, or through ``:=``), against None or
for its truth. Not yet: a result tested later (``layout = chan.next_layout()`` and ``if layout
is None: break``), where the call still makes the buffer whole on every path.
"""

from __future__ import annotations

import ast

from bufferlint.analysis.frontend.syntax import walk


def ready_tests(function: ast.AST) -> dict[int, tuple[int, bool]]:
    """id(test) -> (id(call) of the call the test inspects the result of, the test's truth
    on the branch where the call handed something back)."""
    found: dict[int, tuple[int, bool]] = {}
    for node in walk(function):
        if isinstance(node, (ast.If, ast.While)):
            tested = _tested_call(node.test, True)
            if tested is not None:
                found[id(node.test)] = tested
    return found


def _tested_call(test: ast.expr, truth: bool) -> tuple[int, bool] | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _tested_call(test.operand, not truth)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        call = _call_of(test.left)
        return (id(call), truth == isinstance(test.ops[0], ast.IsNot)) if call is not None else None
    call = _call_of(test)
    return (id(call), truth) if call is not None else None


def _call_of(node: ast.expr) -> ast.Call | None:
    if isinstance(node, ast.NamedExpr):
        node = node.value
    return node if isinstance(node, ast.Call) else None
