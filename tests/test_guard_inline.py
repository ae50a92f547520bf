"""Inline marker checks by evaluation (``analysis/transfer/guard_inline.py``): what the code
before a branch proves about a borrowed value on each way out, and that what the evaluation
follows loosely never proves a value clean (loops run any number of rounds, a budget hit is a
notice and proves nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from marked_stream import MARKED_STREAM, analyse_module

HEAD = MARKED_STREAM + '''\
def consume(w):
    return w.sum()


'''


def analyse(tmp_path: Path, loader: str):
    return analyse_module(tmp_path, HEAD + loader)


def lines(result) -> list[tuple[int, str]]:
    return sorted((f.span.line - HEAD.count("\n"), f.rule) for f in result.findings)


@pytest.mark.parametrize("loop", [
    # the flag copies the previous round's check: marked after two rounds
    "        for r in rounds:\n            late = seen\n            seen = getattr(w, MARKER, False)\n",
    "        while rounds:\n            late = seen\n            seen = getattr(w, MARKER, False)\n            rounds = rounds[1:]\n",
], ids=["for", "while"])
def test_a_loop_not_unrolled_runs_any_number_of_rounds(tmp_path: Path, loop: str) -> None:
    loader = (
        "def load(pool, tensors, rounds):\n"
        "    for name, w in stream(tensors):\n"
        "        seen = late = False\n"
        + loop +
        "        if late:\n"
        "            pool.submit(consume, w)\n"
        "        else:\n"
        "            consume(w)\n"
    )
    result = analyse(tmp_path, loader)
    submit = loader.splitlines().index("            pool.submit(consume, w)") + 1
    assert lines(result) == [(submit, "BL001")]


@pytest.mark.parametrize("opaque", ["name.upper()", "name.size"], ids=["call", "attribute"])
def test_an_opaque_step_in_try_may_raise_after_the_body_changed_a_flag(tmp_path: Path, opaque: str) -> None:
    loader = (
        "def load(pool, tensors):\n"
        "    for name, w in stream(tensors):\n"
        "        marked = getattr(w, MARKER, False)\n"
        "        try:\n"
        "            marked = False\n"
        f"            {opaque}\n"
        "        except AttributeError:\n"
        "            if not marked:\n"
        "                pool.submit(consume, w)\n"
    )
    assert lines(analyse(tmp_path, loader)) == [(9, "BL001")]


def _over_the_budget(use: str) -> str:
    """A loader whose marker-check loop comes after more statements than the inline budget
    evaluates; ``use`` is what the unmarked branch does with the value."""
    filler = "".join(f"        x{i} = {i}\n" for i in range(1200))
    return (
        "def load(pool, tensors):\n"
        "    for name, w in stream(tensors):\n"
        + filler +
        "        marked = False\n"
        "        for m in MARKERS:\n"
        "            if getattr(w, m, False):\n"
        "                marked = True\n"
        "        if not marked:\n"
        f"            {use}\n"
    )


def test_a_region_over_the_budget_is_a_notice_and_proves_nothing(tmp_path: Path) -> None:
    result = analyse(tmp_path, _over_the_budget("pool.submit(consume, w)"))
    assert [rule for _, rule in lines(result)] == ["BL001"]
    assert any("marker check before line" in n and "was not evaluated" in n for n in result.notices), result.notices


def test_a_region_over_the_budget_with_nothing_reported_through_it_is_not_a_notice(tmp_path: Path) -> None:
    """The notice says a finding through the function may be wrong: with none reported there
    (the value is consumed on the spot), it warns of nothing and is not told."""
    result = analyse(tmp_path, _over_the_budget("consume(w)"))
    assert lines(result) == []
    assert not any("was not evaluated" in n for n in result.notices), result.notices
