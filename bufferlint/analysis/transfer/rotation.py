"""Pools of buffers taken in turn: ``i = self.next; self.next = (i + 1) % n; buf =
self.bufs[i]``. Each call of the method picks the slot after the last one, so a slot is
written again only ``n`` calls later: a copy to the device still reading this call's slot when
the method returns does not meet the next call's write (``Effects.carry_over``). That the
pool is as large as the calls that can be in flight at once (vLLM's block zeroer sizes it by
the batches the engine keeps in flight) is taken on the program's word: the analysis does not
count the calls between synchronisations."""

from __future__ import annotations

import ast

from bufferlint.analysis.frontend.syntax import walk


def rotating_indices(function: ast.AST, receiver: str) -> frozenset[str]:
    """The index expressions (source text) that pick a pool's slots in turn in ``function``:
    ``receiver.f`` for a field the function advances by one modulo a count (``self.f =
    (self.f + 1) % n``, or ``(i + 1) % n`` of a local ``i`` read from it; ``1 - self.f`` for
    two), and each local assigned once, from that field."""
    assigns = [node for node in walk(function) if isinstance(node, ast.Assign) and len(node.targets) == 1]
    fields = {
        node.targets[0].attr for node in assigns  # type: ignore[attr-defined]  # a field: checked by _field
        if _field(node.targets[0], receiver) is not None and _successor_modulo(node.value)
    }
    if not fields:
        return frozenset()
    counts: dict[str, int] = {}
    for node in walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
    names = {f"{receiver}.{field}" for field in fields}
    for node in assigns:
        target = node.targets[0]
        if isinstance(target, ast.Name) and counts.get(target.id) == 1 and _field(node.value, receiver) in fields:
            names.add(target.id)
    return frozenset(names)


def picks_in_turn(node: ast.Subscript, receiver: str, indices: frozenset[str]) -> bool:
    """``self.bufs[i]`` with ``i`` one of ``indices`` (``rotating_indices``)?"""
    return _field(node.value, receiver) is not None and ast.unparse(node.slice) in indices


def _field(node: ast.expr, receiver: str) -> str | None:
    """The field name of ``receiver.field``; None for any other expression."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver:
        return node.attr
    return None


def _successor_modulo(node: ast.expr) -> bool:
    """``(x + 1) % n``, or ``1 - x`` (two slots taken in turn)."""
    if not isinstance(node, ast.BinOp):
        return False
    if isinstance(node.op, ast.Sub):
        return isinstance(node.left, ast.Constant) and node.left.value == 1
    return (
        isinstance(node.op, ast.Mod) and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Add)
        and isinstance(node.left.right, ast.Constant) and node.left.right.value == 1
    )
