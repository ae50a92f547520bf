"""Calls the rule packs name: the first pack entry a call matches decides what it does
(``HANDLERS``, in the order they are tried): waiting and device synchronisation first, then
what creates borrowed values or consumes them asynchronously, then what copies, judges or
aliases them. Each handler reads the call (``CallSite``) and returns the call's value,
adding what else the call does to ``call.effects``."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from bufferlint.analysis.frontend.syntax import parameter_defaults, walk
from bufferlint.analysis.domain.values import (
    CURRENT_STREAM,
    EMPTY,
    Borrow,
    BuiltByParameter,
    Cond,
    Preset,
    Value,
    checked,
    clean,
    clear_leaf,
    collection,
    container,
    deep_leaves,
    deep_pending,
    evolve,
    has_leaves,
    in_flight,
    index,
    iterate,
    join,
    join_all,
    map_leaves,
    on_host,
    pinned_buffer,
    view_of,
)
from bufferlint.analysis.domain.conditions import ATTR, FLAG, MATCHES, ParamTest, exact_parameter
from bufferlint.analysis.transfer.refine import parameter_field_of
from bufferlint.analysis.domain.state import LOOP_TURN, PRIOR_WAIT, current_stream_work, event_stand_in, issued_work, on_side_stream
from bufferlint.analysis.frontend.index import FunctionInfo, annotation_types, dotted_name
from bufferlint.analysis.frontend.vocabmatch import CallShape
from bufferlint.analysis.transfer.call_effects import (
    Allocate,
    CallBack,
    Drain,
    Fill,
    HostRead,
    HostWrite,
    Issue,
    Refill,
    Materialize,
    Reown,
    Retain,
    Reuse,
    Settle,
    Stage,
    Store,
    Submit,
    Synchronize,
)
from bufferlint.analysis.transfer.call_site import Args, CallSite, enabling_condition
from bufferlint.analysis.transfer.call_tasks import device_wait, hand_to_task, judge_task, signal_when_done
from bufferlint.analysis.transfer.construction import field_of_call
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.produced import borrowed_from, built_owned
from bufferlint.analysis.world import ProjectView
from bufferlint.packs import HostWriteSpec, OwnedIf, RegistrarSpec, SinkSpec, SourceSpec


def vocabulary(call: CallSite, skip: str = "") -> Value | None:
    """The first pack entry the call matches decides what it does (``HANDLERS``)."""
    vocab = call.vocab
    if not vocab.names(call.shape):
        return None
    for kind, handler in HANDLERS:
        if kind == skip:
            continue
        spec = vocab.match(kind, call.shape, call.frame.contexts if kind == "sinks" else frozenset())
        if spec is not None:
            if kind == "sanitizers":
                aliasing = _aliasing_with_arguments(call)
                if aliasing is not None:
                    return aliasing
            if kind == "views" and _copies_strided(call):
                return EMPTY  # ``w.t().contiguous()``: a new tensor laid out in order
            return handler(call, spec)
    return None


def _copies_strided(call: CallSite) -> bool:
    """Is this a ``contiguous-copies`` call written on a ``strided-views`` result
    (``w.t().contiguous()``, ``w.T.contiguous()``), which is laid out out of order, so the
    call copies? Read from the syntax: a strided view kept in a variable first is not seen."""
    vocab = call.vocab
    func = call.node.func
    if not isinstance(func, ast.Attribute) or vocab.match("contiguous-copies", call.shape) is None:
        return False
    inner = func.value
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
        name = inner.func.attr
    elif isinstance(inner, ast.Attribute):
        name = inner.attr
    else:
        return False
    return any(pattern.method == name for pattern in vocab.vocab.strided_views)


def _aliasing_with_arguments(call: CallSite) -> Value | None:
    """A copying call that aliases with some arguments is a view or a holder with them: an
    entry naming those arguments is more specific than the bare copy (``numpy.array(x,
    copy=False)`` is a view, ``numpy.array(views, dtype=object)`` an array holding the views)."""
    for kind, handler in HANDLERS:
        if kind in ("views", "binds"):
            pattern = call.vocab.match(kind, call.shape)
            if pattern is not None and pattern.required_kwargs:
                return handler(call, pattern)
    return None


def users_word(call: CallSite) -> Value | None:
    """A source, sink or registrar the project itself declared applies even where the tree
    defines that function (only the shipped packs yield to the tree's own code: a declared
    ``reader.on_record(fn)`` calls ``fn`` back with borrowed views although its body only
    appends ``fn`` to a list). A declared guard is different: its own code is checked (does
    it reject marked values?) and decides what it protects."""
    vocab = call.vocab
    if not vocab.names(call.shape):
        return None
    for kind, handler in HANDLERS:
        if kind in ("sources", "sinks", "registrars"):
            spec = vocab.match(kind, call.shape, call.frame.contexts if kind == "sinks" else frozenset())
            if spec is not None and vocab.is_users(spec):
                return handler(call, spec)
    return None


# A container's truth is its length: ``bool([t])`` reads no tensor's bytes.
TRUTH_TESTS = frozenset({"bool", "builtins.bool"})


def read_host(call: CallSite, pattern) -> None:
    """``t.tolist()``, ``int(t)``, ``print("n =", t)``: the host reads the receiver (or
    every argument, in any position) now. An argument's contents too: ``copy.deepcopy(d)``,
    ``numpy.stack([a, b])`` and ``print(d)`` read the tensors a container holds."""
    subjects: Sequence[Value | None]
    if pattern.method is not None or (call.receiver is not None and pattern.qualname is None):
        subjects = [call.receiver]
    elif pattern.qualname in TRUTH_TESTS:
        subjects = call.args.flat()
    else:
        subjects = [Value(leaves=frozenset(deep_leaves(arg))) for arg in call.args.flat()]
    for subject in subjects:
        if subject is not None and subject.leaves:
            call.effects.append(HostRead(call.node, subject, call.name))


def write_host(call: CallSite, spec: HostWriteSpec) -> None:
    """``buf.copy_(x)``, ``f.readinto(buf)``, ``os.preadv(fd, [buf], offset)``,
    ``torch.cat(parts, out=buf)``: the call writes the bytes of its receiver, of one
    argument (by position or keyword) or of every buffer among its arguments, now."""
    targets: Sequence[Value | None]
    if spec.writes == "receiver":
        targets = [call.receiver]
    elif spec.writes == "args":
        targets = call.args.flat()
    elif isinstance(spec.writes, str):  # "out=": the argument passed by that keyword, if any
        targets = [call.args.keyword(spec.writes[:-1])]
    else:
        targets = [call.args.arg(int(spec.writes))]
    by_device = spec.writes == "receiver" and filled_by_device(call)
    for target in targets:
        if target is not None and next(deep_leaves(target), None) is not None:
            call.effects.append(HostWrite(call.node, target, call.name, by_device))
    if spec.refills:
        for expr, value in refilled_buffers(call, spec.writes):
            call.effects.append(Refill(call.node, expr, value, call.name))


def filled_by_device(call: CallSite) -> bool:
    """Is the receiver written by a copy the device makes, queued on the current stream
    (``pinned.copy_(gpu, non_blocking=True)``, a pack source that ``fills`` its receiver)?
    The copy to the device still reading the buffer was queued before it, so the stream runs
    them in order: no host write races that copy. Not when the source is known to be host
    memory (the host copies at once) nor under a side stream (``with torch.cuda.stream(s)``:
    another queue, ``Effects.write_host`` keeps the hazard for copies issued on one)."""
    spec = call.vocab.match("sources", call.shape)
    if spec is None or spec.fills != "receiver" or call.frame.contexts:
        return False
    origin = call.args.arg(0)
    return origin is not None and not on_host(origin)


def refilled_buffers(call: CallSite, writes: str | int) -> list[tuple[ast.expr, Value]]:
    """The buffers a refilling call writes, each an expression with its value: its receiver,
    the argument at the position, or every argument, a list or tuple written out counting
    for its elements (``os.preadv(fd, [buf], offset)``, ``sock.recvmsg_into([head, body])``)."""
    node = call.node
    if writes == "receiver":
        receiver = call.receiver
        return [(node.func.value, receiver)] if isinstance(node.func, ast.Attribute) and receiver is not None else []
    if isinstance(writes, str) and writes.endswith("="):  # ``out=buf``
        expr = next((k.value for k in node.keywords if k.arg == writes[:-1]), None)
        value = call.args.keyword(writes[:-1])
        return [(expr, value)] if expr is not None and value is not None else []
    positions = range(len(node.args)) if writes == "args" else [int(writes)]
    out: list[tuple[ast.expr, Value]] = []
    for position in positions:
        value = call.args.arg(position)
        if position >= len(node.args) or value is None or isinstance(node.args[position], ast.Starred):
            continue
        expr = node.args[position]
        if isinstance(expr, (ast.List, ast.Tuple)):
            out.extend((element, index(value, None)) for element in expr.elts if not isinstance(element, ast.Starred))
        else:
            out.append((expr, value))
    return out


def pinned_allocation(call: CallSite, pattern, result: Value) -> Value:
    """``torch.empty(n, pin_memory=True)``, ``t.pin_memory()``: pinned host memory the program
    owns from now on, identified by this call (``Borrow.pinned``): a copy to the device reads
    it until a synchronisation (``stage``). A flag not known (``pin_memory=self.pin``) may
    be true, and the trace says so."""
    why = argument_origins(call, pattern)
    step = replace(call.step(f"`{call.name}(...)` allocates pinned host memory{why}"), fact=("source", "torch", "pinned"))
    buffer = Borrow(call.allocation_site(), False, (step,), kind="torch", pinned=True)
    call.effects.append(Allocate(frozenset({buffer.site})))
    return evolve(result, leaves=result.leaves | {buffer}, host=True)


def device_copy_reads(call: CallSite, spec: SinkSpec, payload: Value) -> None:
    """A non-blocking copy to the device (a ``device copy`` sink) reads the pinned buffers in
    its payload after it returns (``Stage``). One into host memory (``host.copy_(pinned,
    non_blocking=True)``, ``pinned.to("cpu", non_blocking=True)``) is synchronous."""
    if not any(leaf.pinned for leaf in deep_leaves(payload) if isinstance(leaf, Borrow)):
        return
    if spec.payload != "receiver" and call.receiver is not None and on_host(call.receiver):
        return
    how, device = call.argument("device", 0)
    if spec.payload == "receiver" and call.method == "to" and how == "const" and str(device).startswith("cpu"):
        return
    call.effects.append(Stage(call.node, payload, call.name))


# -- waiting ----------------------------------------------------------------------------------

def on_synchronizer(call: CallSite, spec) -> Value:
    """Wait for the device: for everything, or, ``event.synchronize()`` of an event recorded
    in this function (held in a variable or a field), for what was issued before its record,
    or, the current stream's ``synchronize()`` outside a stream context, for its own work
    (not the copies issued under ``with torch.cuda.stream(side)``)."""
    receiver = call.receiver
    current = receiver is not None and receiver.objects == CURRENT_STREAM and not call.frame.contexts
    call.effects.append(Synchronize(_recorded(call), current, _prior_record(call)))
    return EMPTY


def _prior_record(call: CallSite) -> str | None:
    """``self.done.synchronize()`` of an event field not recorded here yet on this path: its
    stand-in (``event_holder``); it waits for what the field's last record (an earlier call's,
    another method's) followed. None for any other wait."""
    func, st = call.node.func, call.frame.st
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Attribute) or st is None:
        return None
    holder = event_holder(func.value)
    return holder if holder is not None and holder not in st.vars else None


