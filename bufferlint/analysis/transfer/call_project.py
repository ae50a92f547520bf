"""Calls of the project's own functions: which definitions a call may reach (by name,
through the receiver's type, through decorators, or by method name), how the arguments bind
to their parameters, and what each callee's summary does at this call (``apply_summary``:
its sinks, stores, waits, futures and result, instantiated with the arguments)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from bufferlint.analysis.frontend.dispatch import is_dispatcher
from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.domain.conditions import (
    APPROVES, CAPTURED, INSTANCE, TRUTHY, Ancestors, ParamTest, approves_operand, decide_at_call, exact_parameter,
    holds_by_default, surely_passed,
)
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, ParamCall, Site, Summary, returns_borrowed, stores_in_order
from bufferlint.analysis.domain.values import (
    EMPTY,
    FieldOf,
    NOTHING,
    Borrow,
    best_of_equal,
    Cond,
    Leaf,
    local_fields,
    ParamRef,
    Preset,
    Producer,
    Value,
    checked,
    clean,
    container,
    decide_built,
    deep_leaves,
    deep_pending,
    callback_path,
    evolve,
    has_leaves,
    in_flight,
    index,
    join,
    join_all,
    map_leaves,
    meets,
    pinned_buffer,
    program_memory,
    resolve,
)
from bufferlint.analysis.transfer.construction import field_at_construction
from bufferlint.analysis.transfer.records import (
    field_of as record_field, followed_fields, parameter_field as record_parameter_field, pass_record,
)
from bufferlint.analysis.frontend.index import AttachedCallable, FunctionInfo, base_name, is_cached_property
from bufferlint.analysis.transfer.call_effects import (
    Adopt,
    Allocate,
    Advance,
    CallBack,
    CallParam,
    Issue,
    KeepInField,
    Reach,
    Record,
    Release,
    Report,
    Settle,
    SettleStored,
    StoreFutures,
    Synchronize,
)
from bufferlint.analysis.transfer.call_site import Args, CallSite, enabling_condition, origins
from bufferlint.analysis.transfer.call_threads import hand_to_thread, kept_by_thread, starts_thread
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.produced import produced
from bufferlint.analysis.transfer.registries import getter_lookup
from bufferlint.analysis.world import ProjectView, is_hot
from bufferlint.findings import TraceStep


# -- which definitions ----------------------------------------------------------------------------

def targets_static(call: CallSite, qualname: str) -> list[FunctionInfo]:
    """The function or class (its ``__init__``) a call naming ``qualname`` reaches."""
    index = call.program.index
    function = index.functions.get(qualname)
    if function is not None:
        return through_decorators(call, function)
    if qualname in index.classes:
        init = index.class_method(qualname, "__init__")
        call.constructed = qualname
        found = index.functions.get(init) if init is not None else None
        return [found] if found is not None else []
    return _held_by_class(call, qualname)


def _held_by_class(call: CallSite, qualname: str) -> list[FunctionInfo]:
    """``Loader.guard(w)``: a function a project class holds as a static method
    (``guard = staticmethod(f)``, its own or a base's), called without a receiver. Only
    that class's: naming the class picks it, whatever subclasses hold."""
    index = call.program.index
    owner, _, name = qualname.rpartition(".")
    if not owner or owner not in index.classes:
        return []
    held = index.class_method(owner, name)
    info = index.functions.get(held) if held is not None else None
    return [info] if info is not None and not info.binds_receiver else []


def through_decorators(call: CallSite, info: FunctionInfo) -> list[FunctionInfo]:
    """Calling a function a project decorator wrapped calls the wrapper the decorator
    returned (``@in_background`` submits it), and the function itself only when the
    wrapper hands it its own arguments unchanged (``functools.wraps`` style). Calling a
    single dispatcher (``@functools.singledispatch``) may run any of its overloads
    (``frontend.dispatch``)."""
    program = call.program
    index = program.index
    targets = [info]
    for decorator in getattr(info.node, "decorator_list", ()):
        name = base_name(info.module, decorator) if isinstance(decorator, (ast.Name, ast.Attribute)) else None
        outer = index.functions.get(index.canonical(name)) if name else None
        if outer is None or outer.kind != "function":
            continue
        program.activate(outer.qualname)
        call.effects.append(Record("callee", outer.qualname))  # re-run here when it is summarised
        call.effects.append(Record("returns", outer.qualname))
        wrapper = index.functions.get(program.summary(outer.qualname).returns.ref or "")
        if wrapper is None:
            continue
        wrapped = outer.params[0] if outer.params else None
        passes = _calls_with_own_arguments(wrapper, wrapped)
        if passes and _returns_wrapped_result(wrapper, wrapped):
            call.transparent.add(wrapper.qualname)
        targets = [wrapper] + (targets if passes else [])
    if is_dispatcher(info.node):  # any overload may run: the class of the argument is not known
        overloads = [o for o in (index.functions.get(q) for q in index.dispatch_overloads(info.qualname)) if o is not None]
        chosen = _dispatched_for_kind(call, overloads)
        if chosen is not None:
            return [chosen]
        targets += [o for o in overloads if o not in targets]
    return targets


def _dispatched_for_kind(call: CallSite, overloads: list[FunctionInfo]) -> FunctionInfo | None:
    """The overload a single dispatcher runs for an argument whose class is known: a value
    made only of borrowed objects of one kind is an instance of that kind's ``types`` or
    ``instance-of`` (``torch.Tensor``), so ``defer_ok(w)`` runs the overload registered for one of them
    (``@defer_ok.register`` over ``def _(value: torch.Tensor)``, or ``.register(torch.Tensor)``)
    when exactly one is. None (every overload may run) otherwise."""
    argument = call.args.arg(0) if call.args.positional else None
    if argument is None or not argument.leaves or not all(isinstance(leaf, Borrow) and leaf.kind for leaf in argument.leaves):
        return None
    kinds = {leaf.kind for leaf in argument.leaves if isinstance(leaf, Borrow)}
    specs = [call.vocab.vocab.kind(kind) for kind in kinds]
    if len(specs) != 1 or specs[0] is None or not (specs[0].types or specs[0].instance_of):
        return None
    index = call.program.index
    types = {index.canonical(t) for t in specs[0].types + specs[0].instance_of}
    chosen = [o for o in overloads if (registered := _registered_class(o)) is not None and index.canonical(registered) in types]
    return chosen[0] if len(chosen) == 1 else None


def _registered_class(info: FunctionInfo) -> str | None:
    """The class an overload is registered for: ``@f.register(cls)``'s argument, or the
    annotation of its first parameter under a bare ``@f.register``; None if not named."""
    node = info.node
    for decorator in getattr(node, "decorator_list", ()):
        if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) and decorator.func.attr == "register":
            return base_name(info.module, decorator.args[0]) if len(decorator.args) == 1 else None
        if isinstance(decorator, ast.Attribute) and decorator.attr == "register":
            args = getattr(node, "args", None)
            first = (args.posonlyargs + args.args)[0] if args is not None and (args.posonlyargs + args.args) else None
            return base_name(info.module, first.annotation) if first is not None and first.annotation is not None else None
    return None


