"""What a call does besides producing a value, as data: the call handlers (``calls.py``)
return these records and the interpreter applies them to its state and facts
(``FunctionInterpreter.apply``), so a handler never changes the interpreter itself.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from bufferlint.analysis.domain.state import Pending
from bufferlint.analysis.domain.summaries import ParamCall, SinkReach, Site
from bufferlint.analysis.domain.values import Value
from bufferlint.findings import TraceStep
from bufferlint.hazards import Hazard


@dataclass(frozen=True)
class Settle:
    """Wait for the futures ``value`` stands for (in collections too). ``timed``: the wait
    was given a timeout and raises when it passes first (``future.result(5)``,
    ``tracker.wait(timeout=...)`` raising ``zmq.NotDone``): only its return settles them."""

    value: Value
    timed: bool = False


@dataclass(frozen=True)
class SettleStored:
    """Wait for every future stored in the attribute ``holder`` (``self._wait_all()``
    waits for what ``self.pending`` holds)."""

    holder: str


@dataclass(frozen=True)
class StoreFutures:
    """The futures ``value`` stands for are now kept in the attribute ``holder`` as well
    (``inflight.add(tracker)`` of a method that appends its parameter to ``self.trackers``)."""

    holder: str
    value: Value


@dataclass(frozen=True)
class Drain:
    """Wait for every task submitted to ``executor`` (``shutdown(wait=True)``)."""

    executor: Value


@dataclass(frozen=True)
class Reown:
    """The submissions ``keys`` now run inside a task of ``owners`` (``tg.create_task(aw)``
    of an awaitable standing for them): waiting for every task of ``owners`` waits for them."""

    keys: frozenset
    owners: frozenset


@dataclass(frozen=True)
class Synchronize:
    """Wait for all outstanding device work; ``covers``: only for the device-to-host copies
    an event recorded after (``event.synchronize()`` of an event recorded here);
    ``current_only``: only for the work of the current stream, not the copies this function
    issued under a stream context (``torch.cuda.current_stream().synchronize()``);
    ``prior``: an event field's not recorded here yet on this path (its stand-in,
    ``call_packs.event_holder``): it waits for what its last record followed."""

    covers: frozenset | None = None
    current_only: bool = False
    prior: str | None = None


@dataclass(frozen=True)
class RecordEvent:
    """``event.record()``: the event now stands for the device work issued before it; on
    the current stream (``current_only``: no stream given, outside a stream context), for
    that stream's work only."""

    target: str
    current_only: bool = False


@dataclass(frozen=True)
class Issue:
    """Device-to-host copies now in flight: the in-flight leaves of ``value`` stay unreadable
    by the host until a synchroniser."""

    value: Value


@dataclass(frozen=True)
class Advance:
    """A call after which producers may refill the buffers behind their earlier views.
    ``specs``: the sources that declare it (``advances``); none for a project helper that
    makes such a call, whose refill no ``ready-after`` call ends."""

    node: ast.AST
    what: str
    specs: tuple = ()
    kept: bool = False  # called on a field of the method's receiver (``self.enc.encode(...)``)


@dataclass(frozen=True)
class Ready:
    """A call after which the writers of ``specs`` (sources declaring it ``ready-after``)
    have refilled their buffers: the refills their ``advances`` calls let happen are over.
    ``node``: the call."""

    specs: tuple
    node: ast.AST


@dataclass(frozen=True)
class Reuse:
    """The objects lent at ``sites`` are reused now (a registrar's buffer once the callback
    it called returns): work still reading them is a race."""

    sites: frozenset
    node: ast.AST
    what: str


@dataclass(frozen=True)
class UseAfterRefill:
    """A call reads ``value``, whose producer may have refilled it since (kept past its step)."""

    node: ast.AST
    value: Value
    what: str


@dataclass(frozen=True)
class HostRead:
    """The host reads ``value``'s bytes now (``t.tolist()``, ``int(t)``, ``if t:``)."""

    node: ast.AST
    value: Value
    what: str


@dataclass(frozen=True)
class HostWrite:
    """The program writes ``value``'s bytes now (``buf.copy_(x)``, ``f.readinto(buf)``).
    ``by_device``: the device writes them, queued on the current stream behind the copies
    already issued there (``pinned.copy_(gpu, non_blocking=True)``, ``call_packs.write_host``)."""

    node: ast.AST
    value: Value
    what: str
    by_device: bool = False


@dataclass(frozen=True)
class Refill:
    """``sock.recv_into(buf)``: the call reads new records into the buffer ``target`` names
    (evaluated to ``value``); views of its previous contents are out of date."""

    node: ast.AST
    target: ast.expr
    value: Value
    what: str


