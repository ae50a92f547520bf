"""Rule packs: the declarative vocabulary the analysis knows about libraries.

A pack (a TOML file in ``rules/``, or ``[tool.bufferlint]`` in a project's pyproject.toml)
names the callables that produce borrowed values (sources), the attributes that mark them
(markers), the predicates that keep them off async paths (guards), the calls that copy
(sanitizers) or alias (views) them, and the async consumers (sinks), plus the wrappers that re-yield their input (passthrough, e.g. ``tqdm``), the
calls that wait for submitted work (settlers: a method waits for its receiver, a function
for its arguments), for every task of an executor (drains: ``shutdown``, ``__exit__``) or
for all outstanding device work
(synchronizers), those whose result keeps its arguments for later (binds, e.g.
``functools.partial``) and calls that keep their arguments (retainers: a method in its
receiver, ``Module.register_buffer``; a function in its first argument, ``heapq.heappush``). Borrow kinds (``[[kinds]]``, Pysa's taint kinds) group a
producer's markers with how to copy its values and what to do instead; sources, guards and
sanitizers name their kind, so messages and fixes never use another kind's marker or copy
method, and a guard or copy of one kind protects no value of another. ``signatures`` name
the parameters of function-style views; ``not-one-value`` the calls whose result a kind's
copy does not apply to (for the fixes). Users describe their own zero-copy producers the
same way as the shipped packs.

Callables are written as patterns:

* ``pkg.mod.func`` or ``pkg.mod.Class``: a function or class by qualified name;
* ``pkg.mod.Class.method``: that method (on receivers known to be of that class);
* ``.method``: a method of that name on any receiver;
* a ``(kw=value)`` suffix restricts a pattern to calls that pass that keyword constant,
  e.g. ``.to(copy=True)``; ``kw?=value`` also accepts calls that leave it out (the default),
  ``kw@N=value`` also looks at positional argument N, and ``'cuda*'`` matches by prefix.
  Patterns that clean or settle need the condition to hold for sure; sinks also match when
  the argument is not a constant (``non_blocking=flag`` may be true).
"""

from __future__ import annotations

import ast
import re
import sys
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Iterable, Iterator

from bufferlint.catalog import RULES
from bufferlint.hazards import Hazard
from bufferlint.versions import VersionRange, version_ranges

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class PackError(Exception):
    """A malformed pack or config: the message names the file and the key."""


# ---------------------------------------------------------------------------
# Call patterns


_PATTERN = re.compile(r"^(?P<name>\.?[A-Za-z_][\w.]*(?<=\w)(?:\.\*)?)(?:\((?P<cond>.*)\))?$")
_CONDITION = re.compile(r"^(?P<key>[A-Za-z_]\w*)(?:@(?P<position>\d+))?(?P<op>\??=)(?P<value>.+)$")
_LENGTH = re.compile(r"^len\((?P<key>[A-Za-z_]\w*)(?:@(?P<position>\d+))?\)=(?P<value>\d+)$")


@dataclass(frozen=True)
class ArgCondition:
    """``kw=value``: the call passes ``kw`` (or, with ``kw@N=value``, positional argument N)
    equal to ``value``; ``kw?=value``: it passes it so or not at all (``value`` is the
    default). A string value ending in ``*`` matches by prefix, and a string also matches a
    name whose last part it is (``return_when?='ALL_COMPLETED'`` accepts
    ``concurrent.futures.ALL_COMPLETED``). ``len(kw@N)=n``: the call passes a display of
    ``n`` elements there (``wait([future], ...)``: one future, whatever ``return_when``
    says, is waited for); the count of a collection built elsewhere is not known."""

    key: str
    value: Any
    optional: bool = False
    position: int | None = None
    length: bool = False

    def accepts(self, value: Any) -> bool:
        expected = self.value
        if isinstance(expected, str) and isinstance(value, str):
            if expected.endswith("*"):
                return value.startswith(expected[:-1])
            return value == expected or value.rsplit(".", 1)[-1] == expected
        return value == expected and type(value) is type(expected)

    def __str__(self) -> str:
        position = f"@{self.position}" if self.position is not None else ""
        if self.length:
            return f"len({self.key}{position})={self.value}"
        return f"{self.key}{position}{'?=' if self.optional else '='}{self.value!r}"


