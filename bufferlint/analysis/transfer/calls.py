"""What a call does to borrowed values.

Resolution order: Python builtins and container methods (the language, ``call_language``);
the project's own definitions through their summaries (the analysed tree decides for itself,
``call_project``); the rule packs' vocabulary (sources, sanitizers, views, guards, sinks,
settlers, pass-through wrappers: ``call_packs``); for methods on receivers of unknown type,
the project's methods of that name whose module the caller's imports load (every one, if
none does); otherwise an unknown external call, which neither
creates nor kills borrowed state.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace

from bufferlint.analysis.domain.state import current_stream_work, is_stand_in, issued_work
from bufferlint.analysis.domain.values import (
    CURRENT_STREAM, EMPTY, Borrow, Cond, Preset, Value, const, deep_leaves, evolve, join, join_all, map_leaves,
    pinned_buffer,
)
from bufferlint.analysis.frontend.constants import DEVICE_CONSTRUCTORS
from bufferlint.analysis.frontend.imports import Reached
from bufferlint.analysis.frontend.index import AttachedCallable, FunctionInfo, dotted_name
from bufferlint.analysis.frontend.syntax import bound_call
from bufferlint.analysis.transfer import call_language, call_packs, call_project, records
from bufferlint.analysis.transfer.call_effects import Advance, CallBack, CommitStep, Drain, Ready, Record, RecordEvent, Settle, UseAfterRefill
from bufferlint.analysis.transfer.call_site import Args, CallSite, origins
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.produced import parameter_produces
from bufferlint.analysis.transfer.stores import Stores
from bufferlint.analysis.world import is_hot

NOT_BY_NAME = {"__init__", "__call__", "__enter__", "__exit__", "get", "pop", "append", "items", "update", "copy"}


class CallResolver:
    """Evaluates a call: its callee and arguments (through the expression evaluator), the
    handler that decides what it does, and the effect records it returns (``apply``)."""

    def __init__(
        self,
        frame: Frame,
        stores: Stores,
        evaluate: Callable[[ast.expr | None], Value],
        arguments: Callable[[ast.Call], Args],
        apply: Callable[[object], None],
    ) -> None:
        self.frame = frame
        self.stores = stores
        self.eval = evaluate
        self.arguments = arguments
        self.apply = apply
        self.depth = 0  # nested call-backs being evaluated (``call_back``)

    def evaluate(self, node: ast.Call) -> Value:
        call = self.site_of(node)
        if call is None:
            return EMPTY
        value = dispatch(call)
        for effect in call.effects:
            value = self.apply_effect(effect, value)
        self.frame.calls[id(node)] = (node, value, tuple(call.targets))
        return value

    def apply_effect(self, effect: object, value: Value) -> Value:
        """Apply one of a call's effects; a call-back whose result the callee returns
        (``CallBack.returned``) adds that result to the call's ``value``."""
        if isinstance(effect, CallBack) and effect.returned:
            return join(value, self.call_back(effect))
        self.apply(effect)
        return value

    def site_of(self, node: ast.Call) -> CallSite | None:
        """Evaluate the callee and the arguments; None if the state became unreachable."""
        frame = self.frame
        func = node.func
        callee: Value | None = None
        if isinstance(func, ast.Attribute):
            receiver = self.eval(func.value)
            if receiver.ref is not None and not receiver.leaves:
                if frame.vocab.is_value_class(receiver.ref):
                    bound = bound_call(node)  # ``torch.Tensor.to(w, ...)`` is ``w.to(...)``
                    if bound is not None:
                        return self.site_of(bound)
                parts = Callee(qualname=frame.program.index.canonical(f"{receiver.ref}.{func.attr}"))
            else:
                parts = Callee(receiver=receiver, method=func.attr)
        else:
            callee = self.eval(func)
            parts = Callee.of(callee)
        if frame.st is None:
            return None
        args = self.arguments(node)
        if frame.st is None:
            return None
        call = parts.site(frame, self.stores, node, args, dotted_name(func) or (parts.method or "call"))
        call.callee = callee
        return call

    def call_back(self, effect: CallBack) -> Value:
        """A callee calls back the callable this call passed it (``Summary.calls``): that
        callable is called here with the arguments the callee passes it, as a call written
        here would be (a project function, a lambda, a bound method, a partial, a pack's
        sink such as ``pool.submit`` passed as the callback, or this function's own
        parameter, whose call becomes a fact of this summary). Nested call-backs are
        followed to ``MAX_CALLBACK_DEPTH``. Returns what the callable returns."""
        if self.frame.st is None or self.depth >= MAX_CALLBACK_DEPTH:
            return EMPTY
        function = effect.function
        parts = Callee.of(function)
        name = callable_name(function)
        call = parts.site(self.frame, self.stores, effect.node, effect.args, name)  # type: ignore[arg-type]
        call.callee = function
        call.callback = (effect.step, frozenset(effect.assume))
        before = self.frame.st.pending
        self.depth += 1
        try:
            value = dispatch(call)
            for one in call.effects:
                value = self.apply_effect(one, value)
        finally:
            self.depth -= 1
        st = self.frame.st
        if effect.stepwise and st is not None and st.pending - before:
            # the callee's loop asks its stream for the next element once the callable returns
            step = replace(effect.step, note=f"{effect.step.note}, then takes the next element", fact=())
            self.apply(CommitStep(st.pending - before, step))
        return value


