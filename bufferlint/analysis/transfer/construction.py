"""What a constructor call leaves in a field: the constant ``self.<attr>`` holds in the object
a given call of a project class builds.

A guard object told its marker's name when it is built (``Gate(MARKER)``, a subclass whose
``__init__`` passes it to ``super().__init__``) decides by ``getattr(t, self.marker, False)``;
whether it rejects marked values depends on the object, so the guard's facts are tested
against the field's value at each call through it (``guard_judge``, ``conditions.FIELD``).
The value is read from the syntax alone: the arguments of the constructor call (literals and
module constants), through ``__init__``'s top-level assignments and its ``super().__init__``
or ``Base.__init__(self, ...)`` calls. A field that any other method of the class's
hierarchy stores into, or that ``__init__`` sets under a branch or a loop, is not known.
"""

from __future__ import annotations

import ast
from typing import Any

from bufferlint.analysis.frontend.constants import static_constant
from bufferlint.analysis.frontend.index import ModuleInfo, base_name, dotted_name
from bufferlint.analysis.frontend.syntax import parameter_defaults
from bufferlint.analysis.world import IndexView

UNKNOWN: tuple[bool, object] = (False, None)
MAX_DEPTH = 4  # ``super().__init__`` calls followed up a hierarchy


def field_at_construction(index: IndexView, types: frozenset, objects: frozenset, attr: str) -> tuple[bool, object]:
    """``(True, value)`` when every construction the object may come from (``objects``: the
    ``(function, line, column)`` of each constructor call, ``Value.objects``) leaves the same
    constant in ``self.<attr>``; else ``(False, None)``."""
    if len(types) != 1 or not objects:
        return UNKNOWN
    (class_qualname,) = types
    found: list[object] = []
    for site in objects:
        if not (isinstance(site, tuple) and len(site) == 3 and isinstance(site[0], str)):
            return UNKNOWN  # a field's store, not a constructor call
        known, value = _at_site(index, class_qualname, site, attr)
        if not known or (found and (found[0] != value or type(found[0]) is not type(value))):
            return UNKNOWN
        found.append(value)
    return True, found[0]


def field_by_default(index: IndexView, class_qualname: str, attr: str) -> tuple[bool, object]:
    """The constant ``self.<attr>`` holds in an object built with no arguments
    (``Gate()``): what its constructor falls back to."""
    return _built(index, class_qualname, attr, {}, 0)


def field_of_call(index: IndexView, module: ModuleInfo, node: ast.expr, attr: str) -> tuple[bool, object]:
    """The constant ``self.<attr>`` holds in the object the expression ``node`` of ``module``
    builds, when it is a call of a project class with constant arguments (a parameter's
    default, ``cfg: SwapConfig = SwapConfig()``); else not known."""
    if not isinstance(node, ast.Call):
        return UNKNOWN
    name = base_name(module, node.func)
    class_qualname = index.canonical(name) if name is not None else None
    if class_qualname is None or class_qualname not in index.classes:
        return UNKNOWN
    arguments = _arguments(node, lambda expr: _module_constant(index, module, expr))
    return UNKNOWN if arguments is None else _built(index, class_qualname, attr, arguments, 1)


def _at_site(index: IndexView, class_qualname: str, site: tuple, attr: str) -> tuple[bool, object]:
    caller, line, column = site
    info = index.functions.get(caller)
    if info is None:
        return UNKNOWN
    call = next((n for n in ast.walk(info.node) if isinstance(n, ast.Call)
                 and n.lineno == line and n.col_offset == column), None)
    if call is None:
        return UNKNOWN
    arguments = _arguments(call, lambda node: _module_constant(index, info.module, node))
    return UNKNOWN if arguments is None else _built(index, class_qualname, attr, arguments, 1)


