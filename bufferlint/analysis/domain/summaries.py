"""Per-function summaries: what a call to a function does to borrowed values, written in
terms of its parameters so that every call site can instantiate it.

The project-wide fixpoint (``program.py``) recomputes a function's summary whenever a
callee's summary changes, until nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from bufferlint.analysis.domain.values import EMPTY, WIDENED, Borrow, ParamRef, Value, deep_leaves
from bufferlint.findings import Span, TraceStep, preferred_trace
from bufferlint.hazards import Hazard


@dataclass(frozen=True)
class Site:
    """Where a finding is reported: a call in the function holding the borrowed value."""

    span: Span
    function: str  # display name, "pkg.mod:Class.method"
    sink: str  # what consumes the value asynchronously, for the message
    subject: str = field(default="", compare=False)  # source of the borrowed argument, for fixes


@dataclass(frozen=True)
class SinkReach:
    """Parameter ``param`` (at access ``path``) reaches ``hazard`` unguarded: an async sink,
    a holder that keeps it past its step, an asynchronous device copy, a host read.

    ``assume``: (parameter index, truth) pairs that must hold for the sink to run async
    (``maybe_executor_submit`` submits only when ``use_async`` is true).
    ``site``: where to report when the caller passes a borrowed value; None means "at the
    caller's call", because this function merely forwards what it was given.
    """

    param: int
    path: tuple
    assume: frozenset
    site: Site | None
    trace: tuple[TraceStep, ...] = field(default=(), compare=False, hash=False)
    hazard: Hazard = Hazard.ASYNC_READ_AFTER_ADVANCE
    materialized: bool = False  # every element kept: reported only if the argument is a lazy borrowed stream
    kept: frozenset | None = None  # with materialized: the parts of each element kept (None: all)


@dataclass(frozen=True)
class FieldStore:
    """Parameter ``param`` (at ``path``) is stored in ``self.<attr>`` of class ``owner``
    (``element``: as an element of the container held there). Each caller passing a
    borrowed value puts it on the project-wide heap, where the class's other methods read it."""

    owner: str
    attr: str
    param: int
    path: tuple
    element: bool
    trace: tuple[TraceStep, ...] = field(default=(), compare=False, hash=False)


def stores_in_order(stores: Iterable[FieldStore]) -> list[FieldStore]:
    """A summary's field stores in an order that does not depend on how its set was built
    (a summary decoded from the cache iterates otherwise than the one analysed, and the
    stores are writes a replay compares in order)."""
    return sorted(stores, key=lambda s: (s.owner, s.attr, s.param, repr(s.path), s.element))


@dataclass(frozen=True)
class ParamCall:
    """Parameter ``param`` (at ``path``) is called: a callback (``fn(name, w)`` in a helper
    that takes ``fn``), with these arguments in terms of this function's parameters and its
    own borrowed objects, under ``assume``. The function cannot know what the callable does:
    each call site of it resolves the callable it passes (a function, a lambda, a bound
    method, a partial) and calls it there with the arguments instantiated
    (``call_project.call_back``), so a caller's borrowed values reach the callback's sinks."""

    param: int
    path: tuple
    positional: tuple  # ((Value, starred), ...)
    keywords: tuple  # ((name or None for ``**``, Value), ...)
    assume: frozenset
    trace: tuple[TraceStep, ...] = field(default=(), compare=False, hash=False)
    # The function returns what this call returns (``return fn(data)``): at each call site
    # the callable's result is the call's too, whatever the arguments carry (a callback that
    # makes a copy in flight of what it is given hands that copy to the helper's caller).
    returned: bool = False


@dataclass(frozen=True)
class Summary:
    returns: Value = EMPTY  # generators: a lazy container of what they yield
    sinks: frozenset = frozenset()  # SinkReach
    guards: frozenset = frozenset()  # (param, kind tag): proven unborrowed when the result is true
    marker_checks: frozenset = frozenset()  # (param, kind tag): proven unborrowed when it is false
    synchronizes: bool = False  # waits for all outstanding device work (device copies) on every path
    # a generator made a context manager that synchronises before its ``yield`` on every
    # path: entering its ``with`` block waits for the device work issued before the block
    enters_synchronized: bool = False
    futures: frozenset = frozenset()  # Pending submissions whose future is returned (still running)
    settles: frozenset = frozenset()  # params whose futures (in collections too) it waits for on every path
    field_stores: frozenset = frozenset()  # FieldStore: parameters kept in the receiver's attributes
    releases: frozenset = frozenset()  # (".attr", key): receiver containers it empties (``self.x.clear()``)
    # (param, attr): parameters whose futures it keeps in the receiver's field on every path
    # (``def add(self, t): self.trackers.append(t)``): a caller's future passed there is then
    # kept in ``obj.<attr>``, which a method waiting for that field settles (``__exit__``)
    keeps_futures: frozenset = frozenset()
    advances: bool = False  # may let producers refill their buffers (a pack ``advances`` call, or a callee's)
    # (param, tag, why): evaluating the function on a marked value decided nothing for these
    # (``transfer.guard_eval``): not reported as approving marked values, and no call is
    # taken as guarded by it
    undecided: frozenset = frozenset()
    # (param, tag, tests): as ``guards`` and ``marker_checks``, at a call whose arguments pass
    # every ``conditions.ParamTest`` of ``tests`` (the marker's name given by the caller)
    guards_when: frozenset = frozenset()
    checks_when: frozenset = frozenset()
    calls: frozenset = frozenset()  # ParamCall: parameters it calls (callbacks), resolved at each call site


