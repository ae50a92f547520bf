"""The function a sink runs later (``executor.submit(fn, *args)``), judged by its own
summary for the device copies in flight it is handed: the task reads such a copy on the host
when its summary reads that parameter before it synchronises (``event.synchronize()`` first
and the copy has landed by the time it reads). A task that cannot be resolved to project
functions is judged at the hand-off instead (the caller then reads the copy, as before).

The borrowed values a sink hands to a project function flow into its parameters as a
call's would (``hand_to_task``): the task's own stores into long-lived places (a field, a
module dict) are reported where it keeps them, through the hand-off. Its asynchronous
reads are not applied again: the hand-off itself is that finding."""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.summaries import Summary, stores_in_order
from bufferlint.analysis.domain.values import Value, deep_leaves, has_leaves, in_flight, iterate, map_leaves, resolve
from bufferlint.analysis.frontend.index import FunctionInfo
from bufferlint.analysis.transfer.call_effects import KeepInField, Record, Report, Signal
from bufferlint.analysis.transfer.call_project import (
    CallEdge, adopt_future, bind, reads_in_flight, targets_static, targets_typed,
)
from bufferlint.analysis.transfer.call_site import Args, CallSite, origins
from bufferlint.analysis.transfer.records import pass_record
from bufferlint.findings import TraceStep
from bufferlint.packs import TaskCall


def judge_task(call: CallSite, task: TaskCall, params: tuple[str, ...]) -> bool:
    """Judge the copies in flight that ``call`` (a sink with a ``task`` template) hands to
    the function it runs by that function's summary; False when the function or its
    arguments are not known here (the caller must then judge them at the hand-off)."""
    found = task_site(call, task, params)
    if found is None:
        return False
    task_call, targets = found
    program = call.program
    step = call.step(f"handed to `{task_call.name}`, which `{call.name}(...)` runs later")
    for info in targets:
        call.effects.append(Record("callee", info.qualname))  # judged again once it is summarised
        program.consider(info)
        passed = {param: call.stores.effects.with_fills(value) for param, value in bind(task_call, info).items()}
        bound = {param: flying for param, value in passed.items() if (flying := _in_flight_part(value))}
        for param in sorted(bound):
            program.flow(call.caller, info.qualname, param, False, frozenset(), True)
        for param, value in sorted(passed.items()):
            pass_record(program, call.caller, info.qualname, param, value)  # a record's fields in flight
        edge = CallEdge(info.qualname, bound, call.assume, step, call.frame.defaults)
        for reach in program.summary(info.qualname).sinks:
            if not reach.hazard.about_in_flight:
                continue
            for leaf, _payload, _assume, _enablers in edge.through(reach, passed, program.index.class_ancestors):
                if reads_in_flight(call, leaf):
                    site = call.frame.site(call.node, call.name, call.subject(frozenset({leaf})))
                    call.effects.append(Report(site, leaf.trace + (step,) + reach.trace, reach.hazard))
    return True


def hand_to_task(call: CallSite, task: TaskCall, params: tuple[str, ...]) -> None:
    """The task's parameters receive what the sink hands it, as a call's would: each one a
    borrowed value may reach is hot (the task is analysed for it), and the hand-off is a
    call edge, along which the task's reaches with a report site of their own (a view kept
    in a module's container: ``Hazard.lifted`` is false) come back to this caller's borrowed
    values (``Program.propagate_sited``). Of its summary, only what it keeps applies here:
    the views it keeps in its receiver's containers are kept past this caller's step (the
    caller cannot empty them before the task runs), and its fields hold them for the
    class's other methods. What it reads asynchronously is the hand-off's finding already,
    and it runs later, so nothing it waits for or returns is this caller's."""
    found = task_site(call, task, params)
    if found is None:
        return
    task_call, targets = found
    program = call.program
    step = call.step(f"handed to `{task_call.name}`, which `{call.name}(...)` runs later")
    for info in targets:
        call.effects.append(Record("callee", info.qualname))
        program.consider(info)
        bound = bind(task_call, info)
        for param, value in sorted(bound.items()):
            concrete, origins_of = origins([value])
            program.flow(call.caller, info.qualname, param, concrete, origins_of)
            pass_record(program, call.caller, info.qualname, param, value)
        call.effects.append(Record("edge", CallEdge(info.qualname, bound, call.assume, step, call.frame.defaults)))
        _apply_kept(call, program.summary(info.qualname), bound, step)