MAX_CALLBACK_DEPTH = 4


@dataclass(frozen=True)
class Callee:
    """What a call calls, from the callee expression's value: a static name (``qualname``),
    a method of a receiver, a partial's preset arguments, a value that is one of several
    classes, a ``getattr`` default (``fallback``)."""

    qualname: str | None = None
    receiver: Value | None = None
    method: str | None = None
    fallback: str | None = None
    preset: Preset | None = None
    classes: frozenset = frozenset()
    functions: frozenset = frozenset()  # one of several functions (``Value.callables``)

    @staticmethod
    def of(callee: Value) -> "Callee":
        """A call of a value (``fn(...)``, ``load(...)`` of a partial, a bound method)."""
        qualname, classes = callee.ref, callee.classes
        if classes and (qualname is None or any(when for _, when in classes)):
            qualname = None  # one of several classes, or one only under conditions
        else:
            classes = frozenset()
        if callee.method is not None and callee.bound is not None:
            # ``submit = executor.submit; submit(...)``; with a reference too,
            # ``getattr(param, "weight_loader", default_weight_loader)``: the attribute
            # as a method of the object, or the default.
            return Callee(None, callee.bound, callee.method, callee.ref, callee.preset, classes)
        functions = callee.callables if qualname is None and not classes else frozenset()
        if qualname is None and not classes and not functions and (callee.types or callee.declared):
            # An object of a project class called as a function runs its ``__call__``.
            return Callee(None, callee, "__call__")
        return Callee(qualname, None, None, None, callee.preset, classes, functions)

    def site(self, frame: Frame, stores: Stores, node: ast.Call, args: Args, name: str) -> CallSite:
        if self.preset is not None:  # ``functools.partial(fn, pool)(param, w)`` calls ``fn(pool, param, w)``
            args = args.after(self.preset)
        call = CallSite(frame, stores, node, self.qualname, self.method, self.receiver, args, name)
        call.fallback = self.fallback
        call.classes = self.classes
        call.functions = self.functions
        return call


def callable_name(function: Value) -> str:
    """How a trace names a callable passed as a callback: its function's own name (a
    lambda's as ``lambda``), or the method's."""
    if function.method is not None:
        return function.method
    if function.ref is not None:
        last = function.ref.rsplit(".", 1)[-1]
        return "lambda" if last.startswith("<lambda") else last
    classes = sorted(function.types or function.declared)
    if classes:  # an object called as a function: its class's ``__call__``
        return f"{classes[0].rsplit('.', 1)[-1]}.__call__"
    return "callback"


