"""Callbacks an ``ExitStack`` runs at its ``with`` block's exit.

``stack.callback(fn, *args)`` inside ``with contextlib.ExitStack() as stack:`` calls
``fn(*args)`` when the block is left, after its body (CPython 3.11-3.14 contextlib: the
callbacks run in reverse order of registration at ``__exit__``). A callback that waits
(``stack.callback(fut.result)``, ``stack.callback(tracker.wait)``) or synchronises
(``stack.callback(side.synchronize)``, ``stack.callback(torch.cuda.synchronize)``) waits
there, not where it is registered: the block's exit runs it as the call ``fn(*args)``.
Only callbacks registered by a statement of the block itself are taken (one under an ``if``
or in a loop may not be registered, or be registered several times).
"""

from __future__ import annotations

import ast

from bufferlint.analysis.transfer.call_language import EXIT_STACKS
from bufferlint.analysis.domain.values import Value

CALLBACK_METHODS = frozenset({"callback"})


def exit_calls(context: Value, stmt: ast.With | ast.AsyncWith, item: int, cache: dict[int, ast.Call]) -> list[ast.Call]:
    """The calls the exit of ``stmt``'s ``item`` makes when it is an ``ExitStack`` bound by
    ``as stack``: ``fn(*args)`` for each ``stack.callback(fn, *args)`` statement of the
    block, last registered first. The calls are built once per statement (``cache``, keyed
    by the registering call), so that each visit evaluates the same nodes."""
    if not (context.types & EXIT_STACKS):
        return []
    target = stmt.items[item].optional_vars
    if not isinstance(target, ast.Name):
        return []
    calls: list[ast.Call] = []
    for statement in stmt.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in CALLBACK_METHODS and isinstance(call.func.value, ast.Name)
                and call.func.value.id == target.id and call.args
                and not any(isinstance(a, ast.Starred) for a in call.args)):
            continue
        made = cache.get(id(call))
        if made is None:
            made = cache[id(call)] = ast.copy_location(
                ast.Call(func=call.args[0], args=call.args[1:], keywords=call.keywords), call.args[0])
        calls.append(made)
    return calls[::-1]