def signal_when_done(call: CallSite, task: TaskCall, params: tuple[str, ...], keys: frozenset) -> None:
    """``pool.submit(copy_and_signal, dst, w, done)`` with ``done = threading.Event()``: a
    task whose last statement (or top-level ``finally``) calls a pack ``signals`` method
    (``done.set()``) on a parameter has done its work once that object is marked, so the
    object stands for the submission (``keys``) as its future would: ``done.wait()`` waits
    for it. Only objects constructed here (their allocation sites) are followed, passed
    directly or in the sink's argument tuple (``Thread(target=fn, args=(dst, w, barrier))``)."""
    signals = call.vocab.vocab.signals
    classes = {p.qualname.rpartition(".")[0]: p.qualname.rpartition(".")[2] for p in signals if p.qualname}
    if not keys:
        return
    given = _task_arguments(call, task, params)
    values = call.args.flat() + (given.flat() if given is not None else [])
    if not any(value.alloc and value.types & classes.keys() for value in values):
        return
    found = task_site(call, task, params)
    if found is None:
        return
    task_call, targets = found
    objects: frozenset | None = None
    for info in targets:
        bound = bind(task_call, info)
        marked = frozenset(
            site for param, method in _signalled(info) for cls, name in classes.items() if name == method
            for site in (bound[param].alloc if param in bound and cls in bound[param].types else ())
        )
        objects = marked if objects is None else objects & marked
    if objects:
        call.effects.append(Signal(objects, keys))


def _signalled(info: FunctionInfo) -> list[tuple[int, str]]:
    """(parameter index, method) of each ``param.method()`` statement the function ends
    with: its last statement, or the ``finally`` of a ``try`` that is its last statement."""
    body = getattr(info.node, "body", None)
    if not body:
        return []
    last = body[-1]
    ending = [last] + (list(last.finalbody) if isinstance(last, ast.Try) else [])
    out = []
    for stmt in ending:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and not stmt.value.args \
                and not stmt.value.keywords and isinstance(stmt.value.func, ast.Attribute) \
                and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id in info.params:
            out.append((info.params.index(stmt.value.func.value.id), stmt.value.func.attr))
    return out


def _apply_kept(call: CallSite, summary: Summary, bound: dict[int, Value], step: TraceStep) -> None:
    """What a task keeps of its arguments, at its hand-off: views in its receiver's
    containers are pending here (committed at this caller's next step: a finding where the
    task keeps them), and what it stores in fields goes to the heap."""
    callkey = (call.node.lineno, call.node.col_offset)
    for future in sorted(summary.futures, key=repr):
        if future.hazard.kept:
            adopt_future(call, replace(future, holder=None, stored_in=frozenset()), bound, step, callkey, "")
    for store in stores_in_order(summary.field_stores):
        actual = bound.get(store.param)
        if actual is not None and has_leaves(actual):
            kept = map_leaves(resolve(actual, store.path), lambda leaf: leaf.with_trace(leaf.trace + (step,) + store.trace))
            call.effects.append(KeepInField(store.owner, store.attr, kept, store.element, None))


def task_site(call: CallSite, task: TaskCall, params: tuple[str, ...]) -> tuple[CallSite, list[FunctionInfo]] | None:
    """The call the sink makes later, as a call of this function (its callee and arguments),
    and the project functions it reaches; None when either is not known."""
    function = _parameter(call, params, task.function)
    args = _task_arguments(call, task, params)
    if function is None or args is None or function.leaves:
        return None
    if function.preset is not None:  # ``submit(partial(fn, pool), w)`` runs ``fn(pool, w)``
        args = args.after(function.preset)
    node = call.node
    if function.ref is not None and function.method is None:
        task_call = CallSite(call.frame, call.stores, node, function.ref, None, None, args, function.ref.rsplit(".", 1)[-1])
        targets = targets_static(task_call, function.ref)
    else:
        method, bound = _bound_method(call, params, task.function, function)
        if method is None or bound is None:
            return None
        task_call = CallSite(call.frame, call.stores, node, None, method, bound, args, method)
        targets = targets_typed(task_call)
    call.effects.extend(task_call.effects)  # demands its argument reader made
    return (task_call, targets) if targets and not task_call.constructed else None


