"""The abstract domain: what the analysis knows about a Python value at one program point.

A value is described by *leaves* (what the object itself is, or is a view of) and by its
contents (``elems`` for iteration and indexing, ``items`` for known tuple positions). Two
kinds of leaves exist:

* ``Borrow``: a concrete borrowed object (from a source or a marker ``setattr``), identified by
  its allocation site. ``view=True`` means a derived view of that object: it reads the same
  reused buffer but, being another Python object, does not carry the marker.
* ``ParamRef``: "whatever the caller passed as parameter *i*, at access path *p*". Function
  summaries are written in terms of these, and instantiated at each call site.

Access paths are tuples of ``"iter"`` (an element taken by iteration: the producer advances),
``"item"`` (an element taken by indexing or unpacking), ``int`` (a known tuple position) and
``"view"`` (a derived view). A path is at most ``MAX_PATH`` steps long: a longer one is widened
to its prefix (``WIDENED``, Pysa's k-limiting), which stands for the part there or anything in it.

Everything here is immutable, so states can be compared to detect a fixpoint. Traces ride
along but do not take part in equality, which keeps the lattice finite.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, TypeGuard, Union, overload

from bufferlint.analysis.domain.regions import constant_part, disjoint
from bufferlint.findings import TraceStep, preferred_trace


def quick_init(cls):
    """Give a frozen record class a constructor that fills its ``__dict__`` directly.

    A frozen dataclass's generated ``__init__`` sets each field through
    ``object.__setattr__`` (it must get past the frozen ``__setattr__``): for ``Value``'s 32
    fields that is 3.9 us a value, 1.0 us filled directly, and the fixpoint builds values in
    its inner loops (about 8 % of a cold run on sglang 0.5.23). The signature, defaults and
    field order are the dataclass's own; classes with ``__post_init__``, default factories or
    fields outside ``__init__`` keep the generated constructor (refused here)."""
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or any(
        not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING for f in fields
    ):
        raise TypeError(f"quick_init: {cls.__name__} needs the generated constructor")
    defaults = {f"_default_{f.name}": f.default for f in fields if f.default is not dataclasses.MISSING}
    params = ", ".join(f.name if f.default is dataclasses.MISSING else f"{f.name}=_default_{f.name}" for f in fields)
    body = "".join(f"\n    __d[{f.name!r}] = {f.name}" for f in fields) or "\n    pass"
    namespace: dict = {}
    exec(f"def __init__(self, {params}):\n    __d = self.__dict__{body}", defaults, namespace)  # noqa: S102
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    return cls


MAX_PATH = 6
MAX_DEPTH = 4
# The last step of a widened path: the parameter's part at the steps before it, or anything
# inside that part (see ``ParamRef.extend``). No marker check proves it clean (no identity).
WIDENED = "..."


@quick_init
@dataclass(frozen=True)
class Borrow:
    site: tuple
    view: bool = False
    trace: tuple[TraceStep, ...] = field(default=(), compare=False, hash=False)
    # In flight from the device (a non-blocking device-to-host copy): the bytes are not there
    # until a synchronisation; only the host reads of such copies are a hazard
    # (``Hazard.about_in_flight``), every other hazard ignores them.
    flight: bool = False
    # The producer's borrow kind ("" when no pack names one). A function of the site, so it
    # takes no part in equality or hashing (the order joins meet leaves in stays as it was).
    kind: str = field(default="", compare=False)
    # Handed out only if the function's callers pass matching values (``conditions.ParamTest``,
    # a conjunction): a copy in flight when ``move(t, device)`` is called with "cpu", a view
    # yielded only when ``clone_tensors`` is false. Each call decides (``call_project``). Part
    # of equality: the same object handed out on two paths under different conditions is two
    # leaves, each decided on its own (the facts' disjunction).
    when: frozenset = frozenset()
    # A pinned host buffer the program allocated (pack ``pinned-allocations``), not a view a
    # producer lends: a non-blocking copy to the device reads it until a synchronisation, and
    # only a write to it meanwhile is a hazard (``Hazard.ended_by_write``); every other
    # hazard ignores it, as it ignores copies in flight (``program_memory``).
    pinned: bool = False
    # A view of a buffer the program refills in place (pack ``host-writes`` with ``refills``:
    # ``sock.recv_into(buf)``): borrowed until the next refill of that buffer, which commits
    # the work still reading it; the producer's steps (a loop's next round, a return) do
    # not, since nothing else reuses the buffer (``Effects.refill``). A function of the site
    # (the refill call's) like ``kind``, so it takes no part in equality or hashing: a view
    # handed out past a yield or a return as an ordinary borrowed object
    # (``Effects.handed_out``) never meets its refill's object in one value.
    refill: bool = field(default=False, compare=False)
    # The part of a pinned buffer this view covers (``regions.region_of``; None: all of it,
    # as far as is known), in the buffer's own dimensions: set by a subscript of the buffer
    # itself, kept by every view made from the view (a view of a part lies within it).
    # A write to one part while a copy reads a disjoint part is no hazard (``Effects.write_host``).
    region: tuple | None = None
    # Which object holds this pinned buffer, when the buffer was read as a field of an object
    # the program can tell apart from the others of its class (``Value.objects``): the
    # allocation sites that object may come from. Empty: any object of the class (every
    # object's buffer shares the one allocation site in the class's own code). Two parts
    # of one site meet only if their objects may be one (``same_object``).
    objects: frozenset = frozenset()
    # Refilled in place in pageable host memory (a ``bytearray`` or ``bytes`` the program
    # made, ``sock.recv_into(self.buf)``): a non-blocking copy to the device from it is staged
    # by the host before the call returns (CUDA copies from pageable memory through a staging
    # buffer), so it reads nothing after; every other hazard stands. A function of the site
    # (the refill call's), as ``refill`` is.
    pageable: bool = field(default=False, compare=False)
    # A pinned buffer held in the heap (a field of an object, an element of a container
    # field, a module variable: ``Program.store_field``): one object, whichever call reads
    # it. A function handing it back hands back that object at every call (``at_call``
    # keeps its site), so two rounds of a caller's loop taking a ring's slot through a
    # getter share the buffer.
    held: bool = False

    @property
    def base(self) -> tuple:
        return ("b", self.site)

    @property
    def identity(self) -> tuple | None:
        """The object a marker check on this value inspects (views carry no marker)."""
        return None if self.view else self.base

    def as_view(self, step: TraceStep | None = None, region: tuple | None = None) -> "Borrow":
        """A view of this object; ``region``: the part a subscript names, which narrows only
        the pinned buffer itself (the dimensions of a view made otherwise, ``t.T``, need not
        be the buffer's; a view of a part stays within that part)."""
        trace = self.trace + (step,) if step and not self.view else self.trace
        part = region if self.pinned and not self.view else self.region
        return Borrow(self.site, True, trace, self.flight, self.kind, self.when, self.pinned, self.refill, part, self.objects, self.pageable, self.held)

    def with_trace(self, trace: tuple[TraceStep, ...]) -> "Borrow":
        return Borrow(
            self.site, self.view, trace, self.flight, self.kind, self.when, self.pinned, self.refill, self.region, self.objects, self.pageable, self.held
        )

    def at_call(self, callkey: tuple, trace: tuple[TraceStep, ...], when: frozenset = frozenset()) -> "Borrow":
        """A callee's own borrowed object, re-identified per call site (``when``: what is
        left of its conditions there, in terms of the caller's parameters; of its region,
        the constant bounds: the callee's names mean nothing here). An object held in the
        heap (``held``) is the same at every call: it keeps its site."""
        region = constant_part(self.region)
        return Borrow(
            self.site if self.held else (self.site[0], callkey), self.view, trace, self.flight, self.kind, when, self.pinned, self.refill, region, self.objects, self.pageable, self.held
        )

    def elsewhere(self) -> "Borrow":
        """This object as another call sees it (kept in a field, read by the next call): of
        its region only the constant bounds, the names in the others are other values there."""
        region = constant_part(self.region)
        if region == self.region:
            return self
        return Borrow(
            self.site, self.view, self.trace, self.flight, self.kind, self.when, self.pinned, self.refill, region, self.objects, self.pageable, self.held
        )

    def under(self, when: frozenset) -> "Borrow":
        """This object, handed out only under these conditions (``Borrow.when``)."""
        return Borrow(
            self.site, self.view, self.trace, self.flight, self.kind, when, self.pinned, self.refill, self.region, self.objects, self.pageable, self.held
        )

    def cleared_by(self, tags: frozenset) -> bool:
        """Do guard facts with these tags prove this object unborrowed?"""
        return None in tags or self.kind in tags or (not self.kind and bool(tags))


@dataclass(frozen=True)
class Cleared:
    """A path step: a guard proved the value clean for values of these kinds."""

    kinds: frozenset


@dataclass(frozen=True)
class Field:
    """A path step: the field at ``position`` of a record parameter (``payload.value`` of a
    parameter annotated ``payload: Payload``), resolved as ``payload[position]`` in the
    record the caller built. A part reached only so may reach the function's own sinks (a
    ``SinkReach``); nothing else of it leaves the function (``local_fields``) unless a caller
    put a borrowed value or a copy in flight in that field (``Program.field_hot``), since a
    record passed everywhere (a batch handed to every layer) would otherwise put a path per
    field into every summary and every callee's parameters."""

    position: int


@dataclass(frozen=True)
class Produced:
    """A path step: what a pack source's method hands out when called on the part before it
    (``reader.tensors()`` of a parameter ``reader``). Whether it lends is known only from the
    object each caller passes (what built it, ``owned-if``'s ``built-by``): each call site
    asks its vocabulary (``resolve``'s ``produce``, ``call_packs.produced``); without one
    the step resolves to nothing but the caller's own parameters' same part."""

    method: str


# What a call site's vocabulary says a source's method hands out for the object it is
# called on (``Produced``): the object, the method's name.
Producer = Callable[["Value", str], "Value"]


@quick_init
@dataclass(frozen=True)
class ParamRef:
    index: int
    path: tuple = ()
    trace: tuple[TraceStep, ...] = field(default=(), compare=False, hash=False)
    # Handed back only if the caller passes matching values (``conditions.ParamTest``, a
    # conjunction, as ``Borrow.when``): ``return t.clone() if copy else t`` hands ``t`` back
    # when ``copy`` is false. Each call decides, and a reach of such a part carries them.
    when: frozenset = frozenset()

    @property
    def base(self) -> tuple:
        path = self.path[: self.path.index("view")] if "view" in self.path else self.path
        return ("p", self.index, uncleared(path))

    @property
    def identity(self) -> tuple | None:
        if "view" in self.path or WIDENED in self.path:
            return None
        return ("p", self.index, uncleared(self.path))

    def extend(self, op: object, step: TraceStep | None = None) -> "ParamRef":
        """The part of this parameter one step (``op``) further in. Past ``MAX_PATH`` steps
        the path ends in ``WIDENED`` instead and further steps keep it: the summary says less
        (the part or anything in it) but loses nothing. The analysis reports each function
        whose summary holds such a path (``summaries.widened``)."""
        if op == "view" and self.path and self.path[-1] == "view":
            return self
        if WIDENED in self.path:
            return self
        if len(self.path) - _cleared_steps(self.path) >= MAX_PATH:
            op = WIDENED
        trace = self.trace + (step,) if step else self.trace
        return ParamRef(self.index, self.path + (op,), trace, self.when)

    def cleared_for(self, tags: frozenset) -> "ParamRef":
        """This parameter, known clean if the caller passes a value of one of these kinds."""
        if self.path and isinstance(self.path[-1], Cleared):
            if tags <= self.path[-1].kinds:
                return self
            return ParamRef(self.index, self.path[:-1] + (Cleared(self.path[-1].kinds | tags),), self.trace, self.when)
        return ParamRef(self.index, self.path + (Cleared(frozenset(tags)),), self.trace, self.when)

    def with_trace(self, trace: tuple[TraceStep, ...]) -> "ParamRef":
        return ParamRef(self.index, self.path, trace, self.when)

    def under(self, when: frozenset) -> "ParamRef":
        """This part, handed back only under these conditions (``ParamRef.when``)."""
        return ParamRef(self.index, self.path, self.trace, when)


def uncleared(path: tuple) -> tuple:
    """The path without its ``Cleared`` steps: the object a marker check inspects."""
    return tuple(op for op in path if not isinstance(op, Cleared)) if _cleared_steps(path) else path


def _cleared_steps(path: tuple) -> int:
    return sum(1 for op in path if isinstance(op, Cleared))


Leaf = Union[Borrow, ParamRef]


@dataclass(frozen=True)
class Cond:
    """What a truth test of this value tells about borrowed objects, as guard facts
    ``(identity, tag)`` (see the module docstring).

    ``clean_if_true``: when the value is true these objects are not borrowed (a guard);
    ``clean_if_false``: when it is false they are not (a marker check).
    ``settles_if_true`` / ``settles_if_false``: the pending work (its keys) known to be done
    when the value is true / false (a polled flag: ``tracker.done``, ``future.done()``).
    """

    clean_if_true: frozenset = frozenset()
    clean_if_false: frozenset = frozenset()
    settles_if_true: frozenset = frozenset()
    settles_if_false: frozenset = frozenset()

    def negate(self) -> "Cond":
        return Cond(self.clean_if_false, self.clean_if_true, self.settles_if_false, self.settles_if_true)


@dataclass(frozen=True)
class Preset:
    """The arguments a ``functools.partial`` binds ahead of the ones its call passes: they
    come first by position, and a keyword the call passes again replaces the bound one."""

    positional: tuple["Value", ...] = ()
    keywords: tuple[tuple[str, "Value"], ...] = ()


@dataclass(frozen=True)
class BuiltByParameter:
    """In ``Value.built``: a construction whose argument is the building function's parameter
    ``index``, passed on: owned where the caller passes ``equals`` (``owned_by_default``:
    where it leaves it to a default that is). Decided at each call (``decide_built``).
    With ``attr``: the argument is a field of the parameter, ``negated`` or not
    (``copy=not cfg.zero_copy``): what the caller's object holds there decides; without,
    ``negated`` is the parameter's negation (``copy=not zero_copy``)."""

    index: int
    owned_by_default: bool
    attr: str = ""
    negated: bool = False


# What a value's object holds in a field, when known (``construction.field_at_construction``)
FieldOf = Callable[["Value", str], tuple[bool, object]]


def decide_built(built: frozenset, bound: dict, field: FieldOf | None = None) -> frozenset:
    """``Value.built`` of a callee's result at a call: each construction that depends on a
    parameter decided by the argument bound to it (``bound``), a constant compared with the
    condition's ``equals`` (``packs.OwnedIf``), or for a field of it, the constant the
    argument's object holds there (``field``); an argument not known lends."""
    out = set()
    for cond, owned in built:
        if isinstance(owned, BuiltByParameter):
            actual = bound.get(owned.index)
            if actual is None:
                owned = owned.owned_by_default
            elif owned.attr:
                known, held = field(actual, owned.attr) if field is not None else (False, None)
                owned = known and ((not held) if owned.negated else held) == cond.equals
            else:
                owned = actual.has_const and ((not actual.const) if owned.negated else actual.const) == cond.equals
        out.add((cond, owned))
    return frozenset(out)


@quick_init
@dataclass(frozen=True)
class Value:
    leaves: frozenset = frozenset()
    elems: "Value | None" = None
    items: "tuple[Value, ...] | None" = None
    lazy: bool = False  # elements are produced on demand (generator, iterator)
    cond: Cond | None = None
    const: object = None  # a literal (True, False, a marker string); None when unknown
    has_const: bool = False
    ref: str | None = None  # a static reference: module, class or function qualname
    types: frozenset = frozenset()  # qualnames of the classes this object was constructed as
    declared: frozenset = frozenset()  # qualnames from annotations (the object may be a subclass)
    pending: frozenset = frozenset()  # ids of async submissions this value (a future) stands for
    origin: str | None = None  # the project function whose call produced this value (guard tracking)
    # With ``origin``: the borrowed objects (``Leaf.base``) that call was given, so a verdict
    # used as an async consumer's switch is known to decide about the values it consumes.
    asked: frozenset = frozenset()
    alloc: frozenset = frozenset()  # allocation sites of the object (an executor), when constructed here
    method: str | None = None  # a bound method (``executor.submit``): its name ...
    bound: "Value | None" = None  # ... and its receiver; with ``ref`` too, ``getattr(obj,
    # name, default)``: the object's attribute if it has one, else ``ref`` (the default)
    preset: Preset | None = None  # a ``functools.partial`` of ``ref`` (or of the bound method)
    part_of: str | None = None  # the container this value lives in (``d.setdefault(k, {})``)
    collection: bool = False  # surely a Python list/dict/set (a slice store into it keeps, not copies)
    host: bool = False  # surely a tensor in host memory (pack ``host-allocations``): a copy into it lands there
    array: bool = False  # surely a new array of numbers (pack ``array-allocations``): a store into it copies
    # An event recorded here (pack ``event-records``): the device copies issued before its
    # record (in-flight sites, pending keys), all its ``synchronize()`` waits for. None: not
    # recorded here.
    recorded: frozenset | None = None
    # The index of the parameter this is, as the caller passed it, on every path: a join
    # with anything else forgets it (``to_cpu = plan.to_cpu`` on one path). What a call
    # passes on unchanged, so a callee's condition on it becomes the caller's
    # (``conditions.exact_parameter``).
    param: int | None = None
    # The classes this value is (a class object: ``chosen = Reader``, an alias constant, an
    # element of a module tuple of classes), each with the conditions on the parameters
    # under which it is that class (``(qualname, when)``, ``when`` a conjunction of
    # ``conditions.ParamTest`` as ``Borrow.when``). Empty: not known to be a class.
    classes: frozenset = frozenset()
    # Of ``types``, those this object is an instance of only under conditions on the
    # parameters (``(qualname, when)``): ``return chosen()`` after a branch that passed over
    # a class when a flag is set. A method called on it reaches that class's method only
    # under them (``call_project.targets_typed``).
    type_when: frozenset = frozenset()
    # Surely not None: a function, a class, a project method bound to its object. What a
    # caller passes so decides a callee's ``is None`` test (``conditions.decide_at_call``).
    not_none: bool = False
    # This value is the truth of a test of a parameter as the caller passed it (``key_filter
    # is not None``, ``not flag``): passed on as an argument, a callee's test of its truth
    # becomes that test of the caller's parameter (``conditions.decide_at_call``).
    truth: object = None
    # The project functions this value may be when it may be one of several (a list of
    # callbacks, ``hook = first if flag else second``): calling it runs each. Empty: at
    # most the one ``ref`` names.
    callables: frozenset = frozenset()
    # A record's field names, in the order of ``items`` (``transfer.records``): what
    # ``item.tensor`` finds in it.
    fields: tuple | None = None
    # What the calls that built this object said of the ``owned-if`` conditions naming them
    # (``built-by``): ``(condition, owned)`` per construction it may come from. A producer's
    # later call is owned only when every one of them is (``produced.built_owned``).
    built: frozenset = frozenset()
    # Which object this is, when the program can tell it from the others of its class: the
    # allocation sites it may come from, a constructor call (``Buf(n)``) or, for an object
    # kept in a field, the calls every store into that field makes it with
    # (``ProjectIndex.field_objects``). Empty: not known (any object of its classes). The
    # pinned buffers read from its fields are that object's (``Borrow.objects``).
    objects: frozenset = frozenset()
    # A dict of keyword arguments whose keys are all known (``kwargs = {}``, ``dict(a=1)``,
    # ``kwargs["non_blocking"] = True``): ``(key, value, when)`` per entry, the key present
    # only on paths where ``when`` holds (``conditions.ParamTest``s, as ``Borrow.when``; the
    # path's assumptions where it was stored) and absent on the others; a key with no entry
    # is absent. What ``f(**kwargs)`` passes by that name (``Args.argument``). None: the
    # keys are not known (any key may be there).
    keys: tuple | None = None
    # The tensor's dtype (a qualified name, ``torch.bfloat16``) where a test proved it
    # (``assert w.dtype == torch.bfloat16``) or a conversion made it (``w.float()``): a
    # conversion to another dtype is a copy (pack ``dtype-conversions``). None: not known.
    dtype: str | None = None

    def is_empty(self) -> bool:
        return self == EMPTY


EMPTY = Value()

# ``Value.objects`` of the current stream (pack ``current-streams``): one object wherever it
# is asked for, whose ``synchronize()`` waits for its own queue only.
CURRENT_STREAM: frozenset = frozenset({("<current stream>",)})
NOTHING: frozenset = frozenset()


def const(value: object) -> Value:
    return Value(const=value, has_const=True)


def evolve(obj, **changes):
    """``dataclasses.replace`` for the analysis's frozen records (no ``__post_init__``):
    a copy with ``changes``, five times cheaper, which matters in the fixpoint's inner loops."""
    new = object.__new__(type(obj))
    fields = new.__dict__
    fields.update(obj.__dict__)
    fields.update(changes)
    return new


@overload
def join(a: Value, b: Value | None) -> Value: ...
@overload
def join(a: Value | None, b: Value) -> Value: ...
@overload
def join(a: Value | None, b: Value | None) -> Value | None: ...
def join(a: Value | None, b: Value | None) -> Value | None:
    if a is None or a is b:
        return b if a is None else a
    if b is None:
        return a
    if a == b:
        return a
    items = fields = None
    elems = join(a.elems, b.elems)
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
        fields = a.fields if a.fields == b.fields else None
    elif a.items is not None and b.items is None and b.elems is None:
        items, fields = a.items, a.fields  # the other side holds no elements: positions stay known
    elif b.items is not None and a.items is None and a.elems is None:
        items, fields = b.items, b.fields
    else:
        for side in (a, b):
            if side.items is not None:
                for item in side.items:
                    elems = join(elems, item)
    cond = None
    if a.cond is not None and b.cond is not None:
        cond = Cond(a.cond.clean_if_true & b.cond.clean_if_true, a.cond.clean_if_false & b.cond.clean_if_false)
    same_const = a.has_const and b.has_const and a.const == b.const and type(a.const) is type(b.const)
    return Value(
        leaves=a.leaves | b.leaves,
        elems=elems,
        items=items,
        lazy=a.lazy or b.lazy,
        cond=cond,
        const=a.const if same_const else None,
        has_const=same_const,
        ref=a.ref if a.ref == b.ref else None,
        types=a.types | b.types,
        declared=a.declared & b.declared,
        pending=a.pending | b.pending,
        origin=a.origin if a.origin == b.origin else None,
        asked=(a.asked if a.asked == b.asked else a.asked & b.asked) if a.origin is not None and a.origin == b.origin
        else NOTHING,
        alloc=a.alloc | b.alloc,
        method=a.method if a.method == b.method else None,
        bound=(join(a.bound, b.bound) if a.bound is not None and b.bound is not None else None)
        if a.method == b.method
        else None,
        preset=a.preset if a.preset == b.preset else None,
        part_of=a.part_of if a.part_of == b.part_of else None,
        collection=a.collection and b.collection,
        host=a.host and b.host,
        array=a.array and b.array,
        recorded=_covered(a.recorded, b.recorded),
        param=a.param if a.param == b.param else None,
        classes=join_classes(a, b),
        type_when=_join_type_when(a, b),
        not_none=a.not_none and b.not_none,
        truth=a.truth if a.truth == b.truth else None,
        fields=fields,
        built=a.built | b.built,
        objects=_join_objects(a, b),
        keys=_join_keys(a.keys, b.keys),
        dtype=a.dtype if a.dtype == b.dtype else None,
        callables=a.callables if a.ref == b.ref and a.callables == b.callables else _callables(a) | _callables(b),
    )


# The most entries a dict of keyword arguments keeps known (``Value.keys``): past it, its
# keys are not known (any may be there).
MAX_KEYS = 8


def _join_keys(a: tuple | None, b: tuple | None) -> tuple | None:
    """The keys of a dict that is one of two: each side's entries (an entry of one side
    only is absent on the other's paths: its own condition still says when it is there);
    not known when either side's are not."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    entries = tuple(dict.fromkeys(a + b))
    return entries if len(entries) <= MAX_KEYS else None


def _join_objects(a: Value, b: Value) -> frozenset:
    """The object a value is on one path or another: any of both sides' when each side
    knows, or the other is None; not known when either side may be another object."""
    if a.objects and b.objects:
        return a.objects | b.objects
    if a.objects and b.has_const and b.const is None:
        return a.objects
    if b.objects and a.has_const and a.const is None:
        return b.objects
    return frozenset()


def _callables(value: Value) -> frozenset:
    """The functions a value may be called as: those it may be, or the one it names (a
    name of a class, module or constant is never called as a function: the call skips it)."""
    if value.ref is None or value.classes or value.leaves:
        return value.callables
    return value.callables | {value.ref}


def _adds_no_class(value: Value) -> bool:
    """A value that says nothing of what the object is (no leaf, reference, type or constant:
    what a join's other parts, or a call not known, contribute), or None (calling it or
    reading its attribute raises): a join keeps the other side's classes, as it keeps its
    ``types``."""
    if value.has_const:
        return value.const is None
    return not (value.leaves or value.ref or value.types or value.declared or value.method or value.elems or value.items)


def join_classes(a: Value, b: Value) -> frozenset:
    """The classes a value is on one path or another (a class on both keeps the conditions
    both share: a disjunction of conjunctions, widened to the weaker conjunction); a path
    whose value is something else known makes them unknown."""
    if not a.classes or not b.classes:
        if a.classes and _adds_no_class(b):
            return a.classes
        if b.classes and _adds_no_class(a):
            return b.classes
        return frozenset()
    return merge_candidates(a.classes | b.classes)


def merge_candidates(candidates: Iterable[tuple[str, frozenset]]) -> frozenset:
    """One ``(qualname, when)`` per class: a class met under several conditions holds under
    those they all share."""
    merged: dict[str, frozenset] = {}
    for qualname, when in candidates:
        merged[qualname] = merged[qualname] & when if qualname in merged else when
    return frozenset(merged.items())


def _join_type_when(a: Value, b: Value) -> frozenset:
    """The conditions of each type on either path: a type held unconditionally on one path
    (in ``types`` without an entry) is unconditional."""
    if not a.type_when and not b.type_when:
        return frozenset()
    every = [(q, w) for v in (a, b) for q, w in conditional_types(v)]
    return frozenset((q, w) for q, w in merge_candidates(every) if w)


def conditional_types(value: Value) -> Iterator[tuple[str, frozenset]]:
    """Each of the value's types with its conditions (empty: unconditional)."""
    when = dict(value.type_when)
    for qualname in value.types:
        yield qualname, when.get(qualname, frozenset())


def _covered(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    """What an event recorded on one path or another surely covers: what both cover (an
    event not recorded on one path is judged by the other's record)."""
    if a is None or b is None:
        return a if b is None else b
    return a & b


def join_all(values: Iterable[Value | None]) -> Value:
    result: Value | None = None
    for value in values:
        result = join(result, value)
    return result or EMPTY


def container(elems: Value | None, items: tuple[Value, ...] | None = None, lazy: bool = False) -> Value:
    """A new container (list, tuple, dict, closure, partial) holding these values."""
    if items is not None:
        elems = join(elems, join_all(items))
    elems = cap(elems, MAX_DEPTH)
    if elems is not None and elems.is_empty():
        elems = None
    if items is not None and all(i.is_empty() for i in items):
        items = None if elems is None else items
    return Value(elems=elems, items=items, lazy=lazy)


def collection(elems: Value | None) -> Value:
    """A new list, dict or set holding these values (possibly none yet)."""
    return evolve(container(elems), collection=True)


def cap(value: Value | None, depth: int) -> Value | None:
    """Flatten nesting beyond ``depth`` so loops that nest containers still converge."""
    if value is None:
        return None
    if depth <= 0:
        flat = frozenset(deep_leaves(value, through_lazy=True))
        return Value(leaves=flat) if flat else None
    elems = cap(value.elems, depth - 1)
    items = tuple(cap(i, depth - 1) or EMPTY for i in value.items) if value.items is not None else None
    if elems is value.elems and (items is None or items == value.items):
        return value
    return evolve(value, elems=elems, items=items)


def deep_pending(value: Value | None) -> frozenset:
    """Every pending submission a value stands for, including futures held in containers."""
    if value is None:
        return frozenset()
    out = set(value.pending)
    for item in value.items or ():
        out |= deep_pending(item)
    out |= deep_pending(value.elems)
    return frozenset(out)


def deep_leaves(value: Value | None, through_lazy: bool = False) -> Iterator[Leaf]:
    """Every leaf reachable in the value: the object itself and what it contains.

    A lazy iterator's elements do not exist yet, so they are skipped unless asked for.
    """
    if value is None:
        return
    yield from value.leaves
    if value.items is not None:
        for item in value.items:
            yield from deep_leaves(item, through_lazy)
    if value.elems is not None and (through_lazy or not value.lazy):
        yield from deep_leaves(value.elems, through_lazy)


def has_leaves(value: Value) -> bool:
    """Does the value hold any leaf at all (lazy elements included)? Without one, following
    an access path into it finds nothing."""
    return next(deep_leaves(value, through_lazy=True), None) is not None


def map_leaves(value: Value, fn) -> Value:
    """Rebuild ``value`` with each leaf replaced by ``fn(leaf)`` (None drops it)."""
    mapped = [(leaf, fn(leaf)) for leaf in value.leaves]
    elems = map_leaves(value.elems, fn) if value.elems is not None else None
    items = tuple(map_leaves(i, fn) for i in value.items) if value.items is not None else None
    preset = value.preset
    if preset is not None:  # what a partial binds is instantiated with what it holds
        positional = tuple(map_leaves(v, fn) for v in preset.positional)
        keywords = tuple((k, map_leaves(v, fn)) for k, v in preset.keywords)
        if any(a is not b for a, b in zip(positional + tuple(v for _, v in keywords),
                                           preset.positional + tuple(v for _, v in preset.keywords))):
            preset = Preset(positional, keywords)
    unchanged = all(old is new for old, new in mapped) and elems is value.elems and preset is value.preset
    if unchanged and (items is None or value.items is None or all(a is b for a, b in zip(items, value.items))):
        return value
    leaves = best_of_equal([new for _, new in mapped if new is not None])
    return evolve(value, leaves=leaves, elems=elems, items=items, preset=preset)


def best_of_equal(leaves: list) -> frozenset:
    """The leaves as a set, of those equal (two objects a callee handed back from two of its
    own calls, re-identified at one call of it: ``Borrow.at_call``) the one with the
    preferred trace. A set keeps whichever it met first, and the order of a set's elements
    is not the same in every run, so the trace shown would not be either."""
    kept = frozenset(leaves)
    if len(kept) == len(leaves):
        return kept
    best: dict = {}
    for leaf in leaves:
        old = best.get(leaf)
        if old is None or preferred_trace(getattr(leaf, "trace", ()), getattr(old, "trace", ())):
            best.pop(leaf, None)
            best[leaf] = leaf
    return frozenset(best)


def clean(value: Value, facts: frozenset) -> Value:
    """Drop every leaf whose object (or the object it is a view of) guard facts prove not
    borrowed; a parameter checked for some kinds keeps them on its path (``Cleared``)."""
    if not facts:
        return value
    tags = fact_tags(facts)
    return map_leaves(value, lambda leaf: clear_leaf(leaf, tags.get(leaf.base)))


def fact_tags(facts: frozenset) -> dict[tuple, frozenset]:
    """Guard facts ``(identity, tag)`` grouped by identity."""
    out: dict[tuple, set] = {}
    for identity, tag in facts:
        out.setdefault(identity, set()).add(tag)
    return {identity: frozenset(tags) for identity, tags in out.items()}


def clear_leaf(leaf: Leaf, tags: frozenset | None) -> Leaf | None:
    """``leaf`` after checks with these tags: None when they prove it unborrowed."""
    if not tags:
        return leaf
    if isinstance(leaf, Borrow):
        return None if leaf.cleared_by(tags) else leaf
    return None if None in tags else leaf.cleared_for(tags)


def clear_kinds(value: Value, kinds: frozenset) -> Value:
    """A caller's argument seen through a callee's check for these kinds: its borrowed objects
    of those kinds (or of no known kind) are clean, its own parameters carry the check on."""
    return map_leaves(value, lambda leaf: clear_leaf(leaf, kinds))


def view_of(value: Value, step: TraceStep | None = None, region: tuple | None = None) -> Value:
    """A derived view (or maybe-alias) of the value: same memory, new object, no marker
    (``region``: the part of a pinned buffer a slice names, ``Borrow.as_view``)."""
    leaves = []
    for leaf in value.leaves:
        if isinstance(leaf, Borrow):
            leaves.append(leaf.as_view(step, region))
        else:
            leaves.append(leaf.extend("view", step))
    return Value(leaves=frozenset(leaves))


def iterate(value: Value, step: TraceStep | None = None) -> Value:
    """What ``for x in value`` binds ``x`` to."""
    return _element(value, "iter", step)


def index(value: Value, key: object = None, step: TraceStep | None = None, region: tuple | None = None) -> Value:
    """What ``value[key]`` (or unpacking) gives; ``key`` is a known int position or None
    (``region``: the part of a pinned buffer the key names, ``Borrow.as_view``)."""
    if isinstance(key, int) and value.items is not None:
        if -len(value.items) <= key < len(value.items):
            extra = Value(leaves=_extend_params(value.leaves, key, step))
            return join(value.items[key], extra) if extra.leaves else value.items[key]
        # Past the end of a tuple of known length (``args[2]`` of a pair): indexing the tuple
        # raises, so only what the value is besides the tuple (its own leaves) has one.
        return _element(evolve(value, items=None, elems=None), key, step, region)
    return _element(value, "item" if not isinstance(key, int) else key, step, region)


def _element(value: Value, op: object, step: TraceStep | None, region: tuple | None = None) -> Value:
    parts: list[Value | None] = [value.elems]
    if value.items is not None:
        parts.extend(value.items)
    leaves = set(_extend_params(value.leaves, op, step))
    # An element of a tensor (a row) is a view of it.
    leaves.update(leaf.as_view(step, region) for leaf in value.leaves if isinstance(leaf, Borrow))
    # A parameter stands for its own futures (if it is one) and its elements' (if it holds
    # some): an element inherits the keys, so waiting on each element waits on the parameter.
    if leaves or (value.leaves and value.pending):  # nothing more: a list of one function keeps it callable
        parts.append(Value(leaves=frozenset(leaves), pending=value.pending if value.leaves else frozenset()))
    return join_all(parts)


def _extend_params(leaves: frozenset, op: object, step: TraceStep | None) -> frozenset:
    return frozenset(leaf.extend(op, step) for leaf in leaves if isinstance(leaf, ParamRef))


def resolve(value: Value, path: tuple, step: TraceStep | None = None, produce: Producer | None = None) -> Value:
    """Follow a summary's access path into an actual argument value (``produce``: what a
    source's method hands out for an object the caller passes, for ``Produced`` steps)."""
    for op in path:
        if isinstance(op, Cleared):
            value = clear_kinds(value, op.kinds)
            continue
        if op == WIDENED:
            value = _anything_in(value, step)
        elif op == "iter":
            value = iterate(value, step)
        elif op == "view":
            value = view_of(value, step)
        elif op == "item":
            value = index(value, None, step)
        elif isinstance(op, Field):
            value = field_part(value, op, step)
        elif isinstance(op, Produced):
            value = produced_part(value, op, step, produce)
        else:
            value = index(value, op, step)
        step = None
    return value


def produced_part(value: Value, op: Produced, step: TraceStep | None, produce: Producer | None) -> Value:
    """What ``op.method`` of an actual argument hands out: what the source gives for the
    object passed (``produce``), and the same part of the caller's own parameters."""
    params = frozenset(leaf.extend(op, step) for leaf in value.leaves if isinstance(leaf, ParamRef))
    made = produce(value, op.method) if produce is not None else None
    return join(made, Value(leaves=params) if params else None) or EMPTY


def field_part(value: Value, field: Field, step: TraceStep | None) -> Value:
    """The record field ``field`` of an actual argument: the part a record built here holds
    there, and the same field of the caller's own parameters; nothing of any other object (a
    tensor's row is no field of it), so a field's summary meets only records."""
    part = value.items[field.position] if value.fields is not None and value.items is not None \
        and field.position < len(value.items) else None
    params = frozenset(leaf.extend(field, step) for leaf in value.leaves if isinstance(leaf, ParamRef) and not leaf.path)
    return join(part, Value(leaves=params) if params else None) or EMPTY


def _anything_in(value: Value, step: TraceStep | None) -> Value:
    """What a widened path's last step stands for in an argument: the value and everything it
    holds (lazy elements too), flattened as ``cap`` flattens, with the futures it holds; the
    caller's own parameters in it are widened in turn."""
    leaves = frozenset(
        leaf.extend(WIDENED, step) if isinstance(leaf, ParamRef) else leaf for leaf in deep_leaves(value, through_lazy=True)
    )
    return Value(leaves=leaves, pending=deep_pending(value))


def identities(value: Value) -> frozenset:
    """The objects a marker check on this value inspects: the value itself, never its views."""
    return frozenset(i for i in (leaf.identity for leaf in value.leaves) if i is not None)


def checked(value: Value, tags) -> frozenset:
    """Guard facts for a check of ``value`` with these tags (see ``clean``)."""
    return frozenset((identity, tag) for identity in identities(value) for tag in tags)


def advances_producer(iterable: Value) -> bool:
    """Does taking the next element let a producer refill its buffer? A lazy stream of
    (maybe) borrowed elements, or an iterable parameter (the caller may pass one). Lists,
    ranges, a tensor's own views and lazy iterators of other things (``as_completed``) do not."""
    if iterable.lazy and any(not pinned_buffer(leaf) for leaf in deep_leaves(iterable.elems, through_lazy=True)):
        return True
    return any(isinstance(leaf, ParamRef) and "view" not in leaf.path for leaf in iterable.leaves)


def waits_when_exhausted(iterable: Value) -> frozenset:
    """The pending work an iterator stands for itself, whose every element waits for its
    share (an eager sink's results, ``pool.map(fn, items)``): taken to its end (``list(...)``,
    a ``for`` loop that ran out), every task has finished. Empty for anything else."""
    return iterable.pending if iterable.lazy else frozenset()


def in_flight(leaf: Leaf) -> bool:
    """A host tensor a non-blocking device-to-host copy is still filling (only a host read of
    it is a hazard: ``Hazard.about_in_flight``)."""
    return isinstance(leaf, Borrow) and leaf.flight


def program_memory(leaf: Leaf) -> bool:
    """Memory the program owns rather than a view a producer lends: a host tensor a copy from
    the device is filling, or a pinned buffer the program allocated. Only the device hazards
    are about these (``Hazard.about_in_flight``, ``Hazard.ended_by_write``); the reuse
    hazards (a task, a kept view, a refill by the producer) ignore them."""
    return isinstance(leaf, Borrow) and (leaf.flight or leaf.pinned)


def pinned_buffer(leaf: Leaf) -> TypeGuard[Borrow]:
    """A pinned host buffer the program allocated (``Borrow.pinned``)."""
    return isinstance(leaf, Borrow) and leaf.pinned


def on_host(value: Value) -> bool:
    """Surely host memory: a host allocation (``Value.host``), or a pinned buffer the
    program allocated (or a view of one) wherever it was kept, since pinned memory is host
    memory: a copy into it from the device lands there later, one from it to the host is
    synchronous. A buffer a copy is filling holds that copy too (``Effects.fill``). Copies
    in flight alone do not count: a move of one to the device keeps its leaf
    (``calls._off_the_host`` drops only pinned buffers)."""
    return value.host or (
        any(pinned_buffer(leaf) for leaf in value.leaves) and all(program_memory(leaf) for leaf in value.leaves)
    )


def meets(a: Borrow, b: Borrow) -> bool:
    """May the two parts share bytes: parts of one buffer not provably disjoint
    (``Borrow.region``)?"""
    return a.site == b.site and same_object(a.objects, b.objects) and not disjoint(a.region, b.region)


def same_object(a: frozenset, b: frozenset) -> bool:
    """May two buffers of one allocation site be one object's (``Borrow.objects``): either
    object not known, or both may come from one allocation site."""
    return not a or not b or not a.isdisjoint(b)


def of_object(value: Value, objects: frozenset) -> Value:
    """``value`` read from a field of the object ``objects`` names: the pinned buffers in
    it whose object is not known are that object's."""
    if not objects:
        return value

    def own(leaf: Leaf) -> Leaf:
        if pinned_buffer(leaf) and not leaf.objects:
            return evolve(leaf, objects=objects)
        return leaf

    return map_leaves(value, own)


def held_in_heap(value: Value) -> Value:
    """``value`` as the heap keeps it: its pinned buffers are the heap's objects
    (``Borrow.held``), the same at every call of a function that reads and hands them back."""

    def held(leaf: Leaf) -> Leaf:
        return evolve(leaf, held=True) if pinned_buffer(leaf) and not leaf.held else leaf

    return map_leaves(value, held)


def in_flight_sites(value: Value) -> frozenset:
    return frozenset(leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow) and leaf.flight)


def landed_leaf(leaf: Leaf, flying: frozenset) -> bool:
    """An in-flight copy that a synchronisation has completed since (not in ``flying``)."""
    return isinstance(leaf, Borrow) and leaf.flight and leaf.site not in flying


def has_field(path: tuple) -> bool:
    """Does an access path go through a record parameter's field (``Field``)?"""
    return any(isinstance(op, Field) for op in path)


def callback_path(path: tuple) -> bool:
    """Is ``path`` that of a callback each call site resolves (``Summary.calls``): the
    parameter itself, a part of it, or a callable field of a record parameter
    (``plan.overlap(w)``)? A path through a record's field otherwise stays local to the
    function (``local_fields``)."""
    return not has_field(path) or (len(path) == 1 and isinstance(path[0], Field))


def local_fields(value: Value, followed: Callable[[int, int], bool] | None = None) -> Value:
    """``value`` without the parts of record parameters' fields (``Field``): what a call
    passes on or a summary hands back of them is nothing, but for the fields ``followed``
    says (parameter, position) a caller passed a borrowed value or a copy in flight in
    (``Program.flow_fields``)."""
    def local(leaf: Leaf) -> bool:
        return isinstance(leaf, ParamRef) and has_field(leaf.path) and not (
            followed is not None and isinstance(leaf.path[0], Field) and followed(leaf.index, leaf.path[0].position)
        )

    if not any(local(leaf) for leaf in deep_leaves(value, through_lazy=True)):
        return value
    return map_leaves(value, lambda leaf: None if local(leaf) else leaf)
