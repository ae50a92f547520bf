"""The interpreter's state at one program point, and what is still pending in it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bufferlint.analysis.domain.summaries import Site
from bufferlint.analysis.domain.values import Cond, Value, evolve, join, quick_init
from bufferlint.findings import TraceStep
from bufferlint.hazards import Hazard


def parameter_key(index: int) -> tuple:
    """The key of the stand-in for "whatever futures parameter ``index`` holds": waiting on
    it on every path makes the function a waiter for its callers (``Summary.settles``)."""
    return ("param", index)


def field_key(attr: str) -> tuple:
    """The stand-in for "whatever futures the receiver keeps in ``self.<attr>``": a method
    that waits for it on every path waits for what its callers stored there."""
    return ("param", (0, attr))


def event_stand_in(dotted: str) -> str:
    """The state variable standing for the records of the event held in the field ``dotted``
    (``self.ready``): ``call_packs.event_holder``."""
    return f"<event:{dotted}>"


def is_event_stand_in(name: str) -> bool:
    return name.startswith("<event:")


def event_field(stand_in: str) -> str:
    """The dotted field an event stand-in (``event_stand_in``) names."""
    return stand_in[len("<event:"):-1]


def is_stand_in(pending: "Pending") -> bool:
    return pending.key[:1] == ("param",)


# A callee's future kept in a field of its receiver is kept, for the caller, in the field
# named through the caller's receiver (``self.pending`` of ``loader.load()`` is
# ``loader.pending``), so each call level lengthens the holder's name. Recursion through a
# class hierarchy (``self.inner.step(batch)`` reaching ``step`` of a wrapper again) would make
# it ever longer: ``self.a.b.a.b...`` without end, a new holder (and a new Pending) per round.
# A holder is at most ``MAX_HOLDER_ATTRIBUTES`` attributes long; a longer one keeps its first
# ones and ends with ``DEEPER_HOLDER``: still a field of the same receiver (handed to callers
# like any), but no wait names it, so waits on it are not seen (reported: ``bounded_holders``).
MAX_HOLDER_ATTRIBUTES = 4
DEEPER_HOLDER = "<deeper>"


def _bounded_name(name: str) -> str:
    parts = name.split(".")
    if len(parts) - 1 <= MAX_HOLDER_ATTRIBUTES:
        return name
    return ".".join(parts[:MAX_HOLDER_ATTRIBUTES]) + "." + DEEPER_HOLDER


def bounded_holders(pending: "Pending") -> tuple["Pending", bool]:
    """``pending`` with its holders' names (``stored_in``, ``holder``) at most
    ``MAX_HOLDER_ATTRIBUTES`` long, and whether one was cut (a wait on the field it names
    no longer settles the future there: findings through it may be more than there are)."""
    stored_in = frozenset(_bounded_name(name) for name in pending.stored_in)
    holder = pending.holder
    if holder is not None:
        holder = (_bounded_name(holder[0]), *holder[1:])
    if stored_in == pending.stored_in and holder == pending.holder:
        return pending, False
    return replace(pending, stored_in=stored_in, holder=holder), True


@quick_init
@dataclass(frozen=True)
class Pending:
    """A submission whose task may still be running: committed when the producer may advance.
    Stand-ins for a parameter's futures (``parameter_key``) have no leaves and never commit."""

    key: tuple
    leaves: frozenset
    site: Site
    assume: frozenset
    step: TraceStep = field(compare=False, hash=False)
    hazard: Hazard = Hazard.ASYNC_READ_AFTER_ADVANCE
    holder: tuple | None = None  # a kept view: (container variable, key source) the value is kept in
    owners: frozenset = frozenset()  # allocation sites of the executor it was submitted to
    # Attribute holders its future was stored in (``self.pending.append(future)``): reading
    # the holder gives the future back, and a method waiting for the field settles it.
    stored_in: frozenset = frozenset()


