"""Flow-sensitive abstract interpretation of one function over its control-flow graph.

The graph (``cfg.py``) is built once per function. A worklist visits its blocks in reverse
postorder, carrying a ``State`` (what each local may hold, which submissions are still
pending, which objects a guard proved unborrowed on this path) into each block, running the
block's operations, and joining the result into every successor (refined by the truth of
the branch test on that edge). It stops when no block's entry state changes.

The result is the function's ``Summary`` (in terms of its parameters) and the concrete
findings for borrowed values that are in hand here.
"""

from __future__ import annotations

import ast
import heapq
from dataclasses import dataclass, replace

from bufferlint.analysis.transfer import call_effects

from bufferlint.analysis.flow import cfg
from bufferlint.analysis.transfer.effects import EffectsMixin
from bufferlint.analysis.transfer.expressions import ExpressionsMixin
from bufferlint.analysis.frontend.index import FunctionInfo, dotted_expr, dotted_name, import_bindings
from bufferlint.analysis.domain.state import Pending, State, is_stand_in, join_into, parameter_key
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, FieldStore, SinkReach, Site, Summary, keep_best
from bufferlint.analysis.frontend.syntax import annotations_of, assigned_names, holder_name, is_slice, short
from bufferlint.analysis.domain.values import (
    EMPTY,
    advances_producer,
    Borrow,
    Cond,
    ParamRef,
    Value,
    clean,
    clear_leaf,
    const,
    container,
    deep_leaves,
    deep_pending,
    fact_tags,
    index,
    iterate,
    join,
)
from bufferlint.findings import TraceStep

# Visits of one block before the fixpoint is declared not reached. The lattice is finite
# (paths and nesting are capped), so this is a guard against engine bugs, and hitting it is
# reported to the user (``Outcome.caps``).
MAX_BLOCK_VISITS = 64


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
    caps: list  # analysis limits hit (each a sentence for the user)


def graph_of(info: FunctionInfo) -> cfg.Graph:
    graph = getattr(info, "_graph", None)
    if graph is None:
        graph = cfg.build(info.node)
        info._graph = graph
    return graph


