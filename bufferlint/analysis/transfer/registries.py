"""What a lookup in a registry of callables gives: the handlers registered in an object's
field (``bus.add(fn)``), and the functions registered under a key of a keyed registry
(``@Policies.register("owned")``), found by the index from the registering calls
(``frontend.registrations``).

A lookup by a constant key gives the functions registered under that key only: written
``Policies.registry["owned"]``, or through a getter whose body only returns the lookup of
its parameter (``Policies.get("owned")`` with ``def get(cls, name): return
cls.registry[name]``). Any other key gives every registered function (``registered_callables``).
"""

from __future__ import annotations

import ast

from bufferlint.analysis.domain.values import Value
from bufferlint.analysis.frontend.index import FunctionInfo
from bufferlint.analysis.world import IndexView


def registered_handlers(index: IndexView, handlers: frozenset) -> Value:
    """A handler kept in a field's container: one of the project functions registered
    there (calling it runs each), or an object of one of the classes (its ``__call__``)."""
    functions = frozenset(h for h in handlers if h not in index.classes)
    if functions:
        return Value(callables=functions, not_none=True)
    return Value(types=handlers, not_none=True)


def registered_under(index: IndexView, owner: Value, attr: str, key: Value) -> Value | None:
    """``<owner>.<attr>[key]`` with a constant string key: the functions registered under it
    in the keyed registry of the owner's project classes (the owner a class, or an object of
    one); None when the key is not a constant or nothing is registered under it."""
    if not (key.has_const and isinstance(key.const, str)):
        return None
    classes = owner.types | owner.declared | ({owner.ref} if owner.ref is not None else frozenset())
    classes = frozenset(c for c in classes if c in index.classes)
    if not classes:
        return None
    chosen = index.registered_under(classes, attr, key.const)
    return registered_handlers(index, chosen) if chosen else None


def getter_lookup(index: IndexView, info: FunctionInfo, bound: dict[int, Value]) -> Value | None:
    """A call of a method whose body only returns ``<receiver>.<attr>[<parameter>]``
    (a docstring aside), given a constant key: the functions registered under it."""
    statements = getattr(info.node, "body", ())
    if not info.binds_receiver or info.class_qualname is None or not info.params or len(statements) > 2:
        return None  # (asked at every call of a method: most are decided here, without a walk)
    body = [stmt for stmt in statements
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    lookup = body[0].value
    if not (isinstance(lookup, ast.Subscript) and isinstance(lookup.slice, ast.Name) and lookup.slice.id in info.params
            and isinstance(lookup.value, ast.Attribute) and isinstance(lookup.value.value, ast.Name)
            and lookup.value.value.id == info.params[0]):
        return None
    key = bound.get(info.params.index(lookup.slice.id))
    receiver = bound.get(0)
    owner = Value(types=(receiver.types | receiver.declared) if receiver is not None else frozenset(),
                  ref=info.class_qualname)
    return registered_under(index, owner, lookup.value.attr, key) if key is not None else None
