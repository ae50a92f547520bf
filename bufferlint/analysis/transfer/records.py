"""Records: a NamedTuple or dataclass instance holds its fields like a tuple holds its items.

``Item(name, w)`` is a value with one part per field, in the constructor's order
(``frontend.records``), so the record carries the view wherever it goes: submitted, appended
to a list kept past the step, unpacked (``name, w = item``), indexed (``item[1]``) or read by
field (``item.tensor``). Kept as a tuple's parts, not in the heap of class attributes: each
record is its own object, and a record that dies in its step keeps nothing. A copy with some
fields replaced (``item._replace(tensor=w)``, ``dataclasses.replace(entry, tensor=w)``) is a
new record of the same shape.
"""

from __future__ import annotations

import ast
from typing import Callable

from bufferlint.analysis.domain.values import (
    EMPTY, MAX_DEPTH, Borrow, Field, ParamRef, Value, cap, const, container, deep_leaves, evolve, index, join,
)
from bufferlint.analysis.frontend.index import ModuleInfo, base_name
from bufferlint.analysis.transfer.call_site import CallSite
from bufferlint.analysis.world import IndexView, ProjectView
from bufferlint.findings import TraceStep


def construct(call: CallSite, qualname: str) -> Value | None:
    """The record a call of record class ``qualname`` builds; None for another class."""
    shape = call.program.index.record_shape(qualname)
    if shape is None:
        return None
    names, positional = shape
    parts: list[Value | None] = [None] * len(names)
    rest: Value | None = None  # ``*args`` / ``**kwargs``: any field not passed otherwise
    position = 0
    for value, starred in call.args.positional:
        if starred:
            rest = join(rest, index(value, None))
        elif position < positional:
            parts[position] = value
            position += 1
    for key, value in call.args.keywords:
        if key is None:
            rest = join(rest, index(value, None))
        elif key in names:
            parts[names.index(key)] = value
    if rest is None:  # a field not passed holds its default: a literal the class body gives it
        for i, name in enumerate(names):
            if parts[i] is None:
                known, literal = call.program.index.class_constant(qualname, name)
                parts[i] = const(literal) if known else None
    # Each part is capped as a container's elements are (``values.cap``): a record built
    # from the results of calls that return records nests no deeper than any container, so
    # a summary returning one converges.
    items = tuple(cap(part if part is not None else rest, MAX_DEPTH - 1) or EMPTY for part in parts)
    record = container(None, items) if items else Value()
    return evolve(record, types=frozenset({qualname}), alloc=frozenset({call.allocation_site()}), fields=names if items else None)


# ``types.SimpleNamespace(**fields)`` holds the objects it is given as its attributes
# (CPython 3.11-3.14: "a simple object subclass that provides attribute access to its
# namespace"), copying none of them.
NAMESPACES = frozenset({"types.SimpleNamespace"})


def namespace(call: CallSite) -> Value:
    """``SimpleNamespace(a=w, **more)``: a record of its named keywords (read back by field);
    given a mapping (``**{e.name: view ...}``), an object holding the mapping's values."""
    keywords = call.args.keywords
    site = frozenset({call.allocation_site()})
    if keywords and all(key is not None for key, _ in keywords):
        names = tuple(key for key, _ in keywords if key is not None)
        items = tuple(cap(value, MAX_DEPTH - 1) or EMPTY for _, value in keywords)
        return evolve(container(None, items), types=frozenset(NAMESPACES), alloc=site, fields=names)
    held = None
    for key, value in keywords:
        held = join(held, index(value, None) if key is None else value)
    return evolve(container(held), types=frozenset(NAMESPACES), alloc=site)


def field_of(base: Value, attr: str) -> Value | None:
    """``record.attr``: the part the record was built with; None when ``base`` is no
    record holding a field ``attr``."""
    if base.items is None or base.fields is None or attr not in base.fields or len(base.fields) != len(base.items):
        return None
    return base.items[base.fields.index(attr)]