def _key(node: ast.AST) -> tuple:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), type(node).__name__)


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
        self.sinks: dict[SinkReach, SinkReach] = {}  # each reach once, with its best trace
        self.findings: dict = {}
        self.callees: set[str] = set()
        self.used_as_guard: set[str] = set()
        self.demands: set = set()
        self.sited: dict[SinkReach, SinkReach] = {}
        self.exit_synced: list[bool] = []
        self.exit_settled: list[frozenset] = []  # per exit: parameters whose futures were waited for
        self.stood_in: frozenset = frozenset()  # parameters with a stand-in for their futures
        self.retained_in: dict[str, set] = {}  # container -> BL003 findings of views kept in it
        self.read_steps: dict[str, TraceStep] = {}  # container -> where it is read back later
        self.edges: list = []
        self.futures: set[Pending] = set()  # submissions still running when their future is returned
        self.field_stores: dict = {}  # FieldStore: parameters this method keeps in self.<attr>
        self.released: set = set()  # (".attr", key): receiver containers this method empties
        self.advanced = False  # an ``advances`` call (or a callee's) may run: ``Summary.advances``
        self.caps: list[str] = []
        self.st: State | None = State()
        self.op: cfg.Op | None = None
        self.recorded: dict[int, Value] | None = None  # values of evaluated nodes, when asked
        self.advancing: dict[tuple, bool] = {}  # loop -> may advance a producer
        self.settled_each: dict[tuple, frozenset] = {}  # for loop -> futures pending on a back edge
        self.with_contexts: dict[tuple, str] = {}  # (with, item) -> `within` context it opens

    # -- entry -----------------------------------------------------------------------

    def run(self) -> Outcome:
        node = self.info.node
        state = State()
        annotations = annotations_of(node)
        stand_ins = []
        for i, name in enumerate(self.info.params):
            key = parameter_key(i)
            value = Value(
                leaves=frozenset({ParamRef(i)}), declared=self.declared_types(annotations.get(name)), pending=frozenset({key})
            )
            if i == 0 and self.info.binds_receiver and self.info.class_qualname:
                value = Value(leaves=value.leaves, types=frozenset({self.info.class_qualname}))
            else:
                stand_ins.append(Pending(key, frozenset(), None, frozenset(), None))
            state.vars[name] = value
        state.pending = frozenset(stand_ins)
        self.stood_in = frozenset(p.key[1] for p in stand_ins)
        self.solve(graph_of(self.info), state)
        self.add_read_backs()
        returns = self.returns or EMPTY
        if self.info.is_generator:
            returns = Value(lazy=True, elems=self.yields)
        summary = Summary(
            returns=returns,
            sinks=frozenset(self.sinks),
            guards=self._proven(self.truthy_returns),
            marker_checks=self._proven(self.falsy_returns) if self.truthy_returns else frozenset(),
            synchronizes=bool(self.exit_synced) and all(self.exit_synced),
            futures=frozenset(self.futures),
            settles=frozenset.intersection(*self.exit_settled) if self.exit_settled else frozenset(),
            field_stores=frozenset(self.field_stores),
            releases=frozenset(self.released),
            advances=self.advanced,
        )
        if summary == EMPTY_SUMMARY:
            summary = EMPTY_SUMMARY
        return Outcome(
            summary, self.findings, self.callees, self.used_as_guard, self.demands, set(self.sited), self.edges, self.caps
        )

    def solve(self, graph: cfg.Graph, entry_state: State) -> None:
        """The worklist: visit blocks in reverse postorder until no entry state changes."""
        order = graph.order
        entry_states: dict[int, State] = {graph.entry: entry_state}
        visits: dict[int, int] = {}
        queue = [(order.get(graph.entry, 0), graph.entry)]
        queued = {graph.entry}
        while queue:
            _, block_id = heapq.heappop(queue)
            queued.discard(block_id)
            visits[block_id] = visits.get(block_id, 0) + 1
            block = graph.blocks[block_id]
            if visits[block_id] > MAX_BLOCK_VISITS:
                self.caps.append(
                    f"{self.info.display}: the fixpoint at line {self._block_line(block)} was not reached after "
                    f"{MAX_BLOCK_VISITS} visits; results for this function may be incomplete"
                )
                break
            self.st = entry_states[block_id].copy()
            self.recorded = None
            for op in block.ops:
                if self.st is None:
                    break
                self.op = op
                self.exec_op(op)
            out, tested = self.st, self.recorded
            self.recorded = None
            for edge in block.succs:
                if out is None:
                    continue
                state = out  # joining makes a new state; only a refinement needs a copy first
                if edge.test is not None:
                    state = out.copy()
                    self.st = state
                    self.refine(edge.test, edge.truth, tested or {})
                    state = self.st
                if state is None:
                    continue
                old = entry_states.get(edge.target)
                # Entry states are never changed in place (a visit works on a copy), so the
                # first one can be this block's own final state.
                new, changed = (state, True) if old is None else join_into(old, state)
                if changed:
                    entry_states[edge.target] = new
                    if edge.target not in queued and edge.target in order:
                        queued.add(edge.target)
                        heapq.heappush(queue, (order[edge.target], edge.target))
        self.st = None
        self.op = None

    @staticmethod
    def _block_line(block: cfg.Block) -> int:
        for op in block.ops:
            return getattr(op.node, "lineno", 0)
        return 0

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
        """(parameter, tag): the parameters every one of these paths proved unborrowed, with
        the kind each check was for."""
        if not cleaned_sets:
            return frozenset()
        common = frozenset.intersection(*cleaned_sets)
        return frozenset((i[1], tag) for i, tag in common if i[0] == "p" and i[2] == ())

    # -- positions and trace steps -----------------------------------------------------

    def step(self, node: ast.AST, note: str) -> TraceStep:
        return TraceStep(self.module.path, getattr(node, "lineno", 1), note)

    def site(self, node: ast.AST, sink: str, subject: str = "") -> Site:
        return Site(self.program.span(self.module, node), self.info.display, sink, subject)

    # -- the loops and contexts around the current operation ----------------------------

    @property
    def loop_assigned(self) -> list[set[str] | None]:
        """Names each enclosing loop that may advance a producer (re)binds in its body."""
        out: list[set[str] | None] = []
        for loop in self.op.loops if self.op is not None else ():
            if not self.advancing.get(_key(loop), False):
                out.append(None)
                continue
            out.append(self.assigned_in(loop))
        return out

    def assigned_in(self, loop: ast.AST) -> set[str]:
        """Names a loop body (re)binds; kept with the function (its tree does not change)."""
        cache = getattr(self.info, "_loop_names", None)
        if cache is None:
            cache = self.info._loop_names = {}
        names = cache.get(id(loop))
        if names is None:
            names = cache[id(loop)] = assigned_names(loop.body)
        return names

    @property
    def contexts(self) -> frozenset:
        """The ``within`` contexts (CUDA streams) open around the current operation."""
        if self.op is None or not self.op.withs:
            return frozenset()
        found = (self.with_contexts.get((_key(w), i)) for w, i in self.op.withs)
        return frozenset(c for c in found if c)

    # -- operations ----------------------------------------------------------------------

    def exec_op(self, op: cfg.Op) -> None:
        getattr(self, "op_" + op.kind)(op)

    def op_stmt(self, op: cfg.Op) -> None:
        node = op.node
        if isinstance(node, ast.expr):  # a match subject: evaluated once, read by each case
            self.st.vars[f"<subject:{_key(node)}>"] = self.eval(node)
            return
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is not None:
            method(node)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child)

    def op_test(self, op: cfg.Op) -> None:
        self.recorded = {}
        self.eval(op.node)
        if self.st is not None:
            for part in truth_tested(op.node):
                value = self.recorded.get(id(part))
                if value is not None and value.leaves:  # the note is written only for a value that may be read
                    text = ast.unparse(part)
                    self.read_host(part, value, f"bool({text if len(text) <= 60 else short(part)})")

    def op_iter(self, op: cfg.Op) -> None:
        stmt = op.node
        iterable = self.eval(stmt.iter)
        if self.st is None:
            return
        self.st.vars[f"<iter:{_key(stmt)}>"] = iterable
        advances = advances_producer(iterable)
        key = _key(stmt)
        self.advancing[key] = self.advancing.get(key, False) or advances

    def op_bind(self, op: cfg.Op) -> None:
        stmt = op.node
        iterable = self.st.vars.get(f"<iter:{_key(stmt)}>", EMPTY)
        element = iterate(iterable, self.step(stmt, f"element taken by `for {short(stmt.target)} in ...`"))
        self.refresh(element)
        self.assign(stmt.target, element, stmt)

    def op_advance(self, op: cfg.Op) -> None:
        """The back edge: an advancing loop's producer hands out the next element now."""
        stmt = op.node
        key = _key(stmt)
        if isinstance(stmt, ast.While):
            self.advancing[key] = True
        if self.advancing.get(key) and self.st.pending:
            self.commit(self.st, self.step(stmt, "the loop advances to its next iteration"))
            self.st.pending = frozenset(p for p in self.st.pending if is_stand_in(p))
        if not isinstance(stmt, ast.While):
            keys = frozenset(p.key for p in self.st.pending)
            self.settled_each[key] = self.settled_each.get(key, frozenset()) | keys

    def op_exhausted(self, op: cfg.Op) -> None:
        """``for f in futures: f.result()``: what every iteration settled is settled once the
        iterator runs out; merely iterating (printing the futures) settles nothing."""
        stmt = op.node
        key = _key(stmt)
        elements = deep_pending(iterate(self.st.vars.get(f"<iter:{key}>", EMPTY)))
        settled = elements - self.settled_each.get(key, frozenset())
        if settled:
            self.st.pending = frozenset(p for p in self.st.pending if p.key not in settled)

    def op_loop_exit(self, op: cfg.Op) -> None:
        """Leaving a loop over a producer: views kept from its iterations are stale."""
        stmt = op.node
        if not isinstance(stmt, (ast.For, ast.AsyncFor)) or not self.advancing.get(_key(stmt)):
            return
        targets = assigned_names([stmt.target])
        stale = {
            name
            for name in self.assigned_in(stmt) - targets
            if any(
                isinstance(leaf, Borrow) or "iter" in getattr(leaf, "path", ())
                for leaf in deep_leaves(self.st.vars.get(name))
            )
        }
        if stale:
            self.st.stale = self.st.stale | frozenset(stale)

    def op_with_enter(self, op: cfg.Op) -> None:
        from bufferlint.analysis.transfer.calls import shape_of

        stmt, i = op.node, op.extra
        item = stmt.items[i]
        saved, self.recorded = self.recorded, {}
        value = self.eval(item.context_expr)
        recorded, self.recorded = self.recorded, saved
        if self.st is None:
            return
        shape = shape_of(self, item.context_expr, recorded)
        context = self.vocab.context_of(shape) if shape is not None else None
        if context:
            self.with_contexts[(_key(stmt), i)] = context
        self.st.vars[f"<with:{_key(stmt)}:{i}>"] = value
        if item.optional_vars is not None:
            self.assign(item.optional_vars, value, stmt)

    def op_with_exit(self, op: cfg.Op) -> None:
        """``__exit__``: an executor used as a context manager waits for all its tasks."""
        value = self.st.vars.get(f"<with:{_key(op.node)}:{op.extra}>")
        if value is not None:
            self.settle_owned_by(value)

    def op_return(self, op: cfg.Op) -> None:
        stmt = op.node
        value = self.eval(stmt.value) if stmt.value is not None else const(None)
        if self.st is None:
            return
        self.hand_back_stale(stmt.value, value, stmt)
        self.returns = join(self.returns, self.landed(value))
        truthy = not (value.has_const and not value.const)
        falsy = not (value.has_const and value.const)
        cond = value.cond or Cond()
        if truthy:
            self.truthy_returns.append(self.st.cleaned | cond.clean_if_true)
        if falsy:
            self.falsy_returns.append(self.st.cleaned | cond.clean_if_false)
        self.st.vars["<return>"] = value

    def op_exit(self, op: cfg.Op) -> None:
        """The function ends: work whose future is returned goes to the caller (who may wait
        for it); everything else still pending races with the caller's producer."""
        node = op.node
        if isinstance(node, ast.Module):
            self.commit(self.st, None)
            return
        if not isinstance(node, ast.Return):
            self.falsy_returns.append(self.st.cleaned)
        self.exit_synced.append(self.st.synced)
        waiting = {p.key[1] for p in self.st.pending if is_stand_in(p)}
        self.exit_settled.append(self.stood_in - waiting)
        returned = deep_pending(self.st.vars.get("<return>")) if isinstance(node, ast.Return) else frozenset()
        receiver = self.receiver_name
        handed = frozenset(
            p for p in self.st.pending
            if not is_stand_in(p) and (
                p.key in returned
                # Views kept in the receiver's containers: the caller's object keeps them, and
                # another method may empty them before the caller's producer advances.
                or (receiver and p.rule == "BL003" and p.holder and p.holder[0].startswith(receiver + "."))
            )
        )
        self.futures |= handed
        self.st.pending = self.st.pending - handed
        self.commit(self.st, self.step(node, "function returns"))

    def op_raise(self, op: cfg.Op) -> None:
        if op.node.exc is not None:
            self.eval(op.node.exc)

    def op_handler(self, op: cfg.Op) -> None:
        if op.node.name:
            self.st.vars[op.node.name] = EMPTY

    def op_match_case(self, op: cfg.Op) -> None:
        subject = self.st.vars.get(f"<subject:{_key(op.extra)}>", EMPTY)
        self.bind_pattern(op.node.pattern, subject, op.node)

    # -- what calls do besides their value -------------------------------------------------

    def apply(self, effect) -> None:
        """Apply one record a call handler returned (``call_effects``) to the state and facts."""
        APPLY[type(effect)](self, effect)

    def _record(self, effect: call_effects.Record) -> None:
        if effect.kind == "callee":
            self.callees.add(effect.item)
        elif effect.kind == "demand":
            self.demands.add(effect.item)
        elif effect.kind == "guard-use":
            self.used_as_guard.add(effect.item)
        else:
            self.edges.append(effect.item)

    def _keep_in_field(self, effect: call_effects.KeepInField) -> None:
        for leaf in deep_leaves(effect.value):
            if isinstance(leaf, Borrow):
                kept = Value(leaves=frozenset({leaf}))
                self.program.store_field(effect.owner, effect.attr, container(kept) if effect.element else kept)
            else:  # a parameter of this function: its callers decide
                keep_best(self.field_stores, FieldStore(effect.owner, effect.attr, leaf.index, leaf.path, effect.element, leaf.trace))

    def _adopt(self, effect: call_effects.Adopt) -> None:
        if self.st is not None:
            self.st.pending = self.st.pending | {effect.pending}

    # -- simple statements ----------------------------------------------------------------

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
        adds = value.elems is not None or value.items is not None
        if isinstance(stmt.target, ast.Name) and adds:
            if self.outlives_step(stmt.target):  # `kept += [w]`, `kept |= {name: w}`
                self.retain(stmt, index(value, None), stmt.target.id, (stmt.target.id, None))
            old = self.st.vars.get(stmt.target.id, EMPTY)
            grown = container(join(old.elems, iterate(value)), lazy=old.lazy)
            self.st.vars[stmt.target.id] = replace(grown, collection=old.collection)
        elif isinstance(stmt.target, (ast.Attribute, ast.Subscript)) and adds:
            self.eval(stmt.target)  # `holder.kept += [w]`, `groups[k] += [w]`
            if self.outlives_step(stmt.target.value, attribute=isinstance(stmt.target, ast.Attribute)):
                text = ast.unparse(stmt.target)
                self.retain(stmt, index(value, None), text, (holder_name(stmt.target), None))
        else:
            self.eval(stmt.target)

    def stmt_Delete(self, stmt: ast.Delete) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                self.st.vars.pop(target.id, None)
                self.release(target.id, None)
            elif isinstance(target, ast.Subscript) and holder_name(target.value):
                self.release(holder_name(target.value), ast.unparse(target.slice))
            else:
                self.eval(target)

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        saved, self.recorded = self.recorded, {}
        self.eval(stmt.test)
        recorded, self.recorded = self.recorded, saved
        self.refine(stmt.test, True, recorded)

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
            if target.id in self.declared_globals:  # `global CACHE; CACHE = w`: module state
                self.retain(stmt, value, target.id, (target.id, None))
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self.assign(elt.value, container(index(value, None)), stmt)
                else:
                    self.assign(elt, index(value, None if starred else i), stmt)
        elif isinstance(target, ast.Subscript):
            holder = self.eval(target.value)
            if self.st is None:
                return
            if self.is_array(target.value, holder) or (is_slice(target.slice) and not holder.collection):
                self.eval(target.slice)  # `t[a:b] = w`, `param.data[i] = w` copy w into t's own storage
                return
            self.store_into(target.value, value, stmt, target.slice, holder)
            self.eval(target.slice)
        elif isinstance(target, ast.Attribute):
            self.eval(target.value)
            if target.attr in self.vocab.markers:
                self.mark(target.value, stmt, self.vocab.marker_kind(target.attr))
                return
            if self.outlives_step(target.value, attribute=True):
                self.retain(stmt, value, f"{short(target.value)}.{target.attr}", None)
            self.keep_in_field(target, value, stmt, element=False)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, stmt)

    def store_into(
        self,
        container_expr: ast.expr,
        value: Value,
        stmt: ast.AST,
        key: ast.expr | None = None,
        holder: Value | None = None,
    ) -> None:
        """``c[k] = v`` (or ``c.append(v)``): the container may now hold ``v``; if the
        container outlives the producer's step, the borrowed value is retained (BL003)."""
        if self.st is not None and self.outlives_step(self.home_of(container_expr)):
            key_text = ast.unparse(key) if key is not None else None
            self.retain(stmt, value, short(container_expr), (holder_name(container_expr), key_text))
        if isinstance(container_expr, ast.Name) and self.st is not None:
            old = self.st.vars.get(container_expr.id)
            if old is None:
                old = self.lookup(container_expr.id)
            grown = join(old, container(value))
            self.st.vars[container_expr.id] = grown if grown.collection == old.collection else replace(grown, collection=old.collection)
        elif holder is None:
            self.eval(container_expr)
        if isinstance(container_expr, ast.Attribute):
            self.keep_in_field(container_expr, value, stmt, element=True)

    def keep_in_field(self, target: ast.Attribute, value: Value, stmt: ast.AST, element: bool) -> None:
        """``self.attr = v`` / ``self.attr[k] = v`` in a method: the object keeps ``v`` where
        the class's other methods read it (the project-wide heap, ``Program.store_field``)."""
        info = self.info
        if not (
            info.binds_receiver and info.class_qualname and info.params
            and isinstance(target.value, ast.Name) and target.value.id == info.params[0]
        ):
            return
        step = self.step(stmt, f"kept in `self.{target.attr}`")
        for leaf in deep_leaves(value):
            if isinstance(leaf, Borrow):
                kept = Value(leaves=frozenset({leaf.with_trace(leaf.trace + (step,))}))
                self.program.store_field(info.class_qualname, target.attr, container(kept) if element else kept)
            elif (info.qualname, leaf.index) in self.program.hot:
                keep_best(
                    self.field_stores,
                    FieldStore(info.class_qualname, target.attr, leaf.index, leaf.path, element, leaf.trace + (step,)),
                )

    def home_of(self, container_expr: ast.expr) -> ast.expr:
        """The container a local alias lives in: ``inner = groups.setdefault(k, {})`` stores
        into ``groups``."""
        if isinstance(container_expr, ast.Name) and self.st is not None:
            part_of = self.st.vars.get(container_expr.id, EMPTY).part_of
            if part_of:
                return dotted_expr(part_of)
        return container_expr

    # -- refinement ----------------------------------------------------------------------

    def refine(self, test: ast.expr, branch: bool, values: dict[int, Value]) -> None:
        """Narrow the state to the paths where ``test`` has the given truth value, using the
        values its parts evaluated to (``values``: recorded when the test ran)."""
        if self.st is None:
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.refine(test.operand, not branch, values)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == branch:
            for operand in test.values:
                self.refine(operand, branch, values)
            return
        value = values.get(id(test))
        if value is None:
            return
        if value.has_const and bool(value.const) != branch and not isinstance(value.const, str):
            self.st = None
            return
        if value.cond is not None:
            facts = value.cond.clean_if_true if branch else value.cond.clean_if_false
            if facts:
                self.st.vars = {k: clean(v, facts) for k, v in self.st.vars.items()}
                self.st.cleaned = self.st.cleaned | facts
                tags = fact_tags(facts)
                self.st.pending = frozenset(
                    replace(p, leaves=frozenset(filter(None, (clear_leaf(leaf, tags.get(leaf.base)) for leaf in p.leaves))))
                    for p in self.st.pending
                )
        params = [leaf for leaf in value.leaves if isinstance(leaf, ParamRef) and leaf.path == ()]
        if len(params) == 1 and len(value.leaves) == 1:
            self.st.assume = self.st.assume | {(params[0].index, branch)}