def _recorded(call: CallSite) -> frozenset | None:
    """What the receiver of ``event.synchronize()`` was recorded after, when this function
    tracks it: an event in a variable (its value), or in a field (the stand-in its records
    here set). None (a wait for everything) for an event whose records are not tracked: a
    field not recorded here, an element of a container of events (``done[i % 2]``: which
    element a ``record()`` reaches is not known), a call's result."""
    func, st = call.node.func, call.frame.st
    if not isinstance(func, ast.Attribute) or st is None:
        return None
    holder = event_holder(func.value)
    if holder is None:
        return None
    if isinstance(func.value, ast.Name):
        return call.receiver.recorded if call.receiver is not None else None
    kept = st.vars.get(holder)
    return kept.recorded if kept is not None else None


def event_holder(event: ast.expr) -> str | None:
    """Where the record of the event ``event`` names is kept in the state: its variable, or,
    for an event held in a field (``self.ready.record()``), a stand-in for that dotted name,
    taken to name one object through the function; None for any other expression."""
    if isinstance(event, ast.Name):
        return event.id
    dotted = dotted_name(event)
    return event_stand_in(dotted) if dotted else None


def on_settler(call: CallSite, pattern) -> Value:
    """A method waits for its receiver (``future.result()``); a function for the futures
    it is given, in collections too (``wait(futures)``)."""
    if pattern.method is not None or call.receiver is not None:
        if call.receiver is not None and call.receiver.pending:
            call.effects.append(Settle(Value(pending=call.receiver.pending), timed=given_timeout(call.node)))
        return EMPTY
    for value in call.args.flat():
        call.effects.append(Settle(value))
    return EMPTY


