"""Stores and retention: which holders outlive the producer's step (attributes, parameters,
globals, containers made before the loop), views kept in them (pending until the producer
advances: kept past its step), what a method keeps in its receiver's fields, the holders emptied or read
back later."""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.summaries import FieldStore
from bufferlint.analysis.domain.state import BEFORE_CALL
from bufferlint.analysis.domain.values import (
    EMPTY, Borrow, ParamRef, Value, container, deep_leaves, evolve, map_leaves, pinned_buffer,
)
from bufferlint.analysis.frontend.index import FunctionInfo, dotted_expr, globals_owner
from bufferlint.analysis.frontend.syntax import annotations_of, callable_annotation, holder_name, root_name
from bufferlint.analysis.transfer.effects import Effects, sink_fact
from bufferlint.analysis.transfer.facts import FunctionFacts
from bufferlint.analysis.transfer.frame import Frame, node_key
from bufferlint.findings import TraceStep
from bufferlint.hazards import Hazard


class Stores:
    """Decides where a stored value lives and keeps track of what long-lived holders keep."""

    def __init__(self, frame: Frame, facts: FunctionFacts, effects: Effects) -> None:
        self.frame = frame
        self.facts = facts
        self.effects = effects

    # -- where a holder lives --------------------------------------------------------------

    def is_array(self, expr: ast.expr, value: Value) -> bool:
        """A store target (``expr``, evaluated to ``value``) known to be an array (a view, e.g.
        ``param.data``; an array of numbers the program allocated, ``torch.empty(n, d)``; a
        value annotated as one of a kind's types), not a container: storing into it copies."""
        if value.array or (value.declared and self.frame.vocab.vocab.kind_of_types(value.declared)):
            return True
        if isinstance(expr, ast.Attribute) and expr.attr in self.frame.vocab.view_attributes:
            return True
        return any(isinstance(leaf, ParamRef) and "view" in leaf.path for leaf in value.leaves)

    def outlives_step(self, expr: ast.expr, attribute: bool = False) -> bool:
        """Does this container (or object) live across iterations of the enclosing loop?
        Attributes, parameters, globals and locals created before the loop do; a local
        the loop body binds anew before reading it is dropped with its iteration, and one it
        reads before rebinding on some path (``batch.append(w)``, then ``batch = []`` only
        when full) carries an earlier iteration's object (``carried_names``). An object whose attribute
        is set is taken to be long-lived even through a loop-local alias
        (``param = params[name]; param.data = w``): per-iteration objects rarely get one."""
        root = root_name(expr)
        if root is None:
            return False
        info = self.frame.info
        if root in info.declared_globals or self.is_closure_variable(root) or self.is_module_variable(root):
            return True  # module state, or a container of the enclosing call: lives on
        if root in info.params or not isinstance(expr, ast.Name) or attribute:
            return bool(self.frame.loop_fresh) or root in info.params or not isinstance(expr, ast.Name)
        advancing = [names for names in self.frame.loop_fresh if names is not None]
        if not advancing:
            return False
        return root not in advancing[-1]

    def carried_local(self, name: str) -> bool:
        """A local the innermost loop over a producer rebinds, but reads before rebinding on
        some path (``prev`` in ``use(prev); prev = w``): what is bound to it outlives its
        iteration."""
        frame = self.frame
        for loop in reversed(frame.op.loops if frame.op is not None else ()):
            if frame.advancing.get(node_key(loop), False):
                return name in frame.tables.assigned_in(loop) and name not in frame.tables.fresh_in(loop)
        return False

    def is_module_variable(self, name: str) -> bool:
        """A module-level container used (not rebound) here: ``_CACHE[k] = w``."""
        info = self.frame.info
        return info.kind != "module" and name in info.module.variables and name not in info.params and (
            name not in info.assigned or name in info.declared_globals
        )

    def is_closure_variable(self, name: str) -> bool:
        """A name a nested function reads from its enclosing function's frame."""
        info = self.frame.info
        if info.outer is None or name in info.params or name in info.assigned:
            return False
        outer: FunctionInfo | None = info.outer
        while outer is not None:
            if name in outer.params or name in outer.assigned:
                return True
            outer = outer.outer
        return False

    def home_of(self, container_expr: ast.expr) -> ast.expr:
        """The container a local alias lives in: ``inner = groups.setdefault(k, {})`` stores
        into ``groups``."""
        st = self.frame.st
        if isinstance(container_expr, ast.Name) and st is not None:
            part_of = st.vars.get(container_expr.id, EMPTY).part_of
            if part_of:
                return dotted_expr(part_of)
        return container_expr

    # -- what holders keep ----------------------------------------------------------------

    def retain(self, stmt: ast.AST, value: Value, holder_text: str, holder: tuple | None) -> None:
        """Only values that may be borrowed are tracked (stores of parameters that no caller
        ever passes a borrowed value are everywhere, and never a finding)."""
        frame = self.frame
        leaves = frozenset(
            leaf for leaf in deep_leaves(value)
            if isinstance(leaf, Borrow) or (frame.info.qualname, leaf.index) in frame.program.hot
        )
        if leaves:
            # Which positions of a stored tuple hold them: the fix copies only those.
            parts = [str(i) for i, item in enumerate(value.items or ()) if leaves & frozenset(deep_leaves(item))]
            subject = "items:" + ",".join(parts) if parts else ""
            hazard = Hazard.ASYNC_READ_AFTER_ADVANCE if self.parks_task(value) else Hazard.KEPT_PAST_STEP
            self.effects.add_pending(stmt, Value(leaves=leaves), holder_text, frozenset(), subject, hazard=hazard, holder=holder)

    def parks_task(self, value: Value) -> bool:
        """Is the stored tuple a task parked for later: it holds a parameter annotated as a
        callable (``self._queued.append((fut, fn, args, kwargs))`` in a project executor's
        ``submit(self, fn: Callable, /, *args)``)? Its arguments are then consumed when the
        receiver runs the task, asynchronously for the caller: an async sink, reported
        (lifted) at the caller's hand-off, not a view kept inside the executor."""
        names, annotations = self.frame.info.params, annotations_of(self.frame.info.node)
        callables = {i for i, name in enumerate(names) if callable_annotation(annotations.get(name))}
        return bool(callables) and any(
            isinstance(leaf, ParamRef) and leaf.index in callables and not leaf.path
            for item in value.items or () for leaf in item.leaves
        )

    def note_kept(self, stmt: ast.AST, value: Value, holder_text: str, retained_in: str | None) -> None:
        """Where each borrowed object was first put into a container (``views.append(v)``):
        read through the container after its producer advanced, it is reported there, where
        the view escaped its step, with the read as a step of its trace
        (``Effects.use_after_refill``). ``retained_in``: the long-lived holder whose store is
        a finding already (pending until the producer advances)."""
        frame, kept_at = self.frame, self.facts.kept_at
        for leaf in deep_leaves(value):
            if isinstance(leaf, Borrow) and leaf.site not in kept_at:
                step = replace(frame.step(stmt, ""), fact=sink_fact(Hazard.KEPT_PAST_STEP, holder_text))
                kept_at[leaf.site] = (frame.site(stmt, holder_text), step, retained_in)

    def release(self, name: str, key: str | None) -> None:
        """The container ``name`` drops what was kept under ``key`` (all of it for None)."""
        receiver = self.frame.receiver_name
        if receiver and name.startswith(receiver + "."):
            self.facts.released.add((name[len(receiver):], key))  # the caller's object drops it
        st = self.frame.st
        if st is None or not st.pending:
            return
        st.pending = frozenset(
            p
            for p in st.pending
            if not (p.holder is not None and p.holder[0] == name and (key is None or p.holder[1] == key))
        )

    def keep_in_field(self, target: ast.Attribute, value: Value, stmt: ast.AST, element: bool) -> None:
        """``self.attr = v`` / ``self.attr[k] = v`` in a method: the object keeps ``v`` where
        the class's other methods read it (the project-wide heap, ``Program.store_field``)."""
        frame = self.frame
        info = frame.info
        if not frame.keeps_in_receiver(target) or info.class_qualname is None:
            return
        step = frame.step(stmt, f"kept in `self.{target.attr}`")
        for leaf in deep_leaves(value):
            if isinstance(leaf, Borrow):
                kept = kept_shape(value, leaf, leaf.elsewhere().with_trace(leaf.trace + (step,)))
                self._store_field(info.class_qualname, target.attr, container(kept) if element else kept, leaf)
            elif (info.qualname, leaf.index) in frame.program.hot:
                self.facts.keep_field(
                    FieldStore(info.class_qualname, target.attr, leaf.index, leaf.path, element, leaf.trace + (step,))
                )
        self._keep_stream(info.class_qualname, target.attr, value, element, step)

    def keep_in_global(self, name: str, value: Value, stmt: ast.AST) -> None:
        """``_POOL = [torch.empty(n, pin_memory=True) for ...]`` at a module's top level (or
        under ``global``): the module keeps its pinned buffers where its functions read them
        (the heap, under ``index.globals_owner``), so a function returning one
        (``return _POOL[i % n]``) hands back that object at every call (``Borrow.held``).
        What else a module variable holds stays unknown to the functions reading it."""
        frame = self.frame
        step = None
        for leaf in deep_leaves(value):
            if pinned_buffer(leaf):
                step = step or frame.step(stmt, f"kept in the module variable `{name}`")
                kept = kept_shape(value, leaf, leaf.elsewhere().with_trace(leaf.trace + (step,)))
                self._store_field(globals_owner(frame.module.name), name, kept, leaf)

    def keep_in_callee_field(self, owner: str, attr: str, value: Value, element: bool) -> None:
        """A callee keeps an argument in its receiver's attribute (``call_effects.KeepInField``)."""
        for leaf in deep_leaves(value):
            if isinstance(leaf, Borrow):
                kept = kept_shape(value, leaf, leaf.elsewhere())
                self._store_field(owner, attr, container(kept) if element else kept, leaf)
            else:  # a parameter of this function: its callers decide
                self.facts.keep_field(FieldStore(owner, attr, leaf.index, leaf.path, element, leaf.trace))
        self._keep_stream(owner, attr, value, element)

    def _keep_stream(self, owner: str, attr: str, value: Value, element: bool, step: TraceStep | None = None) -> None:
        """A stream kept whole (``self._source = source`` of a generator handing out borrowed
        views): the object keeps no view yet, but what a method iterating the field takes
        from it is borrowed, handed out as it goes (a wrapper's ``__iter__`` re-yielding it).
        The heap keeps the stream's borrowed elements as a stream."""
        if not value.lazy or value.elems is None:
            return

        def borrowed(leaf):
            if not isinstance(leaf, Borrow) or leaf.flight or leaf.pinned:
                return None
            return leaf.elsewhere().with_trace(leaf.trace + (step,)) if step is not None else leaf.elsewhere()

        elems = map_leaves(value.elems, borrowed)
        if next(deep_leaves(elems, through_lazy=True), None) is None:
            return
        stream = container(elems, lazy=True)
        self.frame.program.store_field(owner, attr, container(stream) if element else stream)

    def _store_field(self, owner: str, attr: str, kept: Value, leaf: Borrow) -> None:
        """Keep ``kept`` in the project-wide heap now; a copy in flight only when this
        function ends with it still in flight (``keep_in_flight``): one it synchronises
        after storing has landed before any other method can read it."""
        if leaf.flight:
            self.facts.flying_fields.append((owner, attr, kept, leaf.site))
        else:
            self.frame.program.store_field(owner, attr, kept)

    def keep_in_flight(self) -> None:
        """The function ends: the copies it stored in fields that are still in flight on
        this path go to the heap, where the class's other methods read them in flight; so do
        its copies into pinned buffers still in flight (``Program.fill_buffer``), which every
        view of the buffer kept in a field reads (``Effects.arrive``)."""
        st = self.frame.st
        if st is None:
            return
        events = [value for value in st.vars.values() if value.recorded and value.alloc]
        for owner, attr, kept, site in self.facts.flying_fields:
            if site in st.flying:
                self.frame.program.store_field(owner, attr, recorded_by_now(kept, events) if events else kept)
        qualname = self.frame.info.qualname
        for buffer, fill in self.facts.filled_buffers.items():
            own = frozenset(leaf for leaf in fill.leaves if leaf.site in st.flying and leaf.site[0] == qualname)
            if own:
                owner = self.frame.info.class_qualname if buffer in self.facts.own_fills else None
                self.frame.program.fill_buffer(buffer, Value(leaves=own), owner or "")

    def read_back(self, holder: ast.expr, node: ast.AST) -> None:
        """A container that keeps borrowed views past their step is read: the use (say the
        ``torch.cat`` that fuses them) goes at the end of the store's trace once the
        fixpoint is done (``FunctionFacts.add_read_backs``); the finding stays at the store."""
        facts = self.facts
        name = holder_name(holder) if isinstance(holder, (ast.Name, ast.Attribute)) else None
        if name is None or name in facts.read_steps:
            return
        st = self.frame.st
        holds = name in facts.retained_in or any(
            p.holder is not None and p.holder[0] == name for p in (st.pending if st is not None else ())
        )
        if holds:
            facts.read_steps[name] = self.frame.step(node, f"read back from `{name}` after the producer moved on")