def truth_tested(test: ast.expr) -> list[ast.expr]:
    """The expressions whose truth a branch test takes (``bool(t)`` reads a tensor's bytes):
    the test itself, through ``not`` and the operands of ``and`` / ``or``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return truth_tested(test.operand)
    if isinstance(test, ast.BoolOp):
        return [part for operand in test.values for part in truth_tested(operand)]
    return [test]


APPLY = {
    call_effects.Settle: lambda it, e: it.settle(e.value),
    call_effects.Drain: lambda it, e: it.settle_owned_by(e.executor),
    call_effects.Synchronize: lambda it, e: it.synchronize(),
    call_effects.Issue: lambda it, e: it.issue(e.value),
    call_effects.Advance: lambda it, e: it.advance(e.node, e.what),
    call_effects.UseAfterRefill: lambda it, e: it.use_after_refill(e.node, e.value, e.what),
    call_effects.HostRead: lambda it, e: it.read_host(e.node, e.value, e.what),
    call_effects.Submit: lambda it, e: it.add_pending(
        e.node, e.payload, e.sink, e.assume, e.subject, rule=e.rule, owners=e.owners
    ),
    call_effects.Adopt: FunctionInterpreter._adopt,
    call_effects.KeepInField: FunctionInterpreter._keep_in_field,
    call_effects.Store: lambda it, e: it.store_into(e.container, e.value, e.node),
    call_effects.Retain: lambda it, e: it.retain(e.node, e.value, e.holder_text, None),
    call_effects.Release: lambda it, e: it.release(e.name, e.key),
    call_effects.ReadBack: lambda it, e: it.read_back(e.container, e.node),
    call_effects.Materialize: lambda it, e: it.materialize(e.node, e.value, e.what, rule=e.rule, note=e.note),
    call_effects.Mark: lambda it, e: it.mark(e.target, e.node, e.kind),
    call_effects.Report: lambda it, e: it.report(e.site, e.trace, e.rule),
    call_effects.Reach: lambda it, e: it.add_reach(e.reach),
    call_effects.Record: FunctionInterpreter._record,
}