def given_timeout(node: ast.Call) -> bool:
    """Is a method settler given a timeout (its only parameter: ``result(timeout)``,
    ``exception(timeout)``, ``MessageTracker.wait(timeout)``), other than ``None``? The
    settlers that return quietly on a timeout settle only without one (their pack entries'
    conditions); these raise instead, so the code after the call runs only once the work
    is done, but a handler of the exception may go on while it is still running."""
    given = list(node.args) + [k.value for k in node.keywords if k.arg == "timeout"]
    return any(not (isinstance(arg, ast.Constant) and arg.value is None) for arg in given)


def on_drain(call: CallSite, spec) -> Value:
    if call.receiver is not None:
        identity = call.receiver_identity()
        call.effects.append(Drain(call.receiver if identity == call.receiver.alloc else evolve(call.receiver, alloc=identity)))
    return EMPTY


# -- producers ----------------------------------------------------------------------------------

def source(call: CallSite, spec: SourceSpec) -> Value:
    """What a source hands out here. A source owned at this call passes the call to the next
    source matching it (the same call in other versions of the library: instanttensor's
    readers lend when built with ``copy=False``, and before 0.1.9 whatever they were built
    with); owned by every one, it hands out nothing borrowed."""
    if owned_here(call, spec):
        lending: SourceSpec | None = next(
            (s for s in call.vocab.matches("sources", call.shape) if not owned_here(call, s)), None)
        if lending is None:
            return EMPTY
        spec = lending
    if spec.fills == "receiver":
        return filled_receiver(call, spec)
    if spec.until:
        return in_flight_copy(call, spec)
    value = borrowed_from(call.frame, call.node, spec, f"{call.name}(...)", spec.kind or annotated_kind(call))
    call.effects.append(Issue(value))
    return value


def annotated_kind(call: CallSite) -> str:
    """The kind of what a source that names none hands out, from the return annotation of
    the project's definition of the producer (``-> Iterator[np.ndarray]``: the kind whose
    ``types`` include ``numpy.ndarray``); "" when it has none, or names no kind or several."""
    info = producer_definition(call)
    returns = getattr(info.node, "returns", None) if info is not None else None
    if info is None or returns is None:
        return ""
    return call.frame.vocab.vocab.kind_of_types(annotation_types(info.module, returns))


def producer_definition(call: CallSite) -> FunctionInfo | None:
    """The project's definition of the called function, or of the method on the
    receiver's class (``ring.read`` on a ``Ring``); None when the project defines neither."""
    index = call.program.index
    if call.qualname is not None:
        return index.functions.get(index.canonical(call.qualname))
    if call.method is None or call.receiver is None:
        return None
    for type_name in sorted(call.receiver.types | call.receiver.declared):
        found = index.class_method(type_name, call.method)
        if found is not None:
            return index.functions.get(found)
    return None


def in_flight_copy(call: CallSite, spec: SourceSpec) -> Value:
    """A non-blocking device-to-host copy: a host tensor whose bytes arrive later. The
    call still does what the rest of the vocabulary says (``.to`` may be a view of a host
    receiver, a host-to-device copy of a borrowed one): the copy is added to that."""
    why = argument_origins(call, call.vocab.pattern_of("sources", spec, call.shape))
    step = call.step(
        f"`{call.name}(...)` copies to the host asynchronously{why}: in flight until the device is synchronised"
    )
    step = replace(step, fact=("source", spec.kind, "borrowed"))
    when = parameter_conditions(call, call.vocab.pattern_of("sources", spec, call.shape))
    copy = Value(leaves=frozenset({Borrow(call.allocation_site(), False, (step,), True, spec.kind, when)}))
    if call.frame.contexts:
        call.frame.side_issued.add(call.allocation_site())
    call.effects.append(Issue(copy))
    return join(vocabulary(call, skip="sources") or EMPTY, copy)