class State:
    __slots__ = ("vars", "assume", "pending", "cleaned", "stale", "synced", "flying", "refilled", "tested", "kept", "waits",
                 "landed", "unsynced_when")

    def __init__(
        self, vars=None, assume=frozenset(), pending=frozenset(), cleaned=frozenset(), stale=frozenset(), synced=False,
        flying=frozenset(), refilled=frozenset(), tested=frozenset(), kept=frozenset(), waits=frozenset(),
        landed=frozenset(), unsynced_when=frozenset(),
    ):
        self.vars: dict[str, Value] = vars if vars is not None else {}
        self.assume: frozenset = assume
        self.pending: frozenset = pending
        self.cleaned: frozenset = cleaned
        self.stale: frozenset = stale  # variables holding a view from a stream that has moved on
        self.synced: bool = synced  # the device was synchronised on this path
        self.flying: frozenset = flying  # sites of device-to-host copies not synchronised since
        # (site, step): borrowed objects whose producer may have refilled them at that step
        # (an ``advances`` call), not handed out again since
        self.refilled: frozenset = refilled
        # (guard, object): a project predicate returned True for this borrowed object on this
        # path (``if self.guard(w):``); a sink consuming the object here uses it as a guard
        # (``CallSite.note_tested_guards``)
        self.tested: frozenset = tested
        # (param, attr): the futures of these parameters are kept in the receiver's field
        # ``self.<attr>`` on this path (``Effects.keep_parameter_futures``); joined by
        # intersection, so that ``Summary.keeps_futures`` holds on every path
        self.kept: frozenset = kept
        # With ``synced``: the receiver's event fields (``call_packs.event_holder``) whose
        # ``synchronize()`` before their record here is all this path's synchronisation (it
        # waits for what their last record, an earlier call's, followed: ``Effects.carried_over``);
        # empty when some other wait covers everything. Joined by union.
        self.waits: frozenset = waits
        # sites of copies in flight this path waited for by an event (``event.query()`` true,
        # ``event.synchronize()``): a field read again does not put them back in flight
        # (``Effects.arrive``); joined by intersection
        self.landed: frozenset = landed
        # Without ``synced``: conditions (``ParamTest``s) besides ``assume`` that every path
        # reaching here unsynchronised took (``if out.ready is not None: out.ready.synchronize()``
        # joins a synchronised path with one where the field is None): a host read of a
        # parameter here is a reach only under them. Joined by intersection of the
        # unsynchronised paths' conditions.
        self.unsynced_when: frozenset = unsynced_when

    def copy(self) -> "State":
        return State(dict(self.vars), self.assume, self.pending, self.cleaned, self.stale, self.synced, self.flying, self.refilled,
                     self.tested, self.kept, self.waits, self.landed, self.unsynced_when)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and self.vars == other.vars
            and self.pending == other.pending
            and self.assume == other.assume
            and self.cleaned == other.cleaned
            and self.stale == other.stale
            and self.synced == other.synced
            and self.flying == other.flying
            and self.refilled == other.refilled
            and self.tested == other.tested
            and self.kept == other.kept
            and self.waits == other.waits
            and self.landed == other.landed
            and self.unsynced_when == other.unsynced_when
        )

    __hash__ = None  # type: ignore[assignment]


# In an event's ``Value.recorded``: the device work issued before the function began (its
# callers', an earlier call's, another method's), which every event recorded here follows.
BEFORE_CALL = ("before-call",)


def issued_work(st: State) -> frozenset:
    """The device work issued so far on this path, which an event recorded now waits for:
    the copies in flight to the host, the pending copies that read host buffers, and all the
    work issued before the function began (``BEFORE_CALL``)."""
    return st.flying | {p.key for p in st.pending if p.hazard.settled_by_sync} | {BEFORE_CALL}


# In what a device wait covers (a polled ``query()``'s ``Cond.settles_if_true``): the event field
# (its stand-in) not recorded here yet that the wait was on (``Effects.synchronize``'s ``prior``).
PRIOR_WAIT = "prior-wait"

# The owner (``Pending.owners``) of the callbacks a ``runs-before-yield`` sink schedules on the
# running event loop (``loop.call_soon``): a suspending await (``await asyncio.sleep(0)``)
# waits for every one of them, as a drain of that owner.
LOOP_TURN = "loop-turn"


def waited_for(st: State, covers: frozenset) -> None:
    """``st`` (in place) once a device wait covering ``covers`` has returned (an event's
    ``synchronize()``, a polled ``query()`` found true): those copies have landed and no
    longer read their buffers; covering the work issued before the function began
    (``BEFORE_CALL``), it is the path's synchronisation, noted in ``State.waits`` when it was
    on an event field not recorded here yet (a ``PRIOR_WAIT`` key)."""
    st.landed = st.landed | (st.flying & covers)
    st.flying = st.flying - covers
    st.pending = frozenset(p for p in st.pending if not (p.hazard.settled_by_sync and p.key in covers))
    if BEFORE_CALL in covers:
        prior = frozenset(key[1] for key in covers if key[:1] == (PRIOR_WAIT,))
        st.waits = st.waits | prior if prior and (not st.synced or st.waits) else frozenset()
        st.synced = True


SIDE_STREAM = "side-stream"  # in a pending key: the work was issued under a stream context


def on_side_stream(key: tuple) -> bool:
    """Was the pending work of ``key`` issued on a side stream (a staged copy's key holds the
    mark, a device-copy sink's its column)?"""
    return SIDE_STREAM in key or (len(key) > 1 and isinstance(key[1], tuple) and SIDE_STREAM in key[1])


def current_stream_work(st: State, side_issued: set | frozenset) -> frozenset:
    """The device work issued so far on the current stream, which an event recorded there
    waits for: ``issued_work`` without the copies issued under a stream context (their
    in-flight sites, ``side_issued``, and the pending copies whose keys say ``side-stream``)."""
    return frozenset(key for key in issued_work(st) if key not in side_issued and not on_side_stream(key))


