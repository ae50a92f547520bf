"""The interpreter's state at one program point, and what is still pending in it."""

from __future__ import annotations

from dataclasses import dataclass, field

from bufferlint.analysis.summaries import Site
from bufferlint.analysis.values import Value, join
from bufferlint.findings import TraceStep


def parameter_key(index: int) -> tuple:
    """The key of the stand-in for "whatever futures parameter ``index`` holds": waiting on
    it on every path makes the function a waiter for its callers (``Summary.settles``)."""
    return ("param", index)


def is_stand_in(pending: "Pending") -> bool:
    return pending.key[:1] == ("param",)


@dataclass(frozen=True)
class Pending:
    """A submission whose task may still be running: committed when the producer may advance.
    Stand-ins for a parameter's futures (``parameter_key``) have no leaves and never commit."""

    key: tuple
    leaves: frozenset
    site: Site
    assume: frozenset
    step: TraceStep = field(compare=False, hash=False)
    rule: str = "BL001"
    holder: tuple | None = None  # BL003: (container variable, key source) the value is kept in
    owners: frozenset = frozenset()  # allocation sites of the executor it was submitted to


class State:
    __slots__ = ("vars", "assume", "pending", "cleaned", "stale", "synced")

    def __init__(
        self, vars=None, assume=frozenset(), pending=frozenset(), cleaned=frozenset(), stale=frozenset(), synced=False
    ):
        self.vars: dict[str, Value] = vars if vars is not None else {}
        self.assume: frozenset = assume
        self.pending: frozenset = pending
        self.cleaned: frozenset = cleaned
        self.stale: frozenset = stale  # variables holding a view from a stream that has moved on
        self.synced: bool = synced  # the device was synchronised on this path

    def copy(self) -> "State":
        return State(dict(self.vars), self.assume, self.pending, self.cleaned, self.stale, self.synced)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and self.vars == other.vars
            and self.pending == other.pending
            and self.assume == other.assume
            and self.cleaned == other.cleaned
            and self.stale == other.stale
            and self.synced == other.synced
        )

    __hash__ = None  # type: ignore[assignment]


def join_states(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b.copy() if b is not None else None
    if b is None:
        return a.copy()
    out = {}
    for name in a.vars.keys() | b.vars.keys():
        out[name] = join(a.vars.get(name), b.vars.get(name))
    return State(
        out, a.assume & b.assume, a.pending | b.pending, a.cleaned & b.cleaned, a.stale | b.stale, a.synced and b.synced
    )
