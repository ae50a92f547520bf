"""Functions a class holds as static methods (``guard = staticmethod(f)``): what the index
resolves ``Class.attr`` to, what ``self.attr()`` in a base class may run (``Program.overrides_in``),
and which files the text scan says define the name. Python itself is the reference: the
source below is executed, and the index must agree with what each lookup runs."""

from __future__ import annotations

import ast
from pathlib import Path

from bufferlint.analysis.frontend.index import ModuleInfo
from bufferlint.analysis.frontend.textscan import defined_names
from bufferlint.analysis.whole.program import Program
from bufferlint.packs import Vocabulary

SOURCE = '''\
def check(w):
    return "check"


def other(w):
    return "other"


class Base:
    guard = staticmethod(check)
    plain = check  # a plain function attribute: an instance binds it to itself
    LIMIT = 3

    def method(self, w):
        return "method"

    wrapped = staticmethod(method)  # a function of the class body, not a module function


class Held(Base):
    guard = staticmethod(other)
    LIMIT = staticmethod(check)


class Defined(Base):
    @staticmethod
    def guard(w):
        return "defined"


class Rebound(Base):
    guard = staticmethod(other)

    def guard(self, w):  # the later binding wins
        return "rebound"


class Inherits(Held):
    pass
'''


def _program() -> Program:
    program = Program(Path("/p"), Vocabulary())
    program.index.add_module(ModuleInfo("pkg", Path("/p/pkg.py"), ast.parse(SOURCE), SOURCE, False))
    program.module_names.add("pkg")
    return program


def _run(class_name: str, attr: str) -> str:
    namespace: dict = {}
    exec(compile(SOURCE, "pkg.py", "exec"), namespace)
    return getattr(namespace[class_name], attr)("w")


def test_a_held_static_method_resolves_to_its_function_as_python_calls_it() -> None:
    index = _program().index
    for class_name, expected in (("Base", "pkg.check"), ("Held", "pkg.other"), ("Inherits", "pkg.other"),
                                 ("Defined", "pkg.Defined.guard")):
        assert index.class_method(f"pkg.{class_name}", "guard") == expected
        assert _run(class_name, "guard") == index.functions[expected].node.body[0].value.value


def test_only_staticmethod_of_a_project_function_is_held() -> None:
    index = _program().index
    assert index.class_method("pkg.Base", "plain") is None  # bound to the instance when called on one
    assert index.class_method("pkg.Base", "wrapped") is None  # not resolved: the index names no such function
    assert index.class_method("pkg.Rebound", "guard") == "pkg.Rebound.guard"
    assert index.class_constant("pkg.Held", "LIMIT") == (False, None)  # the held function hides the base's literal
    assert index.class_constant("pkg.Base", "LIMIT") == (True, 3)


def test_self_attr_in_a_base_class_reaches_every_subclass_binding_once() -> None:
    program = _program()
    assert program.overrides_in("pkg.Base", "guard") == ["pkg.Defined.guard", "pkg.other", "pkg.Rebound.guard"]
    assert program.overrides_in("pkg.Held", "guard") == []  # Inherits runs Held's own
    assert program.guard_dispatch("pkg.Held.guard") == ("pkg.other", [])
    assert program.guard_dispatch("pkg.check") == ("pkg.check", [])  # a function, not a method: no overrides


def test_a_held_static_method_defines_its_name_for_the_file_selection() -> None:
    names = defined_names(SOURCE.encode())
    assert {"guard", "wrapped", "LIMIT"} <= set(names)
    assert "plain" not in names