def parameter_field(index_view: IndexView, base: Value, attr: str, step: TraceStep) -> Value | None:
    """``payload.value`` where ``payload`` is a parameter annotated as a record class, or
    ``self.value`` in a record's own method (``job.launch(pool)`` of ``Job(name, w)`` submits
    the ``w`` that call built the record with): the part the caller built
    the record with, as a ``Field`` step of the parameter's path; None when ``base`` holds no
    such parameter or its one class is no record with a field ``attr``. The part leaves the
    function only where a caller filled that field (``values.local_fields``,
    ``followed_fields``): else it is for a helper that sends what it reads out of the record
    it is given (``send(sock, payload)`` reading ``payload.value``)."""
    params = [leaf for leaf in base.leaves if isinstance(leaf, ParamRef) and not leaf.path]
    classes = base.types | base.declared
    if not params or len(classes) != 1:
        return None
    (qualname,) = classes
    shape = index_view.record_shape(qualname)
    if shape is None or attr not in shape[0]:
        return None
    position = Field(shape[0].index(attr))
    return Value(leaves=frozenset(leaf.extend(position, step) for leaf in params))


# What a record parameter's field may hold that is followed past the function's own sinks
# (``Program.field_hot``): a producer's borrowed value, a device copy in flight.
FIELD_KINDS = ("borrowed", "flight")


def followed_fields(program: ProjectView, qualname: str, kinds: tuple[str, ...] = FIELD_KINDS) -> Callable[[int, int], bool]:
    """Whether a field (parameter, position) of ``qualname``'s record parameters may hold
    one of ``kinds``: a caller built the record so, or passed on its own such field
    (``pass_record``). Only those fields leave the function (``values.local_fields``) or
    make host reads reaches: a batch record handed to every layer with nothing borrowed in
    it adds no path to any summary."""
    def followed(param: int, position: int) -> bool:
        return (qualname, param) in program.field_hot and any(
            (qualname, param, position, kind) in program.field_hot for kind in kinds
        )
    return followed


def pass_record(program: ProjectView, caller: str, callee: str, param: int, value: Value) -> None:
    """A call passes ``value`` into ``callee``'s parameter ``param``: the fields of a record
    built here that hold borrowed values or copies in flight, and the caller's own record
    parameters passed whole with such fields, make the callee's same fields followed
    (``Program.flow_fields``)."""
    fields = _hot_positions(program, caller, value)
    records = tuple(sorted({leaf.index for leaf in value.leaves
                            if isinstance(leaf, ParamRef) and not leaf.path and (caller, leaf.index) in program.field_hot}))
    if fields or records:
        program.flow_fields(caller, callee, param, fields, records)


def _hot_positions(program: ProjectView, caller: str, value: Value) -> tuple[tuple[int, str], ...]:
    """(position, kind) of the fields of the record ``value`` (none if it is no record)
    that may hold a borrowed value or a copy in flight: one of the caller's, or what one of
    its parameters (or their followed fields) may receive."""
    if value.fields is None or not value.items:
        return ()
    found: set[tuple[int, str]] = set()
    for position, item in enumerate(value.items):
        for leaf in deep_leaves(item, through_lazy=True):
            if isinstance(leaf, Borrow):
                if leaf.flight:
                    found.add((position, "flight"))
                elif not leaf.pinned:
                    found.add((position, "borrowed"))
            elif leaf.path and isinstance(leaf.path[0], Field):
                followed = (caller, leaf.index, leaf.path[0].position)
                found.update((position, kind) for kind in FIELD_KINDS if (*followed, kind) in program.field_hot)
            else:
                if (caller, leaf.index) in program.hot:
                    found.add((position, "borrowed"))
                if (caller, leaf.index) in program.flight_hot:
                    found.add((position, "flight"))
    return tuple(sorted(found))


# ``replace(record, **changes)``; ``copy.copy(record)`` is a shallow copy, a new record of the
# same fields nothing replaced (an array in a field is the same array, still a view)
REPLACERS = frozenset({"dataclasses.replace", "copy.replace", "copy.copy"})