def dispatch(call: CallSite) -> Value:
    """What the call evaluates to, in the resolution order; its other effects go to
    ``call.effects``."""
    vocab = call.vocab
    read = vocab.match("host-reads", call.shape)
    if read is not None and vocab.match("views", call.shape) is None:  # a view reads no bytes yet
        call_packs.read_host(call, read)
    writes = list(vocab.matches("host-writes", call.shape))  # the project's own entry wins (``refills``)
    write = next((spec for spec in writes if vocab.is_users(spec)), writes[0] if writes else None)
    if write is not None:
        call_packs.write_host(call, write)
    metadata = vocab.match("metadata-reads", call.shape) is not None  # `len(views)` reads no bytes
    if call.frame.st.refilled and not metadata:  # type: ignore[union-attr]  # a call is evaluated in a reachable state
        used = join_all([call.receiver, *call.args.flat()])
        call.effects.append(UseAfterRefill(call.node, used, call.name))
    if vocab.match("event-records", call.shape) is not None and isinstance(call.node.func, ast.Attribute):
        holder = call_packs.event_holder(call.node.func.value)
        if holder is not None:
            call.effects.append(RecordEvent(holder, call_packs.records_on_current_stream(call)))
    if vocab.match("loop-yields", call.shape) is not None:
        call.frame.loop_yields.add((call.node.lineno, call.node.col_offset))
    ready = tuple(vocab.matches("ready-after", call.shape))
    if ready:
        call.effects.append(Ready(ready, call.node))
    advancing = tuple(vocab.matches("advances", call.shape))
    if advancing:
        func = call.node.func
        kept = isinstance(func, ast.Attribute) and call.frame.keeps_in_receiver(func.value)
        call.effects.append(Advance(call.node, call.name, advancing, kept))
    if vocab.match("stream-queries", call.shape) is not None and call.frame.st is not None:
        # before a parameter's stand-in for a future (``wait_on_receiver``)
        return Value(cond=Cond(settles_if_true=call_packs.stream_work(call.frame, call.receiver)))
    if call.receiver is not None and vocab.match("done-flags", call.shape) is not None:
        polled = call_packs.polled_device(call)  # ``event.query()``: before a parameter's futures' ``done()``
        if polled is not None:
            return polled
    if call.receiver is not None and (call.receiver.pending or call.receiver.alloc or call.receiver.recorded):
        result = wait_on_receiver(call)
        if result is not None:
            return result
    if call.classes:
        result = _construct(call)
    elif call.functions:
        result = _dispatch_each(call)
    elif call.qualname is not None:
        result = _dispatch_named(call, call.qualname)
    else:
        result = _dispatch_method(call)
    if vocab.match("host-allocations", call.shape) is not None:
        result = evolve(_off_the_device(result, vocab.device_kinds), host=True)
    elif vocab.match("device-moves", call.shape) is not None:
        result = map_leaves(result, _off_the_host)
    if vocab.match("array-allocations", call.shape) is not None:
        result = evolve(result, array=True)
    if vocab.match("recorded-events", call.shape) is not None and call.frame.st is not None:
        current = call.receiver is not None and call.receiver.objects == CURRENT_STREAM and not call.frame.contexts
        work = current_stream_work(call.frame.st, call.frame.side_issued) if current else issued_work(call.frame.st)
        result = evolve(result, recorded=work, not_none=True)  # ``stream.record_event()``
    if vocab.match("new-events", call.shape) is not None:
        result = evolve(result, recorded=frozenset(), not_none=True)  # ``torch.cuda.Event()``: covers nothing yet
    if vocab.match("current-streams", call.shape) is not None and not call.frame.contexts:
        result = evolve(result, objects=CURRENT_STREAM)  # the stream the host's own work goes to
    pinned = vocab.match("pinned-allocations", call.shape)
    if pinned is not None:
        result = call_packs.pinned_allocation(call, pinned, result)
    if vocab.names(call.shape):
        result = call_packs.construction(call, result)
    return result


def _off_the_device(result: Value, kinds: frozenset) -> Value:
    """What a move to the host returns (``host-allocations``) holds no borrowed value of a
    kind whose buffer is accelerator memory (``on-device``): it is a copy into host memory."""
    if not kinds:
        return result
    return map_leaves(result, lambda leaf: None if isinstance(leaf, Borrow) and leaf.kind in kinds else leaf)


def _off_the_host(leaf):
    """A leaf of what a move off the host returns (``device-moves``): a pinned buffer's
    device twin is new memory, not the buffer (a write to it writes no host bytes)."""
    return None if pinned_buffer(leaf) else leaf


def _dispatch_named(call: CallSite, qualname: str) -> Value:
    """A call of a statically named function or class."""
    if qualname.startswith("builtins."):
        result = call_language.builtin(call, qualname[len("builtins."):])
        if result is not None:
            return result
    if qualname in call_language.CASTS:  # ``cast(bytes, view)`` is the view: no call at run time
        return call.args.arg(1) or EMPTY
    result = call_packs.users_word(call)
    if result is not None:
        return result
    targets = call_project.targets_static(call, qualname)
    if targets:
        return call_project.apply_project(call, targets)
    result = call_packs.vocabulary(call)
    if result is not None:
        return result
    result = records.construct(call, qualname)
    if result is None and qualname in records.NAMESPACES:
        result = records.namespace(call)
    if result is None and qualname in records.REPLACERS:
        result = records.replaced(call, call.args.arg(0))
    if result is not None:
        return result
    if qualname in DEVICE_CONSTRUCTORS:
        device = call.args.device()
        if device is not None:
            return const(device)
    call.demand("qualname", qualname, None)
    site = frozenset({call.allocation_site()})
    return Value(types=frozenset({qualname}), alloc=site, objects=site)


