"""Parts of a pinned buffer (``regions``): what a subscript names and when two parts are
provably disjoint; any doubt is an overlap (BL006 then reports)."""

from __future__ import annotations

import ast

import pytest

from bufferlint.analysis.domain.regions import constant_part, disjoint, region_of, stable_names


def _function(source: str) -> ast.AST:
    return ast.parse(source).body[0]


def _region(index: str, stable: frozenset[str] = frozenset({"n", "m"})) -> tuple | None:
    node = ast.parse(f"buf[{index}]", mode="eval").body
    assert isinstance(node, ast.Subscript)
    return region_of(node.slice, stable)


def test_stable_names_are_parameters_never_rebound_and_locals_bound_once_outside_loops() -> None:
    func = _function(
        "def f(a, b, *c, d):\n"
        "    b = 1\n"
        "    x = a + 1\n"
        "    y = 2\n"
        "    y = 3\n"
        "    for i in c:\n"
        "        z = i\n"
        "    w = 0\n"
        "    w += 1\n"
        "    def g():\n"
        "        nonlocal x\n"
    )
    assert stable_names(func) == frozenset({"a", "c", "d", "g"})


@pytest.mark.parametrize(
    ("first", "second", "apart"),
    [
        (":8", "8:", True),
        (":8", "4:12", False),
        (":n", "n:", True),
        (":n", "m:", False),
        ("n:", ":n", True),
        ("0", "1", True),
        ("0", "0", False),
        (":, :n", ":, n:", True),
        ("-4:", ":12", False),
        ("::2", "1::2", False),
        (":k", "k:", False),  # `k` is not stable
        ("i", "i + 1", False),  # a name index may be a tensor of indices or a mask
        ("None, :n", "None, n:", False),
        ("...", "n:", False),
        ("2 * n:n + m", "n + m:", True),
    ],
)
def test_disjoint(first: str, second: str, apart: bool) -> None:
    assert disjoint(_region(first), _region(second)) is apart


def test_a_whole_buffer_meets_every_part() -> None:
    assert not disjoint(None, _region(":8"))


def test_constant_part_forgets_symbolic_bounds() -> None:
    assert constant_part(_region(":n, 2:4")) == (None, (2, 4))
    assert constant_part(_region(":n")) is None