def _arguments(call: ast.Call, fold) -> dict | None:
    """The call's arguments by position (from 1: after the receiver) and by name, each
    folded to ``(known, value)``; None when some are unpacked (``*args``, ``**kw``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    out: dict[Any, tuple[bool, object]] = {i + 1: fold(a) for i, a in enumerate(call.args)}
    out.update({k.arg: fold(k.value) for k in call.keywords})
    return out


def _built(index: IndexView, class_qualname: str, attr: str, arguments: dict, depth: int) -> tuple[bool, object]:
    """What ``class_qualname``'s constructor, given ``arguments``, leaves in ``self.<attr>``."""
    if depth > MAX_DEPTH or not _stored_only_in_init(index, class_qualname, attr):
        return UNKNOWN
    init = _init_of(index, class_qualname)
    if init is None:
        return _record_field(index, class_qualname, attr, arguments)
    info, owner = init
    node = info.node
    params = info.params
    if not params or _stored_in_branches(node, params[0], attr):
        return UNKNOWN
    env: dict[str, tuple[bool, object]] = {}
    defaults = parameter_defaults(node)
    for i, name in enumerate(params[1:], start=1):
        if i in arguments:
            env[name] = arguments[i]
        elif name in arguments:
            env[name] = arguments[name]
        elif i in defaults:
            env[name] = _module_constant(index, info.module, defaults[i])
        else:
            env[name] = UNKNOWN

    def fold(expr: ast.expr) -> tuple[bool, object]:
        if isinstance(expr, ast.Name) and expr.id in env:
            return env[expr.id]
        return _module_constant(index, info.module, expr)

    value: tuple[bool, object] = UNKNOWN
    for stmt in node.body:
        target = _assigned_field(stmt, params[0])
        if target == attr:
            value = fold(stmt.value)  # type: ignore[attr-defined]
            continue
        base = _base_init_call(index, stmt, params[0], owner, info.module)
        if base is not None:
            base_class, call, skip = base
            passed = _arguments(call, fold)
            if passed is None:
                value = UNKNOWN
                continue
            if skip:  # ``Base.__init__(self, ...)``: its first argument is the receiver
                passed = {(k - 1 if isinstance(k, int) else k): v for k, v in passed.items() if k != 1}
            inherited = _built(index, base_class, attr, passed, depth + 1)
            if inherited[0] or _sets_field(index, base_class, attr):
                value = inherited
    return value


def _record_field(index: IndexView, class_qualname: str, attr: str, arguments: dict) -> tuple[bool, object]:
    """A record class's field (a ``@dataclass`` or named tuple: no ``__init__`` in the
    source, the language writes it from the fields, ``index.record_shape``): the argument
    passed for it, by position or by name, else its default when the class body gives it a
    literal (``zero_copy: bool = True``)."""
    shape = index.record_shape(class_qualname)
    if shape is None:
        return UNKNOWN
    fields, positional = shape
    if attr not in fields:
        return UNKNOWN
    position = fields.index(attr) + 1  # the arguments count from 1 (after the receiver)
    if position <= positional and position in arguments:
        return arguments[position]
    if attr in arguments:
        return arguments[attr]
    return index.class_constant(class_qualname, attr)


def _sets_field(index: IndexView, class_qualname: str, attr: str) -> bool:
    return any(attr in index.classes[name].stores for name in index.class_ancestors(class_qualname)
               if name in index.classes)


def _assigned_field(stmt: ast.stmt, receiver: str) -> str | None:
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else (
        stmt.target if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else None)
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == receiver:
        return target.attr
    return None


def _base_init_call(index: IndexView, stmt: ast.stmt, receiver: str, owner: str,
                    module: ModuleInfo) -> tuple[str, ast.Call, bool] | None:
    """``super().__init__(...)`` (the next class with an ``__init__``) or
    ``Base.__init__(self, ...)``: the class whose constructor it runs, the call, and whether
    the receiver is passed as its first argument."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
        return None
    if isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        bases = index.classes[owner].bases if owner in index.classes else []
        return (index.canonical(bases[0]), call, False) if len(bases) == 1 else None
    name = base_name(module, func.value)
    if name is not None and call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == receiver:
        return index.canonical(name), call, True
    return None


def _init_of(index: IndexView, class_qualname: str):
    """The ``__init__`` the class's objects run (its own or the nearest base's), with the
    class defining it; None when it is not the project's."""
    for name in index.class_ancestors(class_qualname):
        owner = index.classes.get(name)
        if owner is not None and "__init__" in owner.methods:
            info = index.functions.get(owner.methods["__init__"])
            return (info, name) if info is not None else None
    return None


def _stored_only_in_init(index: IndexView, class_qualname: str, attr: str) -> bool:
    for name in index.class_ancestors(class_qualname):
        owner = index.classes.get(name)
        if owner is not None and any(method != "__init__" for method, _ in owner.stores.get(attr, ())):
            return False
    return True


def _stored_in_branches(node: ast.AST, receiver: str, attr: str) -> bool:
    """Is ``self.<attr>`` set anywhere in ``__init__`` but by a top-level assignment?"""
    top = {id(stmt) for stmt in getattr(node, "body", ()) if not isinstance(stmt, ast.AugAssign)}
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and id(inner) not in top:
            targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
            if any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                   and t.value.id == receiver for t in targets):
                return True
    return False


def _module_constant(index: IndexView, module: ModuleInfo, node: ast.expr) -> tuple[bool, object]:
    def resolve(expr: ast.expr) -> tuple[bool, object]:
        dotted = dotted_name(expr)
        if dotted is None:
            return UNKNOWN
        if dotted in module.constants:
            return True, module.constants[dotted]
        name = base_name(module, expr)
        return index.constant(name) if name is not None else UNKNOWN

    def callee(expr: ast.expr) -> str | None:
        name = base_name(module, expr)
        return index.canonical(name) if name is not None else None

    return static_constant(node, resolve, callee)
