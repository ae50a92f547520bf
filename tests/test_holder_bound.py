"""The names of the fields a callee's future is kept in are bounded (``state.bounded_holders``).

Each call level names the field through the caller's receiver (``self.pending`` of
``loader.load()`` is ``loader.pending``); recursion through receivers' fields (a backend
wrapping a backend, reached by method name) lengthened the name a level per round, so the
summaries never settled: on sglang 0.5.23 one function's summary doubled at every analysis
and ``check --no-cache`` ran past 20 minutes."""

from __future__ import annotations

import shutil
from pathlib import Path

from bufferlint.analysis import analyze_project
from bufferlint.analysis.domain.state import DEEPER_HOLDER, MAX_HOLDER_ATTRIBUTES, Pending, bounded_holders
from bufferlint.packs import builtin_vocabulary

FIXTURE = Path(__file__).parent / "fixtures" / "analysis" / "receiver_recursion.py"


def test_a_holder_past_the_bound_keeps_its_first_attributes_and_stays_put() -> None:
    """A longer name keeps its first attributes and ends in ``DEEPER_HOLDER`` (still a
    field of the same receiver, named by no wait); a bounded name is left alone, and
    naming a cut one through a caller's receiver gives a name of the same length again."""
    deep = "self." + ".".join(["full"] * (MAX_HOLDER_ATTRIBUTES + 2)) + ".pending"
    pending = Pending(("k",), frozenset(), None, frozenset(), None, stored_in=frozenset({deep, "self.pending"}),  # type: ignore[arg-type]
                      holder=(deep, None))
    cut, was_cut = bounded_holders(pending)
    assert was_cut
    short = "self." + ".".join(["full"] * (MAX_HOLDER_ATTRIBUTES - 1)) + "." + DEEPER_HOLDER
    assert cut.stored_in == {short, "self.pending"} and cut.holder == (short, None)
    again, was_cut = bounded_holders(cut)
    assert again is cut and not was_cut
    renamed = Pending(("k",), frozenset(), None, frozenset(), None,  # type: ignore[arg-type]
                      stored_in=frozenset({"self.full" + short[len("self"):]}))
    assert bounded_holders(renamed)[0].stored_in == {short}


def test_recursion_through_receivers_fields_converges(tmp_path: Path) -> None:
    """receiver_recursion.py: without the bound, ``Wrapped.init_metadata`` hit the cap of
    analyses ("summary still changing") and found a host read the engine no longer follows;
    with it, the analysis settles with the two copies in flight found and no notice."""
    shutil.copy(FIXTURE, tmp_path / FIXTURE.name)
    files = [tmp_path / FIXTURE.name]
    result = analyze_project(tmp_path, files, files, builtin_vocabulary())
    assert result.notices == []
    assert sorted((f.span.line, f.rule) for f in result.findings) == [(27, "BL004"), (30, "BL004"), (61, "BL005")]