def filled_receiver(call: CallSite, spec: SourceSpec) -> Value:
    """``pinned.copy_(gpu, non_blocking=True)``: the receiver is in flight when it is host
    memory and the copy reads something not known to be (a host-to-host copy is
    synchronous); the call returns its receiver, in flight too. A pinned buffer the program
    allocated is in flight through every view of it, wherever kept (``Effects.fill``)."""
    receiver, origin = call.receiver, call.args.arg(0)
    rest = vocabulary(call, skip="sources") or EMPTY
    target = call.node.func.value if isinstance(call.node.func, ast.Attribute) else None
    if receiver is None or not on_host(receiver) or (origin is not None and on_host(origin)) or target is None:
        return rest
    why = argument_origins(call, call.vocab.pattern_of("sources", spec, call.shape))
    step = call.step(
        f"`{call.name}(...)` fills host memory from the device asynchronously{why}: in flight until the device is synchronised"
    )
    step = replace(step, fact=("source", spec.kind, "borrowed"))
    copy = Value(leaves=frozenset({Borrow(call.allocation_site(), False, (step,), True, spec.kind)}), host=True)
    if call.frame.contexts:
        call.frame.side_issued.add(call.allocation_site())
    call.effects.append(Issue(copy))
    buffers = frozenset((leaf.site, leaf.objects) for leaf in receiver.leaves if pinned_buffer(leaf))
    call.effects.append(Fill(target, copy, buffers))
    return join(join(rest, receiver), copy)


def parameter_conditions(call: CallSite, pattern) -> frozenset:
    """The conditions of ``pattern`` that this function's callers decide (``Borrow.when``):
    a condition on one of its parameters passed on unchanged (a device: it matches; a flag:
    its truth, so ``def fetch(t, non_blocking=False)`` copies blocking at a call that leaves
    the flag to its default or passes False, and may not where it passes ``self.overlap``),
    and the conditions a ``**mapping`` holds the argument under (``Args.keyword_when``)."""
    when = []
    for condition in pattern.required_kwargs if pattern is not None else ():
        if condition.length:
            continue
        how, value = call.argument(condition.key, condition.position)
        field = parameter_field(call, condition) if how == "unknown" and isinstance(condition.value, bool) else None
        if how == "parameter" and isinstance(value, tuple):
            index, known, default = value
            test = FLAG if isinstance(condition.value, bool) else MATCHES
            when.append(ParamTest(index, test, condition.value, known, default))
        elif field is not None:  # ``non_blocking=self.overlap``: a test the function's branches may make too
            when.append(ParamTest(field[0], ATTR, (field[1], condition.value)))
        elif how == "unknown":  # ``**kwargs`` holding the flag only where ``device not in _CPU_DEVICES``
            when.extend(call.args.keyword_when(condition.key, condition.position, condition.accepts))
    return frozenset(when)


def parameter_field(call: CallSite, condition) -> tuple[int, str] | None:
    """The argument a condition reads, when it is a field of a parameter as the caller passed
    it (``self.overlap``): (the parameter, the attribute)."""
    node = call.node
    expr = next((k.value for k in node.keywords if k.arg == condition.key), None)
    if expr is None and condition.position is not None and condition.position < len(node.args) \
            and not any(isinstance(a, ast.Starred) for a in node.args[: condition.position + 1]):
        expr = node.args[condition.position]
    if not isinstance(expr, ast.Attribute):
        return None
    return parameter_field_of(expr, call.args.values)  # ``self.overlap``, ``self.cfg.overlap``


def argument_origins(call: CallSite, pattern) -> str:
    """Where the values a pattern's conditions matched came from, when the call does not
    spell them (`` (`CPU` is 'cpu', `flag` may be True)``), for the trace."""
    notes = []
    node = call.node
    for condition in pattern.required_kwargs if pattern is not None else ():
        if condition.length:
            continue
        expr = next((k.value for k in node.keywords if k.arg == condition.key), None)
        if expr is None and condition.position is not None and condition.position < len(node.args):
            expr = node.args[condition.position]
        if expr is None or isinstance(expr, ast.Constant):
            continue
        how, value = call.argument(condition.key, condition.position)
        text = ast.unparse(expr)
        if how == "const":
            notes.append(f"`{text}` is {value!r}")
        elif how == "parameter" and isinstance(value, tuple) and value[1] and condition.accepts(value[2]):
            notes.append(f"`{text}` defaults to {value[2]!r}")
        elif how == "parameter" and isinstance(condition.value, bool):
            notes.append(f"`{text}` may be {condition.value!r}")
        elif how == "parameter":
            notes.append(f"`{text}` as the caller passes it")
        elif how == "unknown":
            notes.append(f"`{text}` may be {condition.value!r}")
    return f" ({', '.join(notes)})" if notes else ""


def owned_here(call: CallSite, spec: SourceSpec) -> bool:
    """Does one of the source's ``owned-if`` conditions hold at this call?"""
    for cond in spec.owned_if:
        if cond.built_by is not None:
            if built_owned(call.receiver, cond):
                return True
        elif cond.receiver_call is not None:
            if receiver_called_with(call, cond.receiver_call, cond.kwarg, cond.equals, cond.default):
                return True
        elif passes(call, cond):
            return True
    return False


def construction(call: CallSite, result: Value) -> Value:
    """A call that builds a producer (an ``owned-if`` condition's ``built-by``): its result
    carries whether it passed what makes the producer's values owned, so a later call on it,
    through a variable, an attribute, a ``with`` target or a helper's return, is judged by it."""
    conditions = call.vocab.constructions(call.shape)
    if not conditions:
        return result
    said = frozenset((cond, built_with(call, cond)) for cond in conditions)
    return evolve(result, built=result.built | said)


def built_with(call: CallSite, cond: OwnedIf) -> bool | BuiltByParameter:
    """Whether a construction makes its object owned; for an argument that is one of this
    function's parameters passed on (``def open_reader(path, copy=True): return
    Reader(path, copy=copy)``), what each caller passes decides (``decide_built``)."""
    how, value = call.argument(cond.kwarg)
    if how == "parameter" and isinstance(value, tuple):
        index, known, default = value
        return BuiltByParameter(index, known and default == cond.equals)
    if how == "unknown":
        by_field = _built_by_field(call, cond)
        if by_field is not None:
            return by_field
    return passes(call, cond)


