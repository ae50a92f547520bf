"""Dicts of keyword arguments whose keys the analysis knows (``Value.keys``).

Real code often builds the keywords of a call in a local dict and sets a flag only on
some paths (Lightning's ``kwargs = {}; if device not in _CPU_DEVICES:
kwargs["non_blocking"] = True; data.to(device, **kwargs)``): what ``**kwargs`` passes by a
name is what the dict holds under it, present only where it was stored. The keys are
trusted only for a local name the function uses as such a dict and nothing else (no alias,
no call it is handed to, no method that adds keys: ``keyword_map_names``); anywhere else
the keys are not known (any may be there), as before.
"""

from __future__ import annotations

import ast

from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.domain.values import MAX_KEYS, Value, evolve

# Methods of a dict that read it or remove keys: a dict used with them still holds at most
# the keys it was given.
_READS = frozenset({"get", "keys", "items", "values", "copy", "pop"})


def keyword_map_names(function: ast.AST) -> frozenset[str]:
    """The names a function reads only as a dict of keyword arguments: unpacked into a call
    (``**kwargs``), subscripted (``kwargs["k"]``, read or stored), tested (``"k" in
    kwargs``) or read with a dict method that adds no key. A name read any other way (handed
    to a call, aliased, returned, captured by a nested function) may be changed where the
    analysis does not see it."""
    parents: dict[int, ast.AST] = {}
    for node in walk(function):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    seen: set[str] = set()
    spoiled: set[str] = set()
    for node in walk(function):
        if node is not function and isinstance(node, _NESTED):  # read or changed where it runs
            spoiled.update(inner.id for inner in walk(node) if isinstance(inner, ast.Name))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):  # ``kwargs |= other``
            spoiled.add(node.target.id)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            seen.add(node.id)
            if not _as_keyword_map(node, parents.get(id(node)), parents):
                spoiled.add(node.id)
    return frozenset(seen - spoiled)


# Nodes whose body runs apart from the function's own (a closure may change the dict later).
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _as_keyword_map(node: ast.Name, parent: ast.AST | None, parents: dict[int, ast.AST]) -> bool:
    if isinstance(parent, ast.keyword):
        return parent.arg is None and parent.value is node
    if isinstance(parent, ast.Subscript):
        return parent.value is node
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops) and parent.left is not node
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _READS:
        return isinstance(parents.get(id(parent)), ast.Call)
    return False


def display_keys(keys: list[ast.expr | None], values: list[Value], when: frozenset) -> tuple | None:
    """The entries of a dict display or a ``dict(k=v)`` call whose keys are all string
    literals (``keys``; None for ``**mapping``), present under ``when`` (the path's
    assumptions); None when some key is not known."""
    entries = []
    for key, value in zip(keys, values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        entries.append((key.value, value, when))
    return tuple(entries) if len(entries) <= MAX_KEYS else None


def stored_key(holder: Value, key: ast.expr, value: Value, when: frozenset) -> tuple | None:
    """The entries of ``holder`` after ``holder[key] = value`` on a path under ``when``: the
    key's earlier entries replaced by this one (on this path it holds ``value`` now); not
    known when the key is not a string literal."""
    if holder.keys is None or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    entries = tuple(entry for entry in holder.keys if entry[0] != key.value) + ((key.value, value, when),)
    return entries if len(entries) <= MAX_KEYS else None


def without_keys(value: Value) -> Value:
    """``value`` as a dict whose keys are not known."""
    return value if value.keys is None else evolve(value, keys=None)