def _dispatch_each(call: CallSite) -> Value:
    """A call of a value that is one of several project functions (``Value.callables``):
    each may run here; the result is any of theirs."""
    functions = call.program.index.functions
    targets = [target for qualname in sorted(call.functions) if functions.get(qualname) is not None
               for target in call_project.targets_static(call, qualname)]
    if not targets:
        return _dispatch_method(call)
    return call_project.apply_project(call, targets)


def _construct(call: CallSite) -> Value:
    """A call of a value that is one of several classes (``chosen()``): each one's
    ``__init__`` runs at this call, and the object is an instance of one of them, of each
    under the conditions the value is that class (``Value.type_when``)."""
    conditional = []
    for qualname, when in sorted(call.classes, key=lambda c: c[0]):
        targets = call_project.targets_static(call, qualname)
        if targets:
            call_project.apply_project(call, targets)
        if when:
            conditional.append((qualname, when))
    call.constructed = None
    types = frozenset(qualname for qualname, _ in call.classes)
    site = frozenset({call.allocation_site()})
    return Value(types=types, type_when=frozenset(conditional), alloc=site, objects=site, not_none=True)


def _dispatch_method(call: CallSite) -> Value:
    """A method call (or a call of a bound method)."""
    result = call_packs.users_word(call)
    if result is not None:
        return result
    targets = call_project.targets_typed(call)  # a project class's own `update` is not dict.update
    if targets:
        return call_project.apply_project(call, targets)
    demand_receiver_class_in_flight(call)
    result = call_language.entered_context(call)
    if result is None:
        result = call_language.container_method(call)
    if result is None and call.method == "_replace":  # a named tuple's copy with fields replaced
        result = records.replaced(call, call.receiver)
    if result is not None:
        return result
    result = call_packs.vocabulary(call)
    if result is not None:
        return result
    produced = parameter_produces(call)  # ``reader.tensors()`` of a parameter: each caller's to say
    result = _method_by_name(call)
    return join(result, produced) if produced is not None else result


def _method_by_name(call: CallSite) -> Value:
    """A method call nothing else knows: the project's methods of that name, else a call of
    a parameter (a callback), else nothing."""
    method = call.method  # None: a call of a value that is no known function or method
    if method is not None and not known_external_receiver(call) and method not in NOT_BY_NAME \
            and not receiver_is_borrowed(call):
        program = call.program
        named = [(info, why) for info, why in program.methods_named(method, call.frame.info.module.name)
                 if call.args.fit(info)]
        # Only the classes this module's imports load can be the receiver; if none of
        # them defines the method, every one that does is taken (``by_name_step``).
        candidates: list[tuple[FunctionInfo, Reached | None]] = [(info, why) for info, why in named if why is not None]
        candidates = candidates or [(info, None) for info, _ in named]
        # Callables the project attaches as this attribute (``weight_loader``), and a
        # ``getattr`` default; called without the object as receiver.
        attached = [a for a in program.index.attached_functions(method) if call.args.fit_attached(a)]
        fallback = program.index.functions.get(call.fallback) if call.fallback is not None else None
        if fallback is not None and call.args.fit_plain(fallback):
            attached.append(AttachedCallable(fallback))
        call.demand("method", method, call.receiver)
        demand_attribute_owner(call)
        if candidates or attached:
            steps = {info.qualname: call.by_name_step(info, why) for info, why in candidates}
            chosen = [info for info, _ in candidates]
            ahead: dict[str, call_project.Binding] = {}
            names = {info.qualname for info in chosen}
            for one in attached:  # a method found by its name already is not reached twice
                if one.info.qualname not in names:
                    names.add(one.info.qualname)
                    chosen.append(one.info)
                    ahead[one.info.qualname] = call_project.attached_binding(one)
            result = call_project.apply_project(call, chosen, by_name=True, steps=steps, ahead=ahead)
            if any(isinstance(leaf, Borrow) for leaf in deep_leaves(result, through_lazy=True)):
                demand_receiver_origin(call)
            return result
    if method is None:
        return call_project.call_parameter(call)
    return call_project.call_record_field(call)


def demand_receiver_origin(call: CallSite) -> None:
    """A method reached by name hands out borrowed values: which class the receiver is
    decides whether it is the one that does, so the project files defining what built the
    receiver (a factory not parsed yet: ``select_reader()``'s result is known by its name)
    are asked for, whether or not anything borrowed was passed to it."""
    for name in sorted(call.receiver.types if call.receiver is not None else ()):
        if name not in call.program.index.classes and name not in call.program.index.functions \
                and call.program.in_project(name):
            call.effects.append(Record("demand", ("qualname", name)))


