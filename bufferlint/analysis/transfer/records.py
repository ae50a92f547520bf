"""Records: a NamedTuple or dataclass instance holds its fields like a tuple holds its items.

``Item(name, w)`` is a value with one part per field, in the constructor's order
(``frontend.records``), so the record carries the view wherever it goes: submitted, appended
to a list kept past the step, unpacked (``name, w = item``), indexed (``item[1]``) or read by
field (``item.tensor``). Kept as a tuple's parts, not in the heap of class attributes: each
record is its own object, and a record that dies in its step keeps nothing.
"""

from __future__ import annotations

from bufferlint.analysis.domain.values import EMPTY, MAX_DEPTH, Value, cap, container, evolve, index, join
from bufferlint.analysis.transfer.call_site import CallSite
from bufferlint.analysis.world import IndexView


def construct(call: CallSite, qualname: str) -> Value | None:
    """The record a call of record class ``qualname`` builds; None for another class."""
    shape = call.program.index.record_shape(qualname)
    if shape is None:
        return None
    names, positional = shape
    parts: list[Value | None] = [None] * len(names)
    rest: Value | None = None  # ``*args`` / ``**kwargs``: any field not passed otherwise
    position = 0
    for value, starred in call.args.positional:
        if starred:
            rest = join(rest, index(value, None))
        elif position < positional:
            parts[position] = value
            position += 1
    for key, value in call.args.keywords:
        if key is None:
            rest = join(rest, index(value, None))
        elif key in names:
            parts[names.index(key)] = value
    # Each part is capped as a container's elements are (``values.cap``): a record built
    # from the results of calls that return records nests no deeper than any container, so
    # a summary returning one converges.
    items = tuple(cap(part if part is not None else rest, MAX_DEPTH - 1) or EMPTY for part in parts)
    record = container(None, items) if items else Value()
    return evolve(record, types=frozenset({qualname}), alloc=frozenset({call.allocation_site()}))


def field_of(index_view: IndexView, base: Value, attr: str) -> Value | None:
    """``record.attr``: the part the record was built with; None when ``base`` is no
    record of a known shape holding a field ``attr``."""
    if base.items is None or len(base.types) != 1:
        return None
    (qualname,) = base.types
    shape = index_view.record_shape(qualname)
    if shape is None or attr not in shape[0] or len(shape[0]) != len(base.items):
        return None
    return base.items[shape[0].index(attr)]