def _unissued(st: State, other: State) -> frozenset:
    """The device work issued on ``other``'s path and not on ``st``'s."""
    return issued_work(other) - issued_work(st)


def _vacuous(value: Value, unissued: frozenset) -> Value:
    """An event's value with the work its path never issued counted as covered: on that
    path there is nothing of it to wait for. (A loop whose round ends with ``ev.record()``
    after its copy and begins with ``ev.synchronize()``: at the loop's head the event is
    new on the first round, when no copy is in flight, and recorded after the copy on the
    next ones; it covers the copy on both.)"""
    if value.recorded is None or not unissued:
        return value
    return evolve(value, recorded=value.recorded | unissued)


def _absent_if_none(value: Value | None, unissued: frozenset) -> frozenset | None:
    """What a None this value may be says was never issued on its paths: None for an event
    (never None), the work its path did not issue for the constant None, what an earlier
    join said (``Cond.settles_if_false``) for a value that may be either."""
    if value is None:  # not bound on that path: no test reads it there
        return None
    if value.has_const and value.const is None:
        return unissued - {BEFORE_CALL}
    if value.recorded is None:
        return frozenset()
    return value.cond.settles_if_false if value.cond is not None else None


def _none_or_event(joined: Value, a: Value | None, b: Value, unissued: tuple[frozenset, frozenset]) -> Value:
    """A variable that is None where no copy was issued yet and an event recorded after the
    copies elsewhere (``fence = None`` before a loop whose round ends with ``fence =
    stream.record_event()``): its test (``if fence is None``, ``if not fence``) tells the
    paths apart, and where it is None the work the event covers was never issued on that
    path (``Cond.settles_if_false``: what every path that may leave it None did not issue).
    A None kept after a copy (``else: fence = None``) issued that copy: it settles nothing."""
    if joined.recorded is None or (joined.has_const and joined.const is None):
        return joined
    sides = [_absent_if_none(a, unissued[0]), _absent_if_none(b, unissued[1])]
    if all(side is None for side in sides):
        return joined
    absent = frozenset.intersection(*(side for side in sides if side is not None))
    return evolve(joined, cond=Cond(settles_if_false=absent))


def join_states(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b.copy() if b is not None else None
    if b is None:
        return a.copy()
    return join_into(a, b)[0]


def join_into(old: State, new: State) -> tuple[State, bool]:
    """``old`` joined with ``new``, and whether that differs from ``old``: the worklist joins
    a block's entry state with each incoming state, and most of them add nothing, so the
    variables both states share as the same object are not joined or compared again.
    Neither state is changed; the result may share ``old``'s variables (the worklist never
    changes an entry state in place: a visit works on a copy)."""
    out = old.vars
    copied = False
    unissued = None  # (for old, for new): only events read it, so it is computed at the first one
    for name, value in new.vars.items():
        mine = out.get(name)
        if mine is value:
            continue
        if value.recorded is not None or mine is not None and mine.recorded is not None:
            if unissued is None:
                unissued = _unissued(old, new), _unissued(new, old)
            joined = join(_vacuous(mine, unissued[0]) if mine is not None else None, _vacuous(value, unissued[1]))
            joined = _none_or_event(joined, mine, value, unissued)
        else:
            joined = join(mine, value)
        if joined is mine or joined == mine:
            continue
        if not copied:
            out, copied = dict(out), True
        out[name] = joined
    assume = old.assume & new.assume
    pending = old.pending | new.pending
    cleaned = old.cleaned & new.cleaned
    stale = old.stale | new.stale
    synced = old.synced and new.synced
    flying = old.flying | new.flying
    refilled = old.refilled | new.refilled
    tested = old.tested & new.tested
    kept = old.kept & new.kept
    waits = old.waits | new.waits
    landed = old.landed & new.landed
    if synced:
        unsynced_when: frozenset = frozenset()
    elif old.synced or new.synced:
        unsynced_side = new if old.synced else old
        unsynced_when = unsynced_side.assume | unsynced_side.unsynced_when
    else:
        unsynced_when = (old.assume | old.unsynced_when) & (new.assume | new.unsynced_when)
    unsynced_when = unsynced_when - assume
    changed = copied or unsynced_when != old.unsynced_when or (
        len(assume) != len(old.assume) or len(pending) != len(old.pending) or len(cleaned) != len(old.cleaned)
        or len(stale) != len(old.stale) or synced != old.synced or len(flying) != len(old.flying)
        or len(refilled) != len(old.refilled) or len(tested) != len(old.tested) or len(kept) != len(old.kept)
        or len(waits) != len(old.waits)
        or len(landed) != len(old.landed)
    )
    if not changed:
        return old, False
    return State(out, assume, pending, cleaned, stale, synced, flying, refilled, tested, kept, waits, landed, unsynced_when), True