def targets_typed(call: CallSite) -> list[FunctionInfo]:
    """The methods of the receiver's known project classes, each looked up through its
    class hierarchy: an override hides the base's method (``shape.receiver_types`` also
    lists the ancestors, for the packs' sake, which would reach the base's too)."""
    index, method = call.program.index, call.method
    found: list[FunctionInfo] = []
    if method is None:
        return found
    receiver = call.receiver
    own = (receiver.types | receiver.declared) if receiver is not None else frozenset()
    conditions = dict(receiver.type_when) if receiver is not None else {}
    looked_up_in = ""  # the class the first method found was looked up in
    for type_name in sorted(own & call.shape.receiver_types) or call.shape.receiver_types:
        if type_name in index.classes:
            qualname = index.class_method(type_name, method)
            info = index.functions.get(qualname) if qualname is not None else None
            if info is None:
                continue
            when = conditions.get(type_name, frozenset())  # an instance of it only under these
            if info not in found:
                looked_up_in = looked_up_in or type_name
                found.append(info)
                call.target_when[info.qualname] = when
            else:
                call.target_when[info.qualname] &= when
    # ``self.hook()`` in a base class, ``policy.allows(w)`` with ``policy: Policy``: the object
    # may be an instance of a subclass, which runs its override
    if len(found) == 1 and (_own_receiver(call) or _declared_receiver(call, looked_up_in)):
        # A subclass in a file not parsed yet may override it: the files defining a method of
        # that name are asked for when what the call passes may be borrowed.
        call.demand("method", method, call.receiver)
        overrides = [o for o in call.program.overrides_of(looked_up_in, method) if o not in found]
        if overrides:
            # What the call's result is judged as (a guard: ``Program.guard_dispatch``): the
            # class's ``method`` and its subclasses' (the method's own name when the class
            # defines it).
            call.dispatched_from = f"{looked_up_in}.{method}"
            if _is_stub(found[0]):  # a protocol's or an abstract method: an override runs
                found.clear()
            found.extend(overrides)
            for override in overrides:
                call.target_when[override.qualname] = _instance_of_owner(override)
    return found


def _is_stub(info: FunctionInfo) -> bool:
    """Is the method's body only a docstring, ``...``, ``pass`` or ``raise
    NotImplementedError`` (a ``Protocol``'s member, an abstract method)? It never runs on an
    object whose class overrides it, and an object of its own class is never made."""
    for stmt in getattr(info.node, "body", ()):
        if isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Raise) and "NotImplementedError" in ast.unparse(stmt.exc or stmt):
            continue
        return False
    return True


def _instance_of_owner(override: FunctionInfo) -> frozenset:
    """The condition under which ``self.m()`` runs a subclass's override: ``self`` (this
    method's parameter 0, as its caller passes it) is an instance of the override's class.
    What the override hands back or reaches then holds only for receivers that may be one
    (``conditions.may_be_instance``): ``loop.run()`` on a training loop does not get the
    prediction loop's ``on_run_end`` result, while on a receiver of unknown class every
    override stays (the hierarchy dispatch)."""
    owner = override.class_qualname
    return frozenset({ParamTest(0, INSTANCE, owner)}) if owner else frozenset()


def _declared_receiver(call: CallSite, class_qualname: str) -> bool:
    """Is the receiver this function's parameter whose class only its annotation names
    (``policy: Policy``), as ``class_qualname``? Then it may be any subclass of it. (Not yet a
    field declared so: ``self.pool.get(...)`` with ``pool: Optional[Pool]`` reaching the
    overrides of a class's own method recursed past the analysis limit on SGLang.)"""
    receiver = call.receiver
    return (receiver is not None and receiver.param is not None and not receiver.types
            and class_qualname in receiver.declared)


def _own_receiver(call: CallSite) -> bool:
    """Is the receiver this method's own ``self`` (named so; ``super()`` is the base's own),
    which may be an instance of any subclass?"""
    info, func = call.frame.info, call.node.func
    return bool(
        info.binds_receiver and info.params and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name) and func.value.id == info.params[0]
        and call.receiver is not None and ParamRef(0) in call.receiver.leaves
    )


