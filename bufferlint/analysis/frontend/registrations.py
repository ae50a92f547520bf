"""Handlers registered in an object's field: the callables a class's methods keep as elements
of one of its fields (``def add(self, fn): self.handlers.append(fn)``), read from the calls
of those methods anywhere in the project (``bus.add(forward)``, ``bus.add(Latest())``).

The method that calls the field's elements later (``for fn in self.handlers: fn(payload)``)
calls each of them: what a handler does with what it is given (queue a view for a thread,
keep it) happens there. The registering calls are usually in set-up code the analysis has no
reason to run (nothing borrowed passes there), so they are found from the syntax, as the
attributes' callables are (``ProjectIndex.attached_functions``): by the registering method's
name, the receiver's class not checked (a call of another class's method of that name
passing a project function registers it too: the answer is a superset).

Registries keyed by name (``cls.registry[name] = fn``) are read the same way, with the key
each registration gives: by a registering method called with the key and the function
(``Policies.add("owned", by_ownership)``), or by a decorator factory whose inner function
stores what it decorates (``@Policies.register("owned")``). A lookup by a constant key
(``Policies.registry["owned"]``, ``Policies.get("owned")``) is then the functions registered
under that key only (``registered_under``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from bufferlint.analysis.frontend.syntax import walk

if TYPE_CHECKING:
    from bufferlint.analysis.frontend.index import ClassInfo, ModuleInfo, ProjectIndex

# ``index.base_name``: the qualname a name or dotted attribute names in a module (passed in by
# the index, which imports this module)
Named = Callable[["ModuleInfo", ast.expr], "str | None"]

# Calls that put their argument into the container they are called on.
_ADDERS = {"append": 0, "add": 0, "appendleft": 0, "insert": 1}


def registrars(index: "ProjectIndex", class_qualname: str, attr: str) -> list[tuple[str, int, str]]:
    """The methods of the class (and its bases) that keep a parameter as an element of
    ``self.<attr>``: (method name, the parameter's position in a call on an object,
    the parameter's name)."""
    out: list[tuple[str, int, str]] = []
    for name in index.class_ancestors(class_qualname):
        owner = index.classes.get(name)
        if owner is not None:
            out.extend(_read_registrars(index, owner)[0].get(attr, ()))
    return out


def _read_registrars(index: "ProjectIndex", owner: "ClassInfo") -> tuple[dict[str, list[tuple[str, int, str]]],
                                                                          dict[str, list["KeyedRegistrar"]]]:
    """The class's own registering methods, both kinds read in one walk of each method (a
    class's methods are all indexed with it: read once, kept on the class). Field name ->
    the methods that add a parameter to it (``_registrars``), and those that store one under
    a key given by another (``_keyed_registrars``)."""
    if owner._registrars is not None and owner._keyed_registrars is not None:
        return owner._registrars, owner._keyed_registrars
    kept: dict[str, list[tuple[str, int, str]]] = {}
    keyed: dict[str, list[KeyedRegistrar]] = {}
    for method, qualname in sorted(owner.methods.items()):
        info = index.functions.get(qualname)
        if info is None or not info.binds_receiver or len(info.params) < 2:
            continue
        receiver, own = info.params[0], info.params[1:]
        found: list[tuple[str, str]] = []
        for inner in walk(info.node):
            if isinstance(inner, ast.Call):
                _kept_by_call(inner, receiver, own, found)
            elif isinstance(inner, ast.Assign) and len(inner.targets) == 1 and isinstance(inner.targets[0], ast.Subscript):
                target = inner.targets[0]
                _kept(_field(target.value, receiver), inner.value, own, found)
                stored = _keyed_registrar(info.node, method, receiver, own, target, inner.value)
                if stored is not None and stored[1] not in keyed.setdefault(stored[0], []):
                    keyed[stored[0]].append(stored[1])
        for attr, param in found:
            kept.setdefault(attr, []).append((method, info.params.index(param) - 1, param))
    owner._registrars, owner._keyed_registrars = kept, keyed
    return kept, keyed


def _kept_by_call(call: ast.Call, receiver: str, params: list[str], found: list[tuple[str, str]]) -> None:
    """``self.<field>.append(p)`` (``.add(p)``, ``.insert(i, p)``, ...)."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in _ADDERS:
        position = _ADDERS[call.func.attr]
        value = call.args[position] if len(call.args) > position else None
        _kept(_field(call.func.value, receiver), value, params, found)


def _kept(attr: str | None, value: ast.expr | None, params: list[str], found: list[tuple[str, str]]) -> None:
    """Record (field, parameter) when a parameter is what goes into the field."""
    if attr is not None and isinstance(value, ast.Name) and value.id in params and (attr, value.id) not in found:
        found.append((attr, value.id))


def _field(node: ast.expr, receiver: str) -> str | None:
    """``attr`` of ``self.attr`` (None for any other expression)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver:
        return node.attr
    return None


def registered_callables(index: "ProjectIndex", class_qualnames, attr: str, named: Named) -> frozenset[str]:
    """The project functions (qualnames) and the classes whose objects (their ``__call__``)
    the calls of the registrars of ``self.<attr>`` pass, for objects of these classes (and
    the functions registered under any key of a keyed registry in that field)."""
    out: set[str] = set()
    for class_qualname in sorted(class_qualnames):
        for method, position, param in registrars(index, class_qualname, attr):
            call = re.compile(r"\." + re.escape(method) + r"\s*\(")
            for module in list(index.modules.values()):
                if call.search(module.text):
                    out.update(_passed(index, module, method, position, param, named))
    out.update(qualname for _, qualname in keyed_registrations(index, class_qualnames, attr, named))
    return frozenset(out)


@dataclass(frozen=True)
class KeyedRegistrar:
    """A method storing into ``<receiver>.<field>[key] = value``: where its call gives the key
    (position after the receiver), and the value (a position; None when it is what the
    decorator the method returns decorates: ``@Policies.register("owned")``)."""
    method: str
    key: int
    value: int | None


def keyed_registrations(index: "ProjectIndex", class_qualnames, attr: str, named: Named) -> list[tuple[str, str]]:
    """(key, function qualname) for each project function registered under a constant key
    into ``<x>.<attr>`` of these classes (the receiver's class not checked, as above)."""
    out: list[tuple[str, str]] = []
    for class_qualname in sorted(class_qualnames):
        for name in index.class_ancestors(class_qualname):
            owner = index.classes.get(name)
            if owner is None:
                continue
            for registrar in _read_registrars(index, owner)[1].get(attr, ()):
                call = re.compile(r"\." + re.escape(registrar.method) + r"\s*\(")
                for module in list(index.modules.values()):
                    if call.search(module.text):
                        out.extend(p for p in _registered_keys(index, module, registrar, named) if p not in out)
    return out


def _keyed_registrar(method_node: ast.AST, method: str, receiver: str, own: list[str], target: ast.Subscript,
                     value: ast.expr) -> tuple[str, KeyedRegistrar] | None:
    """(field, registrar) for ``self.<field>[key] = value`` with ``key`` a parameter and
    ``value`` another one, or the function a nested decorator receives."""
    field = _field(target.value, receiver)
    key = target.slice
    if field is None or not (isinstance(key, ast.Name) and key.id in own and isinstance(value, ast.Name)):
        return None
    if value.id in own:
        return field, KeyedRegistrar(method, own.index(key.id), own.index(value.id))
    if _decorates(method_node, value.id):
        return field, KeyedRegistrar(method, own.index(key.id), None)
    return None


def _decorates(method: ast.AST, name: str) -> bool:
    """Is ``name`` the parameter of a function nested in ``method`` that ``method`` returns
    (a decorator factory: ``def register(cls, key): def add(fn): ...; return add``)?"""
    returned = {n.value.id for n in ast.walk(method) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    nested = [n for n in ast.walk(method) if isinstance(n, ast.FunctionDef) and n is not method]
    return any(n.name in returned and [a.arg for a in n.args.args][:1] == [name] for n in nested)


def _registered_keys(index: "ProjectIndex", module: "ModuleInfo", registrar: KeyedRegistrar,
                     named: Named) -> list[tuple[str, str]]:
    """(key, qualname) for the registrations by ``registrar`` in ``module``: module-level
    functions decorated with ``@<x>.<method>("key")``, or calls ``<x>.<method>("key", f)``."""
    out: list[tuple[str, str]] = []

    def keyed(call: ast.expr) -> str | None:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == registrar.method
                and len(call.args) > registrar.key and not any(isinstance(a, ast.Starred) for a in call.args)):
            return None
        key = call.args[registrar.key]
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None

    if registrar.value is None:
        for statement in module.tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in statement.decorator_list:
                    key = keyed(decorator)
                    qualname = named(module, ast.Name(id=statement.name)) if key is not None else None
                    if key is not None and qualname is not None and index.canonical(qualname) in index.functions:
                        out.append((key, index.canonical(qualname)))
        return out
    for node in walk(module.tree):
        key = keyed(node) if isinstance(node, ast.Call) else None
        if key is None or not isinstance(node, ast.Call) or len(node.args) <= registrar.value:
            continue
        qualname = named(module, node.args[registrar.value])
        if qualname is not None and index.canonical(qualname) in index.functions:
            out.append((key, index.canonical(qualname)))
    return out


def _passed(index: "ProjectIndex", module: "ModuleInfo", method: str, position: int, param: str,
            named: Named) -> set[str]:
    """What the calls ``x.<method>(...)`` in ``module`` pass at the parameter: a project
    function named there, or an object of a project class built there (``Latest()``)."""
    out: set[str] = set()
    for node in walk(module.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method):
            continue
        argument = next((k.value for k in node.keywords if k.arg == param), None)
        if argument is None and len(node.args) > position and not any(
                isinstance(a, ast.Starred) for a in node.args[: position + 1]):
            argument = node.args[position]
        if argument is None:
            continue
        built = isinstance(argument, ast.Call)
        name = named(module, argument.func if isinstance(argument, ast.Call) else argument)
        if name is None:
            continue
        qualname = index.canonical(name)
        if built and qualname in index.classes and index.class_method(qualname, "__call__"):
            out.add(qualname)
        elif not built and qualname in index.functions and index.functions[qualname].kind == "function":
            out.add(qualname)
    return out