def replaced(call: CallSite, record: Value | None) -> Value | None:
    """``item._replace(tensor=w)``, ``dataclasses.replace(entry, tensor=w)``: a new record of
    ``record``'s shape, the fields named by keyword replaced and the others kept (``**changes``
    may replace any of them); None when ``record`` is no record of a known shape."""
    if record is None or record.items is None or len(record.types) != 1:
        return None
    (qualname,) = record.types
    shape = call.program.index.record_shape(qualname)
    if shape is None or len(shape[0]) != len(record.items):
        return None
    names = shape[0]
    parts = list(record.items)
    for key, value in call.args.keywords:
        if key is None:  # which fields: not known here
            parts = [join(part, index(value, None)) or EMPTY for part in parts]
        elif key in names:
            parts[names.index(key)] = value
    items = tuple(cap(part, MAX_DEPTH - 1) or EMPTY for part in parts)
    return evolve(container(None, items), types=record.types, alloc=frozenset({call.allocation_site()}), fields=names)


def module_record(index_view: IndexView, module: ModuleInfo, name: str) -> Value | None:
    """A module variable bound once at the top level to a record holding project functions
    (``SOUND = Plan(overlap=overlap_unmarked)``): that record, with those functions in their
    fields (what else it was built with is not known), so a function reading a callable
    field of the record it is given (``plan.overlap(w)``) is told by each call which one it
    calls; None for any other variable. Returns the functions not indexed yet too (as
    ``ref``s the caller asks for)."""
    built = module.variable_classes.get(name)
    shape = index_view.record_shape(index_view.canonical(built)) if built else None
    call = _bound_once(module, name)
    if shape is None or not isinstance(call, ast.Call):
        return None
    names, positional = shape
    parts: list[Value] = [EMPTY] * len(names)
    held = False
    passed = [(i, arg) for i, arg in enumerate(call.args[:positional]) if not isinstance(arg, ast.Starred)]
    passed += [(names.index(kw.arg), kw.value) for kw in call.keywords if kw.arg in names]
    for position, arg in passed:
        target = base_name(module, arg) if isinstance(arg, (ast.Name, ast.Attribute)) else None
        if target is not None and (f"{module.name}." not in target or target[len(module.name) + 1:] in module.globals):
            parts[position] = Value(ref=index_view.canonical(target), not_none=True)
            held = True
    if not held:
        return None
    return evolve(container(None, tuple(parts)), types=frozenset({index_view.canonical(built or "")}), fields=names)


def module_functions(index_view: IndexView, module: ModuleInfo, name: str) -> Value | None:
    """A module variable bound once at the top level to a tuple of functions (``CHECKS =
    (is_cpu, lambda w: not getattr(w, M, False))``): that tuple, each element the function
    (a lambda as the index names it), so ``all(check(w) for check in CHECKS)`` is unrolled
    over them (``expressions._unrolled_items``); None for any other variable, or a tuple
    holding anything else."""
    bound = _bound_once(module, name, ast.Tuple)
    top = index_view.functions.get(f"{module.name}.<module>")
    if not isinstance(bound, ast.Tuple) or top is None or not bound.elts:
        return None
    parts = []
    for elt in bound.elts:
        target = top.lambda_name(elt) if isinstance(elt, ast.Lambda) else (
            base_name(module, elt) if isinstance(elt, (ast.Name, ast.Attribute)) else None)
        if target is None or index_view.functions.get(index_view.canonical(target)) is None:
            return None
        parts.append(Value(ref=index_view.canonical(target), not_none=True))
    return container(None, tuple(parts))


def _bound_once(module: ModuleInfo, name: str, kind: type = ast.Call) -> ast.expr | None:
    """The call (or other ``kind`` of expression) a top-level ``name = Cls(...)`` (or
    ``name: T = Cls(...)``) binds."""
    for stmt in module.tree.body:
        target: ast.expr
        value: ast.expr | None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            return value if isinstance(value, kind) else None
    return None
