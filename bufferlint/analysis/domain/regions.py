"""Regions of a pinned buffer: which part of it a slice names, and whether two parts are
provably disjoint (`Hazard.HOST_WRITTEN_IN_FLIGHT`: a write to one half while a copy reads
the other is no hazard).

A region is a tuple with one entry per leading dimension of the buffer, each ``(lo, hi)`` or
None (nothing known about that dimension). A bound is an ``int`` (a constant, never negative),
the text of an expression over *stable* names (``"n"``, ``"2 * slots"``), or, for ``hi``,
``END`` (the end of the dimension). Dimensions past the tuple are whole.

Two parts are disjoint when some dimension's intervals provably do not meet: constants that
do not overlap, or the same stable expression ending one and starting the other
(``buf[:n]`` and ``buf[n:]``). Python clamps and normalises a slice's bound the same way for
both slices of one dimension, so the second rule holds for any value of ``n``, negative or
past the end. A stable name (``stable_names``) is one that has the same value wherever the
function reads it: a parameter never rebound, or a local bound once and outside every loop;
the text of an expression over such names means the same value at both slices (a bound is
taken to be an int, which nothing changes in place: a 0-d tensor bound mutated with
``n.add_(1)`` between the slices is not seen). Symbolic bounds mean nothing in another call
(``constant_part``).
"""

from __future__ import annotations

import ast

END = None
_UNKNOWN = object()
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def stable_names(func: ast.AST) -> frozenset[str]:
    """Names whose value is the same wherever ``func`` reads them: parameters never rebound,
    and locals bound exactly once, outside every loop and comprehension (so at most once per
    call). A name declared ``global`` or ``nonlocal`` anywhere in it is never stable."""
    params = _parameters(func)
    counts: dict[str, int] = {}
    unstable: set[str] = set()
    body = getattr(func, "body", [])
    for stmt in body if isinstance(body, list) else [body]:
        _count_bindings(stmt, False, counts, unstable)
    once = {name for name, n in counts.items() if n == 1 and name not in params}
    return frozenset((once | (params - counts.keys())) - unstable)


def _parameters(func: ast.AST) -> set[str]:
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments):
        return set()
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.arg for a in every}


def _count_bindings(node: ast.AST, in_loop: bool, counts: dict[str, int], unstable: set[str]) -> None:
    """Count each name ``node`` binds (a loop's bindings make the name unstable)."""
    for name in _bound_here(node, unstable):
        counts[name] = counts.get(name, 0) + (2 if in_loop else 1)
    inner = in_loop or isinstance(node, _LOOPS)
    for child in ast.iter_child_nodes(node):
        _count_bindings(child, inner, counts, unstable)


def _bound_here(node: ast.AST, unstable: set[str]) -> list[str]:
    """The names ``node`` itself binds (``x += 1`` rebinds ``x``)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        unstable.update(node.names)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    elif isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    elif isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def region_of(index: ast.expr, stable: frozenset[str]) -> tuple | None:
    """The part of a buffer ``buf[index]`` names, in the buffer's dimensions; None when
    nothing is known (the whole buffer, as far as anyone can tell). Only slices and
    constant non-negative integers are read: anything else (a name, which may be a tensor
    of indices or a mask spanning several dimensions, ``None``, ``...``) ends the known
    dimensions, since the ones after it may not line up with the buffer's."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    dims: list[tuple | None] = []
    for part in parts:
        if isinstance(part, ast.Slice):
            dims.append(_slice_dim(part, stable))
        elif _constant_int(part):
            value: int = part.value  # type: ignore[attr-defined]
            dims.append((value, value + 1))
        else:
            break
    while dims and dims[-1] is None:
        dims.pop()
    return tuple(dims) if dims else None


def _slice_dim(part: ast.Slice, stable: frozenset[str]) -> tuple | None:
    if part.step is not None and not (_constant_int(part.step) and part.step.value == 1):  # type: ignore[attr-defined]
        return None
    lo = 0 if part.lower is None else _bound(part.lower, stable)
    hi = END if part.upper is None else _bound(part.upper, stable)
    if lo is _UNKNOWN or hi is _UNKNOWN:
        return None
    return (lo, hi)


def _constant_int(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)
        and node.value >= 0
    )


def _bound(node: ast.expr, stable: frozenset[str]) -> object:
    """A slice bound: a constant, the text of a pure expression over stable names, or
    ``_UNKNOWN`` (a negative constant counts from an end not known here)."""
    if _constant_int(node):
        return node.value  # type: ignore[attr-defined]
    if _symbolic(node, stable):
        return ast.unparse(node)
    return _UNKNOWN


def _symbolic(node: ast.expr, stable: frozenset[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in stable
    if isinstance(node, ast.Constant):
        return _constant_int(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
        return _symbolic(node.left, stable) and _symbolic(node.right, stable)
    return False


def disjoint(a: tuple | None, b: tuple | None) -> bool:
    """Are the two parts of one buffer provably disjoint (some dimension where they do not
    meet)? A whole buffer (None) meets every part."""
    if a is None or b is None:
        return False
    for da, db in zip(a, b):
        if da is not None and db is not None and (_at_most(da[1], db[0]) or _at_most(db[1], da[0])):
            return True
    return False


def _at_most(hi: object, lo: object) -> bool:
    """Does the interval ending at ``hi`` end before (or where) the one at ``lo`` starts?"""
    if hi is END:
        return False
    if hi == lo:
        return True
    return isinstance(hi, int) and isinstance(lo, int) and hi <= lo


def constant_part(region: tuple | None) -> tuple | None:
    """The region with its symbolic bounds forgotten (what it says in another call, whose
    names are other values)."""
    if region is None:
        return None
    dims = [d if d is not None and all(b is END or isinstance(b, int) for b in d) else None for d in region]
    while dims and dims[-1] is None:
        dims.pop()
    return tuple(dims) if dims else None
