"""Rings of pinned buffers taken by the round's index, synchronised every K rounds: ``for i,
w in enumerate(ws):`` whose body begins with ``if i % K == 0: torch.cuda.synchronize()`` and
reads the ring only as ``slots[i % N]``, with N >= K (or ends with ``if i % K == r:`` and
its synchronisation). A slot is written again N rounds after
the copy that read it, and a synchronisation falls in those N rounds, so on a round that skips
it the copies still in flight read other slots than the ones the next writes pick: on the
test's false branch they are no hazard to the ring (``Effects.skip_periodic``).

Syntax alone decides it (which loops, which test, which rings), once per function: the round
counter is the loop's own (``enumerate`` from 0, ``range(n)``, never rebound in the body), so
round 0 synchronises and round i picks slot ``i % N``; the synchronisation is a direct
statement of the test's body, a device-wide one of the pack's ``synchronizers`` (a function,
not a stream's or an event's method); the ring is mentioned on one side of the test only in
the round (before it, the round's own copies are among those it takes as settled, which the
next round's write is N - 1 rounds from; after it, the test must hold in round 0, so that
nothing copied before the loop is taken as settled). Not yet: copies still in flight after the loop are taken as settled for a write to the
ring after it (the rounds since the last synchronisation are not counted there).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from bufferlint.analysis.frontend.syntax import walk


def periodic_syncs(function: ast.AST, is_device_sync: Callable[[ast.Call], bool]) -> dict[int, frozenset[str]]:
    """id(test) of each ``if i % K == 0:`` synchronising every K rounds -> the names of the
    rings (``slots[i % N]``, N >= K) its false branch leaves no copy racing."""
    found: dict[int, frozenset[str]] = {}
    for loop in walk(function):
        if not isinstance(loop, ast.For):
            continue
        counter = _round_counter(loop)
        if counter is None or counter in _bound_in(loop.body):
            continue
        for position, stmt in enumerate(loop.body):
            test = _period_test(stmt, counter)
            if test is None or not any(_calls_sync(s, is_device_sync) for s in stmt.body):  # type: ignore[attr-defined]
                continue
            period, phase = test
            before = _names(loop.body[:position])
            after = _names(loop.body[position + 1:])
            # first in the round (round 0 synchronising: nothing from before the loop is
            # taken as settled), or last (the round's own copies are the ones it settles)
            rings = {ring for ring in _rings(loop.body, counter, period) - _bound_in(loop.body)
                     if ring not in before or ring not in after} - (after if phase else set())
            if rings:
                found[id(stmt.test)] = frozenset(rings)  # type: ignore[attr-defined]
    return found


def _names(body: list[ast.stmt]) -> set[str]:
    return {n.id for s in body for n in walk(s) if isinstance(n, ast.Name)}


def _round_counter(loop: ast.For) -> str | None:
    """``i`` of ``for i, x in enumerate(xs)`` (no start, or 0) or ``for i in range(n)``."""
    it, target = loop.iter, loop.target
    if not isinstance(it, ast.Call) or not isinstance(it.func, ast.Name) or it.keywords and it.func.id != "enumerate":
        return None
    if it.func.id == "enumerate" and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
        start = it.args[1] if len(it.args) > 1 else next((k.value for k in it.keywords if k.arg == "start"), None)
        return target.elts[0].id if start is None or _int(start) == 0 else None
    if it.func.id == "range" and isinstance(target, ast.Name) and not it.keywords:
        if len(it.args) == 1 or (len(it.args) == 2 and _int(it.args[0]) == 0):
            return target.id
    return None


def _period_test(stmt: ast.stmt, counter: str) -> tuple[int, int] | None:
    """(K, r) of ``if counter % K == r:`` (``if not counter % K:``: r = 0), 0 <= r < K, with
    no ``else``."""
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return None
    test = stmt.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        period = _modulo(test.operand, counter)
        return (period, 0) if period is not None else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        period, phase = _modulo(test.left, counter), _int(test.comparators[0])
        if period is not None and phase is not None and 0 <= phase < period:
            return period, phase
    return None


def _modulo(node: ast.expr, counter: str) -> int | None:
    """K of ``counter % K`` (a positive int constant)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Name) \
            and node.left.id == counter:
        k = _int(node.right)
        return k if k is not None and k > 0 else None
    return None


