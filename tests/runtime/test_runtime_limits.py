"""Every limit of the runtime fails safe: a submission too big to inspect whole (more than
INSPECTION_LIMIT values) is run inline (policies sync, copy) or refused (raise), never handed to
a worker with a borrowed view nobody looked at. Proved with real CPU tensors and the race
harness: the producer refills its one buffer after each item and poisons it at the end, so a
task that reads a view after the loader moved on reads another tensor's bytes."""

import warnings

import pytest

torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402
from bufferlint.runtime import markers  # noqa: E402
from bufferlint.testing import RaceHarness  # noqa: E402

WEIGHTS = 3


def payload(view, size, place):
    """``size`` values holding ``view`` first, last, or nested in the middle; and how to get it back."""
    if place == "first":
        return [view] + [0] * (size - 1), lambda p: p[0]
    if place == "last":
        return [0] * (size - 1) + [view], lambda p: p[-1]
    half = (size - 4) // 2
    return [[0] * half, {"layer": [(0, view)]}, [0] * half], lambda p: p[1]["layer"][0][1]


def load(race, policy, size, place):
    """An SGLang-shaped loader submitting one task per weight, each carrying ``size`` values.
    Returns (what each task read, how many submissions raised, the warnings)."""
    guarded = rt.GuardedExecutor(race.executor, policy=policy)
    observed, raised, futures = {}, 0, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, view in race.weights(WEIGHTS, (16,)):
            values, get = payload(view, size, place)

            def task(values, name=name, get=get):
                observed[name] = get(values).clone()

            try:
                futures.append(guarded.submit(task, values))
            except rt.BorrowedBufferError:
                raised += 1
                task(values)  # what a loader under policy "raise" does: consume it here
    for future in futures:
        future.result(timeout=30)
    race.close()
    return observed, raised, [w for w in caught if issubclass(w.category, markers.InspectionLimitWarning)]


@pytest.mark.parametrize("place", ["first", "last", "nested"])
@pytest.mark.parametrize("size", [10_000, 100_000])
@pytest.mark.parametrize("policy", ["sync", "copy", "raise"])
def test_past_the_inspection_limit_no_borrowed_byte_is_read_after_reuse(policy, size, place):
    race = RaceHarness()
    observed, raised, said = load(race, policy, size, place)
    assert race.corrupted(observed) == []
    if policy == "raise":
        assert raised == WEIGHTS and said == []
    else:
        assert raised == 0 and len(said) == WEIGHTS  # one warning per submission, saying what was done
        assert all("ran synchronously" in str(w.message) for w in said)


def test_policy_off_passes_through_past_the_limit_and_says_so():
    """The harness sees the race a guard would hide: "off" guards nothing (it only checks), so
    past the limit every task reads the refilled buffer -- and the warning says it was submitted."""
    race = RaceHarness()
    observed, raised, said = load(race, "off", 10_000, "first")
    assert race.corrupted(observed) == race.names and raised == 0
    assert len(said) == WEIGHTS and "submitted unchanged" in str(said[0].message)


def test_within_the_limit_copy_stays_asynchronous():
    race = RaceHarness()
    guarded = rt.GuardedExecutor(race.executor, policy="copy")
    observed, futures = {}, []
    for name, view in race.weights(WEIGHTS, (16,)):
        futures.append(guarded.submit(lambda v, name=name: observed.__setitem__(name, v[0].clone()),
                                      [view] + [0] * 100))
    assert not any(f.done() for f in futures)  # held: they were submitted, not run inline
    for future in futures:
        future.result(timeout=30)
    race.close()
    assert race.corrupted(observed) == []


def test_a_large_unmarked_submission_runs_inline_under_sync():
    """Nothing borrowed found before the limit is no proof: the rest is unknown."""
    race = RaceHarness()
    guarded = rt.GuardedExecutor(race.executor, policy="sync")
    with pytest.warns(markers.InspectionLimitWarning, match="no borrowed view found before it"):
        future = guarded.submit(len, list(range(20_000)))
    assert future.done() and future.result() == 20_000
    race.close()


def test_the_limit_is_shared_by_args_kwargs_and_partial(monkeypatch):
    monkeypatch.setattr(markers, "INSPECTION_LIMIT", 100)
    view = rt.mark_borrowed(torch.ones(2))
    inspection = markers.Inspection()
    found = markers.borrowed_in_call(print, ([0] * 60,), {"x": [0] * 60, "w": view}, inspection)
    assert found == [] and not inspection.complete