def _built_by_field(call: CallSite, cond: OwnedIf) -> BuiltByParameter | None:
    """``copy=cfg.copy`` or ``copy=not cfg.zero_copy`` with ``cfg`` a parameter of this
    function: the field of the object each caller passes decides; a caller that passes none
    gets the parameter's default (``cfg: SwapConfig = SwapConfig()``), whose field is read
    from its construction (``construction.field_of_call``). ``copy=not zero_copy`` with
    ``zero_copy`` a parameter: the negation of what each caller passes (or of its default)."""
    expr = next((k.value for k in call.node.keywords if k.arg == cond.kwarg), None)
    negated = isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)
    if negated:
        expr = expr.operand  # type: ignore[union-attr]
    if negated and isinstance(expr, ast.Name):
        return _negated_parameter(call, cond, expr.id)
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
        return None
    info, st = call.frame.info, call.frame.st
    position = exact_parameter(st.vars.get(expr.value.id)) if st is not None else None
    if position is None:
        return None
    default = parameter_defaults(info.node).get(position)
    known, held = field_of_call(call.program.index, info.module, default, expr.attr) if default is not None else (False, None)
    owned_by_default = known and ((not held) if negated else held) == cond.equals
    return BuiltByParameter(position, owned_by_default, expr.attr, negated)


_NO_DEFAULT = object()  # a parameter without a default known as a constant


def _negated_parameter(call: CallSite, cond: OwnedIf, name: str) -> BuiltByParameter | None:
    """``copy=not zero_copy``, ``zero_copy`` this function's parameter as passed: owned where
    a caller passes the negation of ``cond.equals``, or leaves it to a default that is."""
    st = call.frame.st
    position = exact_parameter(st.vars.get(name)) if st is not None else None
    if position is None:
        return None
    default = call.frame.defaults.get(position, _NO_DEFAULT)
    owned_by_default = default is not _NO_DEFAULT and (not default) == cond.equals
    return BuiltByParameter(position, owned_by_default, negated=True)


def passes(call: CallSite, cond: OwnedIf) -> bool:
    """Does the call pass ``cond.kwarg=cond.equals`` (or leave it to a default that is)?"""
    how, value = call.args.argument(cond.kwarg)
    return (how == "const" and value == cond.equals) or (how == "absent" and cond.default)


def receiver_called_with(call: CallSite, method: str, kwarg: str, expected: object, default: bool = False) -> bool:
    """Did this function call ``<same receiver>.method(..., kwarg=expected)``? With
    ``default`` (the parameter defaults to ``expected``): did no such call pass another
    value, or one not known (``**options``)?"""
    func = call.node.func
    receiver_name = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    if receiver_name is None:
        return default
    otherwise = False
    for child in walk(call.frame.info.node):
        if (
            isinstance(child, ast.Call)
            and isinstance(child.func, ast.Attribute)
            and child.func.attr == method
            and dotted_name(child.func.value) == receiver_name
        ):
            for kw in child.keywords:
                if kw.arg == kwarg and isinstance(kw.value, ast.Constant) and kw.value.value == expected:
                    return True
                if kw.arg in (kwarg, None):
                    otherwise = True
    return default and not otherwise


# -- consumers ------------------------------------------------------------------------------------

def sink(call: CallSite, spec: SinkSpec) -> Value:
    """What a sink's call hands back (a future, a task), its submissions made effects; a
    task that waits for the device (``asyncio.to_thread(torch.cuda.synchronize)``) makes
    waiting for its handle a synchronisation (``call_tasks.device_wait``)."""
    handle = _submitted(call, spec)
    if spec.task is not None:
        signal_when_done(call, spec.task, spec.params, handle.pending)
    wait = device_wait(call, spec.task, spec.params) if spec.task is not None else None
    return evolve(handle, pending=handle.pending | {wait}) if wait is not None else handle


def _submitted(call: CallSite, spec: SinkSpec) -> Value:
    assume: frozenset = frozenset()
    cleaned: frozenset = frozenset()
    enabler = None
    args = call.args
    if spec.enabled_by:
        position = spec.params.index(spec.enabled_by) if spec.enabled_by in spec.params else -1
        enabler = args.arg(position, spec.enabled_by) if position >= 0 else args.keyword(spec.enabled_by)
        if enabler is not None:
            if enabler.has_const and not enabler.const:
                return EMPTY
            assume, cleaned = enabling_condition(enabler, call.frame.defaults)
    if spec.payload == "receiver":
        payload = call.receiver or EMPTY
    else:
        payload = join_all(args.flat(skip=enabler))
        if spec.payload == "all" and call.receiver is not None and spec.hazard.reads_receiver:
            payload = join(payload, call.receiver)
    call.note_guard_use(enabler, payload)
    call.note_tested_guards(payload)
    payload = call.with_deciders((enabler,), clean(payload, cleaned))
    if spec.hazard.sink_reader == "device copy":
        # from pageable memory (a refilled ``bytearray``) the host stages the bytes before
        # the call returns: the copy reads nothing after it
        payload = map_leaves(payload, lambda leaf: None if isinstance(leaf, Borrow) and leaf.pageable else leaf)
        device_copy_reads(call, spec, payload)
        if call.frame.contexts:  # issued on a side stream: what its ``query()`` waits for (``stream_work``)
            call.frame.side_issued.add((call.node.lineno, call.node.col_offset))
    if spec.hazard.read_on_host:
        payload = call.stores.effects.with_fills(payload)
    if spec.task is not None and spec.hazard.read_on_host and any(in_flight(leaf) for leaf in deep_leaves(payload)):
        if judge_task(call, spec.task, spec.params):  # the task's summary said when it reads them
            payload = map_leaves(payload, lambda leaf: None if in_flight(leaf) else leaf)
    if spec.task is not None and has_leaves(payload):
        hand_to_task(call, spec.task, spec.params)
    if spec.eager:
        note = f"every element is submitted to `{call.name}` up front while the producer advances"
        for value in args.flat(skip=enabler):
            call.effects.append(Materialize(call.node, value, call.name, spec.hazard, note))
    subject = call.subject(frozenset(deep_leaves(payload)))
    owners = call.receiver_identity() if call.receiver is not None else frozenset()
    if spec.runs_before_yield:
        owners = frozenset({LOOP_TURN})
    awaited = run_awaitables(call, spec, owners)
    if all(pinned_buffer(leaf) for leaf in deep_leaves(payload)):
        # nothing, or only the program's pinned buffers (``device_copy_reads``): no future of
        # its own, but the task stands for the awaitables it runs
        return Value(pending=awaited) if awaited else EMPTY
    if spec.handle_covers == "none":
        # the call's result (``await q.put(item)``) returns once the item is handed over: no
        # wait on it waits for the reader; a drain of the receiver (``q.join()``) still does
        call.effects.append(Submit(call.node, payload, call.name, assume, subject, spec.hazard, owners, True))
        return Value(pending=awaited) if awaited else EMPTY
    if spec.handle_covers == "last-part":
        payload, untracked = _split_last_part(call, payload)
        if has_leaves(untracked):
            call.effects.append(Submit(call.node, untracked, call.name, assume, subject, spec.hazard, owners, True))
    call.effects.append(Submit(call.node, payload, call.name, assume, subject, spec.hazard, owners))
    handle = frozenset({spec.handle}) if spec.handle else frozenset()  # ``MessageTracker``: its class's settlers
    # An eager sink's result (``Executor.map``, ``Pool.imap``) is an iterator over the tasks'
    # results, each waited for in turn: iterated to its end, it has waited for every task
    # (``waits_when_exhausted``).
    own = frozenset({(call.node.lineno, call.node.col_offset)})
    if spec.awaited == "queued":
        call.frame.queued_on_await = call.frame.queued_on_await | own
    result = Value(pending=own | awaited, types=handle, lazy=spec.eager)
    if spec.handle_field:  # ``zmq.Frame(view, track=True)``: its ``.tracker`` is the handle
        return Value(items=(result,), fields=(spec.handle_field,))
    return result


