"""What the engine computes: the hazards of borrowed values, with no rule codes.

The engine reports facts about borrow kinds (a view read by a task after its producer
advanced, a view kept past its step, ...); which rule reports each hazard, in which words
and with which severity, is the catalog's business (``bufferlint.catalog.rule_for``), and a
pack names a sink's hazard by the code of the rule that reports it. Where the engine treats
hazards differently (is a sink's receiver read too, is a parameter's finding made at the
sink or at each caller's call, ...), it reads one of the properties below, so that a new
hazard is a new member with its answers, not a judgement call on every branch (Pysa's
rules are data over source and sink kinds in the same way).
"""

from __future__ import annotations

import enum
import functools


@functools.total_ordering
@enum.unique
class Hazard(enum.Enum):
    """What makes a borrowed value's use unsafe. Members compare in the order declared, so
    traces that tie on everything else are ordered the same way in every run."""

    ASYNC_READ_AFTER_ADVANCE = "a borrowed view read asynchronously after its producer advanced"
    GUARD_APPROVES_MARKED = "a guard that approves values carrying their kind's marker"
    KEPT_PAST_STEP = "a borrowed view kept past its producer's step"
    DEVICE_COPY_READS_HOST = "a non-blocking device copy still reading a host buffer its producer reuses"
    HOST_READS_IN_FLIGHT = "a host read of a tensor a device-to-host copy is still filling"
    HOST_WRITTEN_IN_FLIGHT = "a write to a pinned host buffer a host-to-device copy is still reading"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Hazard):
            return NotImplemented
        return _ORDER[self] < _ORDER[other]

    @property
    def sink_reader(self) -> str | None:
        """Who reads the value later when a pack sink entry reports this hazard ("task",
        "device copy"), or None when no sink entry can: those hazards come from the
        engine's own facts (a guard's body, a holder, a host read)."""
        return _SINK_READERS.get(self)

    @property
    def lifted(self) -> bool:
        """A parameter reaching the hazard is reported at each caller's call that passes a
        borrowed value, not at the sink: the function merely forwards what it is given, and
        the caller is where the value is in hand. A kept view or a device copy is reported
        where it is kept or copied."""
        return self in _LIFTED

    @property
    def sites_stream_elements(self) -> bool:
        """Even when lifted, a parameter's reach through a stream's elements (an access path
        through ``iter``) is reported at the call: the caller passed the stream, and the
        element that reaches the sink is taken below it. A host read of an in-flight copy
        is always the caller's."""
        return self is not Hazard.HOST_READS_IN_FLIGHT

    @property
    def read_on_host(self) -> bool:
        """The consumer is host code (a task): handing it a copy still in flight from the
        device is a host read of that copy now. A device copy or a holder does not read
        those bytes on the host."""
        return self is Hazard.ASYNC_READ_AFTER_ADVANCE

    @property
    def reads_receiver(self) -> bool:
        """A sink call whose payload is "all" reads its receiver too (``w.to(device,
        non_blocking=True)`` copies ``w``); a task sink's receiver is the executor."""
        return self is Hazard.DEVICE_COPY_READS_HOST

    @property
    def settled_by_sync(self) -> bool:
        """A device synchronisation (``torch.cuda.synchronize()``) completes the pending work:
        it is device work, not a task."""
        return self in (Hazard.DEVICE_COPY_READS_HOST, Hazard.HOST_WRITTEN_IN_FLIGHT)

    @property
    def ended_by_write(self) -> bool:
        """The pending work (a copy to the device reading a pinned buffer the program owns)
        becomes a finding when the program writes that buffer, not when a producer advances:
        it stays pending across loop iterations, yields and returns until a synchronisation."""
        return self is Hazard.HOST_WRITTEN_IN_FLIGHT

    @property
    def about_in_flight(self) -> bool:
        """About host tensors a device-to-host copy is still filling, not buffers a producer
        reuses: it keeps the in-flight values every other hazard ignores."""
        return self is Hazard.HOST_READS_IN_FLIGHT

    @property
    def kept(self) -> bool:
        """The pending entry is a view kept in a holder, not work that reads it: kept in the
        receiver's containers, it goes back to the caller with the object, whose producer
        decides when it goes stale."""
        return self is Hazard.KEPT_PAST_STEP


_ORDER = {hazard: position for position, hazard in enumerate(Hazard)}
_SINK_READERS = {Hazard.ASYNC_READ_AFTER_ADVANCE: "task", Hazard.DEVICE_COPY_READS_HOST: "device copy"}
_LIFTED = frozenset({Hazard.ASYNC_READ_AFTER_ADVANCE, Hazard.HOST_READS_IN_FLIGHT})
