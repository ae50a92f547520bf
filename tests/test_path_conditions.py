"""Issue 29's path conditions: membership of a module tuple of devices decided soundly
(a device folded to its string may be either form), the receiver's class deciding what a
subclass's override hands back, and dicts of keyword arguments whose keys are known."""

from __future__ import annotations

import ast

from bufferlint.analysis.domain.conditions import IN, INSTANCE, NOT_IN, ParamTest, decide_at_call, may_be_instance, membership
from bufferlint.analysis.domain.values import ParamRef, Value, const, join
from bufferlint.analysis.frontend.constants import DeviceObject
from bufferlint.analysis.transfer.keyword_maps import keyword_map_names

BOTH = ("cpu", DeviceObject("cpu"))
ANCESTORS = {
    "m.Loop": ["m.Loop"],
    "m.Training": ["m.Training", "m.Loop"],
    "m.Prediction": ["m.Prediction", "m.Loop"],
    "m.BatchPrediction": ["m.BatchPrediction", "m.Prediction", "m.Loop"],
}


def ancestors(name: str) -> list[str]:
    return ANCESTORS.get(name, [name])


def test_a_device_string_is_surely_in_a_tuple_only_in_both_forms() -> None:
    assert membership("cpu", BOTH) is True
    assert membership("cuda:0", BOTH) is False
    assert membership("cpu", ("cpu",)) is None  # torch.device("cpu") is not in it
    assert membership("cpu", (DeviceObject("cpu"),)) is None  # "cpu" is not in it
    assert membership(1, (True,)) is True  # as Python compares them
    assert not ParamTest(0, NOT_IN, BOTH).decide("cpu") and ParamTest(0, NOT_IN, BOTH).decide("cuda")
    assert ParamTest(0, NOT_IN, ("cpu",)).decide("cpu") and ParamTest(0, IN, ("cpu",)).decide("cpu")


def test_the_receivers_class_decides_an_overrides_condition() -> None:
    test = ParamTest(0, INSTANCE, "m.Prediction")
    assert not may_be_instance(Value(types=frozenset({"m.Training"})), "m.Prediction", ancestors)
    assert may_be_instance(Value(types=frozenset({"m.BatchPrediction"})), "m.Prediction", ancestors)
    assert may_be_instance(Value(declared=frozenset({"m.Loop"})), "m.Prediction", ancestors)  # a subclass may be
    assert may_be_instance(Value(), "m.Prediction", ancestors)  # nothing known
    assert decide_at_call([test], {0: Value(declared=frozenset({"m.Training"}))}, {}, ancestors) is None
    assert decide_at_call([test], {0: Value(declared=frozenset({"m.Training"}))}, {}) == frozenset()  # no ancestors: may
    own = Value(leaves=frozenset({ParamRef(0)}), types=frozenset({"m.Loop"}), param=0)
    assert decide_at_call([test], {0: own}, {}, ancestors) == frozenset({test})  # ``self`` passed on


def test_keyword_dicts_join_their_entries_and_forget_unknown_keys() -> None:
    flag = ParamTest(1, NOT_IN, BOTH)
    empty = Value(keys=())
    flagged = Value(keys=(("non_blocking", const(True), frozenset({flag})),))
    assert join(empty, flagged).keys == flagged.keys
    assert join(flagged, Value()).keys is None


def test_a_name_read_only_as_keyword_arguments_keeps_its_keys() -> None:
    tree = ast.parse(
        "def f(t, d, extra):\n"
        "    kwargs = {}\n"
        "    kwargs['non_blocking'] = True\n"
        "    if 'x' in kwargs: pass\n"
        "    handed = {}\n"
        "    g(handed)\n"
        "    updated = {}\n"
        "    updated.update(extra)\n"
        "    grown = {}\n"
        "    grown |= extra\n"
        "    captured = {}\n"
        "    h = lambda: captured\n"
        "    return t.to(d, **kwargs, **handed, **updated, **grown, **captured)\n"
    )
    assert keyword_map_names(tree.body[0]) & {"kwargs", "handed", "updated", "grown", "captured"} == {"kwargs"}