def run_awaitables(call: CallSite, spec: SinkSpec, owners: frozenset) -> frozenset:
    """A sink that runs the awaitable it is given (pack ``awaits``: ``create_task(coro)``,
    ``tg.create_task(asyncio.to_thread(fn, w))``): the task it makes awaits that awaitable,
    so the submissions the awaitable stands for (its own ``pending``, not those of values it
    merely holds) are waited for by whatever waits for the task: awaiting it, and the exit of
    the task group it was created in (``Pending.owners``, ``Effects.settle_owned_by``).
    Returns their keys, for the task's value. A queue's ``put`` of a future is no such sink:
    its ``join()`` waits for the getters' ``task_done()``, not for the future."""
    if not spec.awaits:
        return frozenset()
    awaited = frozenset(key for value in call.args.flat() for key in value.pending)
    if awaited and owners:
        call.effects.append(Reown(awaited, owners))
    return awaited


def _split_last_part(call: CallSite, payload: Value) -> tuple[Value, Value]:
    """A sink whose handle covers the last part of the sequence its first argument holds
    (``send_multipart(parts, ...)``): (what the handle covers, what it does not). The parts are
    told apart by position when the argument is a list or tuple display, or a tuple whose
    positions are known; otherwise which part is last is not known, and nothing the sequence
    holds is covered (nothing the call passes, when it passes no first argument). A view in the last part and an earlier one is not covered."""
    node = call.node.args[0] if call.node.args else None
    parts = call.args.arg(0)
    items: list[Value] | None = None
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and not any(isinstance(e, ast.Starred) for e in node.elts):
        items = [call.args.values.get(id(elt), EMPTY) for elt in node.elts]
    elif parts is not None and parts.items:
        items = list(parts.items)
    earlier = join_all(items[:-1]) if items is not None else (parts if parts is not None else payload)
    uncovered = frozenset(deep_leaves(earlier))
    if not uncovered:
        return payload, EMPTY
    covered = map_leaves(payload, lambda leaf: None if leaf in uncovered else leaf)
    return covered, map_leaves(payload, lambda leaf: leaf if leaf in uncovered else None)


def on_retainer(call: CallSite, spec) -> Value:
    """A method keeps its arguments in its receiver (``module.register_buffer(name, t)``); a
    function in its first argument, as ``append`` does (``heapq.heappush(heap, item)``,
    ``bisect.insort(a, x)``), or in the one the packs' ``retained-in`` name
    (``vector_to_parameters(vec, module.parameters())``)."""
    node = call.node
    if spec.method is None and call.receiver is None:
        at = call.vocab.holder_position(spec)
        if at is not None and len(node.args) > at and not any(isinstance(a, ast.Starred) for a in node.args[:at + 1]):
            for position, (value, _) in enumerate(call.args.positional):
                if position != at:
                    call.effects.append(Store(node.args[at], value, node))
        return EMPTY
    holder = node.func.value if isinstance(node.func, ast.Attribute) else None
    if holder is not None and call.stores.outlives_step(holder, attribute=True):
        call.effects.append(Retain(call.node, join_all(call.args.flat()), f"{dotted_name(holder) or 'object'}.{call.method}"))
    return EMPTY


# -- copies, verdicts and aliases -------------------------------------------------------------------

def on_sanitizer(call: CallSite, spec) -> Value:
    """An owned copy; a sanitizer of one kind copies only values of that kind (or of no
    known kind): another kind's borrowed values come out as views, still borrowed."""
    subject = acted_on(call, spec.calls[0]) if spec.kind else None
    if subject is None:
        return EMPTY
    kinds = frozenset({spec.kind})
    others = Value(leaves=frozenset(filter(None, (clear_leaf(leaf, kinds) for leaf in subject.leaves))))
    if not others.leaves:
        return EMPTY
    return view_of(others, call.step(f"`{call.name}(...)` copies only `{spec.kind}` values: this one stays a view"))