def kept_shape(value: Value, leaf: Borrow, kept: Borrow) -> Value:
    """What the heap keeps of ``leaf``, one of ``value``'s leaves stored in a field, as
    ``kept``: a record (``transfer.records``) keeps its shape, so that ``self.out.ids`` read
    by another method finds the copy built into the record's ``ids`` (and not its other
    fields), and so do records in a container (``self.slots = [Slot(pinned) for ...]``:
    ``self.slots[i].host`` is the pinned buffer); anything else, the leaf alone. Each leaf
    is stored on its own, since a copy in flight is stored only if still in flight when the
    function ends (``_store_field``). A copy kept in a tuple with an event recorded here
    (``self.pending.append((copied, host))``) keeps the tuple and the event's record, so
    the method that takes the pair out can wait for it or ask (``copied.query()``): one
    recorded after the copy covers it, one recorded before it (``ev.record()`` then the
    copy) covers nothing of it, and waiting for that event lands nothing."""
    if not (_holds_record(value) or _pairs_event(value, leaf)):
        return Value(leaves=frozenset({kept}))
    shape = _events_of_this_call(map_leaves(value, lambda other: kept if other is leaf else None))
    return Value(leaves=shape.leaves, items=shape.items, fields=shape.fields, elems=shape.elems)


def _holds_record(value: Value) -> bool:
    if value.fields is not None and value.items is not None:
        return True
    return value.elems is not None and _holds_record(value.elems)


