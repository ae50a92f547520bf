"""Flow-sensitive abstract interpretation of one function over its control-flow graph.

The graph (``cfg.py``) is built once per function. A worklist visits its blocks in reverse
postorder, carrying a ``State`` (what each local may hold, which submissions are still
pending, which objects a guard proved unborrowed on this path) into each block, running the
block's operations, and joining the result into every successor (refined by the truth of
the branch test on that edge). It stops when no block's entry state changes.

The interpreter owns the worklist, the operations and the statements; the parts it is built
from each have one job: ``ExpressionEvaluator`` (expressions, with ``Assignment`` and the
``CallResolver``), ``Effects`` (pending work and its settlement), ``Stores`` (stores and
retention). They share the position (``Frame``) and write what they find to one
``FunctionFacts``, whose ``outcome`` is the function's ``Summary`` (in terms of its
parameters) and the concrete findings for borrowed values that are in hand here.
"""

from __future__ import annotations

import ast
import heapq
import weakref
from collections.abc import Callable
from typing import Any, cast

from bufferlint.analysis.domain.limits import Limit, function_lines
from bufferlint.analysis.domain.state import Pending, State, field_key, is_stand_in, join_into, parameter_key
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, Summary, widened
from bufferlint.analysis.domain.values import (
    EMPTY,
    MAX_PATH,
    Borrow,
    Cond,
    ParamRef,
    Value,
    advances_producer,
    const,
    deep_leaves,
    deep_pending,
    evolve,
    iterate,
    join,
    program_memory,
    waits_when_exhausted,
)
from bufferlint.analysis.flow import cfg
from bufferlint.analysis.frontend.index import FunctionInfo, generator_context, import_bindings
from bufferlint.analysis.frontend.syntax import (
    annotations_of, assigned_names, holder_name, parameter_defaults, short, walk,
)
from bufferlint.analysis.transfer import call_effects, chosen
from bufferlint.analysis.transfer.call_packs import queried_stream, shape_of, stream_work
from bufferlint.analysis.transfer.effects import HANDED_BACK, Effects, refills_not_taken
from bufferlint.analysis.transfer.exit_callbacks import exit_calls
from bufferlint.analysis.transfer.expressions import ExpressionEvaluator
from bufferlint.analysis.transfer.facts import FunctionFacts, Outcome
from bufferlint.analysis.transfer.frame import Frame, node_key
from bufferlint.analysis.transfer.guard_inline import InlineChecks
from bufferlint.analysis.transfer.guard_judge import judge
from bufferlint.analysis.transfer.records import followed_fields
from bufferlint.analysis.transfer.refine import assume_clean, refine, truth_tested
from bufferlint.analysis.transfer.stores import Stores
from bufferlint.analysis.world import ProjectView
from bufferlint.hazards import Hazard

# Visits of one block before the fixpoint is declared not reached. The lattice is finite
# (paths and nesting are capped), so this is a guard against engine bugs, and hitting it is
# reported to the user (``Outcome.caps``).
MAX_BLOCK_VISITS = 64