def _returns_wrapped_result(wrapper: FunctionInfo, wrapped: str | None) -> bool:
    """Does every ``return`` of ``wrapper`` hand back what calling ``wrapped`` returned
    (``return fn(*args)``, or ``result = fn(*args) ... return result`` with no other
    binding of ``result``)? Then the wrapper's value is the wrapped function's: a guard
    under a counting or timing decorator still decides its caller's branch."""
    def wrapped_call(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == wrapped

    bound: dict[str, bool] = {}  # local name -> every binding is a call of ``wrapped``
    returns: list[ast.expr | None] = []
    for node in walk(wrapper.node):
        if isinstance(node, ast.Return):
            returns.append(node.value)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in walk(target):
                    if isinstance(name, ast.Name):
                        only = isinstance(target, ast.Name) and not isinstance(node, ast.AugAssign) and wrapped_call(node.value)
                        bound[name.id] = bound.get(name.id, True) and only
    return bool(returns) and all(
        wrapped_call(value) or (isinstance(value, ast.Name) and bound.get(value.id, False)) for value in returns)


def _calls_with_own_arguments(wrapper: FunctionInfo, wrapped: str | None) -> bool:
    """Does ``wrapper`` call ``wrapped`` (its decorator's parameter) with exactly the
    arguments it was given (``func(*args, **kwargs)``)?"""
    own = set(wrapper.params)
    for node in walk(wrapper.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == wrapped:
            passed = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
            passed += [k.value for k in node.keywords]
            if all(isinstance(a, ast.Name) and a.id in own for a in passed):
                return True
    return False


# -- applying their summaries ---------------------------------------------------------------------

@dataclass(frozen=True)
class Binding:
    """How a callable held as a value binds a call's arguments when that differs from the
    call as written: the receiver its method is bound to (not the object the attribute was
    read from), and the arguments a partial binds ahead of the call's."""

    receiver: Value | None
    preset: Preset


def attached_binding(attached: AttachedCallable) -> Binding:
    """An attached callable's binding: its partial's arguments are bound elsewhere (their
    values are unknown here), and a method is bound to some instance of its class."""
    info = attached.info
    receiver = Value(declared=frozenset({info.class_qualname})) if info.binds_receiver and info.class_qualname else None
    return Binding(receiver, Preset((EMPTY,) * attached.ahead, tuple((k, EMPTY) for k in attached.keywords)))


def apply_project(call: CallSite, targets: list[FunctionInfo], by_name: bool = False,
                  steps: dict[str, TraceStep] | None = None, ahead: dict[str, Binding] | None = None) -> Value:
    """Apply the targets' summaries. A call resolved only by method name may reach any
    same-named method, so it carries their sinks and the borrowed values they produce,
    but not their parameter pass-through (which would join unrelated classes' results).
    ``steps``: a target's own trace step (how a call by name came to it), instead of the
    call's. ``ahead``: a target's own binding (an attached callable, ``Binding``).

    A by-name call can reach hundreds of methods (``model.load_weights(...)``), most of
    them never analysed (an empty summary): for those only the call edge and the flow of
    the arguments are recorded, and what each argument carries is worked out once."""
    program = call.program
    call.by_name = by_name
    results: list[Value] = []
    settles: frozenset | None = None
    bounds: list[dict[int, Value]] = []
    facts: dict[int, tuple[Value, bool, frozenset, bool, bool, bool]] = {}  # id(argument) -> what it carries
    bindings: dict[tuple, dict[int, Value]] = {}  # same signature, same binding (never changed after)
    caller = call.caller
    call.targets += [info.qualname for info in targets]
    keeps_futures = _receiver_keeps_futures(call)
    discarded = _value_discarded(call)
    thread = starts_thread(call)
    started = hand_to_thread(call) if thread else frozenset()
    for info in targets:
        call.effects.append(Record("callee", info.qualname))
        program.consider(info)
        if keeps_futures and info.binds_receiver:
            program.activate(info.qualname)  # it may wait for the futures its receiver keeps
        summary = program.summary(info.qualname)
        if not discarded:
            call.effects.append(Record("returns", info.qualname))
        binding = ahead.get(info.qualname) if ahead else None
        signature = (info.binds_receiver, info.n_positional, tuple(info.params), info.vararg, info.kwarg, binding)
        bound = bindings.get(signature)
        if bound is None:  # a record parameter's field is passed on as nothing (``values.Field``)
            first = 1 if info.binds_receiver else 0  # unless a caller put something in it
            followed = followed_fields(program, caller)
            bound = bindings[signature] = {param: local_fields(value if param < first else _iterated(call, value), followed)
                                           for param, value in bind(call, info, binding).items()}
            if thread:  # what ``__init__`` keeps is the started thread's to read (``call_threads``)
                bound = bindings[signature] = {param: value if param == 0 else kept_by_thread(value)
                                               for param, value in bound.items()}
        if info.returns_parameter_call:
            _activate_for_callback(call, info, bound)
        for param, value in bound.items():
            known = facts.get(id(value))
            if known is None or known[0] is not value:
                concrete, params = origins([value])
                futures = any(key[:1] != ("param",) for key in deep_pending(value))
                flight = any(in_flight(leaf) for leaf in deep_leaves(value, through_lazy=True))
                pinned = any(pinned_buffer(leaf) for leaf in deep_leaves(value, through_lazy=True))
                known = facts[id(value)] = (value, concrete, params, futures, flight, pinned)
            program.flow(caller, info.qualname, param, known[1], known[2], known[4], known[5])
            pass_record(program, caller, info.qualname, param, value)
            if known[3] or value.built:
                # it may wait for the futures it is given, or read a producer it is given
                # (``reader.tensors()``: ``produced.parameter_produces``)
                program.activate(info.qualname)
        captured = _captured_here(call, info)
        if captured:  # not flows: they decide the callee's conditions, they carry nothing in
            bound = {**bound, **captured}
        bounds.append(bound)
        step = steps.get(info.qualname, call.call_step) if steps else call.call_step
        when = call.target_when.get(info.qualname, frozenset())
        looked_up = getter_lookup(program.index, info, bound) if len(targets) == 1 else None
        if looked_up is not None:  # ``Policies.get("owned")``: what is registered under that key
            results.append(looked_up)
        if summary is EMPTY_SUMMARY:
            call.effects.append(Record("edge", CallEdge(info.qualname, bound, call.assume | when, step, call.frame.defaults, _synced(call))))
            settles = frozenset()
            if info.qualname in call.transparent or looked_up is not None:
                continue
            if not results or results[-1] is not EMPTY:
                results.append(EMPTY)  # it returns nothing borrowed, and no guard fact: the join keeps none
            continue
        if by_name and summary.returns != EMPTY:
            summary = by_name_summary(program, info.qualname, summary)
        result = apply_summary(call, info, summary, bound, exact=not by_name and len(targets) == 1, step=step,
                               when=when)
        if info.qualname not in call.transparent and looked_up is None:
            results.append(result)
        keep_futures(call, summary, bound)
        waited = frozenset(s for s in summary.settles if s in bound or isinstance(s, tuple))
        settles = waited if settles is None else settles & waited
    receiver_text = call.receiver_text()
    for param in settles or ():  # every candidate waits for what this argument holds
        if isinstance(param, tuple):  # ... or for what the receiver keeps in a field
            if receiver_text:
                call.effects.append(SettleStored(f"{receiver_text}.{param[1]}"))
            continue
        for bound in bounds:
            call.effects.append(Settle(bound[param]))
    result = _project_result(call, targets, join_all(results))
    return evolve(result, pending=result.pending | started) if started else result


def keep_futures(call: CallSite, summary: Summary, bound: dict[int, Value]) -> None:
    """The futures this call passes to parameters the callee keeps in its receiver's fields
    (``Summary.keeps_futures``) are kept in ``<receiver>.<attr>`` here."""
    receiver_text = call.receiver_text() if summary.keeps_futures else None
    for param, attr in sorted(summary.keeps_futures) if receiver_text else ():
        if param in bound:
            call.effects.append(StoreFutures(f"{receiver_text}.{attr}", bound[param]))


def _activate_for_callback(call: CallSite, info: FunctionInfo, bound: dict[int, Value]) -> None:
    """``info`` returns what a call of its parameter returns, and this call passes it a
    project function: when that function hands out borrowed values (a copy in flight),
    ``info`` hands them to this caller, so it is analysed. The caller is analysed again
    when the function's summary changes (it is a callee of this call then)."""
    program = call.program
    for value in bound.values():
        for qualname in sorted(value.callables or ({value.ref} if value.ref is not None else set())):
            if qualname not in program.index.functions:
                continue
            call.effects.append(Record("callee", qualname))
            call.effects.append(Record("returns", qualname))
            if returns_borrowed(program.summary(qualname)):
                program.activate(info.qualname)
                return


def _value_discarded(call: CallSite) -> bool:
    """Is the call a statement of its own (``helper(w)``), its value thrown away?"""
    op = call.frame.op
    return op is not None and isinstance(op.node, ast.Expr) and op.node.value is call.node


def _receiver_keeps_futures(call: CallSite) -> bool:
    """Did this function store futures in the receiver's attributes (``self.pending``) on
    this path? A method of the receiver may wait for them."""
    receiver_text = call.receiver_text()
    st = call.frame.st
    if not receiver_text or st is None:
        return False
    prefix = receiver_text + "."
    return any(holder.startswith(prefix) for pending in st.pending for holder in pending.stored_in)


def _may_be_verdict(value: Value) -> bool:
    """Can a call's value be a predicate's verdict (holding no object, no container)? Only
    such a value needs what the call was asked about (``Value.asked``)."""
    return not value.leaves and value.items is None and value.elems is None and value.ref is None


def _project_result(call: CallSite, targets: list[FunctionInfo], result: Value) -> Value:
    """The call's value from its targets' results."""
    if any(info.is_async for info in targets):
        # A coroutine object holds its arguments until it runs (awaited now, or later as
        # a task): ``create_task(consume(w))`` reads ``w`` after the caller moves on.
        result = join(result, container(join_all(call.args.flat()))) or EMPTY
    if call.constructed:
        site = frozenset({call.allocation_site()})  # a new object: `Buf(n)` here is not `Buf(n)` there
        return Value(types=frozenset({call.constructed}), alloc=site, objects=site)
    # a transparent wrapper's value is the function's it wraps: that function decides
    targets = [info for info in targets if info.qualname not in call.transparent] or targets
    if len(targets) == 1 or call.dispatched_from is not None:
        result = evolve(result, origin=call.dispatched_from or targets[0].qualname,
                        asked=call.asked_about() if _may_be_verdict(result) else NOTHING)
    if len(targets) == 1 and not result.types:  # ``-> Sink``: the caller knows the receiver's class
        # a project class, or a library class the packs name methods of (``-> ThreadPoolExecutor``:
        # ``pool.map`` is then ``Executor.map``)
        index = call.program.index
        declared = frozenset(t for t in index.return_types(targets[0].qualname)
                             if t in index.classes or call.vocab.names_class(t))
        if declared:
            result = evolve(result, declared=result.declared | declared)
    if any(isinstance(leaf, Borrow) for leaf in deep_leaves(result)):
        call.effects.append(Issue(result))  # the callee's borrowed objects are handed out here
        callkey = (call.node.lineno, call.node.col_offset)
        made = frozenset(leaf.site for leaf in deep_leaves(result) if pinned_buffer(leaf) and leaf.site[1:] == (callkey,))
        if made:  # the callee's own pinned buffers, made anew by this call
            call.effects.append(Allocate(made))
    return result


def _iterated(call: CallSite, value: Value) -> Value:
    """An object built here of a project class defining ``__iter__`` (a re-iterable wrapper
    around a producer), passed to a function: with what iterating it gives, as a ``for``
    loop over it here would (``expressions.project_iterator``), so a helper iterating its
    parameter (``for_each(Source(files), fn)``) gets the producer's elements."""
    if not value.types or value.leaves or (value.elems is not None and value.fields is None):  # a record is no stream
        return value
    index, program = call.program.index, call.program
    for type_name in sorted(value.types):
        method = index.class_method(type_name, "__iter__") if type_name in index.classes else None
        info = index.functions.get(method) if method is not None else None
        if info is None:
            continue
        program.activate(info.qualname)
        call.effects.append(Record("callee", info.qualname))
        said = f"iterated by `{info.class_qualname.rsplit('.', 1)[-1] if info.class_qualname else ''}.__iter__`"
        result, effects = property_result(call.frame, call.node, info, value, said)
        call.effects.extend(effects)
        value = join(value, result) or value
    return value


def property_result(frame: Frame, node: ast.expr, getter: FunctionInfo, receiver: Value,
                    said: str | None = None) -> tuple[Value, list]:
    """``pool.staging`` of a ``@property`` of a project class: what its getter's summary
    returns for this object, as a call's result (the getter is analysed when it reads a
    field keeping a borrowed value or a pinned buffer: ``Program.store_field``), and the
    effects of handing it out (``_project_result``): the getter's own pinned buffers are
    new at each read, except a ``cached_property``'s, made once per object. Any method
    called without arguments where no call is written (``__iter__`` of a ``for`` loop's
    object) is read so too, its trace step saying how (``said``)."""
    summary = frame.program.summary(getter.qualname)
    effects: list = [Record("returns", getter.qualname)]
    if summary.returns == EMPTY:
        return EMPTY, effects
    step = frame.step(node, said or f"returned by the property `{ast.unparse(node)}`")
    callkey = (node.lineno, node.col_offset)
    result = _instantiate(summary.returns, {0: receiver}, step, callkey, frame.defaults,
                          ancestors=frame.program.index.class_ancestors)
    if any(isinstance(leaf, Borrow) for leaf in deep_leaves(result)):
        effects.append(Issue(result))
        made = frozenset(leaf.site for leaf in deep_leaves(result) if pinned_buffer(leaf) and leaf.site[1:] == (callkey,))
        if made and not is_cached_property(getter):
            effects.append(Allocate(made))
    return result, effects


def bind(call: CallSite, info: FunctionInfo, binding: Binding | None = None) -> dict[int, Value]:
    """The arguments of the call by parameter position of ``info`` (``binding``: as a
    callable held as a value binds them)."""
    bound: dict[int, Value] = {}
    offset = 0
    receiver = call.receiver if binding is None else binding.receiver
    args = call.args if binding is None else call.args.after(binding.preset)
    if info.binds_receiver and receiver is not None:
        bound[0] = receiver
        offset = 1
    elif info.binds_receiver and call.constructed:
        bound[0] = Value(types=frozenset({call.constructed}))
        offset = 1
    elif info.kind == "classmethod" and info.class_qualname:  # ``Policies.get(key)``: ``cls`` is the class
        bound[0] = Value(ref=info.class_qualname, not_none=True)
        offset = 1
    position = offset
    extra: list[Value] = []
    for value, starred in _spread(args.positional):
        if starred:
            element = index(value, None)
            for i in range(position, info.n_positional):
                bound[i] = join(bound.get(i), element)
            extra.append(element)
            continue
        if position < info.n_positional:
            bound[position] = value
        else:
            extra.append(value)
        position += 1
    if info.vararg is not None and extra:
        bound[info.vararg] = container(join_all(extra))
    names = {name: i for i, name in enumerate(info.params)}
    spill: list[Value] = []
    for key, value in args.keywords:
        if key is None:
            element = index(value, None)
            for i in range(len(info.params)):
                if i not in bound and i not in (info.vararg, info.kwarg):
                    bound[i] = element
            spill.append(element)
        elif key in names:
            bound[names[key]] = value
        else:
            spill.append(value)
    if info.kwarg is not None and spill:
        bound[info.kwarg] = container(join_all(spill))
    return bound


def _captured_here(call: CallSite, info: FunctionInfo) -> dict[int, Value]:
    """A nested function called inside its enclosing function's call (directly, or called
    back by a helper that call passes it to) reads that call's variables as they are now:
    each closure variable it reads is bound to the value of that name here (``CAPTURED``).
    Only its conditions read these (``decide_at_call``): a closure variable carries no
    object into the nested function's summary, so nothing else changes. A call anywhere
    else (a closure a factory returned) binds none, and leaves them not known."""
    st = call.frame.st
    if info.outer is None or call.frame.info is not info.outer or st is None:
        return {}
    out: dict[int, Value] = {}
    for position, name in enumerate(info.captured):
        value = st.vars.get(name)
        if value is not None:
            out[CAPTURED + position] = value
    return out


def _spread(positional: list[tuple[Value, bool]]) -> list[tuple[Value, bool]]:
    """``f(*args)`` of a tuple whose positions are known (``func_args=(param, w)`` passed
    on): its items are arguments of their own, each bound to its own parameter."""
    if not any(starred and _known_positions(value) for value, starred in positional):
        return positional
    out: list[tuple[Value, bool]] = []
    for value, starred in positional:
        if starred and value.items is not None and _known_positions(value):
            out.extend((item, False) for item in value.items)
        else:
            out.append((value, starred))
    return out


def _known_positions(value: Value) -> bool:
    """A tuple of known items and nothing else (what a container's elements hold besides
    its items was added later: positions unknown)."""
    return value.items is not None and not value.lazy and (value.elems or EMPTY) == join_all(value.items)


def apply_summary(call: CallSite, info: FunctionInfo, summary: Summary, bound: dict[int, Value], exact: bool = True,
                  step: TraceStep | None = None, when: frozenset = frozenset()) -> Value:
    """``exact``: the call surely goes to ``info``; what it does to its receiver's
    containers (emptying them) is only taken from a call that surely does. ``step``: the
    trace step into ``info`` (the call's, unless a call by name says how it reached it).
    ``when``: the conditions on this function's parameters under which the call goes to
    ``info`` (its receiver is of ``info``'s class only then): what it reaches and hands
    back holds only under them."""
    call_step = step or call.call_step
    edge = CallEdge(info.qualname, bound, call.assume | when, call_step, call.frame.defaults, _synced(call),
                    guard_verdicts(call, summary, bound))
    call.effects.append(Record("edge", edge))
    for reach in summary.sinks:
        _apply_reach(call, edge, reach)
    receiver_text = call.receiver_text()
    if receiver_text and exact:
        for suffix, key in summary.releases:
            call.effects.append(Release(receiver_text + suffix, key))
    for store in stores_in_order(summary.field_stores):
        actual = bound.get(store.param)
        if actual is not None and has_leaves(actual):  # nothing to keep otherwise
            kept = _append_trace(resolve(actual, store.path), (call_step,) + store.trace)
            call.effects.append(KeepInField(store.owner, store.attr, kept, store.element, None))
    if summary.synchronizes and not info.is_generator:  # a generator's body runs when iterated
        call.effects.append(Synchronize())
    if summary.advances:  # ``release_slot(ring)`` around ``ring.release(...)``
        call.effects.append(Advance(call.node, call.name))
    callkey = (call.node.lineno, call.node.col_offset)
    for future in summary.futures:
        adopt_future(call, future, bound, call_step, callkey)
    for called in sorted(summary.calls, key=repr):
        _call_back(call, called, bound, callkey, when)
    ancestors = call.program.index.class_ancestors

    def produce(receiver: Value, method: str) -> Value:
        return produced(call, receiver, method)

    index = call.program.index

    def field(value: Value, attr: str) -> tuple[bool, object]:
        part = record_field(value, attr)  # a record holds what it was built with
        if part is not None and part.has_const:
            return True, part.const
        return field_at_construction(index, value.types, value.objects, attr)

    result = _instantiate(summary.returns, bound, call.returned_step, callkey, call.frame.defaults, ancestors=ancestors,
                          produce=produce, field=field)
    result = _with_closure(call, summary.returns, result,
                           lambda value: _instantiate(value, bound, call.returned_step, callkey, call.frame.defaults,
                                                      ancestors=ancestors))
    guards = {fact for p, tag in summary.guards if p in bound for fact in checked(bound[p], (tag,))}
    checks = {fact for p, tag in summary.marker_checks if p in bound for fact in checked(bound[p], (tag,))}
    if summary.guards_when or summary.checks_when:
        guards |= {fact for p, tag, tests in summary.guards_when if p in bound and surely_passed(tests, bound, field)
                   for fact in checked(bound[p], (tag,))}
        checks |= {fact for p, tag, tests in summary.checks_when if p in bound and surely_passed(tests, bound, field)
                   for fact in checked(bound[p], (tag,))}
    if guards or checks:
        result = replace(result, cond=Cond(frozenset(guards), frozenset(checks)))
    if when:
        result = map_leaves(result, lambda leaf: leaf.under(leaf.when | when))
    return result


def guard_verdicts(call: CallSite, summary: Summary, bound: dict[int, Value]) -> tuple:
    """What each project function passed for a parameter the callee calls back would decide
    as a guard there (``CallEdge.verdicts``): the argument positions at which it rejects
    marked values (``Summary.guards``). A lambda, a bound method or a partial decides
    nothing (their positions are not the call's, a lambda is never judged as a guard): the
    callee's ``APPROVES`` test then holds."""
    index = call.program.index
    found = []
    for param, path in sorted({(called.param, called.path) for called in summary.calls if callback_path(called.path)},
                              key=repr):
        value = bound.get(param)
        value = resolve(value, path) if value is not None else None
        if value is None or value.preset is not None or value.leaves:
            continue
        for qualname in sorted(value.callables or ({value.ref} if value.ref is not None else set())):
            info = index.functions.get(qualname)
            if info is None or not isinstance(info.node, ast.FunctionDef) or info.binds_receiver:
                continue
            call.effects.append(Record("callee", qualname))  # decided again when its guard facts change
            rejects = tuple(sorted({p for p, _ in call.program.summary(qualname).guards}))
            found.append(((param, path), qualname, rejects))
    return tuple(found)


def _with_closure(call: CallSite, returned: Value, result: Value, instantiate: Callable[[Value], Value]) -> Value:
    """A factory returns a function it defines (a nested ``def`` or a lambda, a closure):
    the value the call gives is that function, with what it captured instantiated
    (``_instantiate`` made the captured values this call's arguments) and so are the
    arguments a ``functools.partial`` of it binds, so calling it later analyses it
    (``setter = make_setter(pool, futures); setter(name, w)``). Only closures are kept: a
    reference to any other function is the index's already."""
    ref = returned.ref
    if ref is None or ".<locals>." not in ref or call.program.index.functions.get(ref) is None:
        return result
    preset = returned.preset
    if preset is not None:
        preset = Preset(tuple(map(instantiate, preset.positional)),
                        tuple((key, instantiate(value)) for key, value in preset.keywords))
    return evolve(result, ref=ref, preset=preset, not_none=True)


def _apply_reach(call: CallSite, edge: "CallEdge", reach) -> None:
    """One of the callee's parameter reaches, at this call: a finding for a borrowed value
    passed here, a reach of this function's own parameter otherwise."""
    for leaf, payload, assume, enablers in edge.through(reach, ancestors=call.program.index.class_ancestors):
        if reach.hazard.ended_by_write:
            _write_at_call(call, edge, reach, leaf, assume)
            continue
        if not reads_in_flight(call, leaf) if reach.hazard.about_in_flight else program_memory(leaf):
            continue
        for enabler in enablers:
            call.note_guard_use(enabler, payload)
        call.note_tested_guards(Value(leaves=frozenset({leaf})))
        trace = leaf.trace + call.decided_step(call.deciders(enablers), leaf) + (edge.step,) + reach.trace
        if isinstance(leaf, Borrow):
            call.effects.append(Report(_site_of(call, leaf), trace, reach.hazard))
        else:
            here = "iter" in leaf.path and reach.hazard.sites_stream_elements  # reported here, at the call
            site = _site_of(call, leaf) if here else None
            materialized = reach.materialized and not payload.lazy
            reach_here = evolve(
                reach, param=leaf.index, path=leaf.path, assume=assume | leaf.when, site=site, trace=trace,
                materialized=materialized,
            )
            call.effects.append(Reach(reach_here))


def call_record_field(call: CallSite) -> Value:
    """``plan.overlap(w)`` of a record parameter (``plan: Plan``, a dataclass or a
    NamedTuple with a field ``overlap``) when no method of that name is known: a call of
    the callable the caller built the record with, a callback as ``decide(w)`` of a
    parameter ``decide`` is (``call_parameter``, the field a ``Field`` step of its path)."""
    receiver = call.receiver
    if call.method is None or receiver is None or exact_parameter(receiver) is None:
        return EMPTY
    held = record_parameter_field(call.program.index, receiver, call.method, call.call_step)
    return call_parameter(call, held) if held is not None else EMPTY


def call_parameter(call: CallSite, callee: Value | None = None) -> Value:
    """This function calls a value that is (a part of) one of its parameters: a callback
    (``callee``: the callable, when it is no value of the call's function, as a record
    parameter's field). What it does is known only at each call site of this function, so
    the call becomes a fact of the summary (``Summary.calls``) with its arguments, when
    they may carry borrowed values (else nothing the callback does can be about them). Its
    value, when it is asked about such values, is the test that the callable approves them
    (``APPROVES``: ``if decide(w):``, a guard passed to a shared loop, which each call decides)."""
    callee, st = callee or call.callee, call.frame.st
    if callee is None or st is None:
        return EMPTY
    called = sorted((leaf for leaf in callee.leaves if isinstance(leaf, ParamRef)), key=repr)
    if not called:
        return EMPTY
    returned = call.frame.info.returns_call(call.node)
    concrete, params = call.args.origins(None)
    hot = is_hot(call.program, call.caller, concrete, params)
    if not returned and not hot:
        return EMPTY
    positional, keywords = tuple(call.args.positional), tuple(call.args.keywords)
    if not hot:  # kept for its result alone: it hands the callback nothing borrowed
        positional = tuple((map_leaves(value, _drop_borrowed), starred) for value, starred in positional)
        keywords = tuple((key, map_leaves(value, _drop_borrowed)) for key, value in keywords)
    names = call.frame.info.params
    where = (call.node.lineno, call.node.col_offset)
    for leaf in called:
        name = names[leaf.index] if leaf.index < len(names) else call.name
        step = call.step(f"`{call.name}(...)` calls back what the caller passed as `{name}`")
        fact = ParamCall(leaf.index, leaf.path, positional, keywords, call.assume, (step,), returned)
        call.effects.append(CallParam(where, fact))
    return _approval(call, callee, positional) if hot else EMPTY


def _approval(call: CallSite, callee: Value, positional: tuple) -> Value:
    """``decide(w)`` of a parameter ``decide`` (or ``plan.overlap(w)`` of a record parameter
    ``plan``): the test that what the caller passes as ``decide`` (the callable it built
    ``plan`` with) approves the borrowed values at these argument positions (``APPROVES``)."""
    param, path = exact_parameter(callee), ()
    if param is None and call.method is not None and len(callee.leaves) == 1:
        (leaf,) = callee.leaves
        param, path = (leaf.index, leaf.path) if isinstance(leaf, ParamRef) and callback_path(leaf.path) else (None, ())
    asked = tuple(i for i, (value, starred) in enumerate(positional)
                  if not starred and any(not program_memory(leaf) for leaf in deep_leaves(value)))
    if param is None or not asked or any(starred for _, starred in positional[:max(asked)]):
        return EMPTY
    shown = f".{call.method}" if path else ""
    return Value(truth=ParamTest(param, APPROVES, (asked, path, shown)).on(param, call.frame.defaults))


def _drop_borrowed(leaf):
    return leaf if isinstance(leaf, ParamRef) else None


def _call_back(call: CallSite, called: ParamCall, bound: dict[int, Value], callkey: tuple, when: frozenset) -> None:
    """The callee calls what this call passes for one of its parameters (``Summary.calls``):
    that callable is called here (``CallResolver.call_back``) with the callee's arguments
    instantiated, when the call's arguments leave the callee's conditions possible."""
    function = bound.get(called.param)
    if function is None:
        return
    defaults = call.frame.defaults
    ancestors = call.program.index.class_ancestors
    here = decide_at_call(called.assume, bound, defaults, ancestors)
    if here is None:
        return
    step = called.trace[-1] if called.trace else call.call_step
    entered = (call.call_step,)
    positional = [(_instantiate(value, bound, step, callkey, defaults, entered, ancestors), starred)
                  for value, starred in called.positional]
    keywords = [(name, _instantiate(value, bound, step, callkey, defaults, entered, ancestors))
                for name, value in called.keywords]
    function = resolve(function, called.path)
    stepwise = any(isinstance(leaf, ParamRef) and "iter" in leaf.path  # an element of a stream it iterates
                   for value in [v for v, _ in called.positional] + [v for _, v in called.keywords]
                   for leaf in deep_leaves(value))
    call.effects.append(CallBack(call.node, function, Args(positional, keywords, {}), step, here | when, called.returned,
                                 stepwise))


def _write_at_call(call: CallSite, edge: "CallEdge", reach, leaf, assume: frozenset) -> None:
    """The callee writes what this call passes before it synchronises: a pinned buffer a copy
    to the device still reads here is the finding (at this call), and this function's own
    parameter, before it synchronised, is a write its callers judge."""
    st = call.frame.st
    if st is None:
        return
    if isinstance(leaf, Borrow):
        if not leaf.pinned:
            return
        for pending in sorted(st.pending, key=lambda p: repr(p.key)):
            if pending.hazard.ended_by_write and any(meets(mine, leaf) for mine in pending.leaves):
                trace = leaf.trace + (pending.step, edge.step) + reach.trace
                call.effects.append(Report(_site_of(call, leaf), trace, reach.hazard))
    elif not st.synced and (call.caller, leaf.index) in call.program.pinned_hot:
        trace = (edge.step,) + reach.trace
        call.effects.append(Reach(evolve(reach, param=leaf.index, path=leaf.path, assume=assume | leaf.when, site=None, trace=trace)))


def _synced(call: CallSite) -> bool:
    """Has the caller synchronised with the device on every path to this call?"""
    st = call.frame.st
    return st is not None and st.synced


def _site_of(call: CallSite, leaf) -> Site:
    return call.frame.site(call.node, call.name, call.subject(frozenset({leaf})))


def reads_in_flight(call: CallSite, leaf) -> bool:
    """A callee reads its parameter before synchronising (a host read): it matters for a copy
    still in flight here, or for this function's own parameter if it has not synchronised."""
    st = call.frame.st
    if isinstance(leaf, Borrow):
        return leaf.flight and leaf.site in st.flying and holds_by_default(leaf.when)  # type: ignore[union-attr]
    return not st.synced  # type: ignore[union-attr]


def adopt_future(call: CallSite, future, bound: dict[int, Value], call_step: TraceStep, callkey: tuple,
                 receiver_text: str | None = None) -> None:
    """A helper returned the future of a submission that is still running: it is pending
    here now, until this function waits for it (or its producer advances). ``receiver_text``:
    how this function names the callee's receiver, for the fields the callee keeps it in
    (None: the call's own, ``call.receiver_text()``). The submission ran only under the
    callee's conditions (``run_maybe_async(fn, w, use_async=may_defer(w))``): the arguments
    decide them here, and a guard's verdict passed as the switch cleans what it saw, as
    for a reach (``CallEdge.through``)."""
    decided = _switched_on(future.assume, bound, call.frame.defaults)
    if decided is None:
        return
    conditions, enablers = decided
    cleaned = frozenset().union(*(enabling_condition(e, call.frame.defaults)[1] for e in enablers))
    found: list = []
    here = False
    deciders = call.deciders(enablers) if enablers else {}
    for leaf in future.leaves:
        if isinstance(leaf, ParamRef):
            actual = bound.get(leaf.index)
            if actual is None:
                continue
            here = here or "iter" in leaf.path
            payload = resolve(actual, leaf.path)
            for enabler in enablers:
                call.note_guard_use(enabler, payload)
            for mine in deep_leaves(clean(payload, cleaned)):  # the verdict's guard decided it (one finding per bug)
                found.append(mine.with_trace(mine.trace + call.decided_step(deciders, mine) + (call_step,) + leaf.trace))
        else:
            here = True
            found.append(leaf.at_call(callkey, leaf.trace + (call_step,)))
    leaves = best_of_equal(found)
    st = call.frame.st
    if not leaves or st is None:
        return
    here = here or not future.hazard.lifted
    site = future.site if here else call.frame.site(call.node, call.name, call.subject(leaves))
    holder = None
    receiver_text = call.receiver_text() if receiver_text is None else receiver_text
    if future.holder is not None and receiver_text:  # `self.pending` of the callee is `loader.pending` here
        holder = (receiver_text + future.holder[0][future.holder[0].index("."):], future.holder[1])
    stored_in = frozenset(  # `self.futures` of the callee is `batch.futures` here
        receiver_text + h[h.index("."):] for h in future.stored_in if receiver_text and "." in h
    )
    pending = replace(
        future, key=_future_key(callkey, future.key), leaves=leaves, site=site,
        assume=frozenset(st.assume) | conditions, holder=holder, owners=frozenset(), stored_in=stored_in,
    )
    call.effects.append(Adopt(pending))


def _switched_on(assume: frozenset, bound: dict[int, Value], defaults: dict) -> tuple[frozenset, list[Value]] | None:
    """A callee's conditions on a submission at one call: None when the arguments rule it
    out, else (the conditions left on the caller's parameters, the arguments passed as
    switches that must be true: a guard's verdict among them cleans what it saw)."""
    conditions = decide_at_call(assume, bound, defaults)
    if conditions is None:
        return None
    enablers = [bound[test.param] for test in assume
                if test.test == TRUTHY and test.param in bound and not bound[test.param].has_const]
    return conditions, enablers


def _future_key(callkey: tuple, key: tuple) -> tuple:
    """A callee's submission seen from this call: keyed by the call and the submission's own
    position (bounded, so recursion through helpers that return futures converges)."""
    return callkey + key[-2:]


class CallEdge:
    """A call of a project function with its bound arguments: how the callee's reaches
    (summary ones now, reported-site ones in the program's final propagation) come back.
    ``defaults``: the caller's parameters' defaults, for the callee's conditions on what
    the caller passes on. ``synced``: the caller has synchronised with the device on the
    host on every path to the call (the copies the callee's previous call left reading the
    buffers its object keeps are done: ``ProjectAnalysis.covered_by_callers``)."""

    __slots__ = ("callee", "bound", "assume", "step", "defaults", "synced", "verdicts")

    def __init__(self, callee: str, bound: dict, assume: frozenset, step: TraceStep, defaults: dict,
                 synced: bool = False, verdicts: tuple = ()) -> None:
        self.callee, self.bound, self.assume, self.step, self.defaults = callee, bound, assume, step, defaults
        self.synced = synced
        # ((parameter, path), function, positions): a project function passed for a
        # parameter the callee calls back (or in the record field ``path`` of it), and the
        # argument positions at which it rejects marked values
        # (``guard_verdicts``): what decides the callee's ``APPROVES`` tests at this call
        self.verdicts = verdicts

    def approving(self, tests: frozenset) -> tuple[str, ...] | None:
        """The functions passed here whose approval the callee's ``APPROVES`` tests in
        ``tests`` ask for and that approve marked values (they decide the fact: ``DECIDED_BY``);
        None when the functions passed for one of them all reject marked values where it
        asks (the fact is ruled out: the callee's branch is taken only by unmarked values)."""
        found: list[str] = []
        for test in tests:
            if test.test != APPROVES:
                continue
            asked, path, _ = approves_operand(test)
            passed = [(qualname, rejects) for where, qualname, rejects in self.verdicts if where == (test.param, path)]
            approving = [qualname for qualname, rejects in passed if not set(asked) <= set(rejects)]
            if passed and not approving:
                return None
            found += approving
        return tuple(sorted(set(found)))

    def through(self, reach, passed: dict | None = None, ancestors: Ancestors | None = None):
        """For each leaf of the argument the reach's path selects: (leaf, payload, the
        caller's assumptions, the values that enabled the sink). Nothing when the arguments
        rule the reach's conditions out (a constant, or the default of a parameter the call
        leaves out, or a receiver of a class that is none of an override's: ``ancestors``);
        a condition on what the caller passes on becomes the caller's.
        ``passed``: every argument of the call, when ``bound`` holds only some parts."""
        cleaned: frozenset = frozenset()
        passed = self.bound if passed is None else passed
        approving = self.approving(reach.assume) if self.verdicts else ()
        if approving is None:
            return
        here = decide_at_call(reach.assume, passed, self.defaults, ancestors)
        if here is None:
            return
        enablers = []
        for test in reach.assume:
            actual = passed.get(test.param)
            if test.test == TRUTHY and actual is not None and not actual.has_const:
                enablers.append(actual)  # a guard's verdict passed as the switch cleans what it saw
                cleaned |= enabling_condition(actual, self.defaults)[1]
        assume = self.assume | here
        actual = self.bound.get(reach.param)
        if actual is None:
            return
        payload = clean(resolve(actual, reach.path), cleaned)
        leaves: Iterable[Leaf]
        if reach.materialized and payload.lazy and reach.kept is not None:
            leaves = (  # the parts of the stream's elements that were kept
                leaf for sub in reach.kept for leaf in deep_leaves(resolve(payload.elems or EMPTY, sub), through_lazy=True)
            )
        elif reach.materialized and payload.lazy:
            leaves = deep_leaves(payload.elems, through_lazy=True)  # the stream's elements
        elif reach.materialized:
            leaves = (leaf for leaf in payload.leaves if isinstance(leaf, ParamRef))  # maybe a stream
        else:
            leaves = deep_leaves(payload)
        for leaf in set(leaves):
            asked = frozenset({leaf.base})
            yield leaf, payload, assume, enablers + [Value(origin=origin, asked=asked) for origin in approving]


def by_name_summary(program: ProjectView, qualname: str, summary: Summary) -> Summary:
    """``summary`` whose result keeps only the borrowed values the function makes, not those
    it passes through from its parameters (how a call by method name sees it); made once
    per summary, not once per call."""
    known = program.by_name_summaries.get(qualname)
    if known is None or known[0] is not summary:
        dropped = replace(summary, returns=map_leaves(summary.returns, _drop_params))
        known = program.by_name_summaries[qualname] = (summary, dropped)
    return known[1]


def _drop_params(leaf):
    return None if isinstance(leaf, ParamRef) else leaf


def _instantiate(value: Value, bound: dict[int, Value], step: TraceStep, callkey: tuple, defaults: dict,
                 entered: tuple = (), ancestors: Ancestors | None = None, produce: Producer | None = None,
                 field: FieldOf | None = None) -> Value:
    """A callee's result at this call: parameters replaced by the arguments, the callee's own
    borrowed objects re-identified per call site (what it hands back under conditions on
    its arguments kept only where they may hold, under what is left of them: ``defaults``,
    the caller's parameters' defaults, for those it passes on). ``entered``: the steps into
    the callee that an argument's trace takes before the callee's own (a call-back's).
    ``ancestors``: what decides a condition on the receiver's class (``decide_at_call``).
    ``produce``: what a source's method hands out for an argument (``values.Produced``).
    ``field``: what an argument's object holds in a field (a construction decided by one)."""
    if value == EMPTY:
        return EMPTY
    own: list = []
    extra = []
    for leaf in value.leaves:
        if isinstance(leaf, ParamRef):
            actual = bound.get(leaf.index)
            when = decide_at_call(leaf.when, bound, defaults, ancestors) if leaf.when else frozenset()
            if actual is not None and when is not None:
                resolved = _append_trace(resolve(actual, leaf.path, produce=produce), entered + leaf.trace + (step,))
                extra.append(map_leaves(resolved, lambda mine: mine.under(mine.when | when)) if when else resolved)
        elif not leaf.when:
            own.append(leaf.at_call(callkey, leaf.trace + (step,)))
        else:
            when = decide_at_call(leaf.when, bound, defaults, ancestors)
            if when is not None:
                own.append(leaf.at_call(callkey, leaf.trace + (step,), when))
    types, type_when = _types_at_call(value, bound, defaults, ancestors)
    elems = _instantiate(value.elems, bound, step, callkey, defaults, entered, ancestors, produce, field) \
        if value.elems is not None else None
    items = tuple(_instantiate(i, bound, step, callkey, defaults, entered, ancestors, produce, field) for i in value.items) \
        if value.items is not None else None
    base = Value(
        leaves=best_of_equal(own),
        elems=elems if elems is not None and elems != EMPTY else None,
        items=items,
        fields=value.fields if items is not None else None,
        lazy=value.lazy,
        const=value.const,
        has_const=value.has_const,
        types=types,
        type_when=type_when,
        not_none=value.not_none,
        # what built the object it hands back (a helper that opens a reader), with what
        # this call passes for the parameters the construction took its arguments from
        built=decide_built(value.built, bound, field) if value.built else frozenset(),
        # A parameter's stand-in means nothing here: the argument's own futures came back
        # through ``resolve`` above.
        pending=frozenset(_future_key(callkey, key) for key in value.pending if key[:1] != ("param",)),
    )
    return join_all([base] + extra)


def _types_at_call(value: Value, bound: dict[int, Value], defaults: dict,
                   ancestors: Ancestors | None = None) -> tuple[frozenset, frozenset]:
    """The classes a callee's result is an instance of at this call: one it is only under
    conditions on its parameters is kept where they may hold, under what is left of them."""
    if not value.type_when:
        return value.types, frozenset()
    types, conditional = set(value.types), []
    for qualname, when in value.type_when:
        here = decide_at_call(when, bound, defaults, ancestors)
        if here is None:
            types.discard(qualname)
        elif here:
            conditional.append((qualname, here))
    return frozenset(types), frozenset(conditional)


def _append_trace(value: Value, steps: tuple) -> Value:
    return map_leaves(value, lambda leaf: leaf.with_trace(leaf.trace + steps))