def on_guard(call: CallSite, guard) -> Value:
    """A guard's True proves its argument clean for the guard's kind (every kind, when
    the guard names none)."""
    subject = call.args.arg(guard.param)
    return Value(cond=Cond(clean_if_true=checked(subject, (guard.kind or None,)) if subject is not None else frozenset()))


def acted_on(call: CallSite, pattern) -> Value | None:
    """The value a method-style (its receiver) or function-style (its first argument, or
    the one the packs' ``view-parameters`` name) view or copy acts on."""
    if call.receiver is not None:
        return call.receiver
    viewed = call.vocab.viewed_param(pattern)
    if viewed is not None:
        name, position = viewed
        return call.args.keyword(name) if position is None else call.args.arg(position, name)
    return call.args.first(call.vocab.first_param(pattern))


def on_view(call: CallSite, spec) -> Value:
    """A view of the value; made by a call a kind names (``numpy.frombuffer``: pack
    ``made-by``), the view's step says so, and a copy of it is that kind's. A conversion
    (pack ``dtype-conversions``: ``.float()``) of a tensor known to have another dtype
    (``Value.dtype``) is a new tensor of its dtype."""
    subject = acted_on(call, spec)
    if subject is None:
        return EMPTY
    dtype = call.vocab.converts_to(spec)
    if dtype is not None and subject.dtype != dtype and call.vocab.converts_from(subject.dtype):
        return EMPTY
    step = call.step(f"`{call.name}(...)` returns a view sharing the buffer")
    made = call.vocab.vocab.kind_made_by(call.qualname)
    if made:
        step = replace(step, fact=("view", made))
    view = view_of(subject, step)
    return evolve(view, dtype=dtype) if dtype is not None else view


def _record_with_fields(call: CallSite) -> Value | None:
    """A bind given one record whose fields are known and keywords naming some of them
    (``dataclasses.replace(host, ready=ev)``): that record with those fields replaced, the
    others as they were (``Value.fields``), so ``new.token_ids`` is still ``host``'s. None for
    any other call."""
    args = call.args
    record = args.positional[0][0] if len(args.positional) == 1 and not args.positional[0][1] else None
    if record is None or record.fields is None or record.items is None or not args.keywords:
        return None
    changes = dict(args.keywords)
    if None in changes or not set(changes) <= set(record.fields):
        return None
    items = tuple(changes.get(name, item) for name, item in zip(record.fields, record.items))
    return replace(record, items=items)


def on_bind(call: CallSite, spec) -> Value:
    """A value that keeps its arguments; bound to a callable (``functools.partial(fn, pool)``,
    ``partial(self.load, ...)``), it is also that callable with the other arguments bound
    ahead of the ones its call passes (``Preset``), so calling it reaches ``fn``."""
    if waits_on_its_own(call, spec):  # ``zmq.MessageTracker(t1, t2)``: a handle for both sends
        return Value(pending=frozenset().union(*(deep_pending(v) for v in call.args.flat())),
                     types=frozenset({spec.qualname}))
    positional = call.args.positional
    replaced = _record_with_fields(call)
    if replaced is not None:
        return replaced
    held = container(join_all(call.args.flat()))
    if not positional or any(starred for _, starred in positional):
        return held
    function = positional[0][0]
    if function.ref is None and (function.method is None or function.bound is None):
        return held
    before = function.preset or Preset()
    preset = Preset(before.positional + tuple(v for v, _ in positional[1:]),
                    before.keywords + tuple((k, v) for k, v in call.args.keywords if k is not None))
    if any(k is None for k, _ in call.args.keywords):
        return held  # ``partial(fn, **options)``: which keywords it binds is not known
    return evolve(held, ref=function.ref, method=function.method, bound=function.bound, preset=preset)


def waits_on_its_own(call: CallSite, pattern) -> bool:
    """Does this ``binds`` call build a handle: an object of a class whose own method is a
    settler (``zmq.MessageTracker(*towatch)``, whose ``wait()`` waits for every tracker it
    was given)? Then it stands for the work of the handles it keeps, as theirs would."""
    name = pattern.qualname
    return bool(name) and pattern.method is None and any(
        p.qualname is not None and p.qualname.rpartition(".")[0] == name for p in call.vocab.vocab.settlers)


def on_registrar(call: CallSite, spec: RegistrarSpec) -> Value:
    """A call that keeps a callable to call it later with values of its own (pack
    ``registrars``): the callable is called back here (``CallResolver.call_back``) with a
    borrowed view for each argument the entry ``passes`` "borrowed" (one object: the
    registrar's buffer, reused once the callable returns) and nothing borrowed for the
    others, so a task it submits or a holder it keeps the view in is reported at this call.
    The buffer is reused once the callable returns (``Reuse``): what the callable left
    pending on the view (a method keeping it in its receiver's field) is a race then."""
    position = spec.callback_position()
    function = call.args.arg(position, spec.callback) if position is not None else call.args.keyword(spec.callback)
    if function is None:
        return EMPTY
    site = (call.caller, call.node.lineno, call.node.col_offset)
    note = f"`{call.name}(...)` calls it back later with borrowed views of a buffer it reuses once the callback returns"
    step = replace(call.step(note), fact=("source", spec.kind, "borrowed"))
    borrowed = Value(leaves=frozenset({Borrow(site, False, (step,), kind=spec.kind)}))
    positional = [(borrowed if passed == "borrowed" else EMPTY, False) for passed in spec.passes]
    call.effects.append(CallBack(call.node, function, Args(positional, [], {}), step, frozenset()))
    call.effects.append(Reuse(frozenset({site}), call.node, call.name))
    return EMPTY


def on_passthrough(call: CallSite, spec) -> Value:
    first = call.args.arg(0)
    return container(iterate(first), lazy=True) if first is not None else EMPTY


def on_grouper(call: CallSite, spec) -> Value:
    """``itertools.batched(stream, 8)``: each group holds several elements of the input at
    once, taken while it advanced (kept past their step, as ``list(stream)`` keeps them);
    the result iterates over the groups as the input does over its elements."""
    first = call.args.arg(0)
    if first is None:
        return EMPTY
    call.effects.append(Materialize(call.node, first, f"{call.name}(...)",
                                    note=f"each group of `{call.name}(...)` holds several elements at once while the producer advances"))
    return container(container(iterate(first)), lazy=True)


