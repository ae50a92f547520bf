"""What the interpreter records besides values: pending async work and retained views
(committed as findings or summary reaches when the producer may advance), marks, and
device synchronisation. Mixed into ``FunctionInterpreter``."""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.state import Pending, State
from bufferlint.analysis.domain.summaries import SinkReach, Site, keep_best
from bufferlint.analysis.frontend.syntax import holder_name, root_name
from bufferlint.analysis.domain.values import (
    EMPTY,
    Borrow,
    ParamRef,
    Value,
    deep_leaves,
    deep_pending,
    in_flight,
    in_flight_sites,
    join_all,
    landed_leaf,
    map_leaves,
)
from bufferlint.findings import TraceStep, shorter_trace

class EffectsMixin:
    def is_array(self, expr: ast.expr, value: Value) -> bool:
        """A store target (``expr``, evaluated to ``value``) known to be an array (a view, e.g.
        ``param.data``), not a container: storing into it copies."""
        if isinstance(expr, ast.Attribute) and expr.attr in self.vocab.view_attributes:
            return True
        return any(isinstance(leaf, ParamRef) and "view" in leaf.path for leaf in value.leaves)

    def outlives_step(self, expr: ast.expr, attribute: bool = False) -> bool:
        """Does this container (or object) live across iterations of the enclosing loop?
        Attributes, parameters, globals and locals created before the loop do; a local
        (re)created in the loop body is dropped with its iteration. An object whose attribute
        is set is taken to be long-lived even through a loop-local alias
        (``param = params[name]; param.data = w``): per-iteration objects rarely get one."""
        root = root_name(expr)
        if root is None:
            return False
        if root in self.declared_globals or self.is_closure_variable(root) or self.is_module_variable(root):
            return True  # module state, or a container of the enclosing call: lives on
        if root in self.info.params or not isinstance(expr, ast.Name) or attribute:
            return bool(self.loop_assigned) or root in self.info.params or not isinstance(expr, ast.Name)
        advancing = [names for names in self.loop_assigned if names is not None]
        if not advancing:
            return False
        return root not in advancing[-1]

    @property
    def receiver_name(self) -> str | None:
        """``self`` in a method (what the receiver's containers are named through)."""
        info = self.info
        return info.params[0] if info.binds_receiver and info.params else None

    @property
    def declared_globals(self) -> frozenset:
        return self.info.declared_globals

    def is_module_variable(self, name: str) -> bool:
        """A module-level container used (not rebound) here: ``_CACHE[k] = w``."""
        info = self.info
        return info.kind != "module" and name in info.module.variables and name not in info.params and (
            name not in info.assigned or name in self.declared_globals
        )

    def is_closure_variable(self, name: str) -> bool:
        """A name a nested function reads from its enclosing function's frame."""
        info = self.info
        if info.outer is None or name in info.params or name in info.assigned:
            return False
        outer = info.outer
        while outer is not None:
            if name in outer.params or name in outer.assigned:
                return True
            outer = outer.outer
        return False

    def retain(self, stmt: ast.AST, value: Value, holder_text: str, holder: tuple | None) -> None:
        """Only values that may be borrowed are tracked (stores of parameters that no caller
        ever passes a borrowed value are everywhere, and never a finding)."""
        leaves = frozenset(
            leaf for leaf in deep_leaves(value)
            if isinstance(leaf, Borrow) or (self.info.qualname, leaf.index) in self.program.hot
        )
        if leaves:
            # Which positions of a stored tuple hold them: the fix copies only those.
            parts = [str(i) for i, item in enumerate(value.items or ()) if leaves & frozenset(deep_leaves(item))]
            subject = "items:" + ",".join(parts) if parts else ""
            self.add_pending(stmt, Value(leaves=leaves), holder_text, frozenset(), subject, rule="BL003", holder=holder)

    def release(self, name: str, key: str | None) -> None:
        """The container ``name`` drops what was kept under ``key`` (all of it for None)."""
        receiver = self.receiver_name
        if receiver and name.startswith(receiver + "."):
            self.released.add((name[len(receiver):], key))  # the caller's object drops it
        if self.st is None or not self.st.pending:
            return
        self.st.pending = frozenset(
            p
            for p in self.st.pending
            if not (p.holder is not None and p.holder[0] == name and (key is None or p.holder[1] == key))
        )

    def synchronize(self) -> None:
        """``torch.cuda.synchronize()``: every async device copy issued so far is complete."""
        if self.st is not None:
            self.st.pending = frozenset(p for p in self.st.pending if p.rule != "BL004")
            self.st.synced = True
            self.st.flying = frozenset()

    def issue(self, value: Value) -> None:
        """Borrowed objects handed out here (by a source, or a helper returning them): fresh
        ones, whatever an earlier ``advances`` call did to their site's older objects.
        Device-to-host copies among them are in flight until the next synchronisation."""
        st = self.st
        if st is None:
            return
        sites = in_flight_sites(value)
        if sites:
            st.flying = st.flying | sites
        self.refresh(value)

    def refresh(self, value: Value) -> None:
        """``value``'s borrowed objects were just handed out (by a source, a helper, the next
        element of a stream): not refilled, whatever an ``advances`` call did to older ones."""
        st = self.st
        if st is not None and st.refilled:
            fresh = {leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow)}
            st.refilled = frozenset(entry for entry in st.refilled if entry[0] not in fresh)

    def advance(self, node: ast.AST, what: str) -> None:
        """``ring.release(slot)``: the producer may refill its buffer now, as when its loop
        advances: work still reading a view is a race, and the views in hand are stale."""
        st = self.st
        if st is None:
            return
        self.advanced = True  # and so may a call of this function (``Summary.advances``)
        step = self.step(node, f"the producer may refill its buffer after `{what}(...)`")
        if st.pending:
            self.commit(st, step)
            st.pending = frozenset(p for p in st.pending if p.key[:1] == ("param",))
        held = {
            name: {leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow) and not leaf.flight}
            for name, value in st.vars.items()
        }
        held = {name: sites for name, sites in held.items() if sites and not name.startswith("<")}
        if held:
            st.stale = st.stale | frozenset(held)
            st.refilled = st.refilled | frozenset((site, step) for sites in held.values() for site in sites)

    def use_after_refill(self, node: ast.AST, value: Value, what: str) -> None:
        """A call reads a view whose producer may have refilled the buffer (BL003)."""
        st = self.st
        if st is None or not st.refilled:
            return
        steps = {site: step for site, step in st.refilled}
        sink = f"{what} (after the producer may have refilled it)"
        for leaf in deep_leaves(value):
            if isinstance(leaf, Borrow) and leaf.site in steps:
                use = self.step(node, f"read by `{what}(...)` after that")
                self.report(self.site(node, sink), leaf.trace + (steps[leaf.site], use), "BL003")

    def read_host(self, node: ast.AST, value: Value, what: str) -> None:
        """The host reads the value's bytes now (BL005 if they are still in flight). A
        parameter read before this function synchronises is a reach: the caller decides."""
        st = self.st
        if st is None or not value.leaves:
            return
        step = None
        for leaf in value.leaves:
            if isinstance(leaf, Borrow):
                if not (leaf.flight and leaf.site in st.flying):
                    continue
            elif st.synced or (self.info.qualname, leaf.index) not in self.program.flight_hot:
                continue
            if step is None:
                step = replace(self.step(node, ""), fact=("sink", "BL005", what))
            if isinstance(leaf, Borrow):
                self.report(self.site(node, what), leaf.trace + (step,), "BL005")
            else:
                self.add_reach(SinkReach(leaf.index, leaf.path, st.assume, None, (step,), "BL005"))

    def landed(self, value: Value) -> Value:
        """``value`` without the in-flight copies a synchronisation on this path completed
        (what a function hands back: its callers see those as ordinary host tensors)."""
        st = self.st
        if st is None or not any(isinstance(leaf, Borrow) and leaf.flight for leaf in deep_leaves(value)):
            return value
        return map_leaves(value, lambda leaf: None if landed_leaf(leaf, st.flying) else leaf)

    def materialize(
        self,
        node: ast.AST,
        value: Value,
        what: str,
        reach: SinkReach | None = None,
        rule: str = "BL003",
        note: str | None = None,
    ) -> None:
        """``list(stream)``: every element is held at once while the producer advances
        (BL003); an eager sink (``Executor.map``) queues every element the same way."""
        if self.st is None:
            return
        step = self.step(node, note or f"every element is kept at once by `{what}` while the producer advances")
        if value.lazy:
            leaves = frozenset(leaf for leaf in deep_leaves(value.elems, through_lazy=True) if not in_flight(leaf))
            site = reach.site if reach is not None and reach.site else self.site(node, what)
            for leaf in leaves:
                trace = leaf.trace + (reach.trace if reach is not None else ()) + (step,)
                if isinstance(leaf, Borrow):
                    self.report(site, trace, rule)
                else:
                    self.add_reach(SinkReach(leaf.index, leaf.path, self.st.assume, site, trace, rule, True))
            return
        for leaf in value.leaves:
            if isinstance(leaf, ParamRef) and reach is None:
                self.add_reach(SinkReach(leaf.index, leaf.path, self.st.assume, self.site(node, what), (step,), rule, True))

    def mark(self, target: ast.expr, stmt: ast.AST, kind: str) -> None:
        """``setattr(t, MARKER, True)``: ``t`` is now a borrowed value (its producer is here)
        of the kind that names the marker."""
        spec = self.vocab.vocab.kinds.get(kind)
        if spec is not None and not spec.lends:
            return  # no version of the library the project admits lends (``lends-in``)
        if isinstance(target, ast.Name) and self.st is not None:
            old = self.st.vars.get(target.id, EMPTY)
            if any(isinstance(leaf, Borrow) and not leaf.view for leaf in old.leaves):
                return  # already known borrowed (from a source): one origin, one trace
            condition = f" {spec.condition}" if spec is not None and spec.condition else ""
            note = f"`{target.id}` is marked borrowed (zero-copy view of a reused buffer){condition}"
            version = (spec.condition, spec.admitted, spec.floor) if condition else ()
            step = replace(self.step(stmt, note), fact=("source", kind, "borrowed", *version))  # for words and fixes
            leaf = Borrow((self.info.qualname, stmt.lineno, stmt.col_offset), False, (step,), kind=kind)
            self.st.vars[target.id] = Value(
                leaves=old.leaves | {leaf}, elems=old.elems, items=old.items, lazy=old.lazy, types=old.types
            )

    def commit(self, state: State, step: TraceStep | None) -> None:
        """The producer may advance now: every submission still pending is a race."""
        for pending in state.pending:
            for leaf in pending.leaves:
                if in_flight(leaf):
                    continue  # a helper's future came back with a device copy: BL005's, not this rule's
                trace = leaf.trace + (pending.step,)
                if pending.holder is not None:
                    self.retained_in.setdefault(pending.holder[0], set()).add((pending.rule, pending.site))
                if isinstance(leaf, Borrow):
                    self.report(pending.site, trace, pending.rule)
                else:
                    here = "iter" in leaf.path or pending.rule != "BL001"
                    site = pending.site if here else None
                    self.add_reach(SinkReach(leaf.index, leaf.path, pending.assume, site, trace, pending.rule))

    def read_back(self, holder: ast.expr, node: ast.AST) -> None:
        """A container that keeps borrowed views past their step is read: the use (say the
        ``torch.cat`` that fuses them) goes at the end of the store's trace once the
        fixpoint is done (``add_read_backs``); the finding stays at the store."""
        name = holder_name(holder) if isinstance(holder, (ast.Name, ast.Attribute)) else None
        if name is None or name in self.read_steps:
            return
        holds = name in self.retained_in or any(
            p.holder is not None and p.holder[0] == name for p in (self.st.pending if self.st is not None else ())
        )
        if holds:
            self.read_steps[name] = self.step(node, f"read back from `{name}` after the producer moved on")

    def add_read_backs(self) -> None:
        for name, step in self.read_steps.items():
            for key in self.retained_in.get(name, ()):
                trace = self.findings.get(key)
                if trace and trace[-1] != step:
                    self.findings[key] = trace + (step,)
        sited: dict = {}
        for reach in map(self.with_read_back, self.sited):
            keep_best(sited, reach)
        self.sited = sited

    def with_read_back(self, reach: SinkReach) -> SinkReach:
        for name, step in self.read_steps.items():
            if (reach.rule, reach.site) in self.retained_in.get(name, ()) and reach.trace[-1:] != (step,):
                return replace(reach, trace=reach.trace + (step,))
        return reach

    def add_reach(self, reach: SinkReach) -> None:
        """A reach whose report site is known does not change how callers are analysed: it
        is propagated after the fixpoint (``Program.propagate_sited``), not in the summary."""
        keep_best(self.sited if reach.site is not None else self.sinks, reach)

    def report(self, site: Site, trace: tuple, rule: str = "BL001") -> None:
        key = (rule, site)
        old = self.findings.get(key)
        if shorter_trace(trace, old):
            self.findings[key] = trace

    def settle(self, value: Value) -> None:
        """Waiting on a future (``.result()``, ``await``, ``join``) makes its task synchronous."""
        keys = deep_pending(value)
        if self.st is not None and keys:
            self.st.pending = frozenset(p for p in self.st.pending if p.key not in keys)

    def settle_owned_by(self, executor: Value) -> None:
        """``executor.shutdown(wait=True)`` or leaving ``with executor:`` waits for every task
        submitted to it: the submissions whose receiver can only be this executor."""
        if self.st is None or not executor.alloc:
            return
        self.st.pending = frozenset(
            p for p in self.st.pending if not (p.owners and p.owners <= executor.alloc)
        )

    def add_pending(
        self,
        node: ast.AST,
        payload: Value,
        sink: str,
        assume: frozenset,
        subject: str = "",
        rule: str = "BL001",
        holder: tuple | None = None,
        owners: frozenset = frozenset(),
    ) -> Value:
        """Work that reads ``payload`` later; returns the future standing for it. A copy still
        in flight from the device handed to a task is read by it (BL005) now; the other rules
        are about buffers a producer reuses, never about those copies."""
        leaves = frozenset(deep_leaves(payload))
        if not leaves or self.st is None:
            return EMPTY
        flying = frozenset(leaf for leaf in leaves if isinstance(leaf, Borrow) and leaf.flight)
        if flying:
            if rule == "BL001":
                self.read_host(node, Value(leaves=flying), sink)
            leaves = leaves - flying
            if not leaves:
                return EMPTY
        key = (node.lineno, node.col_offset)
        step = replace(self.step(node, ""), fact=("sink", rule, sink))  # the rule words it
        pending = Pending(key, leaves, self.site(node, sink, subject), self.st.assume | assume, step, rule, holder, owners)
        self.st.pending = self.st.pending | {pending}
        return Value(pending=frozenset({key}))

    def hand_back_stale(self, expr: ast.expr | None, value: Value, stmt: ast.AST) -> None:
        """``return last`` after ``for ...: last = w``: the caller gets a view whose buffer the
        producer has refilled since (BL003 at the return)."""
        if expr is None or self.st is None or not self.st.stale:
            return
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} & self.st.stale
        if names:
            held = join_all(self.st.vars.get(name) for name in names)
            self.add_pending(stmt, held, f"{sorted(names)[0]} (after its loop moved on)", frozenset(), rule="BL003")