def _bound_method(call: CallSite, params: tuple[str, ...], name: str, function: Value) -> tuple[str | None, Value | None]:
    """``obj.method`` passed as the function: its name and receiver, from the value, or from
    the argument's own expression when the attribute read gave what the object keeps there
    (``self._write`` of a class whose fields are read through the heap)."""
    if function.method is not None and function.bound is not None:
        return function.method, function.bound
    position = params.index(name)
    node = call.node
    expr = next((k.value for k in node.keywords if k.arg == name), None)
    if expr is None and position < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
        expr = node.args[position]
    if isinstance(expr, ast.Attribute) and id(expr.value) in call.args.values:
        return expr.attr, call.args.values[id(expr.value)]
    return None, None


def _parameter(call: CallSite, params: tuple[str, ...], name: str) -> Value | None:
    return call.args.arg(params.index(name), name)


def _task_arguments(call: CallSite, task: TaskCall, params: tuple[str, ...]) -> Args | None:
    """The arguments the sink passes to the function: the call's own after the function's
    position (``fn(...)``), or the sink's tuple and mapping parameters."""
    args = call.args
    if task.args is None:
        position = params.index(task.function)
        if any(starred for _, starred in args.positional[: position + 1]):
            return None  # which argument is the function is not known
        positional = list(args.positional[position + 1:])
        keywords = [(key, value) for key, value in args.keywords if key not in params]
        if task.each:  # ``pool.map(fn, names, weights)`` runs ``fn(name, weight)``, no keywords
            if any(starred for _, starred in positional):
                return None  # which iterable gives which argument is not known
            return Args([(iterate(value), False) for value, _ in positional], [], {})
        return Args(positional, keywords, {})
    positional_args: list[tuple[Value, bool]] = []
    if task.args:
        given = _parameter(call, params, task.args)
        if given is not None:
            positional_args = [(item, False) for item in given.items] if given.items is not None else [(given, True)]
    keyword_args: list[tuple[str | None, Value]] = []
    if task.kwargs:
        mapping = _parameter(call, params, task.kwargs)
        if mapping is not None:
            keyword_args = [(None, mapping)]
    return Args(positional_args, keyword_args, {})


def _in_flight_part(value: Value) -> Value | None:
    """The device copies in flight ``value`` holds (where it holds them), or None: the task
    is judged here for those alone; what else it is handed is the sink's pending work."""
    if not any(in_flight(leaf) for leaf in deep_leaves(value)):
        return None
    return map_leaves(value, lambda leaf: leaf if in_flight(leaf) else None)


def device_wait(call: CallSite, task: TaskCall, params: tuple[str, ...]) -> tuple | None:
    """The key standing, in the handle of a sink whose task waits for the device
    (``asyncio.to_thread(torch.cuda.synchronize)``, ``pool.submit(stream.synchronize)``, a
    project function that synchronises on every path), for that wait: once the handle is
    waited for (``await``, ``.result()``), the device has been synchronised
    (``Frame.device_waits``, ``Effects.settle``). None for any other task. Only the task's
    own wait counts: run on another thread, it is no wait of this function's until then."""
    function = _parameter(call, params, task.function)
    if function is None:
        return None
    synchronizers = [p for p in call.vocab.vocab.synchronizers if not p.required_kwargs]
    named = function.ref is not None and function.method is None
    method, bound = (None, None) if named else _bound_method(call, params, task.function, function)
    waits = named and any(p.qualname == function.ref for p in synchronizers) \
        or method is not None and any(p.method == method for p in synchronizers)
    if not waits and not function.leaves:
        found = task_site(call, task, params)
        targets = found[1] if found is not None else []
        for info in targets:
            call.effects.append(Record("callee", info.qualname))  # decided again once it is summarised
            call.program.consider(info)
        waits = bool(targets) and all(call.program.summary(info.qualname).synchronizes for info in targets)
    if not waits:
        return None
    key = ("device-wait", call.node.lineno, call.node.col_offset)
    call.frame.device_waits[key] = bound.recorded if bound is not None else None
    return key
