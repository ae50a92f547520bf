"""``functools.singledispatch``: the overloads a dispatcher runs, read from the syntax.

A call of the dispatcher (``to_host(batch)``) runs the overload registered for its
argument's class (``@to_host.register`` with an annotated first parameter, or
``@to_host.register(dict)``), or the dispatcher's own body when none is. The analysis does
not know the argument's class, so a call reaches every one of them, and the call's effects
are the union of theirs (``call_project.through_decorators``); except for an argument made
only of borrowed values of one kind whose classes the packs name (``types``, ``instance-of``):
it runs the one overload registered for such a class (``call_project._dispatched_for_kind``). The overloads are usually all
named ``_``: each is its own function of the index all the same (``overload_qualname``),
since the name ``_`` rebound by the next ``def`` does not take the registered function away.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from bufferlint.analysis.frontend.index import ModuleInfo

# ``index.base_name``: the qualname a name or dotted attribute names in a module (passed in by
# the index, which imports this module)
Named = Callable[["ModuleInfo", ast.expr], "str | None"]

DISPATCHERS = frozenset({"singledispatch"})


def registered_on(module: "ModuleInfo", node: ast.AST, named: Named) -> str | None:
    """The dispatcher a definition is registered on (``@to_host.register``,
    ``@to_host.register(dict)``), as ``module`` names it (None: no such decorator)."""
    for decorator in getattr(node, "decorator_list", ()):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr == "register":
            return named(module, target.value)
    return None


def overload_qualname(plain: str, taken: Callable[[str], bool]) -> str:
    """A registered overload's qualname: its own (``pkg.mod._``) unless an earlier
    definition of the module took it, then numbered (``pkg.mod._.<overload1>``)."""
    if not taken(plain):
        return plain
    number = 1
    while taken(f"{plain}.<overload{number}>"):
        number += 1
    return f"{plain}.<overload{number}>"


def is_dispatcher(node: ast.AST) -> bool:
    """Is the definition a single-dispatch generic function (``@functools.singledispatch``)?"""
    for decorator in getattr(node, "decorator_list", ()):
        name = decorator.id if isinstance(decorator, ast.Name) else getattr(decorator, "attr", "")
        if name in DISPATCHERS:
            return True
    return False