EMPTY_SUMMARY = Summary()


@dataclass(frozen=True)
class GuardFacts:
    """What evaluating a function's body said of each parameter (``Summary``'s guard facts)."""

    rejects: frozenset = frozenset()  # (param, tag): ``Summary.guards``
    accepts: frozenset = frozenset()  # (param, tag): ``Summary.marker_checks``
    undecided: frozenset = frozenset()  # (param, tag, why): ``Summary.undecided``
    # (param, tag, tests): rejects, or accepts, marked values at a call whose arguments pass
    # every one of ``tests`` (``conditions.ParamTest``): a guard told the marker's name by its
    # caller (``def keep_local(t, attr=NAME): return not getattr(t, attr, False)``)
    rejects_when: frozenset = frozenset()
    accepts_when: frozenset = frozenset()


NO_FACTS = GuardFacts()


def keep_best(facts: dict, fact) -> None:
    """Add ``fact`` (a reach or field store) to ``facts``; of two equal facts (they differ only
    in their trace) keep the shorter trace, ties broken by content, so that what is kept never
    depends on the order in which the analysis met them (hash seeds, worklist order)."""
    old = facts.get(fact)
    if old is None or preferred_trace(fact.trace, old.trace):
        facts.pop(fact, None)
        facts[fact] = fact


def guards_kind(tags: set, kind: str, vocab) -> bool:
    """Does a guard whose True proves these tags (``Summary.guards`` of its parameter, see
    ``values.clean``) reject marked values of ``kind``? Any check does for a guard of no
    kind; a kind without markers cannot be checked for, so its guards are taken at their word."""
    known = vocab.kinds.get(kind) if kind else None
    if kind and known is not None and not known.markers:
        return True
    return None in tags or (kind in tags if kind else bool(tags))


def widened(summary: Summary) -> bool:
    """Does the summary hold a parameter's access path widened at ``values.MAX_PATH``? (What
    it says through that path is less precise: the analysis reports it as a notice.)"""
    paths = [reach.path for reach in summary.sinks] + [store.path for store in summary.field_stores]
    paths += [called.path for called in summary.calls]
    paths += [leaf.path for leaf in deep_leaves(summary.returns, through_lazy=True) if isinstance(leaf, ParamRef)]
    return any(WIDENED in path for path in paths)


def changes_returned_object_only(old: Summary, new: Summary) -> bool:
    """Is ``new`` ``old`` but for what the function returns, with no leaf (nothing borrowed,
    no pinned buffer, no parameter's value) in either: the class of an object, a constant?
    A call whose value is discarded is then done the same (only a returned leaf makes an
    effect there: ``call_project._project_result``), so a caller that uses no call's value
    of the function (``Outcome.returns_read``) need not run again."""
    return (old.returns != new.returns and replace(old, returns=new.returns) == new
            and next(deep_leaves(old.returns, through_lazy=True), None) is None
            and next(deep_leaves(new.returns, through_lazy=True), None) is None)


def returns_borrowed(summary: Summary) -> bool:
    """Does the function hand out borrowed values (or copies in flight), so that its callers'
    files matter? A pinned buffer it returns does not make them matter: a caller that copies
    from it to the device or writes it mentions a copy or a write of its own (memory pools
    that return pinned buffers are called from everywhere). Handing its own borrowed values
    to a callback its caller passes (``Summary.calls``) is handing them out too: the caller
    says what the callback does."""
    handed = [summary.returns] + [value for called in summary.calls
                                  for value in [v for v, _ in called.positional] + [v for _, v in called.keywords]]
    return any(isinstance(leaf, Borrow) and not leaf.pinned
               for value in handed for leaf in deep_leaves(value, through_lazy=True))
