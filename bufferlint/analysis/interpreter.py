"""Flow-sensitive abstract interpretation of one function over Python's structured control flow.

It walks the function's syntax tree once per fixpoint round, carrying a ``State`` (what each
local variable may hold, which submissions are still pending, which objects a guard proved
unborrowed on this path). Branches are analysed under the refinement their test implies and
joined at merges; loops iterate until the state at their head stops changing.

The result is the function's ``Summary`` (in terms of its parameters) and the concrete
findings for borrowed values that are in hand here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from bufferlint.analysis.index import FunctionInfo, dotted_name
from bufferlint.analysis.summaries import EMPTY_SUMMARY, SinkReach, Site, Summary
from bufferlint.analysis.values import (
    EMPTY,
    Borrow,
    Cond,
    ParamRef,
    Value,
    clean,
    const,
    container,
    deep_leaves,
    deep_pending,
    identities,
    index,
    iterate,
    join,
    join_all,
    map_leaves,
    view_of,
)
from bufferlint.findings import TraceStep, shorter_trace

MAX_LOOP_ROUNDS = 12
STEP_NOTES = {
    "BL001": "consumed asynchronously by `{sink}`",
    "BL003": "kept in `{sink}`, which outlives the producer's step",
    "BL004": "copied to the device asynchronously by `{sink}`",
}

# Python's own container and iteration semantics (the language, not a library).
CONTAINER_METHODS_ADD = {"append", "add", "insert", "appendleft"}
CONTAINER_METHODS_EXTEND = {"extend", "update"}
CONTAINER_METHODS_GET = {"get", "pop", "popitem", "setdefault", "popleft", "__getitem__"}
CONTAINER_METHODS_VIEW = {"values": "elems", "keys": "none", "items": "items", "copy": "same"}
BUILTIN_MATERIALIZE = {"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "filter"}


@dataclass(frozen=True)
class Pending:
    """A submission whose task may still be running: committed when the producer may advance."""

    key: tuple
    leaves: frozenset
    site: Site
    assume: frozenset
    step: TraceStep = field(compare=False, hash=False)
    rule: str = "BL001"
    holder: tuple | None = None  # BL003: (container variable, key source) the value is kept in


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


@dataclass
class Outcome:
    """What one analysis of a function produced."""

    summary: Summary
    findings: dict  # (rule, Site) -> trace
    callees: set
    used_as_guard: set
    demands: set  # (kind, name): unresolved callees we pass (maybe) borrowed values to
    sited: set  # reaches reported in this function or below, propagated after the fixpoint
    edges: list  # CallEdge per call of a project function


class FunctionInterpreter:
    def __init__(self, info: FunctionInfo, program) -> None:
        self.info = info
        self.program = program
        self.module = info.module
        self.vocab = program.vocab
        self.returns: Value | None = None
        self.yields: Value | None = None
        self.truthy_returns: list[frozenset] = []
        self.falsy_returns: list[frozenset] = []
        self.sinks: set[SinkReach] = set()
        self.findings: dict = {}
        self.callees: set[str] = set()
        self.used_as_guard: set[str] = set()
        self.demands: set = set()
        self.sited: set[SinkReach] = set()
        self.exit_synced: list[bool] = []
        self.retained_in: dict[str, set] = {}  # container -> BL003 findings of views kept in it
        self.read_steps: dict[str, TraceStep] = {}  # container -> where it is read back later
        self.edges: list = []
        self.loop_stack: list[tuple[list, list]] = []
        self.st = State()
        self.contexts: frozenset = frozenset()  # active `within` contexts (CUDA streams)
        self.loop_assigned: list[set[str] | None] = []  # names each advancing loop body assigns

    # -- entry -----------------------------------------------------------------------

    def run(self) -> Outcome:
        node = self.info.node
        state = State()
        self.st = state
        annotations = _annotations(node)
        for i, name in enumerate(self.info.params):
            value = Value(leaves=frozenset({ParamRef(i)}), declared=self.declared_types(annotations.get(name)))
            if i == 0 and self.info.binds_receiver and self.info.class_qualname:
                value = Value(leaves=value.leaves, types=frozenset({self.info.class_qualname}))
            state.vars[name] = value
        self.st = state
        body = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) else []
        end = self.exec_block(body)
        if end is not None:
            self.exit_synced.append(end.synced)
            self.commit(end, self.step(node, "function returns") if not isinstance(node, ast.Module) else None)
            self.falsy_returns.append(end.cleaned)
        self.sited = {self.with_read_back(reach) for reach in self.sited}
        returns = self.returns or EMPTY
        if self.info.is_generator:
            returns = Value(lazy=True, elems=self.yields)
        summary = Summary(
            returns=returns,
            sinks=frozenset(self.sinks),
            guards=self._proven(self.truthy_returns),
            marker_checks=self._proven(self.falsy_returns) if self.truthy_returns else frozenset(),
            synchronizes=bool(self.exit_synced) and all(self.exit_synced),
        )
        if summary == EMPTY_SUMMARY:
            summary = EMPTY_SUMMARY
        return Outcome(summary, self.findings, self.callees, self.used_as_guard, self.demands, self.sited, self.edges)

    def declared_types(self, annotation: ast.expr | None) -> frozenset:
        """Classes a parameter annotation names (``X``, ``Optional[X]``, ``X | None``, ``"X"``)."""
        if annotation is None:
            return frozenset()
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return frozenset()
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return self.declared_types(annotation.left) | self.declared_types(annotation.right)
        if isinstance(annotation, ast.Subscript):
            outer = dotted_name(annotation.value) or ""
            if outer.rsplit(".", 1)[-1] in ("Optional", "Union"):
                inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
                return frozenset().union(*(self.declared_types(e) for e in inner))
            return frozenset()
        if isinstance(annotation, (ast.Name, ast.Attribute)) and dotted_name(annotation):
            head, _, rest = dotted_name(annotation).partition(".")
            ref = self.lookup(head).ref
            if ref and not ref.startswith("builtins."):
                return frozenset({self.program.index.canonical(f"{ref}.{rest}" if rest else ref)})
        return frozenset()

    def _proven(self, cleaned_sets: list[frozenset]) -> frozenset:
        if not cleaned_sets:
            return frozenset()
        common = frozenset.intersection(*cleaned_sets)
        return frozenset(i[1] for i in common if i[0] == "p" and i[2] == ())

    # -- positions and trace steps -----------------------------------------------------

    def step(self, node: ast.AST, note: str) -> TraceStep:
        return TraceStep(self.module.path, getattr(node, "lineno", 1), note)

    def site(self, node: ast.AST, sink: str, subject: str = "") -> Site:
        return Site(self.program.span(self.module, node), self.info.display, sink, subject)

    # -- statements --------------------------------------------------------------------

    def exec_block(self, stmts: list[ast.stmt]) -> State | None:
        for stmt in stmts:
            if self.st is None:
                return None
            self.exec_stmt(stmt)
        return self.st

    def exec_stmt(self, stmt: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is not None:
            method(stmt)
        else:
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.expr):
                    self.eval(child)

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        self.eval(stmt.value)

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        value = self.eval(stmt.value)
        for target in stmt.targets:
            self.assign(target, value, stmt)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value), stmt)

    def stmt_AugAssign(self, stmt: ast.AugAssign) -> None:
        value = self.eval(stmt.value)
        if isinstance(stmt.target, ast.Name) and (value.elems is not None or value.items is not None):
            old = self.st.vars.get(stmt.target.id, EMPTY)
            self.st.vars[stmt.target.id] = container(join(old.elems, iterate(value)), lazy=old.lazy)
        else:
            self.eval(stmt.target)

    def stmt_Return(self, stmt: ast.Return) -> None:
        value = self.eval(stmt.value) if stmt.value is not None else const(None)
        if self.st is None:
            return
        self.hand_back_stale(stmt.value, value, stmt)
        self.returns = join(self.returns, value)
        truthy = not (value.has_const and not value.const)
        falsy = not (value.has_const and value.const)
        cond = value.cond or Cond()
        if truthy:
            self.truthy_returns.append(self.st.cleaned | cond.clean_if_true)
        if falsy:
            self.falsy_returns.append(self.st.cleaned | cond.clean_if_false)
        self.exit_synced.append(self.st.synced)
        self.commit(self.st, self.step(stmt, "function returns"))
        self.st = None

    def stmt_Raise(self, stmt: ast.Raise) -> None:
        if stmt.exc is not None:
            self.eval(stmt.exc)
        self.st = None

    def stmt_Break(self, stmt: ast.Break) -> None:
        if self.loop_stack:
            self.loop_stack[-1][0].append(self.st)
        self.st = None

    def stmt_Continue(self, stmt: ast.Continue) -> None:
        if self.loop_stack:
            self.loop_stack[-1][1].append(self.st)
        self.st = None

    def stmt_Delete(self, stmt: ast.Delete) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                self.st.vars.pop(target.id, None)
                self.release(target.id, None)
            elif isinstance(target, ast.Subscript) and _root_name(target.value):
                self.release(_root_name(target.value), ast.unparse(target.slice))
            else:
                self.eval(target)

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        self.refine(stmt.test, True)

    def stmt_Import(self, stmt: ast.AST) -> None:
        from bufferlint.analysis.index import import_bindings

        for name, qualname in import_bindings(self.module, stmt).items():
            self.st.vars[name] = Value(ref=self.program.index.canonical(qualname))

    stmt_ImportFrom = stmt_Import

    def stmt_FunctionDef(self, stmt: ast.AST) -> None:
        if self.info.kind == "module":
            self.st.vars.pop(stmt.name, None)  # a module-level def: resolved through the index
            return
        qualname = self.info.local_defs.get(stmt.name)
        captured = self.captured(stmt)
        self.st.vars[stmt.name] = Value(ref=qualname, elems=captured.elems if captured else None)

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_ClassDef(self, stmt: ast.ClassDef) -> None:
        if self.info.kind == "module":
            self.st.vars.pop(stmt.name, None)
            return
        self.st.vars[stmt.name] = Value(ref=f"{self.info.qualname}.<locals>.{stmt.name}")

    def stmt_Global(self, stmt: ast.AST) -> None:
        return None

    stmt_Nonlocal = stmt_Global
    stmt_Pass = stmt_Global

    def stmt_If(self, stmt: ast.If) -> None:
        self.eval(stmt.test)
        before = self.st
        self.st = before.copy()
        self.refine(stmt.test, True)
        then_state = self.exec_block(stmt.body)
        self.st = before.copy()
        self.refine(stmt.test, False)
        else_state = self.exec_block(stmt.orelse)
        self.st = join_states(then_state, else_state)

    def stmt_For(self, stmt: ast.For) -> None:
        iterable = self.eval(stmt.iter)
        element = iterate(iterable, self.step(stmt, f"element taken by `for {_short(stmt.target)} in ...`"))
        self.settle(iterable)
        advances = iterable.lazy or any(isinstance(leaf, ParamRef) and "view" not in leaf.path for leaf in iterable.leaves)
        self.loop(stmt, lambda: self.assign(stmt.target, element, stmt), None, advances)

    stmt_AsyncFor = stmt_For

    def stmt_While(self, stmt: ast.While) -> None:
        self.loop(stmt, None, stmt.test, advances=True)

    def loop(self, stmt: ast.For | ast.While, bind, test: ast.expr | None, advances: bool) -> None:
        """``advances``: each iteration may advance a producer (a lazy iterator, an iterable
        parameter, any while loop). Iterating a list, a range or a tensor's own views does not
        reuse any buffer, so pending work carries over to the enclosing step instead."""
        self.loop_assigned.append(_assigned_names(stmt.body) if advances else None)
        try:
            self._loop(stmt, bind, test, advances)
        finally:
            self.loop_assigned.pop()
        if self.st is not None and advances and isinstance(stmt, (ast.For, ast.AsyncFor)):
            targets = _assigned_names([stmt.target])
            stale = {
                name
                for name in _assigned_names(stmt.body) - targets
                if any(isinstance(leaf, Borrow) or "iter" in getattr(leaf, "path", ()) for leaf in deep_leaves(self.st.vars.get(name)))
            }
            self.st.stale = self.st.stale | frozenset(stale)

    def _loop(self, stmt: ast.For | ast.While, bind, test: ast.expr | None, advances: bool) -> None:
        entry = self.st
        head = entry.copy()
        exit_states: list[State | None] = []
        for _ in range(MAX_LOOP_ROUNDS):
            self.st = head.copy()
            if test is not None:
                self.eval(test)
                exit_state = self.st.copy()
                self.st = exit_state
                self.refine(test, False)
                exit_states = [self.st]
                self.st = exit_state.copy()
                self.refine(test, True)
            else:
                exit_states = [head.copy()]
            if self.st is None:
                break
            if bind is not None:
                bind()
            self.loop_stack.append(([], []))
            end = self.exec_block(stmt.body)
            breaks, continues = self.loop_stack.pop()
            back = end
            for state in continues:
                back = join_states(back, state)
            if back is not None and advances:
                self.commit(back, self.step(stmt, "the loop advances to its next iteration"))
                back.pending = frozenset()
            exit_states.extend(breaks)
            new_head = join_states(head, back)
            if new_head == head:
                break
            head = new_head
        self.st = None
        normal_exit = None
        for state in exit_states[:1]:
            normal_exit = state
        if normal_exit is not None and stmt.orelse:
            self.st = normal_exit.copy()
            normal_exit = self.exec_block(stmt.orelse)
        result = normal_exit
        for state in exit_states[1:]:
            result = join_states(result, state)
        self.st = result

    def stmt_With(self, stmt: ast.With) -> None:
        from bufferlint.analysis.calls import shape_of

        outer = self.contexts
        for item in stmt.items:
            shape = shape_of(self, item.context_expr) if self.st is not None else None
            context = self.vocab.context_of(shape) if shape is not None else None
            value = self.eval(item.context_expr)
            if context:
                self.contexts = self.contexts | {context}
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value, stmt)
        self.exec_block(stmt.body)
        self.contexts = outer

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, stmt: ast.Try) -> None:
        before = self.st.copy()
        body_end = self.exec_block(stmt.body)
        if body_end is not None and stmt.orelse:
            body_end = self.exec_block(stmt.orelse)
        outcomes = [body_end]
        handler_entry = join_states(before, body_end)
        for handler in stmt.handlers:
            self.st = handler_entry.copy() if handler_entry else None
            if self.st is not None and handler.name:
                self.st.vars[handler.name] = EMPTY
            outcomes.append(self.exec_block(handler.body))
        merged = None
        for state in outcomes:
            merged = join_states(merged, state)
        if stmt.finalbody:
            self.st = merged if merged is not None else (handler_entry.copy() if handler_entry else None)
            if self.st is not None:
                final = self.exec_block(stmt.finalbody)
                merged = final if merged is not None else None
        self.st = merged

    stmt_TryStar = stmt_Try

    def stmt_Match(self, stmt: ast.AST) -> None:
        subject = self.eval(stmt.subject)
        before = self.st
        result = None
        for case in stmt.cases:
            self.st = before.copy()
            self.bind_pattern(case.pattern, subject, stmt)
            if case.guard is not None:
                self.eval(case.guard)
                self.refine(case.guard, True)
            result = join_states(result, self.exec_block(case.body))
        self.st = join_states(result, before)

    def bind_pattern(self, pattern: ast.AST, subject: Value, stmt: ast.AST) -> None:
        if isinstance(pattern, ast.MatchAs):
            if pattern.pattern is not None:
                self.bind_pattern(pattern.pattern, subject, stmt)
            if pattern.name:
                self.st.vars[pattern.name] = subject
        elif isinstance(pattern, ast.MatchStar) and pattern.name:
            self.st.vars[pattern.name] = container(iterate(subject))
        elif isinstance(pattern, ast.MatchSequence):
            for i, sub in enumerate(pattern.patterns):
                self.bind_pattern(sub, index(subject, i if not isinstance(sub, ast.MatchStar) else None), stmt)
        elif isinstance(pattern, ast.MatchMapping):
            for sub in pattern.patterns:
                self.bind_pattern(sub, index(subject, None), stmt)
            if pattern.rest:
                self.st.vars[pattern.rest] = subject
        elif isinstance(pattern, ast.MatchClass):
            for sub in pattern.patterns + pattern.kwd_patterns:
                self.bind_pattern(sub, EMPTY, stmt)
        elif isinstance(pattern, ast.MatchOr):
            for sub in pattern.patterns:
                self.bind_pattern(sub, subject, stmt)

    # -- assignment ----------------------------------------------------------------------

    def assign(self, target: ast.expr, value: Value, stmt: ast.AST) -> None:
        if self.st is None:
            return
        if isinstance(target, ast.Name):
            self.st.vars[target.id] = value
            if target.id in self.st.stale:
                self.st.stale = self.st.stale - {target.id}
            self.release(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.assign(elt.value, container(index(value, None)), stmt)
                else:
                    self.assign(elt, index(value, None if starred else i), stmt)
        elif isinstance(target, ast.Subscript) and (_is_slice(target.slice) or self.is_tensor(target.value)):
            self.eval(target.value)  # `t[a:b] = w`, `param.data[i] = w` copy w into t's own storage
            self.eval(target.slice)
        elif isinstance(target, ast.Subscript):
            self.store_into(target.value, value, stmt, target.slice)
            self.eval(target.slice)
        elif isinstance(target, ast.Attribute):
            self.eval(target.value)
            if target.attr in self.vocab.markers:
                self.mark(target.value, stmt)
            elif self.outlives_step(target.value, attribute=True):
                self.retain(stmt, value, f"{_short(target.value)}.{target.attr}", None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, stmt)

    def store_into(self, container_expr: ast.expr, value: Value, stmt: ast.AST, key: ast.expr | None = None) -> None:
        """``c[k] = v`` (or ``c.append(v)``): the container may now hold ``v``; if the
        container outlives the producer's step, the borrowed value is retained (BL003)."""
        if self.st is not None and self.outlives_step(container_expr):
            key_text = ast.unparse(key) if key is not None else None
            self.retain(stmt, value, _short(container_expr), (_root_name(container_expr), key_text))
        if isinstance(container_expr, ast.Name) and self.st is not None:
            old = self.st.vars.get(container_expr.id)
            if old is None:
                old = self.lookup(container_expr.id)
            self.st.vars[container_expr.id] = join(old, container(value))
        else:
            self.eval(container_expr)

    def is_tensor(self, expr: ast.expr) -> bool:
        """A store target known to be an array (a view, e.g. ``param.data``), not a container."""
        if isinstance(expr, ast.Attribute) and expr.attr in self.vocab.view_attributes:
            return True
        value = self.peek(expr)
        return any(isinstance(leaf, ParamRef) and "view" in leaf.path for leaf in value.leaves)

    def outlives_step(self, expr: ast.expr, attribute: bool = False) -> bool:
        """Does this container (or object) live across iterations of the enclosing loop?
        Attributes, parameters, globals and locals created before the loop do; a local
        (re)created in the loop body is dropped with its iteration. An object whose attribute
        is set is taken to be long-lived even through a loop-local alias
        (``param = params[name]; param.data = w``): per-iteration objects rarely get one."""
        root = _root_name(expr)
        if root is None:
            return False
        if root in self.info.params or not isinstance(expr, ast.Name) or attribute:
            return bool(self.loop_assigned) or root in self.info.params or not isinstance(expr, ast.Name)
        advancing = [names for names in self.loop_assigned if names is not None]
        if not advancing:
            return False
        return root not in advancing[-1]

    def retain(self, stmt: ast.AST, value: Value, holder_text: str, holder: tuple | None) -> None:
        """Only values that may be borrowed are tracked (stores of parameters that no caller
        ever passes a borrowed value are everywhere, and never a finding)."""
        leaves = frozenset(
            leaf for leaf in deep_leaves(value)
            if isinstance(leaf, Borrow) or (self.info.qualname, leaf.index) in self.program.hot
        )
        if leaves:
            self.add_pending(stmt, Value(leaves=leaves), holder_text, frozenset(), rule="BL003", holder=holder)

    def release(self, name: str, key: str | None) -> None:
        """The container ``name`` drops what was kept under ``key`` (all of it for None)."""
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

    def materialize(self, node: ast.AST, value: Value, what: str, reach: SinkReach | None = None) -> None:
        """``list(stream)``: every element is held at once while the producer advances (BL003)."""
        if self.st is None:
            return
        if value.lazy:
            leaves = frozenset(deep_leaves(value.elems, through_lazy=True))
            site = reach.site if reach is not None and reach.site else self.site(node, what)
            step = self.step(node, f"every element is kept at once by `{what}` while the producer advances")
            for leaf in leaves:
                trace = leaf.trace + (reach.trace if reach is not None else ()) + (step,)
                if isinstance(leaf, Borrow):
                    self.report(site, trace, "BL003")
                else:
                    self.add_reach(SinkReach(leaf.index, leaf.path, self.st.assume, site, trace, "BL003", True))
            return
        for leaf in value.leaves:
            if isinstance(leaf, ParamRef) and reach is None:
                step = self.step(node, f"every element is kept at once by `{what}` while the producer advances")
                self.add_reach(SinkReach(leaf.index, leaf.path, self.st.assume, self.site(node, what), (step,), "BL003", True))

    def mark(self, target: ast.expr, stmt: ast.AST) -> None:
        """``setattr(t, MARKER, True)``: ``t`` is now a borrowed value (its producer is here)."""
        if isinstance(target, ast.Name) and self.st is not None:
            old = self.st.vars.get(target.id, EMPTY)
            if any(isinstance(leaf, Borrow) and not leaf.view for leaf in old.leaves):
                return  # already known borrowed (from a source): one origin, one trace
            note = f"`{target.id}` is marked borrowed (zero-copy view of a reused buffer)"
            leaf = Borrow((self.info.qualname, stmt.lineno, stmt.col_offset), False, (self.step(stmt, note),))
            self.st.vars[target.id] = Value(
                leaves=old.leaves | {leaf}, elems=old.elems, items=old.items, lazy=old.lazy, types=old.types
            )

    def captured(self, node: ast.AST) -> Value | None:
        """A closure's captured variables, as a container (the task reads them later)."""
        assigned = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        values = []
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id not in assigned:
                value = self.st.vars.get(child.id) if self.st is not None else None
                if value is not None and child.id != getattr(node, "name", None):
                    values.append(value)
        if not values:
            return None
        return container(join_all(values))

    # -- refinement ----------------------------------------------------------------------

    def refine(self, test: ast.expr, branch: bool) -> None:
        """Narrow the state to the paths where ``test`` has the given truth value."""
        if self.st is None:
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.refine(test.operand, not branch)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == branch:
            for operand in test.values:
                self.refine(operand, branch)
            return
        value = self.peek(test)
        if value.has_const and bool(value.const) != branch and not isinstance(value.const, str):
            self.st = None
            return
        if value.cond is not None:
            ids = value.cond.clean_if_true if branch else value.cond.clean_if_false
            if ids:
                self.st.vars = {k: clean(v, ids) for k, v in self.st.vars.items()}
                self.st.cleaned = self.st.cleaned | ids
                self.st.pending = frozenset(
                    replace(p, leaves=frozenset(l for l in p.leaves if l.base not in ids))
                    for p in self.st.pending
                )
        params = [leaf for leaf in value.leaves if isinstance(leaf, ParamRef) and leaf.path == ()]
        if len(params) == 1 and len(value.leaves) == 1:
            self.st.assume = self.st.assume | {(params[0].index, branch)}

    def peek(self, expr: ast.expr) -> Value:
        """Evaluate an expression already evaluated for its effects, without re-running them."""
        saved_findings, saved_pending = dict(self.findings), self.st.pending
        saved_vars = dict(self.st.vars)
        value = self.eval(expr)
        if self.st is not None:
            self.st.vars, self.st.pending = saved_vars, saved_pending
        self.findings = saved_findings
        return value

    # -- pending submissions -------------------------------------------------------------

    def commit(self, state: State, step: TraceStep | None) -> None:
        """The producer may advance now: every submission still pending is a race."""
        for pending in state.pending:
            for leaf in pending.leaves:
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
        """A container that kept borrowed views past their step is read: show the use (say the
        ``torch.cat`` that fuses them) at the end of the store's trace; the finding stays at
        the store."""
        name = holder.id if isinstance(holder, ast.Name) else None
        if name not in self.retained_in:
            return
        step = self.read_steps.setdefault(name, self.step(node, f"read back from `{name}` after the producer moved on"))
        for key in self.retained_in[name]:
            trace = self.findings.get(key)
            if trace and not trace[-1].note.startswith("read back"):
                self.findings[key] = trace + (step,)

    def with_read_back(self, reach: SinkReach) -> SinkReach:
        for name, step in self.read_steps.items():
            if (reach.rule, reach.site) in self.retained_in.get(name, ()) and reach.trace[-1:] != (step,):
                return replace(reach, trace=reach.trace + (step,))
        return reach

    def add_reach(self, reach: SinkReach) -> None:
        """A reach whose report site is known does not change how callers are analysed: it
        is propagated after the fixpoint (``Program.propagate_sited``), not in the summary."""
        (self.sited if reach.site is not None else self.sinks).add(reach)

    def report(self, site: Site, trace: tuple, rule: str = "BL001") -> None:
        key = (rule, site)
        old = self.findings.get(key)
        if old and old[-1].note.startswith("read back"):
            trace = trace + old[-1:]  # keep the later use found in an earlier loop round
        if shorter_trace(trace, old):
            self.findings[key] = trace

    def settle(self, value: Value) -> None:
        """Waiting on a future (``.result()``, ``await``, ``join``) makes its task synchronous."""
        keys = deep_pending(value)
        if self.st is not None and keys:
            self.st.pending = frozenset(p for p in self.st.pending if p.key not in keys)

    def add_pending(
        self,
        node: ast.AST,
        payload: Value,
        sink: str,
        assume: frozenset,
        subject: str = "",
        rule: str = "BL001",
        holder: tuple | None = None,
    ) -> Value:
        leaves = frozenset(deep_leaves(payload))
        if not leaves or self.st is None:
            return EMPTY
        key = (node.lineno, node.col_offset)
        note = STEP_NOTES[rule].format(sink=sink)
        step = self.step(node, note)
        pending = Pending(key, leaves, self.site(node, sink, subject), self.st.assume | assume, step, rule, holder)
        self.st.pending = self.st.pending | {pending}
        return Value(pending=frozenset({key}))

    # -- expressions ---------------------------------------------------------------------

    def eval(self, node: ast.expr | None) -> Value:
        if node is None or self.st is None:
            return EMPTY
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is not None:
            return method(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child)
        return EMPTY

    def expr_Constant(self, node: ast.Constant) -> Value:
        return const(node.value)

    def expr_Name(self, node: ast.Name) -> Value:
        value = self.st.vars.get(node.id)
        return value if value is not None else self.lookup(node.id)

    def lookup(self, name: str) -> Value:
        if name in self.info.local_defs:
            return Value(ref=self.info.local_defs[name])
        outer = self.info.outer
        while outer is not None:
            if name in outer.local_defs:
                return Value(ref=outer.local_defs[name])
            outer = outer.outer
        module = self.module
        if name in module.globals:
            return Value(ref=module.globals[name])
        if name in module.imports:
            qualname = self.program.index.canonical(module.imports[name])
            known, literal = self.program.index.constant(qualname)
            return Value(ref=qualname, const=literal, has_const=True) if known else Value(ref=qualname)
        if name in module.constants:
            return const(module.constants[name])
        if name in ("True", "False", "None"):
            return const({"True": True, "False": False, "None": None}[name])
        return Value(ref=f"builtins.{name}")

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.eval(node.value)
        if base.ref is not None and not base.leaves:
            qualname = self.program.index.canonical(f"{base.ref}.{node.attr}")
            known, literal = self.program.index.constant(qualname)
            return Value(ref=qualname, const=literal, has_const=True) if known else Value(ref=qualname)
        if node.attr in self.vocab.view_attributes:
            return view_of(base, self.step(node, f"`.{node.attr}` is a view of the borrowed value"))
        if node.attr in self.vocab.markers:
            return Value(cond=Cond(clean_if_false=identities(base)))
        return EMPTY

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        base = self.eval(node.value)
        if self.retained_in and isinstance(node.ctx, ast.Load):
            self.read_back(node.value, node)
        key = self.eval(node.slice)
        step = self.step(node, "indexed/sliced: a view of the borrowed value")
        if isinstance(node.slice, ast.Slice) or (isinstance(node.slice, ast.Tuple)):
            return join(view_of(base, step), container(base.elems, None) if base.elems or base.items else None)
        if key.has_const and isinstance(key.const, int) and not isinstance(key.const, bool):
            return index(base, key.const, step)
        return index(base, None, step)

    def expr_Tuple(self, node: ast.Tuple | ast.List | ast.Set) -> Value:
        values, starred = [], False
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                starred = True
                inner = self.eval(elt.value)
                self.materialize(node, inner, "[*...]")
                values.append(iterate(inner))
            else:
                values.append(self.eval(elt))
        if isinstance(node, ast.Tuple) and not starred:
            return container(None, tuple(values))
        return container(join_all(values))

    expr_List = expr_Tuple
    expr_Set = expr_Tuple

    def expr_Dict(self, node: ast.Dict) -> Value:
        values = []
        for key, value in zip(node.keys, node.values):
            if key is not None:
                self.eval(key)
                values.append(self.eval(value))
            else:
                values.append(index(self.eval(value), None))
        return container(join_all(values))

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        values = [self.eval(v) for v in node.values]
        conds = [v.cond or Cond() for v in values]
        if isinstance(node.op, ast.And):
            cond = Cond(frozenset().union(*(c.clean_if_true for c in conds)), frozenset.intersection(*(c.clean_if_false for c in conds)))
        else:
            cond = Cond(frozenset.intersection(*(c.clean_if_true for c in conds)), frozenset().union(*(c.clean_if_false for c in conds)))
        result = join_all(Value(leaves=v.leaves, elems=v.elems, items=v.items, lazy=v.lazy, types=v.types) for v in values)
        return Value(leaves=result.leaves, elems=result.elems, items=result.items, lazy=result.lazy, cond=cond)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        value = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            if value.has_const:
                return const(not value.const)
            return Value(cond=value.cond.negate() if value.cond else None)
        return EMPTY

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, ast.Add) and any(v.elems is not None or v.items is not None for v in (left, right)):
            return container(join(iterate(left), iterate(right)))
        return EMPTY

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.eval(node.left)
        rights = [self.eval(c) for c in node.comparators]
        if len(node.ops) == 1 and left.cond is not None and rights[0].has_const and isinstance(rights[0].const, bool):
            positive = isinstance(node.ops[0], (ast.Is, ast.Eq)) == rights[0].const
            return Value(cond=left.cond if positive else left.cond.negate())
        return EMPTY

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        self.eval(node.test)
        before = self.st
        self.st = before.copy()
        self.refine(node.test, True)
        body = self.eval(node.body) if self.st is not None else None
        then_state = self.st
        self.st = before.copy()
        self.refine(node.test, False)
        orelse = self.eval(node.orelse) if self.st is not None else None
        self.st = join_states(then_state, self.st) or before
        return join(body, orelse) or EMPTY

    def expr_NamedExpr(self, node: ast.NamedExpr) -> Value:
        value = self.eval(node.value)
        self.assign(node.target, value, node)
        return value

    def expr_Lambda(self, node: ast.Lambda) -> Value:
        captured = self.captured(node)
        return captured or EMPTY

    def expr_Await(self, node: ast.Await) -> Value:
        value = self.eval(node.value)
        self.settle(value)
        return EMPTY

    def expr_Yield(self, node: ast.Yield) -> Value:
        value = self.eval(node.value) if node.value is not None else EMPTY
        self.hand_back_stale(node.value, value, node)
        self.add_yield(value, node)
        return EMPTY

    def expr_YieldFrom(self, node: ast.YieldFrom) -> Value:
        value = self.eval(node.value)
        self.add_yield(iterate(value), node)
        return EMPTY

    def hand_back_stale(self, expr: ast.expr | None, value: Value, stmt: ast.AST) -> None:
        """``return last`` after ``for ...: last = w``: the caller gets a view whose buffer the
        producer has refilled since (BL003 at the return)."""
        if expr is None or self.st is None or not self.st.stale:
            return
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} & self.st.stale
        if names:
            held = join_all(self.st.vars.get(name) for name in names)
            self.add_pending(stmt, held, f"{sorted(names)[0]} (after its loop moved on)", frozenset(), rule="BL003")

    def add_yield(self, value: Value, node: ast.AST) -> None:
        step = self.step(node, "yielded to the caller")
        value = map_leaves(value, lambda leaf: leaf.with_trace(leaf.trace + (step,)))
        self.yields = join(self.yields, value)
        if self.st is not None:
            self.commit(self.st, step)
            self.st.pending = frozenset()

    def comprehension(self, node, elt_nodes) -> list[Value]:
        outer = self.st
        self.st = outer.copy()
        for gen in node.generators:
            iterable = self.eval(gen.iter)
            self.assign(gen.target, iterate(iterable, self.step(gen.iter, f"element taken by `for {_short(gen.target)} in ...`")), node)
            for cond in gen.ifs:
                self.eval(cond)
                self.refine(cond, True)
                if self.st is None:
                    self.st = outer
                    return [EMPTY for _ in elt_nodes]
        values = [self.eval(e) for e in elt_nodes]
        inner = self.st
        self.st = outer
        if inner is not None:
            self.st.pending = self.st.pending | inner.pending
        return values

    def expr_ListComp(self, node) -> Value:
        return container(self.comprehension(node, [node.elt])[0])

    expr_SetComp = expr_ListComp

    def expr_GeneratorExp(self, node) -> Value:
        return container(self.comprehension(node, [node.elt])[0], lazy=True)

    def expr_DictComp(self, node) -> Value:
        return container(self.comprehension(node, [node.key, node.value])[1])

    def expr_Starred(self, node: ast.Starred) -> Value:
        return iterate(self.eval(node.value))

    # -- calls ---------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call) -> Value:
        from bufferlint.analysis.calls import evaluate_call

        return evaluate_call(self, node)


def _is_slice(key: ast.expr) -> bool:
    return isinstance(key, ast.Slice) or (isinstance(key, ast.Tuple) and any(isinstance(e, ast.Slice) for e in key.elts))


def _annotations(node: ast.AST) -> dict[str, ast.expr]:
    args = getattr(node, "args", None)
    if not isinstance(args, ast.arguments):
        return {}
    every = args.posonlyargs + args.args + args.kwonlyargs
    return {a.arg: a.annotation for a in every if a.annotation is not None}


def _root_name(node: ast.AST) -> str | None:
    """The variable at the root of ``a.b[c].d`` or ``a.setdefault(k, {})[...]``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def _assigned_names(stmts: list) -> set[str]:
    names = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def _short(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Tuple):
        return ", ".join(_short(e) for e in node.elts)
    return dotted_name(node) or "..."
