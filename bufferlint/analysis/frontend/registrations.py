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
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Callable

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
            if owner._registrars is None:  # a class's methods are all indexed with it: read once
                owner._registrars = own_registrars(index, owner)
            out.extend(owner._registrars.get(attr, ()))
    return out


def own_registrars(index: "ProjectIndex", owner: "ClassInfo") -> dict[str, list[tuple[str, int, str]]]:
    """Field name -> the class's own methods that add a parameter to it."""
    out: dict[str, list[tuple[str, int, str]]] = {}
    for method, qualname in sorted(owner.methods.items()):
        info = index.functions.get(qualname)
        if info is None or not info.binds_receiver or len(info.params) < 2:
            continue
        for attr, param in _kept_parameters(info.node, info.params[0], set(info.params[1:])):
            out.setdefault(attr, []).append((method, info.params.index(param) - 1, param))
    return out


def _kept_parameters(node: ast.AST, receiver: str, params: set[str]) -> list[tuple[str, str]]:
    """(field, parameter) for each parameter the method's body adds to ``self.<field>``
    (``.append(p)``, ``.add(p)``, ``.insert(i, p)``, ``self.<field>[k] = p``)."""
    found: list[tuple[str, str]] = []
    for inner in ast.walk(node):
        value: ast.expr | None = None
        attr = None
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in _ADDERS:
            position = _ADDERS[inner.func.attr]
            attr = _field(inner.func.value, receiver)
            if len(inner.args) > position:
                value = inner.args[position]
        elif isinstance(inner, ast.Assign) and len(inner.targets) == 1 and isinstance(inner.targets[0], ast.Subscript):
            attr = _field(inner.targets[0].value, receiver)
            value = inner.value
        if attr is not None and isinstance(value, ast.Name) and value.id in params and (attr, value.id) not in found:
            found.append((attr, value.id))
    return found


def _field(node: ast.expr, receiver: str) -> str | None:
    """``attr`` of ``self.attr`` (None for any other expression)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver:
        return node.attr
    return None


def registered_callables(index: "ProjectIndex", class_qualnames, attr: str, named: Named) -> frozenset[str]:
    """The project functions (qualnames) and the classes whose objects (their ``__call__``)
    the calls of the registrars of ``self.<attr>`` pass, for objects of these classes."""
    out: set[str] = set()
    for class_qualname in sorted(class_qualnames):
        for method, position, param in registrars(index, class_qualname, attr):
            call = re.compile(r"\." + re.escape(method) + r"\s*\(")
            for module in list(index.modules.values()):
                if call.search(module.text):
                    out.update(_passed(index, module, method, position, param, named))
    return frozenset(out)


def _passed(index: "ProjectIndex", module: "ModuleInfo", method: str, position: int, param: str,
            named: Named) -> set[str]:
    """What the calls ``x.<method>(...)`` in ``module`` pass at the parameter: a project
    function named there, or an object of a project class built there (``Latest()``)."""
    out: set[str] = set()
    for node in ast.walk(module.tree):
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

