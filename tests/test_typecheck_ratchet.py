"""The type-check ratchet (scripts/typecheck.py) only lets counts go down: a module above its
baseline, a new module with errors or a higher total fails, and ``--update`` never records a
rise. mypy itself runs in .ci/run (half a minute); here the decisions are tested on its
output format, and the committed baseline on the package's modules."""

from __future__ import annotations

import importlib.util
import json

import pytest

from conftest import REPO

_spec = importlib.util.spec_from_file_location("typecheck", REPO / "scripts" / "typecheck.py")
assert _spec is not None and _spec.loader is not None
typecheck = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(typecheck)

REPORT = """\
bufferlint/a.py:3: error: Item "None" of "X | None" has no attribute "y"  [union-attr]
bufferlint/a.py:9: note: See https://mypy.readthedocs.io
bufferlint/pkg/__init__.py:1: error: Name "z" is not defined  [name-defined]
bufferlint/a.py:12: error: Incompatible return value type (got "int", expected "str")  [return-value]
"""
BASELINE = {
    "bufferlint.a": sorted([
        'Item "None" of "X | None" has no attribute "y"  [union-attr]',
        'Incompatible return value type (got "int", expected "str")  [return-value]',
    ]),
    "bufferlint.pkg": ['Name "z" is not defined  [name-defined]'],
    "bufferlint.b": [],
}


def test_errors_are_counted_per_module_without_lines_or_notes() -> None:
    found = typecheck.errors_by_module(REPORT, ["bufferlint.a", "bufferlint.b", "bufferlint.pkg"])
    assert found == BASELINE


def test_the_same_counts_pass_and_lower_ones_are_offered_for_recording() -> None:
    assert typecheck.ratchet(BASELINE, BASELINE, update=False)[:2] == (0, "typecheck: 3 mypy error(s), baseline 3")
    lower = {**BASELINE, "bufferlint.pkg": []}
    status, message, write = typecheck.ratchet(BASELINE, lower, update=False)
    assert (status, write) == (0, False) and "lower in 1 module(s)" in message
    assert typecheck.ratchet(BASELINE, lower, update=True) == (0, "typecheck: baseline updated: 3 -> 2 error(s)", True)


def test_a_module_above_its_baseline_fails_naming_the_new_error() -> None:
    worse = {**BASELINE, "bufferlint.b": ['Missing return statement  [return]'],
             "bufferlint.pkg": []}  # the total stays 3: per module counts, not only the sum
    status, message, write = typecheck.ratchet(BASELINE, worse, update=False)
    assert status == 1 and not write
    assert "bufferlint.b: 1 error(s), the baseline allows 0; new:\n    Missing return statement  [return]" in message
    assert "total" not in message
    assert typecheck.ratchet(BASELINE, worse, update=True)[0::2] == (1, False), "--update never records a rise"


def test_a_new_module_with_errors_fails_unless_recorded_as_moved_code() -> None:
    moved = {"bufferlint.a": [], "bufferlint.b": [], "bufferlint.pkg": BASELINE["bufferlint.pkg"],
             "bufferlint.c": BASELINE["bufferlint.a"]}
    status, message, _ = typecheck.ratchet(BASELINE, moved, update=False)
    assert status == 1 and "bufferlint.c: a new module with 2 error(s)" in message
    assert typecheck.ratchet(BASELINE, moved, update=True)[0::2] == (0, True)
    grown = {**moved, "bufferlint.c": [*BASELINE["bufferlint.a"], "Another  [misc]"]}
    status, message, write = typecheck.ratchet(BASELINE, grown, update=True)
    assert (status, write) == (1, False) and "the total rose from 3 to 4" in message


def test_the_committed_baseline_is_well_formed() -> None:
    baseline = json.loads((REPO / ".ci" / "typecheck-baseline.json").read_text(encoding="utf-8"))
    assert baseline["total"] == sum(len(messages) for messages in baseline["modules"].values())
    assert all(name.startswith("bufferlint") for name in baseline["modules"])


@pytest.mark.parametrize("path, module", [("bufferlint/x/y.py", "bufferlint.x.y"),
                                          ("bufferlint/x/__init__.py", "bufferlint.x")])
def test_module_names(path: str, module: str) -> None:
    assert typecheck._module_of(path) == module