def demand_receiver_class_in_flight(call: CallSite) -> None:
    """``window.add(tracker)`` then ``window.drain()``, ``window`` an instance of a project
    class not read yet, while work is in flight: its methods may keep the futures in a field
    and wait for them there (``Summary.keeps_futures``, ``SettleStored``), so the class's
    module is asked for; the call is analysed again once it is read. Likewise, while work
    or a device copy is in flight, a method not found on a class read whose project base is
    not read yet (``self._fence()`` of a mixin in another module), or on a class not read:
    the base may wait for it, so its module is read if its ``def`` of the method names a
    synchroniser (a ``"waits"`` demand of ``<base>.<method>``: ``ProjectAnalysis.next_files``;
    reading every base of every such receiver made sglang's attention backends' summaries
    recurse past the limit)."""
    st = call.frame.st
    if st is None or call.receiver is None:
        return
    futures = not all(is_stand_in(p) for p in st.pending)
    if not futures and not st.flying:
        return
    index = call.program.index
    for name in sorted(call.receiver.types | call.receiver.declared):
        for ancestor in index.class_ancestors(name) if name in index.classes else (name,):
            if ancestor not in index.classes and ancestor not in index.functions and call.program.in_project(ancestor):
                if futures and ancestor in call.receiver.types:
                    call.effects.append(Record("demand", ("qualname", ancestor)))
                elif call.method is not None:
                    call.effects.append(Record("demand", ("waits", f"{ancestor}.{call.method}")))


def demand_attribute_owner(call: CallSite) -> None:
    """``worker.inbox.put(view)`` with ``worker`` an instance of a project class not parsed
    yet: what ``inbox`` is (a queue, a pool) is written in that class, so its module is asked
    for when what the call passes may be borrowed; the call is analysed again once it is read."""
    func = call.node.func
    st = call.frame.st
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Attribute) \
            or not isinstance(func.value.value, ast.Name) or st is None:
        return
    owner = st.vars.get(func.value.value.id)
    index = call.program.index
    for name in sorted(owner.types if owner is not None else ()):
        if name not in index.classes and name not in index.functions and call.program.in_project(name):
            call.demand("qualname", name, call.receiver)


def wait_on_receiver(call: CallSite) -> Value | None:
    """``future.result()``, ``thread.join()``: a method that waits for its receiver's work;
    ``executor.shutdown(wait=True)``: one that waits for every task of the executor;
    ``future.done()``, ``event.query()``: a flag that is true once the work is done."""
    vocab, receiver = call.vocab, call.receiver
    assert receiver is not None
    identity = call.receiver_identity()
    # a class's own drain (``asyncio.Queue.join``) before a settler by name (``.join``); a
    # parameter's value may still be a future of the caller's, settled as a settler would
    if identity and vocab.match("drains", call.shape) is not None:
        call.effects.append(Drain(receiver if identity == receiver.alloc else evolve(receiver, alloc=identity)))
        if receiver.pending:
            call.effects.append(Settle(Value(pending=receiver.pending)))
        return EMPTY
    if receiver.pending and vocab.match("settlers", call.shape) is not None:
        call.effects.append(Settle(Value(pending=receiver.pending), timed=call_packs.given_timeout(call.node)))
        return EMPTY
    if receiver.pending and vocab.match("done-flags", call.shape) is not None:
        return Value(cond=Cond(settles_if_true=receiver.pending))  # ``future.done()``: polled, not waited
    if receiver.recorded and vocab.match("done-flags", call.shape) is not None:
        # ``event.query()``: true once the device work recorded before the event is done
        return Value(cond=Cond(settles_if_true=receiver.recorded))
    return None


def receiver_is_borrowed(call: CallSite) -> bool:
    """A method of a (maybe) borrowed value is the tensor's own, not a project method."""
    concrete, params = origins([call.receiver])
    return is_hot(call.program, call.caller, concrete, params)


def known_external_receiver(call: CallSite) -> bool:
    """A receiver of a library class (not the project's): its methods are the library's.
    A project class whose file is not parsed yet is asked for, and dispatched by name
    until then."""
    types = call.receiver.types if call.receiver is not None else frozenset()
    external = False
    for type_name in types:
        if type_name in call.program.index.classes:
            continue
        if call.program.in_project(type_name):
            call.demand("qualname", type_name, call.receiver)
        else:
            external = True
    return external
