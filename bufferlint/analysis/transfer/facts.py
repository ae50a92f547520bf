"""What one analysis of a function found, accumulated while the interpreter runs and turned
into its ``Outcome`` (with the function's ``Summary``) at the end: the one object the parts
of the interpreter write their results to."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace

from bufferlint.analysis.domain.limits import Limit
from bufferlint.analysis.domain.state import MAX_HOLDER_ATTRIBUTES, Pending
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, NO_FACTS, FieldStore, ParamCall, SinkReach, Site, Summary, keep_best
from bufferlint.analysis.domain.conditions import MAX_CONDITIONS, bounded
from bufferlint.analysis.domain.values import EMPTY, Field, Value, callback_path, conditional_types, evolve, has_field, join, local_fields, map_leaves
from bufferlint.findings import PASSED_GUARD, TraceStep, preferred_trace
from bufferlint.analysis.transfer.rotation import rotating_indices
from bufferlint.hazards import Hazard


@dataclass
class Outcome:
    """What one analysis of a function produced."""

    summary: Summary
    findings: dict  # (Hazard, Site) -> trace
    callees: set
    used_as_guard: set
    demands: set  # (kind, name): unresolved callees we pass (maybe) borrowed values to
    sited: set  # reaches reported in this function or below, propagated after the fixpoint
    edges: list  # CallEdge per call of a project function
    caps: list  # analysis limits hit (``Limit``: each a sentence for the user)
    # findings (Hazard, Site) that only the next call of this function makes (a copy this call
    # leaves reading a kept buffer, met by the next call's write): none if every caller
    # synchronises before each call (``ProjectAnalysis.covered_by_callers``)
    next_call: frozenset = frozenset()
    # the callees whose returned value it used (``Record("returns")``): a caller that only
    # discards what a callee returns need not run again when that alone changes, while
    # nothing borrowed is in it (``summaries.changes_returned_object_only``)
    returns_read: frozenset = frozenset()


class FunctionFacts:
    """The accumulators of one analysis: what the function returns and yields, the reaches
    of its parameters into sinks, its findings, and what the project-wide analysis needs
    to know of it (callees, demands, call edges, guard uses)."""

    def __init__(self, display: str, where: tuple | None = None) -> None:
        self.display = display  # the function, as notices name it
        self.where = where  # its file, first and last lines (``limits.Limit.where``)
        self.returns: Value | None = None
        # Some path returns an instance of a class not known here (``return candidate()`` of
        # a variable holding no known class): the classes of the other paths' instances do
        # not tell what the result is (``Summary.returns`` keeps none).
        self.returns_unknown_class = False
        self.yields: Value | None = None
        self.truthy_returns: list[frozenset] = []
        self.falsy_returns: list[frozenset] = []
        self.sinks: dict[SinkReach, SinkReach] = {}  # each reach once, with its best trace
        self.sited: dict[SinkReach, SinkReach] = {}
        self.findings: dict = {}  # (Hazard, Site) -> trace
        self.callees: set[str] = set()
        self.returns_read: set[str] = set()  # ``Outcome.returns_read``
        self.used_as_guard: set[str] = set()
        self.demands: set = set()
        self.edges: list = []
        self.exit_synced: list[bool] = []
        self.yield_synced: list[bool] = []  # a context manager's yields: synchronised before each
        self.exit_settled: list[frozenset] = []  # per exit: parameters whose futures were waited for
        self.stood_in: frozenset = frozenset()  # parameters with a stand-in for their futures
        self.retained_in: dict[str, set] = {}  # container -> findings (hazard, site) of views kept in it
        self.read_steps: dict[str, TraceStep] = {}  # container -> where it is read back later
        # borrowed object's site -> where it was first put into a container: (the store's
        # site, its sink step, the long-lived holder whose finding it is already, or None)
        self.kept_at: dict[tuple, tuple[Site, TraceStep, str | None]] = {}
        self.futures: set[Pending] = set()  # submissions still running when their future is returned
        self.field_stores: dict = {}  # FieldStore: parameters this method keeps in self.<attr>
        self.param_calls: dict[tuple, ParamCall] = {}  # where and how a parameter is called -> ParamCall
        self.flying_fields: list = []  # (owner, attr, value, site): copies in flight kept in fields
        # Pinned buffer (site, object: ``Borrow.objects``) -> the copies from the device filling it (``Effects.fill``), here
        # or, read from a field, by another method (``Effects.arrive``); in flight while their
        # sites are in ``State.flying``.
        self.filled_buffers: dict[tuple, Value] = {}
        self.own_fills: set[tuple] = set()  # of those, filled through a field of the receiver itself
        # Pinned buffers written before this function synchronised: site -> (the write, what
        # wrote); and the pinned buffers read from the receiver's fields, which outlive a call
        # (``Effects.carry_over``).
        # (pinned buffer, its object, constant part) -> the writes to that part before a
        # synchronisation, by position: (the write, what wrote, None or the event fields
        # whose waits were the only ones before it: ``State.waits``) (``Borrow.objects``: the
        # buffers of two objects told apart are two)
        self.unsynced_writes: dict[tuple, dict[tuple[int, int], tuple]] = {}
        self.kept_buffers: set[tuple] = set()
        # (kept buffer, its object, constant part) -> trace of a copy still reading that part at an exit
        self.carried: dict[tuple, tuple] = {}
        # ... -> the event fields (``call_packs.event_holder``) recorded before that copy at an exit
        self.recorded_before: dict[tuple, frozenset] = {}
        self.next_call: set = set()  # (Hazard, Site) of the findings ``carried_over`` makes
        # Kept buffers picked from a pool in turn (``rotation``): the next call writes another slot.
        self.in_turn: set = set()
        self._rotating: frozenset[str] | None = None
        # Refills (``Effects.refill``) of a buffer the receiver keeps in a field: site -> what
        # the next call refills; work still reading it when the function ends races with that.
        self.kept_refills: dict[tuple, str] = {}
        # Calls that both hand out views and advance their producer, made on a field of the
        # receiver (``self.enc.encode(out)``): site -> the call; the method's next call
        # refills what this one handed out (``Effects.advance_next_call``).
        self.kept_advances: dict[tuple, str] = {}
        self.released: set = set()  # (".attr", key): receiver containers this method empties
        self.exit_kept: list[frozenset] = []  # per exit: (param, attr), parameters' futures kept in the receiver's fields
        self.advanced = False  # an ``advances`` call (or a callee's) may run: ``Summary.advances``
        # The step of each ``advances`` call made here -> the sources declaring it (what a
        # ``ready-after`` call must name to end that refill: ``Effects.ready``)
        self.advanced_by: dict[TraceStep, tuple] = {}
        # ... and the flags that hold wherever it runs (``effects.branch_flags``)
        self.advanced_under: dict[TraceStep, frozenset] = {}
        # Guard facts by evaluating the body on a marked value (``guard_eval.judge``):
        # rejects -> guards, accepts -> marker checks, undecided (param, tag, why)
        self.evaluated = NO_FACTS
        self.caps: list[Limit] = []

    # -- recording ---------------------------------------------------------------------

    def rotating_indices(self, function: ast.AST, receiver: str) -> frozenset[str]:
        """The index expressions that pick a pool's slots in turn here (worked out once)."""
        if self._rotating is None:
            self._rotating = rotating_indices(function, receiver)
        return self._rotating

    def report(self, site: Site, trace: tuple, hazard: Hazard = Hazard.ASYNC_READ_AFTER_ADVANCE) -> None:
        """A finding at ``site``; of several paths into it, one its callers' guards decide
        (a ``PASSED_GUARD`` step) is kept only when no other path is."""
        key = (hazard, site)
        old = self.findings.get(key)
        if old is not None and passed_guard(old) != passed_guard(trace):
            if passed_guard(old):
                self.findings[key] = trace
        elif preferred_trace(trace, old):
            self.findings[key] = trace

    def add_reach(self, reach: SinkReach) -> None:
        """A reach whose report site is known does not change how callers are analysed: it
        is propagated after the fixpoint (``Program.propagate_sited``), not in the summary.
        Its conditions are bounded here (``conditions.bounded``)."""
        assume, cut = bounded(reach.assume)
        if cut:
            self.conditions_cut()
            reach = replace(reach, assume=assume)
        keep_best(self.sited if reach.site is not None else self.sinks, reach)

    def handed_back(self, value: Value, assume: frozenset) -> Value:
        """``value`` returned or yielded on a path that assumed ``assume`` of the parameters:
        the function's own borrowed objects and the parts of its parameters in it are handed
        back only under those conditions (``Borrow.when``, ``ParamRef.when``), which each
        call decides."""
        if not assume:
            return value
        cut = False

        def conditional(leaf):
            nonlocal cut
            when, dropped = bounded(leaf.when | assume)
            cut = cut or dropped
            return leaf.under(when)

        value = map_leaves(value, conditional)
        if value.types:  # an object built on this path is an instance of its class only under them
            type_when = []
            for qualname, when in conditional_types(value):
                when, dropped = bounded(when | assume)
                cut = cut or dropped
                type_when.append((qualname, when))
            value = evolve(value, type_when=frozenset(type_when))
        if cut:
            self.conditions_cut()
        return value

    def conditions_cut(self) -> None:
        note = Limit(
            f"{self.display}: a fact depends on more than {MAX_CONDITIONS} conditions on the parameters; only "
            f"{MAX_CONDITIONS} are checked at each call, so findings through it may be more than there are",
            if_reported=True,  # unchecked conditions only let more reaches through: told with a finding
            where=self.where,
        )
        if note not in self.caps:
            self.caps.append(note)

    def holders_cut(self) -> None:
        """A callee's future came back kept in a field named deeper than the bound
        (``state.bounded_holders``): a wait on that field here is not seen."""
        note = Limit(
            f"{self.display}: a future is kept in a field more than {MAX_HOLDER_ATTRIBUTES} attributes deep "
            "(recursion through the receivers' fields?); a wait on it is not seen, so findings through it "
            "may be more than there are",
            if_reported=True,  # an unseen wait only lets more reaches through: told with a finding
            where=self.where,
        )
        if note not in self.caps:
            self.caps.append(note)

    def call_param(self, where: tuple, called: ParamCall) -> None:
        """A parameter called as a callback at ``where`` (``Summary.calls``): what the
        visits of that call pass (a loop visits it more than once) is joined into one fact,
        under the conditions bounded as a reach's are."""
        assume, cut = bounded(called.assume)
        if cut:
            self.conditions_cut()
        shape = (where, called.param, called.path, assume, tuple(s for _, s in called.positional),
                 tuple(k for k, _ in called.keywords), called.returned)
        old = self.param_calls.get(shape)
        if old is not None:
            positional = tuple((join(a, b), s) for (a, s), (b, _) in zip(old.positional, called.positional))
            keywords = tuple((k, join(a, b)) for (k, a), (_, b) in zip(old.keywords, called.keywords))
            called = replace(old, positional=positional, keywords=keywords)
        self.param_calls[shape] = replace(called, assume=assume)

    def keep_field(self, store: FieldStore) -> None:
        keep_best(self.field_stores, store)

    def record(self, kind: str, item: object) -> None:
        """A fact for the project-wide analysis (``call_effects.Record``)."""
        if kind == "callee":
            self.callees.add(item)  # type: ignore[arg-type]
        elif kind == "demand":
            self.demands.add(item)
        elif kind == "returns":
            self.returns_read.add(item)  # type: ignore[arg-type]
        elif kind == "guard-use":
            self.used_as_guard.add(item)  # type: ignore[arg-type]
        else:
            self.edges.append(item)

    # -- the end of the analysis ---------------------------------------------------------

    def add_read_backs(self) -> None:
        """Put the read of each container that kept views past their step at the end of
        their traces (``Stores.read_back``)."""
        for name, step in self.read_steps.items():
            for key in self.retained_in.get(name, ()):
                trace = self.findings.get(key)
                if trace and trace[-1] != step:
                    self.findings[key] = trace + (step,)
        sited: dict = {}
        for reach in map(self.with_read_back, self.sited):
            keep_best(sited, reach)
        self.sited = sited

    def with_read_back(self, reach: SinkReach) -> SinkReach:
        for name, step in self.read_steps.items():
            if (reach.hazard, reach.site) in self.retained_in.get(name, ()) and reach.trace[-1:] != (step,):
                return replace(reach, trace=reach.trace + (step,))
        return reach

    def outcome(self, is_generator: bool, followed: Callable[[int, int], bool] | None = None) -> Outcome:
        """The function's summary and the rest of what the analysis found. Of its record
        parameters' fields (``values.Field``), what it returns or keeps in a field is only
        those ``followed`` says a caller put a borrowed value or a copy in flight in."""
        self.add_read_backs()
        returns = self.returns or EMPTY
        if self.returns_unknown_class and (returns.types or returns.declared):
            returns = evolve(returns, types=frozenset(), type_when=frozenset(), declared=frozenset())
        if is_generator:
            returns = Value(lazy=True, elems=self.yields)
        returns = local_fields(returns, followed)
        evaluated = self.evaluated
        rejects, accepts, undecided = evaluated.rejects, evaluated.accepts, evaluated.undecided
        guards = _proven(self.truthy_returns) | rejects
        checks = _proven(self.falsy_returns) if self.truthy_returns else frozenset()
        summary = Summary(
            returns=returns,
            sinks=frozenset(self.sinks),
            guards=guards,
            marker_checks=checks | accepts,
            synchronizes=bool(self.exit_synced) and all(self.exit_synced),
            enters_synchronized=bool(self.yield_synced) and all(self.yield_synced),
            futures=frozenset(self.futures),
            settles=frozenset.intersection(*self.exit_settled) if self.exit_settled else frozenset(),
            field_stores=frozenset(store for store in self.field_stores if _kept_store(store, followed)),
            releases=frozenset(self.released),
            keeps_futures=frozenset.intersection(*self.exit_kept) if self.exit_kept else frozenset(),
            advances=self.advanced,
            undecided=frozenset(u for u in undecided if u[:2] not in guards and u[:2] not in checks),
            guards_when=evaluated.rejects_when,
            checks_when=evaluated.accepts_when,
            calls=frozenset(call for call in self.param_calls.values() if callback_path(call.path)),
        )
        if summary == EMPTY_SUMMARY:
            summary = EMPTY_SUMMARY
        return Outcome(
            summary, self.findings, self.callees, self.used_as_guard, self.demands, set(self.sited), self.edges, self.caps,
            frozenset(self.next_call), frozenset(self.returns_read),
        )


def _kept_store(store: FieldStore, followed: Callable[[int, int], bool] | None) -> bool:
    """Does a summary keep this store: not of a record parameter's field, or of one
    ``followed`` (see ``FunctionFacts.outcome``)?"""
    if not has_field(store.path):
        return True
    field = store.path[0]
    return followed is not None and isinstance(field, Field) and followed(store.param, field.position)


def _proven(cleaned_sets: list[frozenset]) -> frozenset:
    """(parameter, tag): the parameters every one of these paths proved unborrowed, with
    the kind each check was for."""
    if not cleaned_sets:
        return frozenset()
    common = frozenset.intersection(*cleaned_sets)
    return frozenset((i[1], tag) for i, tag in common if i[0] == "p" and i[2] == ())


def passed_guard(trace: tuple) -> bool:
    """Is the consumer reached on this path only when a guard its callers pass approves?"""
    return any(step.fact[:1] == (PASSED_GUARD,) for step in trace)
