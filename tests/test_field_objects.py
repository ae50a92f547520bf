"""Which object a field holds (``ProjectIndex.field_objects``): the stores the class's methods
make into it, each an identity when it constructs the object anew, else not known (empty),
which the engine reads as "any object of the class" (``values.same_object``)."""
import ast
from pathlib import Path

import pytest

from bufferlint.analysis.domain.values import Borrow, Value, meets, of_object, same_object
from bufferlint.analysis.frontend.index import ModuleInfo, ProjectIndex

SOURCE = '''
class Buf:
    def __init__(self, n):
        self.cpu = n


class Runner:
    shared_at_class_level = Buf(1)

    def __init__(self, n):
        self.a = Buf(n)
        self.b = Buf(n)
        self.made = self._make(n)
        self.made_too = self._make(n)
        self.kept = self._keep()
        self.alias = self.a
        self.late = None
        self.pair, self.other = Buf(n), Buf(n)

    def reset(self, n):
        self.late = Buf(n)

    def _make(self, n) -> Buf:
        return Buf(n)

    def _keep(self) -> Buf:
        return self.a


class Rebinding(Runner):
    def swap(self):
        self.b = self.a
'''


@pytest.fixture(scope="module")
def index() -> ProjectIndex:
    found = ProjectIndex()
    found.add_module(ModuleInfo("pkg", Path("/p/pkg.py"), ast.parse(SOURCE), SOURCE, False))
    return found


def test_a_field_constructed_by_its_store_is_that_store(index: ProjectIndex) -> None:
    assert index.field_objects({"pkg.Runner"}, "a") == {("pkg.Runner", "__init__", "a", 0)}


def test_a_method_returning_a_construction_makes_one_per_store(index: ProjectIndex) -> None:
    made, too = index.field_objects({"pkg.Runner"}, "made"), index.field_objects({"pkg.Runner"}, "made_too")
    assert made and too and made.isdisjoint(too)


def test_a_store_of_none_is_no_object(index: ProjectIndex) -> None:
    assert index.field_objects({"pkg.Runner"}, "late") == {("pkg.Runner", "reset", "late", 0)}


@pytest.mark.parametrize("attr", ["alias", "kept", "pair", "shared_at_class_level", "cpu_never_stored"])
def test_any_other_store_is_not_known(index: ProjectIndex, attr: str) -> None:
    """Another field's object, a method handing back a kept one, an unpacked element, a
    class attribute, a field no method stores."""
    assert index.field_objects({"pkg.Runner"}, attr) == frozenset()


def test_a_subclass_storing_another_object_makes_the_field_not_known(index: ProjectIndex) -> None:
    """``Rebinding.swap`` may run on a ``Runner`` typed object: ``b`` may then be ``a``."""
    assert index.field_objects({"pkg.Runner"}, "b") == frozenset()
    assert index.field_objects({"pkg.Rebinding"}, "b") == frozenset()


def test_buffers_of_two_objects_do_not_meet_and_one_not_known_meets_both() -> None:
    buffer = Borrow(("pkg.Buf.__init__", 4, 19), pinned=True)
    a, b = frozenset({("x", "f", "a", 0)}), frozenset({("x", "f", "b", 0)})
    of_a, of_b = (next(iter(of_object(Value(leaves=frozenset({buffer})), o).leaves)) for o in (a, b))
    assert not meets(of_a, of_b)
    assert meets(of_a, buffer) and meets(buffer, of_b)
    assert same_object(a, a | b) and not same_object(a, b) and same_object(frozenset(), a)
