"""The cut-off's end-state replay (``analysis.incremental.cutoff``, ``settled``): when the
edited run would visit functions in another order than the recorded one, the last analyses
are replayed with the final summaries in place; these tests pin the conditions under which
that is the edited run's result."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, FieldStore, Summary
from bufferlint.analysis.incremental.codec import digest
from bufferlint.analysis.incremental.cutoff import (
    GiveUp, OtherOrder, RunFacts, Versions, _changed_summaries, _CutOff, _only_grew,
)
from bufferlint.analysis.incremental.replay import NotRecorded

KEPT = Summary(field_stores=frozenset({FieldStore("app.Model", "_last", 1, (), True)}))
ALSO_KEPT = Summary(field_stores=KEPT.field_stores | {FieldStore("app.Model", "_first", 1, (), True)})
GUARDING = Summary(guards=frozenset({(1, "runai")}))


def outcome(summary: Summary) -> SimpleNamespace:
    return SimpleNamespace(summary=summary)


def log(seq: int, waiting: bool = False) -> SimpleNamespace:
    return SimpleNamespace(seq=seq, waiting=waiting)


def test_a_summary_that_says_more_may_happen_only_grew() -> None:
    assert _only_grew(EMPTY_SUMMARY, KEPT) and _only_grew(KEPT, ALSO_KEPT) and _only_grew(KEPT, KEPT)
    assert not _only_grew(ALSO_KEPT, KEPT)  # a store taken away
    assert not _only_grew(EMPTY_SUMMARY, GUARDING)  # a guard is not "more of what may happen"


def test_a_change_at_another_analysis_is_another_order_on_the_trajectory_and_one_entry_at_the_end() -> None:
    # Recorded: empty, then kept at the second analysis. Edited: kept from the first, and more later.
    old, new = [outcome(EMPTY_SUMMARY), outcome(KEPT)], [outcome(KEPT), outcome(ALSO_KEPT)]
    with pytest.raises(OtherOrder):
        _changed_summaries(old, new, [log(3), log(9)])
    versions = _changed_summaries(old[-1:], new[-1:], [log(9)], settled=True)
    assert versions.settled and versions.signature() == [(9, digest(KEPT), digest(ALSO_KEPT))]


def test_the_end_state_is_given_only_to_a_reader_that_read_the_recorded_final_summary() -> None:
    versions = Versions(((9, digest(KEPT), ALSO_KEPT),), by_time=False, settled=True)
    assert versions.answer("app.Model.load_weights", KEPT, reader=4) is ALSO_KEPT
    with pytest.raises(NotRecorded):  # it read an earlier summary: the fixpoint did not end with it
        versions.answer("app.Model.load_weights", EMPTY_SUMMARY, reader=4)


def _cut_off(readers: dict[str, list[str]], changes: dict[str, tuple[Summary, Summary]]) -> _CutOff:
    facts = RunFacts(observed=frozenset(), readers=readers, incoming={}, origins={}, covered=frozenset(),
                     attached_asked=frozenset(), fields_asked=frozenset(), reported=frozenset())
    cut = _CutOff(None, facts, None, None, str, "app/model.py", {}, settled=True)
    for qualname, (was, now) in changes.items():
        cut.old[qualname], cut.checked[qualname] = [outcome(was)], [outcome(now)]
        cut.renamed[qualname] = Versions(((1, digest(was), now),), by_time=False, settled=True)
    return cut


def test_a_fact_taken_away_around_a_cycle_of_reads_gives_up() -> None:
    cycle = {"a": ["b"], "b": ["a"]}
    with pytest.raises(GiveUp):  # "b" could keep feeding "a" what the edit took from it
        _cut_off(cycle, {"a": (ALSO_KEPT, KEPT)})._no_replayed_cycle()
    _cut_off(cycle, {"a": (KEPT, ALSO_KEPT)})._no_replayed_cycle()  # only grew: the same least fixpoint
    _cut_off({"a": ["b"], "b": ["c"]}, {"a": (ALSO_KEPT, KEPT)})._no_replayed_cycle()  # no cycle


def test_a_reader_of_a_changed_summary_may_be_analysed_once_more() -> None:
    cut = _cut_off({"a": ["b"]}, {"a": (KEPT, ALSO_KEPT)})
    assert cut._extra_analyses("b") == 1 and cut._extra_analyses("c") == 0
    cut.settled = False
    assert cut._extra_analyses("b") == 0