@dataclass(frozen=True)
class Allocate:
    """New pinned buffers at these allocation sites: the previous buffer of a site (last
    iteration's, last call's) is another object, whose copies nothing here writes."""

    sites: frozenset


@dataclass(frozen=True)
class Stage:
    """A non-blocking copy to the device reads the pinned buffers in ``value`` until the
    host synchronises."""

    node: ast.AST
    value: Value
    what: str


@dataclass(frozen=True)
class Submit:
    """Work that reads ``payload`` later (a task or a device copy: the sink's ``hazard``)."""

    node: ast.AST
    payload: Value
    sink: str
    assume: frozenset
    subject: str
    hazard: Hazard
    owners: frozenset
    untracked: bool = False  # no handle the call returns stands for it (``SinkSpec.handle_covers``)


@dataclass(frozen=True)
class Signal:
    """The task ``keys`` stand for marks the objects ``objects`` (allocation sites) done
    when it ends (``done.set()``): every variable holding one stands for that work."""

    objects: frozenset
    keys: frozenset


@dataclass(frozen=True)
class Adopt:
    """A callee's submission whose future came back: pending here now."""

    pending: Pending


@dataclass(frozen=True)
class Store:
    """``container`` may now hold ``value`` (``c.append(v)``)."""

    container: ast.expr
    value: Value
    node: ast.AST


@dataclass(frozen=True)
class Retain:
    """``value`` is kept in a long-lived holder (a hazard if the step moves on)."""

    node: ast.AST
    value: Value
    holder_text: str


@dataclass(frozen=True)
class Release:
    """The container ``name`` drops what it kept under ``key`` (all of it for None)."""

    name: str
    key: str | None


@dataclass(frozen=True)
class ReadBack:
    container: ast.expr
    node: ast.AST


@dataclass(frozen=True)
class Materialize:
    """Every element of ``value`` is held at once (or queued, for an eager sink)."""

    node: ast.AST
    value: Value
    what: str
    hazard: Hazard = Hazard.KEPT_PAST_STEP
    note: str | None = None


@dataclass(frozen=True)
class Mark:
    """``setattr(target, MARKER, True)``: ``target`` is borrowed from here on."""

    target: ast.expr
    node: ast.AST
    kind: str = ""  # the kind whose marker it sets ("" when no single kind names it)


@dataclass(frozen=True)
class Fill:
    """``target.copy_(gpu, non_blocking=True)``: ``target`` holds ``copy`` (in flight) too,
    and so does every view of the pinned buffers it is (``buffers``, their sites and objects)."""

    target: ast.expr
    copy: Value
    buffers: frozenset = frozenset()


@dataclass(frozen=True)
class Report:
    site: Site
    trace: tuple
    hazard: Hazard


@dataclass(frozen=True)
class Reach:
    reach: SinkReach


@dataclass(frozen=True)
class Record:
    """A fact about the call for the project-wide analysis: ``kind`` is "callee",
    "returns" (a callee whose returned value the call uses), "demand", "guard-use" or "edge"."""

    kind: str
    item: object


@dataclass(frozen=True)
class CallParam:
    """This function calls one of its parameters (a callback) here: a fact of its summary
    (``Summary.calls``), resolved at each of its call sites. ``where``: the call's position,
    so the visits of one call join into one fact."""

    where: tuple
    called: ParamCall


@dataclass(frozen=True)
class CallBack:
    """A callee calls back ``function`` (what this call passed it for a parameter it calls,
    ``Summary.calls``) with ``args``: the call is evaluated here, at ``node`` (the call of
    the callee), under ``assume`` (the callee's conditions, decided here). ``step``: the
    callee's call of its parameter, the trace step into the callback."""

    node: ast.Call
    function: Value
    args: object  # call_site.Args (kept apart: this module does not import the call sites)
    step: TraceStep
    assume: frozenset
    returned: bool = False  # the callee returns what the callable returns: the call's value too
    # The callee passes it an element of a stream it iterates (``for_each(stream, fn)``):
    # the stream asks its producer for the next element after each call, so what the
    # callable leaves pending is committed then (``Effects.commit_new``)
    stepwise: bool = False


@dataclass(frozen=True)
class CommitStep:
    """The producer may advance now for the work pending under these (new) entries only:
    what a callback left in flight when the callee's loop takes its next element."""

    pending: frozenset
    step: TraceStep


@dataclass(frozen=True)
class KeepInField:
    """A callee keeps an argument in its receiver's attribute (``Summary.field_stores``)."""

    owner: str
    attr: str
    value: Value
    element: bool
    step: object