def _pairs_event(value: Value, leaf: Borrow) -> bool:
    """Is ``value`` a tuple (or a container of tuples) holding an event recorded here: for a
    copy in flight, before or after it (its record follows something: what this function
    issued, or ``BEFORE_CALL``); for anything else, after it?"""
    if value.items is not None and any(
            item.recorded and (leaf.flight or leaf.site in item.recorded) for item in value.items):
        return True
    return value.elems is not None and _pairs_event(value.elems, leaf)


def recorded_by_now(value: Value, events: list[Value]) -> Value:
    """``value`` (a kept pair) with each event it holds as its last record here left it: an
    event recorded again after the pair was stored (``self.d[k] = (host, ev); ev.record()``)
    covers what that record followed. ``events``: the events the function's variables hold
    at its end, the same object by where it was made (``Value.alloc``)."""
    items = value.items
    if items is not None:
        items = tuple(_last_record(item, events) for item in items)
    elems = recorded_by_now(value.elems, events) if value.elems is not None else None
    return evolve(value, items=items, elems=elems) if items is not value.items or elems is not value.elems else value


def _last_record(item: Value, events: list[Value]) -> Value:
    if item.recorded is None or not item.alloc:
        return item
    later = [event.recorded for event in events if event.alloc == item.alloc and event.recorded]
    return evolve(item, recorded=item.recorded.union(*later) - {BEFORE_CALL}) if later else item


def _events_of_this_call(value: Value) -> Value:
    """The events in ``value`` as another call sees them: recorded after the copies they
    cover, not after everything issued before this call (``BEFORE_CALL``: the other call's
    own work before it is not)."""
    items = tuple(_events_of_this_call(item) for item in value.items) if value.items is not None else None
    elems = _events_of_this_call(value.elems) if value.elems is not None else None
    recorded = value.recorded - {BEFORE_CALL} if value.recorded else value.recorded
    return evolve(value, items=items, elems=elems, recorded=recorded)