# Methods that keep their argument (a slot kept past its round is no ring's slot any more)
_KEEPING = frozenset({"append", "appendleft", "extend", "insert", "add", "put", "put_nowait", "setdefault", "update"})


def _rings(body: list[ast.stmt], counter: str, period: int) -> set[str]:
    """The names the loop body reads only as ``name[counter % N]`` with N >= ``period``,
    each slot used in its round only: written, read, copied from, or bound to a name the
    round binds first (``buf = slots[i % N]``), never kept in a container, a field or a name
    that outlives the round."""
    parents = {id(child): node for stmt in body for node in walk(stmt) for child in ast.iter_child_nodes(node)}
    picked: set[str] = set()
    bad: set[str] = set()
    slots: set[int] = set()  # the ring names read as ``ring[counter % N]``
    aliases: dict[str, set[str]] = {}
    for stmt in body:
        for node in walk(stmt):
            if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
                continue
            n = _modulo(node.slice, counter)
            if n is None:
                continue
            ring = node.value.id
            slots.add(id(node.value))
            picked.add(ring)
            alias = stmt.targets[0].id if (  # type: ignore[attr-defined]
                isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)) else None
            if n < period:
                bad.add(ring)
            elif alias is not None:
                aliases.setdefault(alias, set()).add(ring)
            elif _escapes(node, parents):
                bad.add(ring)
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, ast.Name) and node.id in picked and id(node) not in slots:
                bad.add(node.id)  # the ring read otherwise
    for alias, rings in aliases.items():
        if not _fresh_alias(alias, body) or any(
                _escapes(node, parents) for stmt in body for node in walk(stmt)
                if isinstance(node, ast.Name) and node.id == alias and isinstance(node.ctx, ast.Load)):
            bad |= rings
    return picked - bad


def _escapes(node: ast.expr, parents: dict[int, ast.AST]) -> bool:
    """May the slot ``node`` (or a view of it, a method's result) outlive the round: be
    anything but written, read, a call's argument (but a container's ``append``), or an
    operand?"""
    parent = parents.get(id(node))
    while (isinstance(parent, (ast.Subscript, ast.Attribute)) and parent.value is node) or \
            (isinstance(parent, ast.Call) and parent.func is node):
        node, parent = parent, parents.get(id(parent))  # type: ignore[assignment]
    if isinstance(parent, ast.Expr) or isinstance(parent, (ast.Compare, ast.BinOp, ast.UnaryOp, ast.BoolOp)):
        return False
    if isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return node not in getattr(parent, "targets", [getattr(parent, "target", None)])
    if isinstance(parent, ast.keyword):
        parent = parents.get(id(parent))
    if isinstance(parent, ast.Call):
        return isinstance(parent.func, ast.Attribute) and parent.func.attr in _KEEPING
    return True


def _fresh_alias(alias: str, body: list[ast.stmt]) -> bool:
    """Is ``alias`` bound only by round statements ``alias = ring[...]``, the first of them
    before any other mention of it in the round?"""
    for stmt in body:
        binds = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id == alias and isinstance(stmt.value, ast.Subscript)
        mentions = [n for n in walk(stmt) if isinstance(n, ast.Name) and n.id == alias]
        if binds:
            break
        if mentions:
            return False
    else:
        return False
    stores = [n for stmt in body for n in walk(stmt) if isinstance(n, ast.Name) and n.id == alias
              and isinstance(n.ctx, (ast.Store, ast.Del))]
    assigned = [stmt for stmt in body if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == alias]
    return len(stores) == len(assigned)


def _calls_sync(stmt: ast.stmt, is_device_sync: Callable[[ast.Call], bool]) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and is_device_sync(stmt.value)


def _bound_in(body: list[ast.stmt]) -> set[str]:
    return {n.id for s in body for n in walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _int(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
