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
from dataclasses import dataclass, replace

from bufferlint.analysis.effects import EffectsMixin
from bufferlint.analysis.expressions import ExpressionsMixin
from bufferlint.analysis.index import FunctionInfo, dotted_name, import_bindings
from bufferlint.analysis.state import State, join_states
from bufferlint.analysis.syntax import annotations_of, assigned_names, is_slice, root_name, short
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
    index,
    iterate,
    join,
)
from bufferlint.findings import TraceStep

MAX_LOOP_ROUNDS = 12



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


class FunctionInterpreter(ExpressionsMixin, EffectsMixin):
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
        annotations = annotations_of(node)
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
            if self.outlives_step(stmt.target):  # `kept += [w]`, `kept |= {name: w}`
                self.retain(stmt, index(value, None), stmt.target.id, (stmt.target.id, None))
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
            elif isinstance(target, ast.Subscript) and root_name(target.value):
                self.release(root_name(target.value), ast.unparse(target.slice))
            else:
                self.eval(target)

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        self.refine(stmt.test, True)

    def stmt_Import(self, stmt: ast.AST) -> None:

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
        element = iterate(iterable, self.step(stmt, f"element taken by `for {short(stmt.target)} in ...`"))
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
        self.loop_assigned.append(assigned_names(stmt.body) if advances else None)
        try:
            self._loop(stmt, bind, test, advances)
        finally:
            self.loop_assigned.pop()
        if self.st is not None and advances and isinstance(stmt, (ast.For, ast.AsyncFor)):
            targets = assigned_names([stmt.target])
            stale = {
                name
                for name in assigned_names(stmt.body) - targets
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
        elif isinstance(target, ast.Subscript) and (is_slice(target.slice) or self.is_tensor(target.value)):
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
                self.retain(stmt, value, f"{short(target.value)}.{target.attr}", None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, stmt)

    def store_into(self, container_expr: ast.expr, value: Value, stmt: ast.AST, key: ast.expr | None = None) -> None:
        """``c[k] = v`` (or ``c.append(v)``): the container may now hold ``v``; if the
        container outlives the producer's step, the borrowed value is retained (BL003)."""
        if self.st is not None and self.outlives_step(container_expr):
            key_text = ast.unparse(key) if key is not None else None
            self.retain(stmt, value, short(container_expr), (root_name(container_expr), key_text))
        if isinstance(container_expr, ast.Name) and self.st is not None:
            old = self.st.vars.get(container_expr.id)
            if old is None:
                old = self.lookup(container_expr.id)
            self.st.vars[container_expr.id] = join(old, container(value))
        else:
            self.eval(container_expr)


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


    # -- expressions ---------------------------------------------------------------------


    # -- calls ---------------------------------------------------------------------------