def on_collector(call: CallSite, spec) -> Value:
    """``collections.deque(stream, maxlen=1)``, ``heapq.nlargest(k, stream)``: every element
    of a stream argument is taken before the call returns, while the producer advances, and
    the result holds some or all of them (kept past their step, as ``list(stream)`` keeps them)."""
    inputs = [value for value, starred in call.args.positional if not starred]
    for value in inputs:
        call.effects.append(Materialize(call.node, value, f"{call.name}(...)"))
    return collection(join_all([iterate(value) for value in inputs]))


# What a call matching each kind of pack entry does, in the order they are tried.
def on_metadata_read(call: CallSite, spec) -> Value:
    """``len(views)``, ``t.size()``: an int, a bool or a type, which views no buffer."""
    return EMPTY


HANDLERS: tuple[tuple[str, Callable[[CallSite, Any], Value]], ...] = (
    ("synchronizers", on_synchronizer),
    ("drains", on_drain),  # a class's own method (``queue.Queue.join``) before a settler by name (``.join``)
    ("settlers", on_settler),
    ("sources", source),
    ("sinks", sink),
    ("registrars", on_registrar),
    ("sanitizers", on_sanitizer),
    ("guards", on_guard),
    ("views", on_view),
    ("retainers", on_retainer),
    ("binds", on_bind),
    ("passthrough", on_passthrough),
    ("groupers", on_grouper),
    ("collectors", on_collector),
    ("metadata-reads", on_metadata_read),
)


def stream_work(frame: Frame, stream: Value | None) -> frozenset:
    """What ``stream.query()`` found true has waited for (pack ``stream-queries``), as an
    event recorded there: the current stream asked outside a stream context (pack
    ``current-streams``), the device work issued on this path outside one; any other
    stream, the copies issued under a stream context (``Frame.side_issued``, the pending
    copies marked ``side-stream``), whichever stream that was."""
    st = frame.st
    if st is None:
        return frozenset()
    side = frame.side_issued | {p.key for p in st.pending if on_side_stream(p.key)}
    work = issued_work(st)
    if stream is not None and stream.objects == CURRENT_STREAM and not frame.contexts:
        return frozenset(key for key in work if key not in side)
    return frozenset(key for key in work if key in side)


def queried_stream(frame: Frame, node: ast.AST) -> Value | None:
    """The stream whose ``query()`` ``node`` calls (``side.query()``: a name holding a
    stream), from the value the name holds; None for any other expression."""
    st = frame.st
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)):
        return None
    if st is None:
        return None
    value = st.vars.get(node.func.value.id, EMPTY)
    shape = CallShape(None, node.func.attr, value.types | value.declared, _no_arguments)
    return value if frame.vocab.match("stream-queries", shape) is not None else None


def shape_of(program: ProjectView, node: ast.expr, values: dict[int, Value]) -> CallShape | None:
    """The call shape of a ``with`` item (``torch.cuda.stream(s)``), from the values its
    parts evaluated to."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        receiver = values.get(id(func.value), EMPTY)
        if receiver.ref is not None and not receiver.leaves:
            return CallShape(program.index.canonical(f"{receiver.ref}.{func.attr}"), None, frozenset(), _no_arguments)
        return CallShape(None, func.attr, receiver.types | receiver.declared, _no_arguments)
    callee = values.get(id(func), EMPTY)
    return CallShape(callee.ref, None, frozenset(), _no_arguments) if callee.ref else None


def _no_arguments(name: str, position: int | None = None) -> tuple[str, object]:
    return "absent", None


def records_on_current_stream(call: CallSite) -> bool:
    """Does ``event.record()`` record on the current stream: no stream given (torch 2.x:
    ``Event.record(stream=None)`` "uses torch.cuda.current_stream() if no stream is
    specified") and outside a stream context? An event recorded on a stream given (``side``)
    is taken to follow every copy issued so far: which stream that is, is not known."""
    node = call.node
    return not node.args and not any(k.arg in ("stream", None) for k in node.keywords) and not call.frame.contexts


def polled_device(call: CallSite) -> Value | None:
    """``event.query()``, ``stream.query()``: a done flag asked of an object whose class the
    packs name a synchroniser of (``torch.cuda.Event.synchronize``) is true once what that
    synchroniser waits for is done (CUDA: a stream's query succeeding "is equivalent to having
    called" its synchronize), so the branch where it is true (the exit of a ``while not
    ev.query():`` poll) has waited as the synchroniser would: for the copies an event
    recorded here followed, for the current stream's own work, or for everything (an event
    whose records are not tracked here, such as a field recorded by the previous call).
    None for another receiver (``other.done()`` of a future says nothing of the device)."""
    receiver, st = call.receiver, call.frame.st
    if receiver is None or st is None or not _device_waitable(call, receiver):
        return None
    covers = _recorded(call)
    if covers is None and receiver.objects == CURRENT_STREAM and not call.frame.contexts:
        covers = current_stream_work(st, call.frame.side_issued)
    elif covers is None:
        prior = _prior_record(call)
        covers = issued_work(st) | ({(PRIOR_WAIT, prior)} if prior is not None else frozenset())
    return Value(cond=Cond(settles_if_true=covers | receiver.pending))


def _device_waitable(call: CallSite, receiver: Value) -> bool:
    """Is the receiver the current stream, or of a class the packs name a synchroniser
    method of (``torch.cuda.Event.synchronize``, ``torch.cuda.Stream.synchronize``)?"""
    if receiver.objects == CURRENT_STREAM:
        return True
    owners = {p.qualname.rpartition(".")[0] for p in call.vocab.vocab.synchronizers if p.qualname}
    return not owners.isdisjoint(receiver.types | receiver.declared)