@dataclass(frozen=True)
class CallPattern:
    qualname: str | None  # "torch.clone", "concurrent.futures.Executor.submit"
    method: str | None  # "clone" for ".clone"
    required_kwargs: tuple[ArgCondition, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "CallPattern":
        match = _PATTERN.match(text.strip())
        if not match:
            raise ValueError(f"not a call pattern: {text!r} (expected 'pkg.func', 'pkg.Class.method' or '.method')")
        name = match.group("name")
        conditions: list[ArgCondition] = []
        for part in filter(None, (p.strip() for p in (match.group("cond") or "").split(","))):
            length = _LENGTH.match(part)
            if length:
                position = int(length.group("position")) if length.group("position") is not None else None
                conditions.append(ArgCondition(length.group("key"), int(length.group("value")), False, position, True))
                continue
            cond = _CONDITION.match(part)
            if not cond:
                raise ValueError(f"bad argument condition {part!r} in {text!r} (expected kw=value, kw?=value, kw@N=value or len(kw@N)=n)")
            try:
                value = ast.literal_eval(cond.group("value").strip())
            except (ValueError, SyntaxError):
                raise ValueError(f"bad keyword value {cond.group('value').strip()!r} in {text!r}") from None
            position = int(cond.group("position")) if cond.group("position") is not None else None
            conditions.append(ArgCondition(cond.group("key"), value, cond.group("op") == "?=", position))
        if name.startswith("."):
            return cls(None, name[1:], tuple(conditions))
        return cls(name, None, tuple(conditions))

    @property
    def last_name(self) -> str:
        return self.method if self.method else self.name.rsplit(".", 1)[-1]

    @property
    def prefix(self) -> str | None:
        """``torch.`` for ``torch.*``, a pattern naming every function of a module (and of
        its submodules); None for a pattern naming one."""
        return self.name[:-1] if self.name.endswith(".*") else None

    @property
    def name(self) -> str:
        """The qualified name ("" for a method pattern, which has ``method`` instead)."""
        return self.qualname or ""

    def __str__(self) -> str:
        base = f".{self.method}" if self.method else self.name
        if self.required_kwargs:
            base += "(" + ", ".join(str(c) for c in self.required_kwargs) + ")"
        return base


# ---------------------------------------------------------------------------
# Shapes: what a source hands out, and which part of it is borrowed


@dataclass(frozen=True)
class Shape:
    """``borrowed``, ``_`` (owned), ``iter[S]``, ``list[S]``, ``dict[_, S]`` or ``tuple[S, ...]``."""

    kind: str  # "borrowed" | "owned" | "iter" | "list" | "dict" | "tuple"
    items: tuple["Shape", ...] = ()

    def __str__(self) -> str:
        name = {"borrowed": "borrowed", "owned": "_"}.get(self.kind)
        return name or f"{self.kind}[{', '.join(map(str, self.items))}]"

    @classmethod
    def parse(cls, text: str) -> "Shape":
        shape, rest = cls._parse(text.replace(" ", ""))
        if rest:
            raise ValueError(f"unexpected {rest!r} in shape {text!r}")
        return shape

    @classmethod
    def _parse(cls, text: str) -> tuple["Shape", str]:
        if text.startswith("borrowed"):
            return cls("borrowed"), text[len("borrowed"):]
        if text.startswith("_"):
            return cls("owned"), text[1:]
        for kind in ("iter", "list", "dict", "tuple"):
            if text.startswith(kind + "["):
                rest = text[len(kind) + 1:]
                items = []
                while True:
                    item, rest = cls._parse(rest)
                    items.append(item)
                    if rest.startswith(","):
                        rest = rest[1:]
                        continue
                    if rest.startswith("]"):
                        rest = rest[1:]
                        break
                    raise ValueError(f"expected ',' or ']' in shape near {rest!r}")
                arity = {"iter": 1, "list": 1, "dict": 2}.get(kind)
                if arity is not None and len(items) != arity:
                    raise ValueError(f"{kind}[...] takes {arity} shape(s), got {len(items)}")
                return cls(kind, tuple(items)), rest
        raise ValueError(f"unknown shape at {text!r} (expected borrowed, _, iter[], list[], dict[], tuple[])")


# ---------------------------------------------------------------------------
# Vocabulary entries


@dataclass(frozen=True)
class OwnedIf:
    """A source call is owned (not borrowed) when it passes ``kwarg=equals``, either itself
    or, with ``receiver_call``, in an earlier call of that method on the same receiver
    (``streamer.stream_files(..., owned=True)`` before ``streamer.get_tensors()``), or, with
    ``built_by``, in the call that built the receiver (``safe_open(path, copy=True)`` before
    ``f.tensors()``): ownership decided where the producer object is made, which the
    receiver's value carries wherever it goes (``Value.built``)."""

    kwarg: str
    equals: Any
    receiver_call: str | None = None
    # The parameter defaults to ``equals`` (``owned=True`` from runai-model-streamer 0.17):
    # a call that leaves it out is owned too; only another value, or one not known, lends.
    default: bool = False
    built_by: CallPattern | None = None


@dataclass(frozen=True)
class BorrowKind:
    """A kind of borrowed value (Pysa's taint kinds): the attributes that mark it, how to copy
    one (``copy``: a template with ``{}`` for the value, ``"{}.clone()"``, ``"bytes({})"``) and
    what its producer can do instead (``remedy``). Sources, guards and sanitizers belong to a
    kind, so messages and fixes use the marker and copy of the values that reach them."""

    name: str
    markers: tuple[str, ...] = ()
    copy: str = ""
    remedy: str = ""
    origin: str = ""
    # A value the project marks with one of ``markers`` is borrowed only in these versions of
    # the library (``lends-in``); ``condition``, ``admitted``, ``floor`` as on a source, and
    # ``lends`` (False: no admitted version lends), set from the project's declarations.
    lends_in: tuple[VersionRange, ...] = ()  # every one must hold
    # Calls after which the writer has refilled the buffer (the next bucket's layout received,
    # a "ready" message): the refill an ``advances`` call of this source let happen is over,
    # and the views of the buffer read from then on read its new contents, as if handed out
    # again. Without it, an advance makes every view held since stale for good.
    ready_after: tuple[CallPattern, ...] = ()
    condition: str = ""
    admitted: str = ""
    floor: str = ""
    lends: bool = True
    # The classes whose values are of this kind (``numpy.ndarray``; a builtin by its bare
    # name, ``memoryview``): a source that names no kind takes the kind its producer's
    # annotations name.
    types: tuple[str, ...] = ()
    # The calls that make a value of this kind out of a buffer they view (``numpy.frombuffer``,
    # ``memoryview``): a borrowed value first viewed through one of them is copied with this
    # kind's copy, whatever its producer's kind (``np.frombuffer(buf).copy()``, not ``bytes``).
    made_by: tuple[str, ...] = ()
    # Classes every instance of which carries this kind's markers (a wrapper the producer hands
    # out): ``isinstance(v, C)`` checks the marker as ``getattr(v, marker, False)`` does.
    marked_classes: tuple[str, ...] = ()
    # Classes every value of this kind is an instance of (the RunAI streamer's views are
    # ``torch.Tensor``s) without naming the kind (``types`` does: a producer annotated with one
    # of those is of this kind): a single dispatcher given one runs the overload for its class.
    instance_of: tuple[str, ...] = ()
    # The reused buffer is accelerator memory, never the host's (InstantTensor's GPU ring): a
    # move of a value of this kind to the host (``host-allocations``: ``.to("cpu")``,
    # ``.cpu()``) is new host memory, a copy, not the maybe-view it is of a host tensor.
    on_device: bool = False
    # Library constants whose value is the kind's marker (SGLang's
    # ``weight_utils.RUNAI_STREAMER_TENSOR_ATTR``): a project importing one checks the marker
    # with ``getattr(w, RUNAI_STREAMER_TENSOR_ATTR, False)``, and the library's files are not
    # the project's, so the name's value is known from the pack only.
    marker_constants: tuple[str, ...] = ()

    def copy_of(self, text: str) -> str:
        return self.copy.replace("{}", text, 1)


@dataclass(frozen=True)
class SourceSpec:
    calls: tuple[CallPattern, ...]
    produces: Shape
    owned_if: tuple[OwnedIf, ...] = ()
    origin: str = ""
    kind: str = ""  # a BorrowKind name ("" when the pack names none)
    # "" : borrowed until the producer advances; "sync": in flight until the device is
    # synchronised (a non-blocking device-to-host copy: a host read before that is a hazard)
    until: str = ""
    # "receiver": the call fills its receiver, which is what is in flight (``pinned.copy_(gpu,
    # non_blocking=True)``), only when it is host memory and what it copies from is not known
    # to be; "" : the call's result is the source's value.
    fills: str = ""
    # Calls after which the producer may refill its buffer (``ring.release(slot)``, an
    # acknowledgement to the producing process): like its loop advancing.
    advances: tuple[CallPattern, ...] = ()
    # Attributes that are views of a reused buffer (``SharedMemory.buf``): reading one is
    # borrowing, like calling a source (``pkg.Class.attr``: on objects of that class).
    attributes: tuple[CallPattern, ...] = ()
    # The library versions in which the source lends (``lends-in``); (): every version.
    lends_in: tuple[VersionRange, ...] = ()  # every one must hold
    # Calls after which the writer has refilled the buffer (the next bucket's layout received,
    # a "ready" message): the refill an ``advances`` call of this source let happen is over,
    # and the views of the buffer read from then on read its new contents, as if handed out
    # again. Without it, an advance makes every view held since stale for good.
    ready_after: tuple[CallPattern, ...] = ()
    # The object whose construction decides (``owned-if``'s ``built-by``) is a context manager
    # whose exit frees the buffer (InstantTensor's reader, "freed on ``__exit__``"): a view
    # returned from inside its ``with`` block reaches the caller freed.
    freed_on_exit: bool = False
    # Set from the project's declarations (bufferlint.declarations.apply_declarations): the
    # versions under which it is a hazard ("with pkg<0.17"), what the project declares of
    # them, and the requirement that leaves them out ("pkg>=0.17").
    condition: str = ""
    admitted: str = ""
    floor: str = ""


@dataclass(frozen=True)
class HostWriteSpec:
    """A call that writes the bytes of a buffer now: its receiver (``buf.copy_(x)``,
    ``buf.fill_(0)``), one argument (``f.readinto(buf)``, position 0), the one passed by a
    keyword (``numpy.multiply(a, b, out=buf)``: ``"out="``), or every buffer among its
    arguments (``os.preadv(fd, [buf], offset)``). A pinned buffer a copy to the device
    still reads must not be written (BL006). A call that ``refills`` its buffer reads the next
    records into it (``sock.recv_into(buf)``): the buffer is reused, and the views of it are
    borrowed until it is refilled again."""

    calls: tuple[CallPattern, ...]
    # "receiver", "args" (every argument, in containers too), a position, or "kw=": the
    # argument passed by that keyword (``torch.cat(parts, out=buf)``)
    writes: str | int = "receiver"
    origin: str = ""
    refills: bool = False


@dataclass(frozen=True)
class SinkSpec:
    """An async consumer: the call's arguments (or receiver) are read later, on another thread
    or by the device, while the caller goes on."""

    calls: tuple[CallPattern, ...]
    unknown_receiver: bool = False  # ".submit" also matches receivers of unknown type
    enabled_by: str | None = None  # the call is async only when this argument may be true
    params: tuple[str, ...] = ()  # positional parameter names, to find `enabled_by` by position
    origin: str = ""
    # What a value it reads later is reported as (the pack names the rule that reports it:
    # ``rule = "BL004"``): a task reads it later, or a device copy does (``Hazard.sink_reader``).
    hazard: Hazard = Hazard.ASYNC_READ_AFTER_ADVANCE
    payload: str = "all"  # which values are read later: "all" arguments, "args", or the "receiver"
    within: tuple[CallPattern, ...] = ()  # only inside `with <one of these>:` (a CUDA stream)
    eager: bool = False  # submits every element of its iterable arguments up front (Executor.map)
    task: TaskCall | None = None  # how it calls the function it runs (``task = "fn(...)"``)
    # The class of the handle the call returns for its work (``zmq.MessageTracker``): the
    # pack's settlers and done-flags written on that class (``MessageTracker.wait``) match it.
    handle: str = ""
    # Which of the work the handle stands for: "all" of it, or only the "last-part" of the
    # sequence the call's first argument holds (pyzmq's ``send_multipart`` returns the last
    # frame's tracker): the other parts' reads are pending with nothing that waits for them;
    # or "none" of it (``await asyncio.Queue.put(item)`` returns once the item is queued, and
    # a getter reads it later): only a drain of the receiver waits for the reader.
    handle_covers: str = "all"
    # The field of the call's result that holds the handle, when the result is not the handle
    # itself (``zmq.Frame(data, track=True).tracker``): the result is an object whose field
    # ``handle_field`` is the handle, of class ``handle``. "": the result is the handle.
    handle_field: str = ""
    # The task it makes runs the awaitable it is given (``create_task(coro)``): waiting for the
    # task (awaiting it, the exit of the task group it was made in) waits for what that
    # awaitable stands for (``asyncio.to_thread(fn, w)``'s thread).
    awaits: bool = False
    # What awaiting the call's result waits for: the work being "done" (a future), or only its
    # being "queued" (an asyncio socket's zero-copy ``send``: the I/O thread reads the buffer
    # later); then the awaited result is the call's handle (the tracker), still pending.
    awaited: str = "done"
    # The callback runs on the caller's event loop before the calling coroutine resumes from
    # its next suspending await (``loop.call_soon``: the loop's ready queue is first in, first
    # out): awaiting a pack ``loop-yields`` call (``await asyncio.sleep(0)``) waits for it.
    runs_before_yield: bool = False


@dataclass(frozen=True)
class RegistrarSpec:
    """A call that keeps a callable to call it later with values of its own (a producer's
    ``reader.on_record(fn)``, a hook registry): the callable is analysed at the call, called
    with what ``passes`` says the later call passes by position ("borrowed": a view of a
    buffer the registrar reuses once the callable returns, of ``kind``; "owned": anything
    else), so what it hands to a task or keeps past its return is reported there."""

    calls: tuple[CallPattern, ...]
    callback: str  # the parameter that holds the callable
    params: tuple[str, ...] = ()  # positional parameter names, to find ``callback`` by position
    passes: tuple[str, ...] = ()
    origin: str = ""
    kind: str = ""

    def callback_position(self) -> int | None:
        return self.params.index(self.callback) if self.callback in self.params else None


@dataclass(frozen=True)
class TaskCall:
    """How a sink calls the function it runs later, from the pack's ``task`` template:
    ``"fn(...)"`` (the parameter ``fn`` is the function; the call's other arguments after it,
    and its keywords that are not the sink's own, are the function's) or
    ``"target(*args, **kwargs)"`` (the function's arguments are those parameters' tuple and
    mapping). The engine judges what the function does with them by its summary."""

    function: str  # the sink's parameter that holds the function
    args: str | None = None  # the parameter holding its positional arguments ("": none); None: the rest
    kwargs: str | None = None  # the parameter holding its keyword arguments (with ``args``)
    # An ``eager`` sink calls the function once per element of its iterable arguments
    # (``Executor.map(fn, names, weights)`` calls ``fn(name, weight)``): each argument the
    # function gets is an element of the one the sink got.
    each: bool = False


@dataclass(frozen=True)
class SanitizerSpec:
    """Calls returning an owned copy of their receiver (a method) or first argument. With a
    ``kind``, only values of that kind are copied (``.copy()`` of a NumPy array); other
    borrowed values pass through as views."""

    calls: tuple[CallPattern, ...]
    origin: str = ""
    kind: str = ""  # "" copies values of every kind


@dataclass(frozen=True)
class GuardSpec:
    calls: tuple[CallPattern, ...]
    param: int = 0  # which argument the guard inspects
    origin: str = ""
    kind: str = ""  # the BorrowKind whose marker the guard must check
    # The library versions in which the guard checks the marker (``checks-in``); (): every
    # version. A project whose declarations admit none of them calls a guard that lets
    # marked values through: it is left out (``apply_declarations``).
    checks_in: tuple[VersionRange, ...] = ()


@dataclass
class Vocabulary:
    """Everything the engine knows about libraries: the union of the loaded packs."""

    markers: set[str] = field(default_factory=set)
    sources: list[SourceSpec] = field(default_factory=list)
    guards: list[GuardSpec] = field(default_factory=list)
    sanitizers: list[SanitizerSpec] = field(default_factory=list)
    views: list[CallPattern] = field(default_factory=list)
    view_attributes: set[str] = field(default_factory=set)
    # Views laid out out of order (a transpose: ``w.t()``, ``w.T``): methods, or attributes
    # named as methods. A ``contiguous-copies`` call written on one copies.
    strided_views: list[CallPattern] = field(default_factory=list)
    # Views that return their receiver when it is laid out in order, else a contiguous copy
    # (``.contiguous()``): a view in general, a copy when written on a ``strided-views``
    # result (``w.t().contiguous()``).
    contiguous_copies: list[CallPattern] = field(default_factory=list)
    sinks: list[SinkSpec] = field(default_factory=list)
    registrars: list[RegistrarSpec] = field(default_factory=list)
    settlers: list[CallPattern] = field(default_factory=list)
    drains: list[CallPattern] = field(default_factory=list)
    # Methods that mark their receiver done for its waiters (``threading.Event.set``): a
    # task whose last statement (or its top-level ``finally``) calls one on a parameter has
    # done its work once the object it was given is marked, so that object's wait waits for it.
    signals: list[CallPattern] = field(default_factory=list)
    # Awaited calls that suspend the calling coroutine (``asyncio.sleep``): the event loop
    # runs every callback already scheduled with a ``runs-before-yield`` sink before it resumes.
    loop_yields: list[CallPattern] = field(default_factory=list)
    passthrough: list[CallPattern] = field(default_factory=list)
    groupers: list[CallPattern] = field(default_factory=list)
    # Calls that build a container of every element of their iterable arguments
    # (``collections.deque(stream)``, ``heapq.nlargest(k, stream)``): each element is taken
    # while the stream advances and kept (a materialisation, as ``list(stream)``).
    collectors: list[CallPattern] = field(default_factory=list)
    binds: list[CallPattern] = field(default_factory=list)
    synchronizers: list[CallPattern] = field(default_factory=list)
    # Calls true wherever device work can have been issued (``torch.cuda.is_available()``):
    # on their false branch no device copy is in flight, as after a synchronisation.
    device_available: list[CallPattern] = field(default_factory=list)
    retainers: list[CallPattern] = field(default_factory=list)
    # Attributes or methods of a pending handle that are true once its work is done
    # (``tracker.done``, ``future.done()``): a branch where one is true has waited for it, and
    # a ``while`` loop polling one is a wait, not a producer advancing.
    done_flags: list[CallPattern] = field(default_factory=list)
    # Calls that read a host tensor's bytes now, on the CPU (`.tolist()`, `.item()`, `int(t)`):
    # reading a value still in flight from the device is a hazard.
    host_reads: list[CallPattern] = field(default_factory=list)
    # Calls that read only what a value is (its length, type, identity, shape), never its
    # buffer's bytes (`len(views)`, `t.size()`): no read of a view its producer may have
    # refilled, and a result (an int, a bool, a type) that holds no view. Any other call
    # taking a view is taken to read its bytes.
    metadata_reads: list[CallPattern] = field(default_factory=list)
    host_allocations: list[CallPattern] = field(default_factory=list)
    # Calls whose result is a new array of numbers (``torch.empty(n, d)``, ``numpy.zeros(n)``,
    # not an object array): a store into one of its items (``stacked[i] = w``) copies ``w``'s
    # bytes into it, so the array keeps no view of ``w`` (a list or dict would).
    array_allocations: list[CallPattern] = field(default_factory=list)
    # Calls whose result is pinned host memory the program owns (``torch.empty(...,
    # pin_memory=True)``, ``t.pin_memory()``): a non-blocking copy to the device reads it after
    # the call returns, so it must not be written before a synchronisation (BL006).
    pinned_allocations: list[CallPattern] = field(default_factory=list)
    # Calls that return their receiver itself only when it is already where (and what) they
    # move it to, else a copy there (``t.to(device)``, ``t.cuda()``): a pinned buffer moved
    # anywhere but the host (``host-allocations``) is new memory, not the buffer (BL006).
    device_moves: list[CallPattern] = field(default_factory=list)
    host_writes: list[HostWriteSpec] = field(default_factory=list)
    event_records: list[CallPattern] = field(default_factory=list)
    # Calls returning a new event recorded now (``stream.record_event()``): as
    # ``event-records``, its synchronize waits for the work issued before the call only.
    recorded_events: list[CallPattern] = field(default_factory=list)
    # Calls constructing an event not recorded yet (``torch.cuda.Event()``): its synchronize
    # waits for nothing until it is recorded.
    new_events: list[CallPattern] = field(default_factory=list)
    # Calls returning the current stream (``torch.cuda.current_stream()``): its synchronize,
    # outside a stream context, does not wait for copies issued under one.
    current_streams: list[CallPattern] = field(default_factory=list)
    # Calls asking a stream whether the work queued on it is done (``side.query()``): true
    # once the copies issued before it are complete, as an event recorded at the call.
    stream_queries: list[CallPattern] = field(default_factory=list)
    kinds: dict[str, BorrowKind] = field(default_factory=dict)
    # Calls whose result is not one value a kind's copy applies to (a tuple of views, another
    # library's array): ``.chunk`` by method name, ``memoryview`` by qualified name, ``numpy.*``
    # every function of a module. The copy fixes leave such values alone.
    not_one_value: list[str] = field(default_factory=list)
    # qualname -> parameter names (Pysa's signatures): an argument passed by keyword is found
    signatures: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # qualname -> the parameter a function-style view acts on when it is not the first
    # (``numpy.ndarray(shape, dtype, buffer=buf)`` views ``buffer``; its position is in
    # ``signatures``): a call that does not pass it makes a new value, not a view.
    view_parameters: dict[str, str] = field(default_factory=dict)
    # Conversions that return the tensor itself when it already has the dtype they convert
    # to, a new tensor otherwise (``.float()``): pattern -> that dtype's qualified name.
    dtype_conversions: dict[str, str] = field(default_factory=dict)
    # qualname -> the parameter of a function-style retainer that keeps the others when it is
    # not the first (``torch.nn.utils.vector_to_parameters(vec, parameters)`` makes each of
    # ``parameters`` a view of ``vec``; its position is in ``signatures``).
    retained_in: dict[str, str] = field(default_factory=dict)
    packs: list[str] = field(default_factory=list)
    # origin -> "name: description" from a pack file's [pack] table, for --show-settings
    titles: dict[str, str] = field(default_factory=dict)
    # Sources no version the project admits lends in: (pattern, why), for --show-settings.
    not_lending: list[tuple[str, str]] = field(default_factory=list)
    # Guards that check the marker in no version the project admits: (pattern, why).
    not_checking: list[tuple[str, str]] = field(default_factory=list)
    # (key, pattern or name) -> where it was declared, for `check --show-settings`
    origins: dict[tuple[str, str], str] = field(default_factory=dict)

    def kind_of_types(self, types: Iterable[str]) -> str:
        """The one kind whose ``types`` include one of these classes; "" for none or several."""
        wanted = set(types)
        named = {kind.name for kind in self.kinds.values() if wanted.intersection(kind.types)}
        return named.pop() if len(named) == 1 else ""

    def kind_made_by(self, qualname: str | None) -> str:
        """The kind whose ``made-by`` names this call ("" for none, or several)."""
        named = {kind.name for kind in self.kinds.values() if qualname in kind.made_by} if qualname else set()
        return named.pop() if len(named) == 1 else ""

    def library_constant(self, qualname: str) -> tuple[bool, object]:
        """``(True, marker)`` when a kind names ``qualname`` among its ``marker-constants``
        (a library's name for its marker), else ``(False, None)``: asked only of a name the
        project's own files do not define."""
        for kind in self.kinds.values():
            if qualname in kind.marker_constants:
                return True, kind.markers[0]
        return False, None

    def kind(self, name: str) -> BorrowKind | None:
        """The kind called ``name``; for ``""`` (a value whose kind no pack names) the only
        kind that has markers, if there is exactly one."""
        if name:
            return self.kinds.get(name)
        marked = [kind for kind in self.kinds.values() if kind.markers]
        return marked[0] if len(marked) == 1 else None

    def check_kinds(self) -> None:
        """Every kind a source, guard or sanitizer names is defined by some loaded pack."""
        for key in PACK_KEYS:
            for spec in getattr(self, key.field) if key.kinded else ():
                if spec.kind and spec.kind not in self.kinds:
                    known = ", ".join(sorted(self.kinds)) or "none"
                    raise PackError(f"{spec.origin}: {key.key[:-1]} {spec.calls[0]} names unknown kind {spec.kind!r} (known: {known})")

    def for_rules(self, enabled: Callable[[str], bool]) -> "Vocabulary":
        """This vocabulary without the entries of keys that serve only rules not enabled: a
        pinned buffer is tracked (and the functions that write one analysed) only when BL006
        runs. The cache's key is made of what the analysis is given, so it follows too."""
        unused = [key for key in PACK_KEYS
                  if key.rules and getattr(self, key.field) and not any(enabled(code) for code in key.rules)]
        if not unused:
            return self
        return dataclasses.replace(self, **{key.field: type(getattr(self, key.field))() for key in unused})

    def merge(self, other: "Vocabulary") -> None:
        for name, kind in other.kinds.items():
            if name in self.kinds:
                raise PackError(f"{kind.origin}: kind {name!r} is already defined in {self.kinds[name].origin}")
        self.origins.update(other.origins)
        for key in PACK_KEYS:
            if key.merge is not None:
                key.merge(getattr(self, key.field), getattr(other, key.field))
        self.packs += other.packs
        self.titles.update(other.titles)
        self.not_lending += other.not_lending
        self.not_checking += other.not_checking


# ---------------------------------------------------------------------------
# Reading a pack: one reader per key


_NOT_ONE_VALUE = re.compile(r"^(?:\.[A-Za-z_]\w*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\.\*)?)$")


def _string_set(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> set[str]:
    return set(_string_list(data, key.key, origin))


def _not_one_value(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[str]:
    entries = _string_list(data, key.key, origin)
    for entry in entries:
        if not _NOT_ONE_VALUE.match(entry):
            raise PackError(f"{origin}: not-one-value: {entry!r} is not '.method', 'pkg.func' or 'pkg.*'")
    return entries


def _pattern_list(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[CallPattern]:
    return list(_patterns(data[key.key], f"{origin}: {key.key}")) if key.key in data else []


def _method_list(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[CallPattern]:
    """Patterns that name an attribute or method of any receiver (``.done``), nothing else."""
    patterns = _pattern_list(key, data, origin, vocab)
    if any(p.method is None or p.required_kwargs for p in patterns):
        raise PackError(f"{origin}: {key.key}: expected '.name' patterns (an attribute or method of the handle)")
    return patterns


def _kinds(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> dict[str, BorrowKind]:
    kinds: dict[str, BorrowKind] = {}
    for where, table in _tables(key, data, origin):
        name, copy, remedy = table.get("name"), table.get("copy", ""), table.get("remedy", "")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][\w-]*", name):
            raise PackError(f"{where}: 'name' must be a name such as \"numpy\"")
        if not isinstance(copy, str) or not isinstance(remedy, str):
            raise PackError(f"{where}: 'copy' and 'remedy' must be strings")
        if copy.startswith("."):
            copy = "{}" + copy  # ".clone()" is a method of the value
        if copy and copy.count("{}") != 1:
            raise PackError(f"{where}: 'copy' must be a method (\".clone()\") or a template with one {{}} (\"bytes({{}})\")")
        if name in kinds:
            raise PackError(f"{where}: kind {name!r} is defined twice")
        types = tuple(t if "." in t else f"builtins.{t}" for t in _string_list(table, "types", where))
        made_by = tuple(t if "." in t else f"builtins.{t}" for t in _string_list(table, "made-by", where))
        marked = tuple(_string_list(table, "marked-classes", where))
        instance_of = tuple(t if "." in t else f"builtins.{t}" for t in _string_list(table, "instance-of", where))
        if marked and not table.get("markers"):
            raise PackError(f"{where}: 'marked-classes' needs the kind's 'markers' (guards are judged marker by marker)")
        if any(c.count(".") < 1 for c in marked):
            raise PackError(f"{where}: 'marked-classes' must be qualified class names such as \"mylib.StreamedTensor\"")
        on_device = table.get("on-device", False)
        if not isinstance(on_device, bool):
            raise PackError(f"{where}: 'on-device' must be true or false")
        constants = tuple(_string_list(table, "marker-constants", where))
        if constants and len(table.get("markers", ())) != 1:
            raise PackError(f"{where}: 'marker-constants' needs exactly one marker in the kind's 'markers' (their value)")
        if any(c.count(".") < 1 for c in constants):
            raise PackError(f"{where}: 'marker-constants' must be qualified names such as \"mylib.MARKER_ATTR\"")
        kinds[name] = BorrowKind(name, tuple(_string_list(table, "markers", where)), copy, remedy, origin,
                                 _lends_in(table, where), types=types, made_by=made_by, marked_classes=marked,
                                 on_device=on_device, marker_constants=constants, instance_of=instance_of)
    return kinds


def _signatures(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> dict[str, tuple[str, ...]]:
    table = data.get(key.key, {})
    if not isinstance(table, dict):
        raise PackError(f"{origin}: 'signatures' must be a table of qualname = [parameter names]")
    out = {}
    for qualname, params in table.items():
        if not isinstance(params, list) or not params or not all(isinstance(p, str) and p.isidentifier() for p in params):
            raise PackError(f"{origin}: signatures.{qualname!r} must be a non-empty list of parameter names")
        out[qualname] = tuple(params)
    return out


def _view_parameters(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> dict[str, str]:
    table = data.get(key.key, {})
    if not isinstance(table, dict) or not all(isinstance(p, str) and p.isidentifier() for p in table.values()):
        raise PackError(f"{origin}: '{key.key}' must be a table of qualname = \"parameter name\"")
    return dict(table)


def _dtype_conversions(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> dict[str, str]:
    table = data.get(key.key, {})
    if not isinstance(table, dict) or not all(isinstance(d, str) and d for d in table.values()):
        raise PackError(f"{origin}: 'dtype-conversions' must be a table of call pattern = \"dtype qualname\"")
    try:
        return {str(CallPattern.parse(pattern)): dtype for pattern, dtype in table.items()}
    except ValueError as exc:
        raise PackError(f"{origin}: {exc}") from None


def _sources(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[SourceSpec]:
    sources = []
    for where, table in _tables(key, data, origin):
        advances = _patterns(table["advances"], f"{where}.advances") if "advances" in table else ()
        attributes = _patterns(table["attribute"], f"{where}.attribute") if "attribute" in table else ()
        ready_after = _patterns(table["ready-after"], f"{where}.ready-after") if "ready-after" in table else ()
        if ready_after and not advances:
            raise PackError(f"{where}: 'ready-after' ends the refill an 'advances' call starts: name that call too")
        if any(p.qualname is None or p.qualname.count(".") < 1 or p.required_kwargs for p in attributes):
            raise PackError(f"{where}.attribute: expected 'pkg.Class.attr' names")
        calls = _patterns(table.get("call"), f"{where}.call") if "call" in table or not attributes else ()
        until = table.get("until", "")
        if until not in ("", "sync"):
            raise PackError(f"{where}: 'until' must be \"sync\" (in flight until the device is synchronised)")
        fills = table.get("fills", "")
        if fills not in ("", "receiver") or (fills and until != "sync"):
            raise PackError(f"{where}: 'fills' must be \"receiver\", with until = \"sync\" (a copy into its receiver)")
        try:
            produces = Shape.parse(table.get("produces", "borrowed"))
        except (ValueError, AttributeError) as exc:
            raise PackError(f"{where}: produces: {exc}") from None
        owned_if = []
        for j, cond in enumerate(_table_list(table, "owned-if", where)):
            _check_keys(cond, OWNED_IF_KEYS, f"{where}.owned-if[{j}]")
            if not isinstance(cond.get("kwarg"), str) or "equals" not in cond:
                raise PackError(f"{where}.owned-if[{j}]: needs 'kwarg' (string) and 'equals'")
            if not isinstance(cond.get("default", False), bool):
                raise PackError(f"{where}.owned-if[{j}]: 'default' must be true or false")
            owned_if.append(_owned_if(cond, f"{where}.owned-if[{j}]"))
        freed_on_exit = table.get("freed-on-exit", False)
        if not isinstance(freed_on_exit, bool) or (freed_on_exit and not any(c.built_by for c in owned_if)):
            raise PackError(f"{where}: 'freed-on-exit' must be true or false, with an 'owned-if' naming 'built-by'")
        sources.append(SourceSpec(calls, produces, tuple(owned_if), origin, _kind_of(table, vocab.kinds, where), until,
                                  fills, advances, attributes, _lends_in(table, where), ready_after=ready_after,
                                  freed_on_exit=freed_on_exit))
    return sources


def _owned_if(cond: dict, where: str) -> OwnedIf:
    """One ``owned-if`` condition: on the source call itself, on an earlier call of a method
    of its receiver (``receiver-call``), or on the call that built its receiver (``built-by``,
    one call pattern without conditions of its own: the condition is ``kwarg``)."""
    built_by = None
    if "built-by" in cond:
        if "receiver-call" in cond:
            raise PackError(f"{where}: 'built-by' and 'receiver-call' exclude each other")
        patterns = _patterns(cond["built-by"], f"{where}.built-by") if isinstance(cond["built-by"], str) else ()
        built_by = patterns[0] if patterns and not patterns[0].required_kwargs else None
        if built_by is None:
            raise PackError(f"{where}.built-by: expected one call pattern without conditions (\"pkg.Reader\", \".open\")")
    return OwnedIf(cond["kwarg"], cond["equals"], cond.get("receiver-call"), cond.get("default", False), built_by)


def _guards(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[GuardSpec]:
    guards = []
    for where, table in _tables(key, data, origin):
        param = table.get("param", 0)
        if not isinstance(param, int) or param < 0:
            raise PackError(f"{where}: 'param' must be a non-negative argument index")
        kind = _kind_of(table, vocab.kinds, where)
        guards.append(GuardSpec(_patterns(table.get("call"), f"{where}.call"), param, origin, kind,
                                _version_key(table, "checks-in", where)))
    return guards


def _host_writes(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[HostWriteSpec]:
    writes_list = []
    for where, table in _tables(key, data, origin):
        writes = table.get("writes", "receiver")
        keyword = isinstance(writes, str) and re.fullmatch(r"[A-Za-z_]\w*=", writes) is not None
        if writes not in ("receiver", "args") and not keyword and not (type(writes) is int and writes >= 0):
            raise PackError(f"{where}: 'writes' must be \"receiver\", \"args\", an argument's position (0, 1, ...)"
                            " or a keyword (\"out=\")")
        refills = table.get("refills", False)
        if not isinstance(refills, bool):
            raise PackError(f"{where}: 'refills' must be true or false")
        writes_list.append(HostWriteSpec(_patterns(table.get("call"), f"{where}.call"), writes, origin, refills))
    return writes_list


def _sinks(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[SinkSpec]:
    sinks = []
    for where, table in _tables(key, data, origin):
        params = tuple(_string_list(table, "params", where))
        enabled_by = table.get("enabled-by")
        if enabled_by is not None and not isinstance(enabled_by, str):
            raise PackError(f"{where}: 'enabled-by' must be a parameter name")
        unknown = table.get("unknown-receiver", False)
        if not isinstance(unknown, bool):
            raise PackError(f"{where}: 'unknown-receiver' must be true or false")
        hazard = _sink_hazard(table, where)
        payload = table.get("payload", "all")
        if payload not in ("all", "args", "receiver"):
            raise PackError(f"{where}: 'payload' must be \"all\", \"args\" or \"receiver\"")
        within = _patterns(table["within"], f"{where}.within") if "within" in table else ()
        eager = table.get("eager", False)
        if not isinstance(eager, bool):
            raise PackError(f"{where}: 'eager' must be true or false")
        task = _task_call(table["task"], params, where) if "task" in table else None
        if task is not None and eager:
            task = dataclasses.replace(task, each=True)
        handle = table.get("handle", "")
        if not isinstance(handle, str):
            raise PackError(f"{where}: 'handle' must be a class's qualified name")
        covers = table.get("handle-covers", "all")
        if covers not in ("all", "last-part", "none"):
            raise PackError(f"{where}: 'handle-covers' must be \"all\", \"last-part\" or \"none\"")
        if covers == "last-part" and not handle:
            raise PackError(f"{where}: 'handle-covers' needs the 'handle' it speaks of")
        handle_field = table.get("handle-field", "")
        if not isinstance(handle_field, str) or not (handle_field == "" or handle_field.isidentifier()):
            raise PackError(f"{where}: 'handle-field' must be an attribute name")
        if handle_field and (not handle or covers != "all"):
            raise PackError(f"{where}: 'handle-field' names where the 'handle' is: name the handle, covering all the work")
        awaits = table.get("awaits", False)
        if not isinstance(awaits, bool):
            raise PackError(f"{where}: 'awaits' must be true or false")
        awaited = table.get("awaited", "done")
        if awaited not in ("done", "queued"):
            raise PackError(f"{where}: 'awaited' must be \"done\" or \"queued\"")
        before_yield = table.get("runs-before-yield", False)
        if not isinstance(before_yield, bool):
            raise PackError(f"{where}: 'runs-before-yield' must be true or false")
        sinks.append(SinkSpec(_patterns(table.get("call"), f"{where}.call"), unknown, enabled_by, params, origin, hazard,
                              payload, within, eager, task, handle, covers, handle_field, awaits, awaited, before_yield))
    return sinks


def _registrars(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[RegistrarSpec]:
    registrars = []
    for where, table in _tables(key, data, origin):
        params = tuple(_string_list(table, "params", where))
        callback = table.get("callback", params[0] if params else None)
        if not isinstance(callback, str) or callback not in params:
            raise PackError(f"{where}: 'callback' must name one of 'params' (default: the first)")
        passes = tuple(_string_list(table, "passes", where))
        if any(p not in ("borrowed", "owned") for p in passes):
            raise PackError(f"{where}: 'passes' must list \"borrowed\" or \"owned\" for each argument")
        kind = _kind_of(table, vocab.kinds, where)
        registrars.append(RegistrarSpec(_patterns(table.get("call"), f"{where}.call"), callback, params, passes, origin,
                                        kind))
    return registrars


def _task_call(template: object, params: tuple[str, ...], where: str) -> TaskCall:
    """A sink's ``task`` template: ``"fn(...)"`` or ``"target(*args, **kwargs)"``, every
    name one of the sink's ``params``."""
    wrong = PackError(
        f"{where}: 'task' must be \"fn(...)\" or \"fn(*args, **kwargs)\", naming parameters listed in 'params'"
    )
    if not isinstance(template, str):
        raise wrong
    try:
        call = ast.parse(template, mode="eval").body
    except SyntaxError:
        raise wrong from None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id not in params:
        raise wrong
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Constant) and call.args[0].value is ...:
        return TaskCall(call.func.id)
    star = [a.value.id for a in call.args if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)]
    double = [k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, ast.Name)]
    if len(star) != len(call.args) or len(double) != len(call.keywords) or len(star) > 1 or len(double) > 1 \
            or not set(star + double) <= set(params):
        raise wrong
    return TaskCall(call.func.id, star[0] if star else "", double[0] if double else None)


def _sink_hazard(table: dict, where: str) -> Hazard:
    """A sink's ``rule``: the code of the catalog rule a value it reads later is reported
    as, one whose hazard a sink can report (``Hazard.sink_reader``); the engine gets that
    hazard. Without the key, the rule of a task reading the value later."""
    readers = {code: rule.hazard for code, rule in RULES.items() if rule.hazard.sink_reader is not None}
    code = table.get("rule")
    if code is None:
        return Hazard.ASYNC_READ_AFTER_ADVANCE
    if not isinstance(code, str) or code not in readers:
        choices = " or ".join(f'"{code}" ({hazard.sink_reader})' for code, hazard in readers.items())
        raise PackError(f"{where}: 'rule' must be {choices}")
    return readers[code]


def _sanitizers(key: "PackKey", data: dict, origin: str, vocab: Vocabulary) -> list[SanitizerSpec]:
    sanitizers = []
    for where, table in _tables(key, data, origin):
        kind = table.get("kind", "")
        if not isinstance(kind, str):
            raise PackError(f"{where}: 'kind' must be the name of a kind")
        sanitizers.append(SanitizerSpec(_patterns(table.get("call"), f"{where}.call"), origin, kind))
    return sanitizers


# ---------------------------------------------------------------------------
# Merging the packs' vocabularies


def _extend(mine: list, theirs: list) -> None:
    mine += theirs


def _extend_new(mine: list, theirs: list) -> None:
    mine += [entry for entry in theirs if entry not in mine]


def _union(mine: set, theirs: set) -> None:
    mine |= theirs


def _update(mine: dict, theirs: dict) -> None:
    mine.update(theirs)  # kinds: Vocabulary.merge refuses a kind defined twice first


# ---------------------------------------------------------------------------
# The pack keys


def _pattern_names(patterns: list[CallPattern]) -> list[str]:
    return [str(p) for p in patterns]


def _call_names(specs: list) -> list[str]:
    return [str(p) for spec in specs for p in spec.calls]


def _source_names(specs: list[SourceSpec]) -> list[str]:
    return _call_names(specs) + [str(p) for spec in specs for p in spec.attributes]


@dataclass(frozen=True)
class PackKey:
    """One top-level key of a pack (and of ``[tool.bufferlint]``), and everything done with it.

    Reading and validating (``read``), merging packs (``merge``), the names its entries are
    listed under with their origins by ``--show-settings`` (``names``), and how the matcher
    (``vocabmatch.VocabIndex``) finds them by the called name (``matched``) all come from here;
    docs/rule-packs.md's key reference lists every key and sub-key (tests/test_pack_keys.py).
    """

    key: str  # as written in TOML: "host-reads"
    field: str  # the Vocabulary attribute it fills ("" for [pack], which load_pack reads)
    form: str  # the TOML value: "patterns", "strings", "tables" ([[key]]) or "table" ([key])
    doc: str
    read: Callable[["PackKey", dict, str, Vocabulary], Any] | None = None
    merge: Callable[[Any, Any], None] | None = None
    subkeys: tuple[str, ...] = ()  # the keys its tables may have
    names: Callable[[Any], Iterable[str]] | None = None  # its entries for --show-settings (None: not shown)
    matched: str = ""  # "calls": each entry's call patterns are matched; "pattern": each entry is one
    kinded: bool = False  # its entries belong to a borrow kind (``kind``): checked against the kinds
    # The rules whose hazards are the only use of its entries (empty: every rule's). A run in
    # which none of them is enabled analyses without the entries (``Vocabulary.for_rules``).
    rules: tuple[str, ...] = ()


def _call_list(key: str, doc: str) -> PackKey:
    """A key whose value is a list of call patterns, each matched by the called name."""
    return PackKey(key, key.replace("-", "_"), "patterns", doc, _pattern_list, _extend, names=_pattern_names,
                   matched="pattern")


OWNED_IF_KEYS = ("kwarg", "equals", "receiver-call", "built-by", "default")

# In the order --show-settings lists them (and the readers run: kinds before the entries
# that name a kind).
PACK_KEYS: tuple[PackKey, ...] = (
    PackKey("pack", "", "table", "the pack's name and description", subkeys=("name", "description")),
    PackKey("markers", "markers", "strings", "attributes that mark borrowed values of no particular kind",
            _string_set, _union, names=list),
    PackKey("kinds", "kinds", "tables", "kinds of borrowed value: their markers, copy and remedy",
            _kinds, _update, ("name", "markers", "copy", "remedy", "doc", "lends-in", "types", "made-by",
                                  "marked-classes", "on-device", "marker-constants", "instance-of"), names=list),
    PackKey("signatures", "signatures", "table", "parameter names of functions, for arguments passed by keyword",
            _signatures, _update),
    PackKey("sources", "sources", "tables", "callables (or attributes) whose results are borrowed",
            _sources, _extend, ("call", "attribute", "produces", "owned-if", "doc", "kind", "until", "fills",
                                "advances", "ready-after", "lends-in", "freed-on-exit"), _source_names, "calls", kinded=True),
    PackKey("guards", "guards", "tables", "predicates that return False for borrowed values",
            _guards, _extend, ("call", "param", "doc", "kind", "checks-in"), _call_names, "calls", kinded=True),
    PackKey("sinks", "sinks", "tables", "async consumers: their arguments are read later",
            _sinks, _extend, ("call", "unknown-receiver", "enabled-by", "params", "doc", "rule", "payload", "within",
                              "eager", "task", "handle", "handle-covers", "handle-field", "awaits", "awaited",
                              "runs-before-yield"), _call_names, "calls"),
    PackKey("registrars", "registrars", "tables", "calls that keep a callable to call it later with values of their own",
            _registrars, _extend, ("call", "params", "callback", "passes", "kind", "doc"), _call_names, "calls",
            kinded=True),
    PackKey("sanitizers", "sanitizers", "tables", "calls returning an owned copy",
            _sanitizers, _extend, ("call", "doc", "kind"), _call_names, "calls", kinded=True),
    _call_list("views", "calls returning an alias of their input"),
    PackKey("view-attributes", "view_attributes", "strings", "attributes that are views of their object",
            _string_set, _union),
    _call_list("strided-views", "views laid out out of order (a transpose): methods, or attributes named as methods"),
    _call_list("contiguous-copies", "views that copy a receiver written as a strided view (`w.t().contiguous()`)"),
    PackKey("view-parameters", "view_parameters", "table",
            "the parameter a function-style view acts on when it is not the first", _view_parameters, _update),
    PackKey("dtype-conversions", "dtype_conversions", "table",
            "views that are the tensor itself only when it already has their dtype, else a copy", _dtype_conversions, _update),
    PackKey("retained-in", "retained_in", "table",
            "the parameter a function-style retainer keeps the others in when it is not the first", _view_parameters,
            _update),
    _call_list("settlers", "calls that wait for submitted work"),
    _call_list("drains", "calls that wait for every task of an executor"),
    _call_list("signals", "methods that mark their receiver done: a task ending with one on a parameter's object is waited for by its waits"),
    _call_list("loop-yields", "awaited calls that suspend the coroutine: the loop runs the callbacks scheduled before"),
    PackKey("done-flags", "done_flags", "patterns", "attributes or methods of a handle that are true once its work is done",
            _method_list, _extend, names=_pattern_names, matched="pattern"),
    _call_list("passthrough", "wrappers that re-yield their first argument's elements"),
    _call_list("groupers", "wrappers that yield groups of their first argument's elements, each collected at once"),
    _call_list("collectors", "calls whose result holds the elements of their iterable arguments, taken at once"),
    _call_list("binds", "calls whose result keeps their arguments for later"),
    _call_list("synchronizers", "calls that wait for all outstanding device work"),
    _call_list("device-available", "calls true wherever device work may be in flight: their false branch has none"),
    _call_list("retainers", "calls that keep their arguments: a method in its receiver, a function in its first argument"),
    _call_list("host-reads", "calls that read a host tensor's bytes now"),
    _call_list("metadata-reads", "calls that read a value's length, type or shape, never its bytes"),
    _call_list("host-allocations", "calls whose result lives in host memory"),
    _call_list("array-allocations", "calls whose result is a new array of numbers: a store into it copies"),
    dataclasses.replace(_call_list("pinned-allocations", "calls whose result is pinned host memory the program owns"),
                        rules=("BL006",)),
    dataclasses.replace(_call_list("device-moves", "calls that return their receiver only if it is already where they move it"),
                        rules=("BL006",)),
    PackKey("host-writes", "host_writes", "tables", "calls that write a buffer's bytes now (receiver or arguments)",
            _host_writes, _extend, ("call", "writes", "refills", "doc"), _call_names, "calls"),
    _call_list("event-records", "calls recording an event: its synchronize waits for the work issued before"),
    _call_list("recorded-events", "calls returning an event recorded now: its synchronize waits for the work issued before"),
    _call_list("new-events", "calls constructing an event not recorded yet: its synchronize waits for nothing"),
    _call_list("current-streams", "calls returning the current stream: its synchronize waits for its own work only"),
    _call_list("stream-queries", "calls asking a stream whether its work is done: true once the copies issued before are"),
    PackKey("not-one-value", "not_one_value", "strings", "calls whose result a kind's copy does not apply to",
            _not_one_value, _extend_new, names=list),
)
PACK_KEY_NAMES = frozenset(key.key for key in PACK_KEYS)


def pack_key(name: str) -> PackKey:
    return next(key for key in PACK_KEYS if key.key == name)


def _lends_in(table: dict, where: str) -> tuple[VersionRange, ...]:
    """A source's or kind's ``lends-in = { package = "...", versions = "..." }``, or an
    array of such tables that must all hold."""
    return _version_key(table, "lends-in", where)


def _version_key(table: dict, key: str, where: str) -> tuple[VersionRange, ...]:
    """A ``{ package = "...", versions = "..." }`` table (or an array of them, all of which
    must hold) under ``key``: ``lends-in`` of a source or kind, ``checks-in`` of a guard."""
    if key not in table:
        return ()
    try:
        return version_ranges(table[key], f"{where}.{key}")
    except ValueError as exc:
        raise PackError(str(exc)) from None


def _kind_of(table: dict, kinds: dict[str, BorrowKind], where: str) -> str:
    """A source's or guard's kind: the one it names, else the pack's only kind, else none."""
    name = table.get("kind")
    if name is None:
        return next(iter(kinds)) if len(kinds) == 1 else ""
    if not isinstance(name, str) or not name:
        raise PackError(f"{where}: 'kind' must be the name of a kind")
    return name


def _patterns(value: Any, where: str) -> tuple[CallPattern, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise PackError(f"{where}: expected a call pattern string or a non-empty list of them")
    try:
        return tuple(CallPattern.parse(i) for i in items)
    except ValueError as exc:
        raise PackError(f"{where}: {exc}") from None


def _tables(key: PackKey, data: dict, origin: str) -> Iterator[tuple[str, dict]]:
    """``[[key]]``'s tables, each with where it is (``origin: key[i]``), their keys checked."""
    for i, table in enumerate(_table_list(data, key.key, origin)):
        where = f"{origin}: {key.key}[{i}]"
        _check_keys(table, key.subkeys, where)
        yield where, table


def _table_list(data: dict, key: str, where: str) -> list[dict]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise PackError(f"{where}: '{key}' must be an array of tables ([[{key}]])")
    tables = []
    for index, item in enumerate(value):
        if isinstance(item, str):
            item = {"call": item}
        if not isinstance(item, dict):
            raise PackError(f"{where}: {key}[{index}] must be a table or a call pattern string")
        tables.append(item)
    return tables


def _check_keys(table: dict, allowed: Collection[str], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise PackError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (allowed: {', '.join(sorted(allowed))})")


def _string_list(data: dict, key: str, where: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PackError(f"{where}: '{key}' must be a list of strings")
    return value


def vocabulary_from_dict(data: dict, origin: str, extra_keys: Iterable[str] = ()) -> Vocabulary:
    """Validate one pack (or a ``[tool.bufferlint]`` table) and turn it into a Vocabulary.

    ``extra_keys`` are keys the caller handles itself (the config's ``select`` etc.).
    """
    _check_keys(data, PACK_KEY_NAMES | set(extra_keys), origin)
    vocab = Vocabulary(packs=[origin])
    for key in PACK_KEYS:
        if key.read is not None:
            setattr(vocab, key.field, key.read(key, data, origin, vocab))
    for kind in vocab.kinds.values():  # a kind's markers are markers too
        vocab.markers |= set(kind.markers)
    _record_origins(vocab, origin)
    return vocab


def _record_origins(vocab: Vocabulary, origin: str) -> None:
    for key in PACK_KEYS:
        if key.names is not None:
            for name in key.names(getattr(vocab, key.field)):
                vocab.origins.setdefault((key.key, name), origin)


def read_toml(path: Path, what: str = "rule pack") -> dict:
    """A TOML file's contents; a PackError naming the file for every way reading it can fail."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PackError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise PackError(f"{path}: {what} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PackError(f"{path}: invalid TOML ({exc})") from None


def load_pack(path: Path) -> Vocabulary:
    """Read and validate a pack file; errors name the file."""
    data = read_toml(path)
    meta = data.get("pack", {})
    if not isinstance(meta, dict):
        raise PackError(f"{path}: [pack] must be a table")
    _check_keys(meta, pack_key("pack").subkeys, f"{path}: [pack]")
    vocab = vocabulary_from_dict(data, str(path))
    name, description = meta.get("name", path.stem), meta.get("description", "")
    if not isinstance(name, str) or not isinstance(description, str):
        raise PackError(f"{path}: [pack] name and description must be strings")
    vocab.titles[str(path)] = f"{name}: {description}" if description else name
    return vocab


def builtin_pack_dir() -> Path:
    """The packs shipped with bufferlint: inside the wheel, or the repo's ``rules/`` in a checkout."""
    here = Path(__file__).resolve().parent
    shipped = here / "_packs"
    return shipped if shipped.is_dir() else here.parent / "rules"


def builtin_vocabulary() -> Vocabulary:
    vocab = Vocabulary()
    for path in sorted(builtin_pack_dir().glob("*.toml")):
        vocab.merge(load_pack(path))
    vocab.check_kinds()
    return vocab
