"""Guards by evaluation (``analysis/transfer/guard_eval.py``): the verdict of a guard on a
marked value, path by path, and what an undecided guard does to the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from marked_stream import MARKED_STREAM, analyse_module

HEAD = MARKED_STREAM + '''\
def submit_maybe(executor, use_async, fn, *args):
    if use_async:
        executor.submit(fn, *args)
    else:
        fn(*args)


def load(executor, fn, tensors):
    for name, weight in stream(tensors):
        submit_maybe(executor, guard(weight), fn, weight)


'''


def analyse(tmp_path: Path, guard: str):
    return analyse_module(tmp_path, HEAD + guard)


def rules(result) -> list[str]:
    return sorted(f.rule for f in result.findings)


@pytest.mark.parametrize("guard", [
    # raising for a marked value keeps it off the async path
    "def guard(w):\n    if getattr(w, MARKER, False):\n        raise ValueError('borrowed')\n    return w.is_cpu\n",
    # a conditional expression and a comparison with a folded constant
    "def guard(w):\n    return False if getattr(w, MARKERS[0], None) is True else w.is_cpu\n",
    # a match on the value's attribute, with a class pattern's keyword
    "def guard(w):\n    match w:\n        case object(_sglang_runai_streamer_tensor=True):\n            return False\n    return True\n",
    # the marker read out of the instance dictionary (``setattr`` puts it there)
    "def guard(w):\n    return not vars(w).get(MARKER)\n",
    "def guard(w):\n    return MARKER not in w.__dict__ and w.is_cpu\n",
    # a generator bound to a name, consumed by any()
    "def guard(w):\n    marked = (getattr(w, m, False) for m in MARKERS)\n    return not any(marked)\n",
    # a loop with else, and hasattr
    "def guard(w):\n    for m in MARKERS:\n        if hasattr(w, m):\n            break\n    else:\n        return w.is_cpu\n    return False\n",
])
def test_guards_that_reject_marked_values_are_silent(tmp_path: Path, guard: str) -> None:
    result = analyse(tmp_path, guard)
    assert rules(result) == []
    assert result.notices == []


@pytest.mark.parametrize("guard", [
    "def guard(w):\n    if getattr(w, MARKER, False) and w.is_cuda:\n        return False\n    return True\n",
    "def guard(w):\n    for m in ('_pinned',):\n        if getattr(w, m, False):\n            return False\n    return w.is_cpu\n",
])
def test_guards_that_let_a_marked_value_through_are_bl002(tmp_path: Path, guard: str) -> None:
    """One finding per bug: the guard's BL002 stands for the call it decides (a step of its trace)."""
    result = analyse(tmp_path, guard)
    assert rules(result) == ["BL002"]
    assert [finding.rule for finding, _ in result.covered] == ["BL001"]


@pytest.mark.parametrize("guard", [
    "def guard(w):\n    return not any(getattr(w, n, False) for n in w.names())\n",
    # the instance dictionary held in a name: what it holds is not followed
    "def guard(w):\n    attrs = vars(w)\n    return not attrs.get(MARKER)\n",
])
def test_an_undecided_guard_is_a_notice_and_guards_nothing(tmp_path: Path, guard: str) -> None:
    """Unknown neither raises an alarm (no BL002) nor silences one (the BL001 stays)."""
    result = analyse(tmp_path, guard)
    assert rules(result) == ["BL001"]
    assert len(result.notices) == 1 and "could not decide whether the guard" in result.notices[0]


@pytest.mark.parametrize(("guard", "expected"), [
    # the marker is the first element of a tuple subject: case (True, _) rejects it
    ("def guard(w):\n    match (getattr(w, MARKER, False), w.device.type):\n        case (True, _):\n"
     "            return False\n        case (_, 'cpu'):\n            return True\n        case _:\n            return False\n", []),
    # the device decides first: a marked host value matches case (True, _) and is approved
    ("def guard(w):\n    match (w.is_cpu, getattr(w, MARKER, False)):\n        case (True, _):\n"
     "            return True\n        case (_, True):\n            return False\n    return True\n", ["BL002"]),
    # a pattern of another length never matches the two-element subject
    ("def guard(w):\n    match (getattr(w, MARKER, False), w.is_cpu):\n        case (True,):\n"
     "            return False\n    return True\n", ["BL002"]),
])
def test_a_match_on_a_tuple_is_decided_element_by_element(tmp_path: Path, guard: str, expected: list[str]) -> None:
    result = analyse(tmp_path, guard)
    assert rules(result) == expected
    assert result.notices == []