class FunctionInterpreter:
    """Runs the worklist over one function's graph and each operation's transfer."""

    def __init__(self, info: FunctionInfo, program: ProjectView) -> None:
        self.info = info
        self.program = program
        self.frame = frame = Frame(info, program)
        self.facts = facts = FunctionFacts(info.display, function_lines(info))
        self.effects = effects = Effects(frame, facts)
        self.stores = stores = Stores(frame, facts, effects)
        self.evaluator = evaluator = ExpressionEvaluator(frame, facts, effects, stores, self.apply)
        self.assignment = evaluator.assignment
        self.eval = evaluator.eval
        self.settled_each: dict[tuple, frozenset] = {}  # for loop -> futures pending on a back edge
        # A match subject's parts' values at its last run, by id(subject); each case's subject, by id(case)
        self.subject_parts: dict[int, dict[int, Value]] = {}
        self.case_subjects: dict[int, ast.expr] = {}
        self.returning: ast.Return | None = None  # the last ``return`` run: the ``with`` exits after it are its
        self.inline = InlineChecks(frame, facts.caps)

    # -- entry -----------------------------------------------------------------------

    def run(self) -> Outcome:
        try:
            self.solve(self.frame.tables.graph, self.entry_state())
            self.effects.carried_over()
            self.facts.evaluated = judge(self.frame)
            outcome = self.facts.outcome(self.info.is_generator, followed_fields(self.frame.program, self.info.qualname))
            if widened(outcome.summary):  # a limit hit, reported as MAX_BLOCK_VISITS is
                outcome.caps.append(Limit(
                    f"{self.info.display}: an access path into a parameter is longer than {MAX_PATH} steps and "
                    f"was widened to its first {MAX_PATH}; findings through it may be less precise",
                    if_reported=True,  # widening adds paths, never drops one: it can only add findings
                    where=self.facts.where,
                ))
            return outcome
        finally:
            self.evaluator.unlink()

    def entry_state(self) -> State:
        """Each parameter holds itself (``ParamRef``), and a stand-in for its futures."""
        info = self.info
        state = State()
        annotations = annotations_of(info.node)
        stand_ins: list[Pending] = []
        for i, name in enumerate(info.params):
            key = parameter_key(i)
            declared = self.evaluator.declared_types(annotations.get(name))
            value = Value(leaves=frozenset({ParamRef(i)}), declared=declared, pending=frozenset({key}), param=i)
            if i == 0 and info.binds_receiver and info.class_qualname:
                value = Value(leaves=value.leaves, types=frozenset({info.class_qualname}), param=i)
                stand_ins.extend(
                    Pending(field_key(attr), frozenset(), None, frozenset(), None, stored_in=frozenset({f"{name}.{attr}"}))  # type: ignore[arg-type]
                    for attr in self.waited_fields()
                )
            else:
                stand_ins.append(Pending(key, frozenset(), None, frozenset(), None))  # type: ignore[arg-type]
            state.vars[name] = value
        for i, default in parameter_defaults(info.node).items():
            known, literal = self.evaluator.static(default)
            if known:
                self.frame.defaults[i] = literal
        state.pending = frozenset(stand_ins)
        self.facts.stood_in = frozenset(p.key[1] for p in stand_ins)
        return state

    def waited_fields(self) -> list[str]:
        """The receiver's attributes this method reads, when it may wait for something (it
        awaits, or calls a settler or drain by name): each gets a stand-in for the futures
        callers stored there, and waiting for it on every path makes the method settle the
        field for its callers (``Summary.settles`` holds ``(0, attr)``)."""
        info = self.info
        owner = self.program.index.classes.get(info.class_qualname or "")
        if owner is None:
            return []
        vocab = self.program.raw_vocab
        words = frozenset({p.last_name for p in vocab.settlers} | {p.last_name for p in vocab.drains})
        if not may_wait(info.node, words):  # asked first: the class's readers are collected only if needed
            return []
        return sorted(attr for attr, methods in owner.readers.items() if info.qualname in methods)

    def solve(self, graph: cfg.Graph, entry_state: State) -> None:
        """The worklist: visit blocks in reverse postorder until no entry state changes."""
        frame, evaluator = self.frame, self.evaluator
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
                self.facts.caps.append(Limit(
                    f"{self.info.display}: the fixpoint at line {_block_line(block)} was not reached after "
                    f"{MAX_BLOCK_VISITS} visits; results for this function may be incomplete"
                ))
                break
            frame.st = entry_states[block_id].copy()
            frame.unsettled_if_raised = frozenset()
            evaluator.recorded = None
            for op in block.ops:
                if frame.st is None:
                    break
                frame.op = op
                _OPERATIONS[op.kind](self, op)
            out, tested = frame.st, evaluator.recorded
            evaluator.recorded = None
            if out is None:
                continue
            for edge in block.succs:
                state = out  # joining makes a new state; only a refinement needs a copy first
                if edge.raised and frame.unsettled_if_raised:
                    state = out.copy()
                    state.pending = state.pending | frame.unsettled_if_raised
                if edge.test is not None:
                    refined = refine(out.copy(), edge.test, edge.truth, tested or {}, frame.defaults, frame.program.index)
                    if refined is None:
                        continue
                    state = refills_not_taken(refined, edge.test, edge.truth, self.facts, frame.tables)
                    if not edge.truth:
                        state = self.effects.skip_periodic(state, edge.test)
                    state = self.effects.no_device(state, edge.test, edge.truth)
                    state = self.ready_on_edge(state, edge)
                if edge.case is not None and edge.truth:
                    taken = self.case_taken(state, edge.case)
                    if taken is None:
                        continue
                    state = taken
                proven = self.inline.on_edge(state, edge)  # an inline marker check, evaluated
                if proven:
                    state = assume_clean(state.copy() if state is out else state, proven)
                old = entry_states.get(edge.target)
                # Entry states are never changed in place (a visit works on a copy), so the
                # first one can be this block's own final state.
                new, changed = (state, True) if old is None else join_into(old, state)
                if changed:
                    entry_states[edge.target] = new
                    if edge.target not in queued and edge.target in order:
                        queued.add(edge.target)
                        heapq.heappush(queue, (order[edge.target], edge.target))
        frame.st = None
        frame.op = None

    def case_taken(self, state: State, case: ast.match_case) -> State | None:
        """``match ok(w): case True:``: the case's body runs where the subject is True, so it
        is refined as ``if ok(w):``'s True branch (``case False:`` / ``None`` as the False
        one). The way on to the next case is refined by nothing: a value that is not True
        may still be truthy."""
        subject = self.case_subjects.get(id(case))
        truth = case_truth(case.pattern)
        if subject is None or truth is None or id(subject) not in self.subject_parts:
            return state
        frame = self.frame
        return refine(state.copy(), subject, truth, self.subject_parts[id(subject)], frame.defaults, frame.program.index)

    def ready_at_call(self, specs: tuple, node: ast.AST) -> None:
        """A source's ``ready-after`` call: the buffer is whole again, here, or only on the
        branch of a test right on its result where it handed something back
        (``ready_tests``: ``while (layout := chan.next_layout()) is not None:``)."""
        frame = self.frame
        if any(call == id(node) for call, _ in frame.tables.ready_tests.values()):
            frame.deferred_ready[id(node)] = specs
        else:
            self.effects.ready(specs)

    def ready_on_edge(self, state: State, edge: cfg.Edge) -> State:
        """``state`` on ``edge``, made whole by the ``ready-after`` call its test inspects
        when the edge is the branch where that call handed something back."""
        frame = self.frame
        tested = frame.tables.ready_tests.get(id(edge.test)) if state.refilled else None
        specs = frame.deferred_ready.get(tested[0]) if tested is not None and tested[1] == edge.truth else None
        if specs is None:
            return state
        before, frame.st = frame.st, state.copy()
        self.effects.ready(specs)
        state, frame.st = frame.st, before  # type: ignore[assignment]
        return state

    # -- operations ----------------------------------------------------------------------

    @property
    def st(self) -> State:
        """The state at the current operation (operations run only in a reachable state)."""
        return self.frame.st  # type: ignore[return-value]

    def op_stmt(self, op: cfg.Op) -> None:
        node = op.node
        if isinstance(node, ast.expr):  # a match subject: evaluated once, read by each case
            value, parts = self.evaluator.eval_recorded(node)
            self.st.vars[f"<subject:{node_key(node)}>"] = value
            self.subject_parts[id(node)] = parts
            return
        method = _STATEMENTS.get(type(node))
        if method is not None:
            method(self, node)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child)

    def op_test(self, op: cfg.Op) -> None:
        evaluator = self.evaluator
        recorded: dict[int, Value] = {}
        evaluator.recorded = recorded
        test = cast(ast.expr, op.node)
        self.eval(test)
        if self.frame.st is not None:
            for part in truth_tested(test):
                value = recorded.get(id(part))
                if value is not None and value.leaves:  # the note is written only for a value that may be read
                    text = ast.unparse(part)
                    self.effects.read_host(part, value, f"bool({text if len(text) <= 60 else short(part)})")

    def op_iter(self, op: cfg.Op) -> None:
        stmt = cast(ast.For, op.node)
        iterable = self.evaluator.eval_iterable(stmt.iter)
        if self.frame.st is None:
            return
        key = node_key(stmt)
        self.st.vars[f"<iter:{key}>"] = iterable
        advances = advances_producer(iterable)
        advancing = self.frame.advancing
        advancing[key] = advancing.get(key, False) or advances

    def op_bind(self, op: cfg.Op) -> None:
        stmt = cast(ast.For, op.node)
        if isinstance(op.extra, ast.Call) and self.evaluator.lookup("iter").ref == "builtins.iter":
            # ``for x in iter(fn, sentinel)``: ``x = fn()`` each round, and as a ``while``
            # loop's, each round may advance what ``fn`` reads from
            self.frame.advancing[node_key(stmt)] = True
            element = self.eval(op.extra)
            if self.frame.st is None:
                return
            self.assignment.assign(stmt.target, element, stmt)
            return
        iterable = self.st.vars.get(f"<iter:{node_key(stmt)}>", EMPTY)
        element = iterate(iterable, self.frame.step(stmt, f"element taken by `for {short(stmt.target)} in ...`"))
        self.effects.refresh(element)
        self.assignment.assign(stmt.target, element, stmt)

    def op_advance(self, op: cfg.Op) -> None:
        """The back edge: an advancing loop's producer hands out the next element now."""
        stmt = op.node
        key = node_key(stmt)
        if isinstance(stmt, ast.While):
            self.frame.advancing[key] = True
        st = self.st
        if self.frame.advancing.get(key) and st.pending:
            polled = self.polled(stmt.test) if isinstance(stmt, ast.While) else frozenset()
            lent = self.lent_by_calls(stmt)
            waiting = frozenset(p for p in st.pending if p.key in polled or (p.leaves and p.leaves <= lent))
            st.pending = st.pending - waiting
            self.effects.commit_all(self.frame.step(stmt, "the loop advances to its next iteration"))
            st.pending = st.pending | waiting
        keys = frozenset(p.key for p in st.pending)
        self.settled_each[key] = self.settled_each.get(key, frozenset()) | keys

    def lent_by_calls(self, loop: ast.AST) -> frozenset:
        """The borrowed objects of the pending work that this loop's next round does not
        reuse: views of sources that declare ``advances`` calls (``Frame.call_advanced``),
        reused only at those calls (``writer.write_batch(out)``, listed as its own advance:
        a wait at the top of the next round, before it, is in time), unless the loop takes
        its elements from that source."""
        sites = self.frame.call_advanced
        if not sites:
            return frozenset()
        iterable = self.st.vars.get(f"<iter:{node_key(loop)}>") if isinstance(loop, (ast.For, ast.AsyncFor)) else None
        own = {leaf.site for leaf in deep_leaves(iterable, through_lazy=True) if isinstance(leaf, Borrow)} if iterable else set()
        return frozenset(
            leaf for p in self.st.pending for leaf in p.leaves
            if isinstance(leaf, Borrow) and leaf.site in sites and leaf.site not in own
        )

    def polled(self, test: ast.expr) -> frozenset:
        """The pending work a ``while`` test polls (``while not tracker.done:``, ``while not
        future.done():``): such a loop waits for it, its next round advances no producer."""
        flags = self.program.vocab.done_flags
        keys: frozenset = frozenset()
        for node in walk(test):
            stream = queried_stream(self.frame, node)
            if stream is not None:  # ``while not side.query():`` waits for the stream's copies
                keys |= stream_work(self.frame, stream)
            elif isinstance(node, ast.Attribute) and node.attr in flags and isinstance(node.value, ast.Name):
                held = self.st.vars.get(node.value.id)
                keys |= deep_pending(held)
                if held is not None and held.recorded:  # ``while not ev.query():``: the copies it followed
                    keys |= held.recorded
        return keys

    def op_exhausted(self, op: cfg.Op) -> None:
        """``for f in futures: f.result()``: what every iteration settled is settled once the
        iterator runs out; merely iterating (printing the futures) settles nothing. A
        ``while futures:`` loop ends only when the container is empty: the futures it held
        are settled if no iteration left one pending (``f = futures.pop(); f.result()``); one
        popped and not waited for is pending on the back edge, and stays. So are the device
        copies the events it held were recorded after (``while done: done.popleft().
        synchronize()``), on the path that ran no iteration too."""
        key = node_key(op.node)
        st = self.st
        if isinstance(op.node, ast.While):
            drained = emptied_by_test(op.node.test)
            if drained is None:
                return
            element = iterate(self.eval(drained))
            elements = deep_pending(element)
            exhausted: frozenset = frozenset()
            if element.recorded:  # events: the copies recorded before them, each waited for by its round
                copies = element.recorded - self.settled_each.get(key, frozenset())
                st.pending = frozenset(p for p in st.pending if not (p.hazard.settled_by_sync and p.key in copies))
                st.flying = st.flying - copies
        else:
            iterable = st.vars.get(f"<iter:{key}>", EMPTY)
            elements = deep_pending(iterate(iterable))
            exhausted = waits_when_exhausted(iterable)  # ``for r in pool.map(...)``: each round waited
        settled = (elements - self.settled_each.get(key, frozenset())) | exhausted
        if settled:
            st.pending = frozenset(p for p in st.pending if p.key not in settled)

    def op_loop_exit(self, op: cfg.Op) -> None:
        """Leaving a loop over a producer: views kept from its iterations are stale."""
        stmt = op.node
        if not isinstance(stmt, (ast.For, ast.AsyncFor)) or not self.frame.advancing.get(node_key(stmt)):
            return
        st = self.st
        targets = assigned_names([stmt.target])
        # A name the body carries from one iteration to the next is a holder whose stores
        # are findings already (``Stores.carried_local``); the others hand out their last value.
        stale = {
            name
            for name in self.frame.tables.fresh_in(stmt) - targets
            if any(
                (isinstance(leaf, Borrow) and not leaf.refill) or "iter" in getattr(leaf, "path", ())
                for leaf in deep_leaves(st.vars.get(name))
            )
        }
        if stale:
            st.stale = st.stale | frozenset(stale)

    def op_with_enter(self, op: cfg.Op) -> None:
        stmt, i = cast(ast.With, op.node), cast(int, op.extra)
        item = stmt.items[i]
        value, recorded = self.evaluator.eval_fresh(item.context_expr)
        if self.frame.st is None:
            return
        shape = shape_of(self.program, item.context_expr, recorded)
        context = self.frame.vocab.context_of(shape) if shape is not None else None
        if context:
            self.frame.with_contexts[(node_key(stmt), i)] = context
        self.st.vars[f"<with:{node_key(stmt)}:{i}>"] = value
        if self.generator_context_summary(value).enters_synchronized:
            self.effects.synchronize()
        if item.optional_vars is not None:
            self.assignment.assign(item.optional_vars, self.entered(value), stmt)

    def entered(self, context: Value) -> Value:
        """What ``with ... as x`` binds: for a project generator made a context manager
        (``@contextlib.contextmanager``), the value it yields (``yield streamer.get_tensors()``
        binds the stream, not the generator); for other objects, the object (``__enter__``
        returning ``self``, as executors and streamers do)."""
        info = self.program.index.functions.get(context.origin) if context.origin else None
        if info is not None and generator_context(info.node):
            return iterate(context)
        return context

    def op_with_exit(self, op: cfg.Op) -> None:
        """``__exit__``: an executor used as a context manager waits for all its tasks; a
        project class's ``__exit__`` waits for what it waits for in its receiver's fields
        (``Summary.settles``), named here as the ``with`` statement names the object, and
        for the device when it synchronises (``Summary.synchronizes``) and the object can
        only be of such classes."""
        value = self.st.vars.get(f"<with:{node_key(op.node)}:{op.extra}>")
        if value is None:
            return
        self.freed_at_exit(value, op.node)
        self.effects.settle_owned_by(value)
        for call in exit_calls(value, cast(ast.With, op.node), cast(int, op.extra), self.frame.tables.exit_calls):
            self.evaluator.eval(call)  # ``stack.callback(fut.result)``: the exit calls it
        exit_name = "__aexit__" if isinstance(op.node, ast.AsyncWith) else "__exit__"
        if self.st.pending:  # work in flight: a class of a file not read yet may wait for it
            self.demand_classes(value)
        exits = self.project_exits(value, exit_name)
        if exits and len(exits) == len(value.types) and all(self.program.summary(m).synchronizes for m in exits):
            self.effects.synchronize()
        elif self.generator_exit_synchronizes(value):
            self.effects.synchronize()
        for exit_method in exits:
            settled = [s for s in self.program.summary(exit_method).settles if isinstance(s, tuple)]
            item = cast(ast.With | ast.AsyncWith, op.node).items[cast(int, op.extra)]
            names = {holder_name(e) for e in (item.context_expr, item.optional_vars) if isinstance(e, (ast.Name, ast.Attribute))}
            for _, attr in settled:
                for name in sorted(n for n in names if n):
                    self.effects.settle_stored(f"{name}.{attr}")

    def generator_exit_synchronizes(self, context: Value) -> bool:
        """Does leaving the block of a project generator made a context manager
        (``with fenced(side):`` of an ``@contextmanager``) wait for the device: does the
        generator synchronise after its ``yield`` on every path (a ``finally:`` doing
        ``stream.synchronize()``)?"""
        return self.generator_context_summary(context).synchronizes

    def generator_context_summary(self, context: Value) -> Summary:
        """The summary of the project generator made a context manager (``@contextmanager``)
        that built ``context``, or an empty one for any other object: its ``synchronizes``
        says whether the block's exit waits for the device, its ``enters_synchronized``
        whether the block's entry does (``event.synchronize()`` before the ``yield``). It is
        analysed, and this function again once it is."""
        origin = context.origin
        info = self.program.index.functions.get(origin) if origin else None
        if info is None or not generator_context(info.node):
            return EMPTY_SUMMARY
        self.program.activate(info.qualname)
        self.facts.record("callee", info.qualname)
        return self.program.summary(info.qualname)

    def freed_at_exit(self, context: Value, stmt: ast.AST) -> None:
        """``return t`` inside ``with safe_open(..., copy=False) as f:``: the object frees its
        buffer at the block's exit (a source's ``freed-on-exit``, judged by what built it),
        after the value to return was taken and before the caller reads it: the views of
        that source's kind it hands back are kept past their step, at the ``return``."""
        returned = self.st.vars.get("<return>")
        stmt_return = self.returning
        if returned is None or stmt_return is None or stmt_return.value is None or not context.built:
            return
        lending = {cond for cond, owned in context.built if owned is not True}
        kinds = {spec.kind for spec in self.program.raw_vocab.sources
                 if spec.freed_on_exit and lending.intersection(spec.owned_if)}
        step = self.frame.step(stmt, "the `with` block's exit frees the buffer before the caller reads it")
        held = frozenset(leaf.with_trace(leaf.trace + (step,)) for leaf in _handed_itself(returned)
                         if isinstance(leaf, Borrow) and leaf.kind in kinds and not program_memory(leaf))
        if not held:
            return
        st = self.st
        before = st.pending
        self.effects.add_pending(stmt_return, Value(leaves=held), short(stmt_return.value), frozenset(),
                                 hazard=Hazard.KEPT_PAST_STEP, form=HANDED_BACK)
        st.pending = st.pending - before  # this one alone is committed: the caller gets it freed
        self.effects.commit(st, step)
        st.pending = before

    def demand_classes(self, context: Value) -> None:
        """Ask for the files of the classes the context manager may be that are not read yet
        (``with Inflight() as inflight:``, ``Inflight`` imported from a module nothing else
        needed): its ``__exit__`` may wait for the work the block started. This function is
        analysed again once they are read."""
        classes = self.program.index.classes
        for type_name in sorted(context.types):
            if type_name not in classes:
                self.facts.record("demand", ("qualname", type_name))

    def project_exits(self, context: Value, exit_name: str) -> list[str]:
        """The ``__exit__`` (``__aexit__``) methods of the project classes a context manager
        may be; each is analysed, and this function again when its summary changes."""
        index = self.program.index
        found = []
        for type_name in sorted(context.types):
            if type_name in index.classes:
                exit_method = index.class_method(type_name, exit_name)
                if exit_method is not None and exit_method in index.functions:
                    self.program.activate(exit_method)
                    self.facts.record("callee", exit_method)
                    found.append(exit_method)
        return found

    def op_return(self, op: cfg.Op) -> None:
        stmt = cast(ast.Return, op.node)
        value = self.eval(stmt.value) if stmt.value is not None else const(None)
        st = self.frame.st
        if st is None:
            return
        facts = self.facts
        self.effects.hand_back_stale(stmt.value, value, stmt)
        value = self.effects.handed_out(value, yielded=False)
        value = returned_event(value, st)
        facts.returns = join(facts.returns, facts.handed_back(self.effects.landed(value), st.assume))
        if builds_unknown_class(stmt.value, value, self.info.assigned):
            facts.returns_unknown_class = True
        truthy = not (value.has_const and not value.const)
        falsy = not (value.has_const and value.const)
        cond = value.cond or Cond()
        if truthy:
            facts.truthy_returns.append(st.cleaned | cond.clean_if_true)
        if falsy:
            facts.falsy_returns.append(st.cleaned | cond.clean_if_false)
        st.vars["<return>"] = value
        self.returning = stmt

    def op_exit(self, op: cfg.Op) -> None:
        """The function ends: work whose future is returned goes to the caller (who may wait
        for it); everything else still pending races with the caller's producer."""
        node, st, facts = op.node, self.st, self.facts
        if isinstance(node, ast.Module):
            self.effects.commit(st, None)
            return
        if not isinstance(node, ast.Return):
            facts.falsy_returns.append(st.cleaned)
        facts.exit_synced.append(st.synced)
        self.stores.keep_in_flight()
        self.effects.carry_over(node)
        waiting = {p.key[1] for p in st.pending if is_stand_in(p)}
        facts.exit_settled.append(facts.stood_in - waiting)
        facts.exit_kept.append(st.kept)
        returned = deep_pending(st.vars.get("<return>")) if isinstance(node, ast.Return) else frozenset()
        self.effects.advance_next_call(node)
        receiver = self.frame.receiver_name
        handed = frozenset(
            p for p in st.pending
            if not is_stand_in(p) and (
                p.key in returned
                # Views kept in the receiver's containers: the caller's object keeps them, and
                # another method may empty them before the caller's producer advances.
                or (receiver and p.hazard.kept and p.holder and p.holder[0].startswith(receiver + "."))
                # Futures kept in the receiver's fields: a later method (``__exit__``) may wait.
                or (receiver and any(h.startswith(receiver + ".") for h in p.stored_in))
            )
        )
        facts.futures |= handed
        st.pending = st.pending - handed
        self.effects.refill_next_call(node)
        self.effects.commit(st, self.frame.step(node, "function returns"), self._kept_by_enclosing_call())

    def _kept_by_enclosing_call(self) -> frozenset:
        """The submissions whose futures this nested function put in its enclosing call's
        variables (``inflight.append(pool.submit(...))`` in a closure a factory returns): no
        caller of this function gets them back, so the race is the closure's own, reported
        at the submission (``Effects.commit``)."""
        st, stores = self.st, self.stores
        if self.info.outer is None:
            return frozenset()
        return frozenset(
            key for name, value in st.vars.items() if stores.is_closure_variable(name) for key in deep_pending(value)
        )

    def op_raise(self, op: cfg.Op) -> None:
        exc = cast(ast.Raise, op.node).exc
        if exc is not None:
            self.eval(exc)

    def op_handler(self, op: cfg.Op) -> None:
        handler = cast(ast.ExceptHandler, op.node)
        assume_clean(self.st, self.inline.in_handler(self.st, handler))  # ``except AttributeError`` of a marker read
        if handler.name:
            self.st.vars[handler.name] = EMPTY

    def op_match_case(self, op: cfg.Op) -> None:
        case = cast(ast.match_case, op.node)
        self.case_subjects[id(case)] = cast(ast.expr, op.extra)
        subject = self.st.vars.get(f"<subject:{node_key(cast(ast.expr, op.extra))}>", EMPTY)
        self.assignment.bind_pattern(case.pattern, subject, case)

    # -- what calls do besides their value -------------------------------------------------

    def apply(self, effect: object) -> None:
        """Apply one record a call handler returned (``call_effects``) to the state and facts."""
        _APPLY[type(effect)](self, effect)

    # -- simple statements ----------------------------------------------------------------

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        self.eval(stmt.value)

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        value = self.eval(stmt.value)
        for target in stmt.targets:
            self.assignment.assign(target, value, stmt)
        if isinstance(stmt.value, ast.IfExp) and self.st is not None:
            chosen.choose(self.st, stmt)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        """``s: Sink = make()``: the local is of the annotated class (or a subclass), which
        decides its methods as a parameter's annotation does."""
        if stmt.value is not None:
            value = self.eval(stmt.value)
            declared = self.evaluator.declared_types(stmt.annotation) if isinstance(stmt.target, ast.Name) else frozenset()
            if declared - value.declared:
                value = evolve(value, declared=value.declared | declared)
            self.assignment.assign(stmt.target, value, stmt)

    def stmt_AugAssign(self, stmt: ast.AugAssign) -> None:
        self.assignment.augment(stmt)

    def stmt_Delete(self, stmt: ast.Delete) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                self.st.vars.pop(target.id, None)
                self.stores.release(target.id, None)
            elif isinstance(target, ast.Subscript) and (holder := holder_name(target.value)):
                self.stores.release(holder, ast.unparse(target.slice))
            else:
                self.eval(target)

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        _, recorded = self.evaluator.eval_fresh(stmt.test)
        if self.frame.st is not None:
            self.frame.st = refine(self.frame.st, stmt.test, True, recorded, self.frame.defaults, self.frame.program.index)

    def stmt_Import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        for name, qualname in import_bindings(self.frame.module, stmt).items():
            self.st.vars[name] = Value(ref=self.program.index.canonical(qualname))

    stmt_ImportFrom = stmt_Import

    def stmt_FunctionDef(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.info.kind == "module":
            self.st.vars.pop(stmt.name, None)  # a module-level def: resolved through the index
            return
        qualname = self.info.local_defs.get(stmt.name)
        captured = self.evaluator.captured(stmt)
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


def _block_line(block: cfg.Block) -> int:
    for op in block.ops:
        return getattr(op.node, "lineno", 0)
    return 0


# The transfer of each operation kind, and of each statement kind (by exact node type).
_OPERATIONS: dict[str, Callable[[FunctionInterpreter, cfg.Op], None]] = {
    name[len("op_"):]: method for name, method in vars(FunctionInterpreter).items() if name.startswith("op_")
}
_STATEMENTS: dict[type, Callable[[FunctionInterpreter, Any], None]] = {
    getattr(ast, name[len("stmt_"):]): method
    for name, method in vars(FunctionInterpreter).items()
    if name.startswith("stmt_")
}

# Where each record a call handler returns (``call_effects``) goes.
_APPLY: dict[type, Callable[[FunctionInterpreter, Any], object]] = {
    call_effects.Settle: lambda it, e: it.effects.settle(e.value, e.timed),
    call_effects.SettleStored: lambda it, e: it.effects.settle_stored(e.holder),
    call_effects.StoreFutures: lambda it, e: it.effects.store_futures(e.holder, e.value),
    call_effects.Drain: lambda it, e: it.effects.settle_owned_by(e.executor),
    call_effects.Reown: lambda it, e: it.effects.reown(e.keys, e.owners),
    call_effects.Synchronize: lambda it, e: it.effects.synchronize(e.covers, e.current_only, e.prior),
    call_effects.RecordEvent: lambda it, e: it.effects.record_event(e.target, e.current_only),
    call_effects.Issue: lambda it, e: it.effects.issue(e.value),
    call_effects.Advance: lambda it, e: it.effects.advance(e.node, e.what, e.specs, e.kept),
    call_effects.Ready: lambda it, e: it.ready_at_call(e.specs, e.node),
    call_effects.Reuse: lambda it, e: it.effects.reuse(e.sites, e.node, e.what),
    call_effects.UseAfterRefill: lambda it, e: it.effects.use_after_refill(e.node, e.value, e.what),
    call_effects.HostRead: lambda it, e: it.effects.read_host(e.node, e.value, e.what),
    call_effects.HostWrite: lambda it, e: it.effects.write_host(e.node, e.value, e.what, e.by_device),
    call_effects.Refill: lambda it, e: it.effects.refill(e.node, e.target, e.value, e.what),
    call_effects.Stage: lambda it, e: it.effects.stage(e.node, e.value, e.what),
    call_effects.Allocate: lambda it, e: it.effects.allocate(e.sites),
    call_effects.Submit: lambda it, e: it.effects.add_pending(
        e.node, e.payload, e.sink, e.assume, e.subject, hazard=e.hazard, owners=e.owners, untracked=e.untracked
    ),
    call_effects.Adopt: lambda it, e: it.effects.adopt(e.pending),
    call_effects.KeepInField: lambda it, e: it.stores.keep_in_callee_field(e.owner, e.attr, e.value, e.element),
    call_effects.Store: lambda it, e: it.assignment.store_into(e.container, e.value, e.node),
    call_effects.Retain: lambda it, e: it.stores.retain(e.node, e.value, e.holder_text, None),
    call_effects.Release: lambda it, e: it.stores.release(e.name, e.key),
    call_effects.ReadBack: lambda it, e: it.stores.read_back(e.container, e.node),
    call_effects.Materialize: lambda it, e: it.effects.materialize(e.node, e.value, e.what, hazard=e.hazard, note=e.note),
    call_effects.Mark: lambda it, e: it.effects.mark(e.target, e.node, e.kind),
    call_effects.Signal: lambda it, e: it.effects.signal(e.objects, e.keys),
    call_effects.Fill: lambda it, e: it.effects.fill(e.target, e.copy, e.buffers),
    call_effects.Report: lambda it, e: it.facts.report(e.site, e.trace, e.hazard),
    call_effects.Reach: lambda it, e: it.facts.add_reach(e.reach),
    call_effects.Record: lambda it, e: it.facts.record(e.kind, e.item),
    call_effects.CallParam: lambda it, e: it.facts.call_param(e.where, e.called),
    call_effects.CallBack: lambda it, e: it.evaluator.calls.call_back(e),
    call_effects.CommitStep: lambda it, e: it.effects.commit_new(e.pending, e.step),
}


# A function's text does not change during a run, but it is analysed again each time what it
# depends on changes: whether it may wait is read once per node and vocabulary.
_MAY_WAIT: "weakref.WeakKeyDictionary[ast.AST, tuple[frozenset[str], bool]]" = weakref.WeakKeyDictionary()


def case_truth(pattern: ast.pattern) -> bool | None:
    """The truth of every subject a case pattern matches, when it has one (``True``,
    ``False``, ``None``, ``0``, ``""``)."""
    if isinstance(pattern, ast.MatchSingleton):
        return bool(pattern.value)
    if isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant):
        return bool(pattern.value.value)
    return None


