"""``values.quick_init``: the fast constructor of the analysis's frozen records builds what
the dataclass's own would (positions, keywords, defaults), and refuses the classes it
cannot serve."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from bufferlint.analysis.domain.values import Borrow, Value, quick_init


@dataclass(frozen=True)
class _Plain:
    a: int
    b: str = "x"
    fields: tuple = ()


@quick_init
@dataclass(frozen=True)
class _Quick:  # the same fields; ``fields`` is a name the generated code must not shadow
    a: int
    b: str = "x"
    fields: tuple = ()


def test_it_builds_what_the_generated_constructor_builds() -> None:
    for args, kwargs in [((1,), {}), ((1, "y"), {}), ((1,), {"fields": (2,)}), ((), {"a": 3, "b": "z"})]:
        assert vars(_Quick(*args, **kwargs)) == vars(_Plain(*args, **kwargs))
    with pytest.raises(TypeError):
        _Quick()  # a required field is still required
    with pytest.raises(AttributeError):
        _Quick(1).a = 2  # still frozen


def test_the_records_keep_their_equality_and_defaults() -> None:
    borrow = Borrow(("m.f", 1, 0), False)
    assert borrow == Borrow(("m.f", 1, 0), False, trace=())  # the trace takes no part in equality
    assert Value() == Value(leaves=frozenset())
    assert Value(leaves=frozenset({borrow})).leaves == frozenset({borrow})


@pytest.mark.parametrize("extra", [
    {"__post_init__": lambda self: None},
    {"__annotations__": {"a": "list"}, "a": field(default_factory=list)},
])
def test_a_class_it_cannot_serve_is_refused(extra: dict) -> None:
    namespace = {"__annotations__": {"a": "int"}, **extra}
    cls = dataclass(frozen=True)(type("_Refused", (), namespace))
    with pytest.raises(TypeError, match="needs the generated constructor"):
        quick_init(cls)
