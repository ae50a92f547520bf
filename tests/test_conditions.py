"""Conditions on what a caller passes (``analysis/domain/conditions.py``): each call decides
a callee's conditions with the constant it passes, the parameter's default when it passes
none, the caller's own parameter when it passes that on, and may-hold otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.analysis.domain.conditions import (
    CAPTURED,
    EQ,
    FALSY,
    IS,
    IS_NOT,
    MATCHES,
    MAX_CONDITIONS,
    NE,
    TRUTHY,
    ParamTest,
    bounded,
    captured_variable,
    decide_at_call,
    exact_parameter,
    holds_by_default,
)
from bufferlint.analysis.domain.values import ParamRef, Value, const, join, view_of
from bufferlint.packs import builtin_vocabulary

NOT_CLONED = ParamTest(5, FALSY, None, True, True)  # ``clone_tensors=True`` tested false
PASSED_ON = Value(leaves=frozenset({ParamRef(4)}), param=4)


def test_each_test_decides_a_constant() -> None:
    assert ParamTest(0, TRUTHY).decide(1) and not ParamTest(0, TRUTHY).decide("")
    assert ParamTest(0, FALSY).decide(None) and not ParamTest(0, FALSY).decide(True)
    assert ParamTest(0, IS, None).decide(None) and not ParamTest(0, IS, None).decide(0)
    assert ParamTest(0, EQ, "copy").decide("copy") and ParamTest(0, NE, "copy").decide("view")
    assert ParamTest(0, MATCHES, "cpu*").decide("cpu:0") and not ParamTest(0, MATCHES, "cpu*").decide("cuda")


def test_a_call_passing_nothing_is_decided_by_the_default() -> None:
    assert decide_at_call({NOT_CLONED}, {}, {}) is None
    assert decide_at_call({ParamTest(5, FALSY, None, True, False)}, {}, {}) == frozenset()


def test_a_constant_argument_decides() -> None:
    assert decide_at_call({NOT_CLONED}, {5: const(True)}, {}) is None
    assert decide_at_call({NOT_CLONED}, {5: const(False)}, {}) == frozenset()


def test_a_parameter_passed_on_becomes_the_callers_condition_with_its_default() -> None:
    left = decide_at_call({NOT_CLONED}, {5: PASSED_ON}, {4: True})
    assert left == {ParamTest(4, FALSY, None, True, True)}
    assert decide_at_call(left, {}, {}) is None  # the caller's caller leaves it to True


def test_an_argument_not_known_may_hold_except_a_device() -> None:
    assert decide_at_call({NOT_CLONED}, {5: Value()}, {}) == frozenset()
    assert decide_at_call({NOT_CLONED}, {5: view_of(PASSED_ON)}, {}) == frozenset()
    assert decide_at_call({ParamTest(1, MATCHES, "cpu*")}, {1: Value()}, {}) is None
    assert not holds_by_default({ParamTest(1, MATCHES, "cpu*")})
    assert holds_by_default({ParamTest(1, MATCHES, "cpu*", True, "cpu")})


def test_only_the_parameter_itself_on_every_path_is_passed_on() -> None:
    assert exact_parameter(PASSED_ON) == 4
    assert exact_parameter(join(PASSED_ON, Value())) is None  # reassigned on some path
    assert exact_parameter(view_of(PASSED_ON)) is None


def test_a_closure_variable_is_decided_only_where_its_enclosing_call_binds_it() -> None:
    """A nested function's closure variable holds no object, but a condition on it is one on
    ``CAPTURED + k``: a call inside the enclosing call binds it (to a constant, or to the
    enclosing function's parameter passed on); a call that binds nothing leaves it not known."""
    device = captured_variable(0)
    assert exact_parameter(device) == CAPTURED and not device.leaves
    assert exact_parameter(Value(param=2)) is None  # a real parameter's value always has its leaf
    on_host = ParamTest(CAPTURED, MATCHES, "cpu*")
    assert decide_at_call([on_host], {CAPTURED: const("cpu")}, {}) == frozenset()
    assert decide_at_call([on_host], {CAPTURED: const("cuda")}, {}) is None
    assert decide_at_call([on_host], {CAPTURED: PASSED_ON}, {}) == {ParamTest(4, MATCHES, "cpu*")}
    assert decide_at_call([on_host], {}, {}) is None  # not bound: a device not known


def test_an_argument_testing_the_callers_parameter_becomes_that_test() -> None:
    """``needs_key_filter=key_filter is not None``: the callee's test of the flag's truth is
    the caller's test of ``key_filter`` (with the caller's default), or its negation."""
    filtered = ParamTest(2, IS_NOT, None, True, None)
    needs = Value(truth=filtered)
    assert decide_at_call({ParamTest(1, TRUTHY, None, True, False)}, {1: needs}, {}) == {filtered}
    assert decide_at_call({ParamTest(1, FALSY, None, True, False)}, {1: needs}, {}) == {ParamTest(2, IS, None, True, None)}
    assert decide_at_call({ParamTest(1, IS, None, True, False)}, {1: needs}, {}) == frozenset()  # not a truth test: may hold


def test_an_argument_surely_not_none_decides_an_is_none_test() -> None:
    method = Value(method="_wanted", not_none=True)
    assert decide_at_call({ParamTest(2, IS, None, True, None)}, {2: method}, {}) is None
    assert decide_at_call({ParamTest(2, IS_NOT, None, True, None)}, {2: method}, {}) == frozenset()
    assert decide_at_call({ParamTest(2, IS, None, True, None)}, {2: Value(method="kept")}, {}) == frozenset()


def test_the_conditions_of_a_fact_are_bounded_the_same_whatever_the_order() -> None:
    tests = frozenset(ParamTest(i, TRUTHY) for i in range(MAX_CONDITIONS + 3))
    kept, cut = bounded(tests)
    assert cut and len(kept) == MAX_CONDITIONS and kept == bounded(frozenset(reversed(list(tests))))[0]
    assert bounded(frozenset(list(tests)[:2])) == (frozenset(list(tests)[:2]), False)


@pytest.mark.parametrize("submitted", [True, False])
def test_a_fact_cut_to_the_bound_is_a_notice_with_a_finding_through_it(tmp_path: Path, submitted: bool) -> None:
    """A yield under more tests of the parameters than one fact keeps: the analysis says so
    when a finding goes through the function (the unchecked tests can only let more through,
    so with no finding there the notice would warn of nothing)."""
    flags = [f"f{i}" for i in range(MAX_CONDITIONS + 2)]
    tests = " and ".join(f"not {flag}" for flag in flags)
    loader = (
        "\n\ndef load(pool, files, fn):\n"
        "    for name, tensor in stream(files):\n"
        "        pool.submit(fn, tensor)\n"
    )
    (tmp_path / "many.py").write_text(
        "from runai_model_streamer import SafetensorsStreamer\n\n\n"
        f"def stream(files, {', '.join(f'{flag}=False' for flag in flags)}):\n"
        "    with SafetensorsStreamer() as streamer:\n"
        "        streamer.stream_files(files)\n"
        "        for name, tensor in streamer.get_tensors():\n"
        f"            if {tests}:\n"
        "                yield name, tensor\n" + (loader if submitted else ""),
        encoding="utf-8",
    )
    files = [tmp_path / "many.py"]
    result = analyze_project(tmp_path, files, files, builtin_vocabulary())
    told = [notice for notice in result.notices if "many:stream" in notice and f"more than {MAX_CONDITIONS} conditions" in notice]
    assert [f.rule for f in result.findings] == (["BL001"] if submitted else [])
    assert len(told) == (1 if submitted else 0)