def may_wait(function: ast.AST, words: frozenset[str]) -> bool:
    """Does ``function`` await, or call something named like a settler or drain (``words``)?"""
    seen = _MAY_WAIT.get(function)
    if seen is not None and seen[0] == words:
        return seen[1]
    found = False
    for node in walk(function):
        if isinstance(node, ast.Await):
            found = True
            break
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in words:
                found = True
                break
    _MAY_WAIT[function] = (words, found)
    return found


def _handed_itself(value: Value):
    """The leaves a ``return`` hands back as themselves or in a tuple (``return t``, ``return
    name, t``): a container's elements were put there by a store or a materialisation
    (``dict(f.tensors())``), reported there already."""
    yield from value.leaves
    for item in value.items or ():
        yield from _handed_itself(item)


def emptied_by_test(test: ast.expr) -> ast.expr | None:
    """The container a ``while`` test is true for while it holds anything (``while pending:``,
    ``while self.futures:``, ``while len(q):``, ``while len(q) > 0:``): when the loop's test
    is false, it is empty. None for any other test."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        bound = test.comparators[0].value
        if not (isinstance(test.ops[0], (ast.Gt, ast.NotEq)) and bound == 0 and bound is not False):
            return None
        test = test.left
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("len", "bool") \
            and len(test.args) == 1 and not test.keywords:
        test = test.args[0]
    if isinstance(test, ast.Name) or (isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name)):
        return test
    return None


def builds_unknown_class(returned: ast.expr | None, value: Value, assigned: frozenset) -> bool:
    """``return candidate()``: a call of one of the function's own variables that holds no
    class, function or method known here builds an object of a class not known."""
    return (
        isinstance(returned, ast.Call) and isinstance(returned.func, ast.Name) and returned.func.id in assigned
        and not (value.types or value.declared or value.leaves or value.ref or value.has_const)
    )


def returned_event(value: Value, st: State) -> Value:
    """``return done`` of an event recorded after this function's copies to the device: the
    caller that synchronises it waits for them, so they go back with it as a future's work
    does (``op_exit`` hands them to the caller, which waits by ``done.synchronize()``, or
    else meets them at its producer's next step)."""
    if not value.recorded:
        return value
    covered = frozenset(p.key for p in st.pending if p.hazard.settled_by_sync and p.key in value.recorded)
    return evolve(value, pending=value.pending | covered) if covered else value
