"""Pending work and its settlement: submissions and kept views that the producer's next
step turns into findings (or summary reaches), the waits that settle them, device copies in
flight and their synchronisation, refills, and the marks that make a value borrowed."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable, cast

from bufferlint.analysis.domain.conditions import APPROVES, approves_operand, holds_by_default, refuted, sort_key
from bufferlint.analysis.domain.regions import constant_part, disjoint
from bufferlint.analysis.domain.state import (
    BEFORE_CALL, SIDE_STREAM, Pending, State, bounded_holders, current_stream_work, event_field, is_event_stand_in,
    is_stand_in, issued_work, on_side_stream, waited_for,
)
from bufferlint.analysis.domain.summaries import SinkReach
from bufferlint.analysis.domain.values import (
    EMPTY,
    Borrow,
    Field,
    ParamRef,
    Value,
    deep_leaves,
    deep_pending,
    evolve,
    has_field,
    in_flight_sites,
    join,
    landed_leaf,
    map_leaves,
    meets,
    pinned_buffer,
    program_memory,
    same_object,
)
from bufferlint.analysis.transfer.facts import FunctionFacts
from bufferlint.analysis.transfer.frame import Frame, FunctionTables, node_key
from bufferlint.analysis.frontend.index import base_name
from bufferlint.analysis.frontend.syntax import short, walk
from bufferlint.findings import PASSED_GUARD, TraceStep, preferred_trace
from bufferlint.hazards import Hazard


# Forms of a hazard the rules word apart (the sink step's fact names one; ``Rule.forms``).
READ_AFTER_ADVANCE = "read-after-advance"  # a call reads a view the producer may have refilled
HANDED_BACK = "handed-back"  # returned or yielded after the producer moved on


def sink_fact(hazard: Hazard, sink: str, form: str = "") -> tuple:
    """The fact of the step a rule reports: its hazard, what consumes or keeps the value and,
    for a form the rule words apart, the form."""
    return ("sink", hazard, sink, form) if form else ("sink", hazard, sink)


# Host buffers the program makes in pageable memory: a refill of one is never page-locked.
_PAGEABLE = frozenset({"builtins.bytearray", "builtins.bytes", "mmap.mmap"})


def pageable_buffer(value: Value) -> bool:
    """Is the refilled buffer surely pageable host memory: a ``bytearray`` (or ``mmap``) the
    program made, and no pinned buffer on any path?"""
    classes = value.types | value.declared
    return bool(classes) and classes <= _PAGEABLE and not any(
        isinstance(leaf, Borrow) and leaf.pinned for leaf in deep_leaves(value))


class Effects:
    """Changes the frame's state for work that reads values later, and commits it to the
    facts when the producer may advance."""

    def __init__(self, frame: Frame, facts: FunctionFacts) -> None:
        self.frame = frame
        self.facts = facts

    def add_pending(
        self,
        node: ast.AST,
        payload: Value,
        sink: str,
        assume: frozenset,
        subject: str = "",
        hazard: Hazard = Hazard.ASYNC_READ_AFTER_ADVANCE,
        holder: tuple | None = None,
        owners: frozenset = frozenset(),
        form: str = "",
        untracked: bool = False,
    ) -> Value:
        """Work that reads ``payload`` later; returns the future standing for it. A copy still
        in flight from the device handed to a host reader (``Hazard.read_on_host``) is read
        now; the pending work is about buffers a producer reuses, never about those copies.
        ``untracked`` work of the call (the parts of a multipart send its tracker does not
        cover) has a key of its own, which no handle the call returns holds."""
        frame = self.frame
        st = frame.st
        leaves = frozenset(deep_leaves(payload))
        if not leaves or st is None:
            return EMPTY
        flying = frozenset(leaf for leaf in leaves if isinstance(leaf, Borrow) and leaf.flight)
        if flying:
            covered = handed_records(payload)
            read = frozenset(leaf for leaf in flying if leaf.site not in covered)
            if hazard.read_on_host and read:
                self.read_host(node, Value(leaves=read), sink)
            leaves = leaves - flying
        leaves = frozenset(leaf for leaf in leaves if not pinned_buffer(leaf))  # the program's own (``stage``)
        if not leaves:
            return EMPTY
        col = node.col_offset  # type: ignore[attr-defined]
        if untracked:
            col = (col, "untracked")
        elif hazard.settled_by_sync and frame.contexts:
            col = (col, SIDE_STREAM)  # a device copy issued on a side stream: the current stream's sync misses it
        key = (node.lineno, col)  # type: ignore[attr-defined]
        step = replace(frame.step(node, ""), fact=sink_fact(hazard, sink, form))  # the hazard's rule words it
        pending = Pending(key, leaves, frame.site(node, sink, subject), st.assume | assume, step, hazard, holder, owners)
        st.pending = st.pending | {pending}
        return Value(pending=frozenset({key}))

    def adopt(self, pending: Pending) -> None:
        """A callee's submission whose future came back is pending here now. Two of the
        callee's futures can be one here (the same submission reached by two paths): it keeps
        the shorter trace of each leaf, whichever order the callee's futures (a set) come in.
        The fields it is kept in are named through this function's receiver, bounded
        (``state.bounded_holders``: recursion would lengthen them without end)."""
        st = self.frame.st
        if st is None:
            return
        pending, cut = bounded_holders(pending)
        if cut:
            self.facts.holders_cut()
        if pending in st.pending:
            known = next(p for p in st.pending if p == pending)
            st.pending = st.pending - {known}
            pending = _with_preferred_traces(known, pending)
        st.pending = st.pending | {pending}

    def commit(self, state: State, step: TraceStep | None, sited: frozenset = frozenset()) -> None:
        """The producer may advance now: every submission still pending is a race. ``sited``:
        the keys of submissions reported at their own site even when the hazard is lifted
        (a closure's, whose future the enclosing call keeps)."""
        facts = self.facts
        for pending in state.pending:
            for leaf in pending.leaves:
                if program_memory(leaf):
                    continue  # a helper's future came back with a device copy: a host read's concern
                if refilled_buffer(leaf):
                    continue  # a buffer the program refills: only its next refill is its step (``refill``)
                trace = leaf.trace + (pending.step,)
                if isinstance(leaf, Borrow) and pending.assume:
                    trace = leaf.trace + self.passed_guards(pending) + (pending.step,)
                if pending.holder is not None:
                    facts.retained_in.setdefault(pending.holder[0], set()).add((pending.hazard, pending.site))
                if isinstance(leaf, Borrow):
                    facts.report(pending.site, trace, pending.hazard)
                else:
                    here = "iter" in leaf.path or not pending.hazard.lifted or pending.key in sited
                    site = pending.site if here else None
                    facts.add_reach(SinkReach(leaf.index, leaf.path, pending.assume | leaf.when, site, trace, pending.hazard))

    def commit_new(self, pending: frozenset, step: TraceStep) -> None:
        """Only the work of ``pending`` (still pending) meets a producer's step: a callback
        the callee calls once per element of a stream it iterates left it in flight when the
        callee takes the next element (``CallBack.stepwise``); the rest of this function's
        work is not concerned."""
        st = self.frame.st
        if st is None:
            return
        mine = st.pending & pending
        if mine:
            only = st.copy()
            only.pending = mine
            self.commit(only, step)
            st.pending = st.pending - mine

    def passed_guards(self, pending: Pending) -> tuple[TraceStep, ...]:
        """The steps saying that this function's own consumer is reached only when what its
        callers pass approves the value (``conditions.APPROVES``), decided over its calls
        when the findings are collected (``ProjectAnalysis.decide_passed_guards``)."""
        qualname, names = self.frame.info.qualname, self.frame.info.params
        return tuple(
            replace(pending.step, note=f"consumed here when `{names[test.param]}{approves_operand(test)[2]}(...)` approves it",
                    fact=(PASSED_GUARD, qualname, test.param, test.operand))
            for test in sorted(pending.assume, key=sort_key) if test.test == APPROVES and test.param < len(names))

    def commit_all(self, step: TraceStep | None) -> None:
        """Commit everything pending on this path; only the parameters' stand-ins stay, and
        the copies reading pinned buffers, which only a write to them ends (``stage``)."""
        st = self.frame.st
        if st is not None:
            self.commit(st, step)
            st.pending = frozenset(p for p in _after_step(st.pending) if is_stand_in(p) or p.hazard.ended_by_write or p.leaves)

    def settle(self, value: Value, timed: bool = False) -> None:
        """Waiting on a future (``.result()``, ``await``, ``join``) makes its task synchronous.
        A ``timed`` wait that raises leaves it running: what it settled is kept for the way
        out of the statement when it raises (``Frame.unsettled_if_raised``)."""
        keys = deep_pending(value)
        st = self.frame.st
        if st is not None and keys:
            if timed:
                self.frame.unsettled_if_raised |= {p for p in st.pending if p.key in keys}
            st.pending = frozenset(p for p in st.pending if p.key not in keys)
            waits = self.frame.device_waits
            for key in sorted(keys & waits.keys()) if waits and not timed else ():
                self.synchronize(waits[key])  # the task synchronised the device: its handle is done

    def store_futures(self, holder: str, value: Value) -> None:
        """``self.pending.append(future)``, ``self.by_name[k] = future``: the submissions of
        the futures in ``value`` are now kept in the attribute ``holder`` as well."""
        st = self.frame.st
        keys = deep_pending(value)
        if st is None or not keys or not any(p.key in keys for p in st.pending):
            return
        self.keep_parameter_futures(st, holder, keys)
        st.pending = frozenset(
            replace(p, stored_in=p.stored_in | {holder}) if p.key in keys and not is_stand_in(p) else p
            for p in st.pending
        )

    def keep_parameter_futures(self, st: State, holder: str, keys: frozenset) -> None:
        """``self.trackers.append(t)`` of a parameter ``t``: the futures a caller passes are kept
        in its object's field on this path (``State.kept``; ``Summary.keeps_futures`` when on
        every path to the exit, which the call site applies)."""
        receiver = self.frame.receiver_name
        attr = holder[len(receiver) + 1:] if receiver and holder.startswith(receiver + ".") else ""
        if attr and "." not in attr:
            st.kept = st.kept | {(key[1], attr) for key in keys if key[0] == "param" and isinstance(key[1], int)}

    def park(self, container_expr: ast.expr, value: Value) -> None:
        """``ring.appendleft((tracker, buffer))`` in a function that polls the futures of that
        local container (``ring[-1][0].done``): each future is kept with what its work reads,
        and the function takes a pair out to reuse its buffer once that future is done (vLLM's
        ring of send buffers). The work the pair's future stands for is parked in the ring,
        no longer pending here: a buffer is not reused while a future kept with it is not done.
        Work the future does not stand for (the parts of a multipart send its tracker does not
        cover) stays pending. Taken on the poll's word: the analysis does not check that the
        buffer reused is the one whose future it polled."""
        st = self.frame.st
        items = value.items
        if st is None or not st.pending or items is None or not isinstance(container_expr, ast.Name):
            return
        keys = frozenset(key for item in items for key in item.pending)
        if not keys or all(item.pending for item in items):
            return  # no future, or nothing kept with it
        if not polls_done(self.frame.info.node, container_expr.id, self.frame.program.vocab.done_flags):
            return
        st.pending = frozenset(p for p in st.pending if p.key not in keys or is_stand_in(p))

    def stored_futures(self, holder: str) -> frozenset:
        """The keys of the submissions whose futures were stored in ``holder`` on this path."""
        st = self.frame.st
        if st is None or not st.pending:
            return frozenset()
        return frozenset(p.key for p in st.pending if holder in p.stored_in)

    def settle_stored(self, holder: str) -> None:
        """A method waited for every future its receiver keeps in ``holder``."""
        st = self.frame.st
        if st is not None and st.pending:
            st.pending = frozenset(p for p in st.pending if holder not in p.stored_in)

    def reown(self, keys: frozenset, owners: frozenset) -> None:
        """The submissions ``keys`` run inside a task submitted to ``owners`` now: draining
        that receiver (a task group's exit) waits for them too."""
        st = self.frame.st
        if st is not None and st.pending:
            st.pending = frozenset(replace(p, owners=owners) if p.key in keys else p for p in st.pending)

    def settle_owned_by(self, executor: Value) -> None:
        """``executor.shutdown(wait=True)`` or leaving ``with executor:`` waits for every task
        submitted to it: the submissions whose receiver can only be this executor."""
        st = self.frame.st
        if st is None or not executor.alloc:
            return
        st.pending = frozenset(p for p in st.pending if not (p.owners and p.owners <= executor.alloc))

    def hand_back_stale(self, expr: ast.expr | None, value: Value, stmt: ast.AST) -> None:
        """``return last`` after ``for ...: last = w``: the caller gets a view whose buffer the
        producer has refilled since (kept past its step, reported at the return). What is
        handed back is the value, not the names it mentions: ``return len(views)`` hands
        back an int."""
        st = self.frame.st
        if expr is None or st is None or not st.stale:
            return
        names = sorted({n.id for n in walk(expr) if isinstance(n, ast.Name)} & st.stale)
        stale = frozenset(leaf for name in names for leaf in deep_leaves(st.vars.get(name, EMPTY)))
        held = frozenset(leaf for leaf in deep_leaves(value) if leaf in stale)
        held -= self.kept_before(stmt, value, held)
        if held:
            self.add_pending(stmt, Value(leaves=held), names[0], frozenset(), hazard=Hazard.KEPT_PAST_STEP, form=HANDED_BACK)

    def kept_before(self, stmt: ast.AST, value: Value, held: frozenset) -> frozenset:
        """Of the out-of-date views ``held`` that a ``return`` hands back through a container
        (``return trajectory`` after ``trajectory.append(obs)`` and an advance), those put
        there by a store of this function: one finding each, where the view escaped into the
        container, the return a step of its trace (as for a read, ``use_after_refill``). A
        store reported already (its holder outlives the step: ``kept.append(frame[:n])``
        before ``return kept``) is that finding, whatever advanced the producer."""
        facts = self.facts
        steps = {site: step for site, step in self.frame.st.refilled} if self.frame.st is not None else {}
        through = frozenset(deep_leaves(value)) - value.leaves
        reported = set()
        for leaf in held:
            kept = facts.kept_at.get(leaf.site) if isinstance(leaf, Borrow) and leaf in through else None
            if kept is None:
                continue
            site, store, holder = kept
            # A store that is a finding already stays the one report, whether or not the
            # producer handed out a view since (``refresh``: a call that advances and hands out).
            retained = holder if holder is not None and holder in facts.retained_in else None
            if retained is None and leaf.site not in steps:
                continue
            handed = self.frame.step(stmt, "handed back to the caller after the producer may have refilled it")
            if holder is not None and holder in facts.retained_in:
                facts.read_steps.setdefault(holder, handed)  # the store is a finding already
            elif leaf.site in steps:
                facts.report(site, leaf.trace + (store, steps[leaf.site], handed), Hazard.KEPT_PAST_STEP)
            else:
                continue
            reported.add(leaf)
        return frozenset(reported)

    # -- the device ------------------------------------------------------------------------

    def synchronize(self, covers: frozenset | None = None, current_only: bool = False, prior: str | None = None) -> None:
        """``torch.cuda.synchronize()``: every async device copy issued so far is complete.
        ``covers``: ``event.synchronize()`` of an event recorded here, complete are only the
        copies in flight when it was recorded (a copy issued after the record is not).
        ``current_only``: the current stream's work is complete, not the copies issued here
        under a stream context (``Frame.side_issued``, the ``staged`` keys marked so).
        ``prior``: an event field not recorded here yet on this path: taken as a wait for all
        (its record is not seen), noted in ``State.waits`` for the copies an earlier call of
        this function recorded it before (``carried_over``)."""
        st = self.frame.st
        if st is not None and current_only:
            side = self.frame.side_issued
            st.flying = frozenset(site for site in st.flying if site in side)
            st.pending = frozenset(p for p in st.pending if not p.hazard.settled_by_sync or on_side_stream(p.key))
            st.synced, st.waits = True, frozenset()
        elif st is not None and covers is not None:
            waited_for(st, covers)  # recorded here on every path: after the callers' work too
        elif st is not None:
            st.pending = frozenset(p for p in st.pending if not p.hazard.settled_by_sync)
            st.waits = st.waits | {prior} if prior is not None and (not st.synced or st.waits) else frozenset()
            st.synced = True
            st.flying = frozenset()

    def issue(self, value: Value) -> None:
        """Borrowed objects handed out here (by a source, or a helper returning them): fresh
        ones, whatever an earlier ``advances`` call did to their site's older objects.
        Device-to-host copies among them are in flight until the next synchronisation.
        Pinned buffers a getter or a property hands back from the heap (``Borrow.held``)
        outlive this call as a field read's do (``arrive``): a copy still reading one when
        the function returns meets the next call's write (``carry_over``)."""
        self.facts.kept_buffers.update(
            leaf.site for leaf in deep_leaves(value) if pinned_buffer(leaf) and leaf.held)
        st = self.frame.st
        if st is None:
            return
        sites = in_flight_sites(value)
        if sites:
            self.forget_records(sites)
            st.flying = st.flying | sites
        self.refresh(value)

    def arrive(self, kept: Value) -> None:
        """A field read: the copies another method left in flight there (``keep_in_flight``)
        are in flight here until this function synchronises (no call order is known: the
        other method may have run just before; not while this one runs: one it waited for
        stays landed, ``State.landed``). The pinned buffers kept there outlive this
        call: a copy still reading one when it returns meets the next call's write
        (``carry_over``)."""
        frame = self.frame
        st = frame.st
        self.facts.kept_buffers.update(leaf.site for leaf in deep_leaves(kept) if pinned_buffer(leaf))
        if st is None or st.synced:
            return
        qualname = frame.info.qualname
        sites = {leaf.site for leaf in deep_leaves(kept) if isinstance(leaf, Borrow) and leaf.flight}
        for leaf in deep_leaves(kept):  # a pinned buffer another method left a copy filling
            if not pinned_buffer(leaf):
                continue
            buffer = (leaf.site, leaf.objects)
            fill = frame.program.buffer_fill(buffer, self.reader_class())
            if fill is not None:
                self.facts.filled_buffers[buffer] = join(self.facts.filled_buffers.get(buffer), fill)
                sites.update(in_flight_sites(fill))
        # its own copies: its state knows them; those it waited for by an event have landed
        sites = {site for site in sites if site[0] != qualname} - st.landed
        if sites - st.flying:
            st.flying = st.flying | sites

    def read_host(self, node: ast.AST, value: Value, what: str) -> None:
        """The host reads the value's bytes now (a hazard if they are still in flight). A
        parameter read before this function synchronises is a reach: the caller decides.
        A parameter's host reads matter once a caller passes it a copy in flight
        (``Program.flight_hot``); a record parameter's field's (``values.Field``) only once a
        caller passes a copy in flight in that field (``Program.field_hot``): a whole
        parameter at a time, a batch record passed to every layer with one field in flight
        made every field's host read in every layer a reach (every comparison, ``.item()``,
        ``int(...)``), each carried up to every caller."""
        frame = self.frame
        st = frame.st
        if st is None or not value.leaves:
            return
        step = None
        for leaf in value.leaves | self.fills_of(value.leaves):
            if isinstance(leaf, Borrow):
                if not (leaf.flight and leaf.site in st.flying and holds_by_default(leaf.when)) \
                        or refuted(leaf.when, st.assume):
                    continue  # landed, a copy to the host only if the callers say so, or blocking on this path
            elif st.synced or not self._reads_in_flight(leaf):
                continue
            if step is None:
                step = replace(frame.step(node, ""), fact=("sink", Hazard.HOST_READS_IN_FLIGHT, what))
            if isinstance(leaf, Borrow):
                self.facts.report(frame.site(node, what), leaf.trace + (step,), Hazard.HOST_READS_IN_FLIGHT)
            else:  # lifted: the caller passing a copy in flight is where it is reported
                assume = st.assume | st.unsynced_when | leaf.when  # where it is read unsynchronised
                self.facts.add_reach(SinkReach(leaf.index, leaf.path, assume, None, (step,), Hazard.HOST_READS_IN_FLIGHT))

    def _reads_in_flight(self, leaf: ParamRef) -> bool:
        """May a caller pass a copy in flight in this part of a parameter (``read_host``)?"""
        program, qualname = self.frame.program, self.frame.info.qualname
        if not has_field(leaf.path):
            return (qualname, leaf.index) in program.flight_hot
        field = leaf.path[0]
        return isinstance(field, Field) and (qualname, leaf.index) in program.field_hot \
            and (qualname, leaf.index, field.position, "flight") in program.field_hot

    def stage(self, node: ast.AST, read: Value, what: str) -> None:
        """``gpu.copy_(pinned, non_blocking=True)``, ``pinned.to(device, non_blocking=True)``:
        the copy reads the pinned buffers in ``read`` until a synchronisation covers it. It is
        pending work that no producer's step commits: a write to one of those buffers before
        then is the finding (``write_host``), in this iteration, the next one or, for a
        buffer the object keeps, the next call (``carry_over``)."""
        frame = self.frame
        st = frame.st
        buffers = frozenset(leaf for leaf in deep_leaves(read) if pinned_buffer(leaf))
        if st is None or not buffers:
            return
        step = frame.step(
            node, f"`{what}(...)` copies it to the device asynchronously: the copy reads it until the host synchronises"
        )
        # No future's key; one issued on a side stream is marked: a device write on the current
        # stream is not ordered after it (``_on_current_stream``).
        stream: tuple = (SIDE_STREAM,) if frame.contexts else ()
        key = ("staged", *stream, node.lineno, node.col_offset)  # type: ignore[attr-defined]
        site = frame.site(node, what)
        self.forget_records(frozenset({key}))
        st.pending = st.pending | {Pending(key, buffers, site, st.assume, step, Hazard.HOST_WRITTEN_IN_FLIGHT)}

    def allocate(self, sites: frozenset) -> None:
        """New pinned buffers at ``sites`` (an allocation run again in a loop, a helper's
        buffer made anew at each call): the copies still reading the previous ones read other
        objects, which the caching host allocator does not hand out before they finish."""
        st = self.frame.st
        if st is None or not any(p.hazard.ended_by_write for p in st.pending):
            return
        pending = set()
        for p in st.pending:
            if p.hazard.ended_by_write:
                leaves = frozenset(leaf for leaf in p.leaves if leaf.site not in sites)
                if not leaves:
                    continue
                p = replace(p, leaves=leaves)
            pending.add(p)
        st.pending = frozenset(pending)

    def write_host(self, node: ast.AST, target: Value, what: str, by_device: bool = False) -> None:
        """The program writes the bytes of ``target`` now (``buf.copy_(x)``, ``buf[:] = x``,
        ``f.readinto(buf)``): a pinned buffer among them that a copy to the device still
        reads (``stage``) is the hazard. A write before this function synchronised is kept
        for ``carry_over``: the previous call's copy may still read that buffer.

        A write ``by_device`` (``pinned.copy_(gpu, non_blocking=True)``) is queued on the
        current stream behind the copies this function issued there, which it cannot
        overtake: only those issued on a side stream, or by a callee (whose stream is not
        known here), are met. Its buffer is not kept for the next call nor judged by the
        caller: their copies were issued before it too (on a side stream: not seen)."""
        frame = self.frame
        st = frame.st
        if st is None:
            return
        leaves = list(deep_leaves(target))
        if by_device:
            self.meet_pending(node, leaves, what, lambda p: not _on_current_stream(p))
            return
        if not st.synced:
            self.write_parameters(node, leaves, what)
        parts = [leaf for leaf in leaves if pinned_buffer(leaf)]
        written = {leaf.site for leaf in parts}
        if not written:
            return
        if not st.synced or st.waits:  # each write the next call may make before it synchronises
            unsynced = self.facts.unsynced_writes
            for part in parts:
                key = (part.site, part.objects, constant_part(part.region))  # the next call's names are other values
                unsynced.setdefault(key, {})[_position(node)] = (node, what, st.waits if st.synced else None)
        self.meet_pending(node, leaves, what, lambda p: True)

    def skip_periodic(self, st: State, test: ast.expr) -> State:
        """``st`` on the false branch of ``if i % K == 0: torch.cuda.synchronize()`` in a
        loop reading a ring of pinned buffers only as ``slots[i % N]``, N >= K
        (``periodic_syncs``): the copies still reading the ring's buffers read other slots
        than this round's, so they race no write of it (taken off the path's pending work)."""
        if not any(p.hazard.ended_by_write for p in st.pending):
            return st
        frame = self.frame
        rings = frame.tables.periodic_syncs(self._device_sync).get(id(test))
        if not rings:
            return st
        sites = {leaf.site for name in rings for leaf in deep_leaves(st.vars.get(name) or EMPTY) if pinned_buffer(leaf)}
        kept = frozenset(p for p in st.pending if not (
            p.hazard.ended_by_write and p.leaves and all(pinned_buffer(leaf) and leaf.site in sites for leaf in p.leaves)))
        if kept == st.pending:
            return st
        st = st.copy()
        st.pending = kept
        return st

    def no_device(self, st: State, test: ast.expr, truth: bool) -> State:
        """``st`` on the branch of ``test`` where a pack ``device-available`` call
        (``torch.cuda.is_available()``, under any number of ``not``) is False: no device
        exists there, so no device copy was issued on this path and none is in flight (the
        way ``if torch.cuda.is_available(): torch.cuda.synchronize()`` waits on every path
        that issued one)."""
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, truth = test.operand, not truth
        if truth or not isinstance(test, ast.Call) or not (st.flying or st.pending):
            return st
        name = base_name(self.frame.module, test.func)
        available = {p.qualname for p in self.frame.vocab.vocab.device_available if p.qualname}
        if name is None or self.frame.program.index.canonical(name) not in available:
            return st
        st = st.copy()
        st.pending = frozenset(p for p in st.pending if not p.hazard.settled_by_sync)
        st.flying = frozenset()
        return st

    def _device_sync(self, call: ast.Call) -> bool:
        """Is ``call`` a device-wide synchroniser of the packs (``torch.cuda.synchronize()``:
        a function, not a stream's or an event's method)?"""
        name = base_name(self.frame.module, call.func)
        if name is None:
            return False
        functions = {p.qualname for p in self.frame.vocab.vocab.synchronizers
                     if p.qualname and not p.qualname.rpartition(".")[0].rpartition(".")[2][:1].isupper()}
        return self.frame.program.index.canonical(name) in functions

    def meet_pending(self, node: ast.AST, leaves: list, what: str, racing: Callable[[Pending], bool]) -> None:
        """Report the write of the pinned buffers among ``leaves`` against each copy to the
        device that still reads a part of them and that it may race (``racing``)."""
        frame = self.frame
        st = frame.st
        parts = [leaf for leaf in leaves if pinned_buffer(leaf)]
        if st is None or not parts:
            return
        sink = None
        for pending in sorted(st.pending, key=lambda p: repr(p.key)):
            if not pending.hazard.ended_by_write or not racing(pending):
                continue
            for leaf in pending.leaves:
                if any(meets(leaf, part) for part in parts):  # a write to another part: no hazard
                    sink = sink or replace(frame.step(node, ""), fact=sink_fact(Hazard.HOST_WRITTEN_IN_FLIGHT, what))
                    self.facts.report(frame.site(node, what), leaf.trace + (pending.step, sink), Hazard.HOST_WRITTEN_IN_FLIGHT)

    def write_parameters(self, node: ast.AST, leaves: list, what: str) -> None:
        """A parameter that may hold a pinned buffer, written before this function
        synchronised: each caller judges the write against the copies it has in flight
        (``call_project``; the finding is made at the caller's call)."""
        frame = self.frame
        st = frame.st
        params = [leaf for leaf in leaves if isinstance(leaf, ParamRef)]
        if st is None or not params:
            return
        sink = replace(frame.step(node, ""), fact=sink_fact(Hazard.HOST_WRITTEN_IN_FLIGHT, what))
        for leaf in params:
            if (frame.info.qualname, leaf.index) in frame.program.pinned_hot:
                reach = SinkReach(leaf.index, leaf.path, st.assume | leaf.when, None, (sink,), Hazard.HOST_WRITTEN_IN_FLIGHT)
                self.facts.add_reach(reach)

    def carry_over(self, node: ast.AST) -> None:
        """The function ends with a copy still reading a pinned buffer it read from its
        receiver's field (one that outlives the call): kept, to be met with the next call's
        first write to it before a synchronisation once the function is analysed
        (``carried_over``)."""
        frame, facts = self.frame, self.facts
        st = frame.st
        if st is None or not facts.kept_buffers:
            return
        for pending in st.pending:
            if not pending.hazard.ended_by_write:
                continue
            before = frozenset(  # event fields recorded here before this copy: the next call's wait on one misses it
                name for name, value in st.vars.items()
                if is_event_stand_in(name) and value.recorded is not None and pending.key not in value.recorded
            )
            for leaf in pending.leaves:
                if leaf.site in facts.kept_buffers and leaf.site not in facts.in_turn:
                    ends = frame.step(node, f"`{frame.info.display}` returns with the copy still reading it")
                    trace = leaf.trace + (pending.step, ends)
                    key = (leaf.site, leaf.objects, constant_part(leaf.region))
                    known = facts.carried.get(key)
                    if known is None or preferred_trace(trace, known):
                        facts.carried[key] = trace
                    facts.recorded_before[key] = facts.recorded_before.get(key, frozenset()) | before

    def taken_in_turn(self, value: Value) -> None:
        """``self.bufs[i]`` with ``i`` advanced modulo the pool (``rotation``): the next call
        writes another slot, so a copy still reading this one at the return is not carried
        over to it. By allocation site: a slot of that pool picked otherwise is not told apart."""
        self.facts.in_turn.update(leaf.site for leaf in deep_leaves(value) if pinned_buffer(leaf))

    def carried_over(self) -> None:
        """After the analysis: a copy the function may end with still reading a kept buffer
        (``carry_over``), and a write to that buffer before the function synchronises
        (``write_host``): each such write of the next call to a part the copy reads (only
        constant bounds tell parts apart across calls) races with this call's copy, the later
        ones as much as the first (as in a loop's next round)."""
        frame, facts = self.frame, self.facts
        for (site, objects, part), trace in sorted(facts.carried.items(), key=lambda item: repr(item[0])):
            before = facts.recorded_before.get((site, objects, part), frozenset())
            meeting = {
                position: (write, what, waits) for (written, owners, region), writes in facts.unsynced_writes.items()
                if written == site and same_object(objects, owners) and not disjoint(part, region)
                for position, (write, what, waits) in writes.items()
                if waits is None or waits & before  # no wait before it, or one for an event recorded before the copy
            }
            for _, (write, what, waits) in sorted(meeting.items()):  # each one races, as in a loop's next round
                how = "before any synchronisation" if waits is None else \
                    f"after waiting for `{event_field(min(waits & before))}`, recorded before the copy"
                sink = replace(
                    frame.step(write, f"the next call writes it {how}"),
                    fact=sink_fact(Hazard.HOST_WRITTEN_IN_FLIGHT, what),
                )
                found = frame.site(write, what)
                facts.report(found, trace + (sink,), Hazard.HOST_WRITTEN_IN_FLIGHT)
                facts.next_call.add((Hazard.HOST_WRITTEN_IN_FLIGHT, found))

    def record_event(self, name: str, current_only: bool = False) -> None:
        """``event.record()``: the event waits for the device work issued so far, no later
        (``issued_work``); recorded on the current stream (``current_only``), not for the
        copies issued under a stream context (``current_stream_work``): streams are ordered
        only within themselves. ``name``: the variable holding the event, or the stand-in for
        an event held in a field (``call_packs.event_holder``)."""
        st = self.frame.st
        if st is not None:
            work = current_stream_work(st, self.frame.side_issued) if current_only else issued_work(st)
            st.vars[name] = evolve(st.vars.get(name, EMPTY), recorded=work)

    def forget_records(self, keys: frozenset) -> None:
        """Device work issued again at ``keys`` (the same copy in the next round of a loop):
        an event recorded before is recorded before this one too, so it no longer covers it."""
        st = self.frame.st
        if st is None:
            return
        stale = [name for name, value in st.vars.items() if value.recorded and value.recorded & keys]
        for name in stale:
            value = st.vars[name]
            st.vars[name] = evolve(value, recorded=value.recorded - keys)  # type: ignore[operator]  # recorded is set: checked above

    def fill(self, target: ast.expr, copy: Value, buffers: frozenset) -> None:
        """``pinned.copy_(gpu, non_blocking=True)``: the variable ``target`` names holds the
        copy in flight from now on, and so does every view of the pinned ``buffers`` it is,
        however it is reached (``fills_of``: ``self.arr = self.pinned.numpy()`` read in this
        method or, once it returns in flight, in another: ``Stores.keep_in_flight``)."""
        st = self.frame.st
        if isinstance(target, ast.Name) and st is not None:
            st.vars[target.id] = join(st.vars.get(target.id), copy)
        filled = self.facts.filled_buffers
        for buffer in buffers:
            filled[buffer] = join(filled.get(buffer), copy)
        if self._own_field(target):
            self.facts.own_fills.update(buffers)

    def _own_field(self, target: ast.expr) -> bool:
        """``self.cpu.copy_(...)``, ``self.cpu[:n].copy_(...)``: the buffer is one the
        receiver keeps itself, so which object's buffer it is the caller decides (every
        object of the class shares the allocation site); through another object's field
        (``self.batch.cpu``) it is the one that object keeps."""
        while isinstance(target, ast.Subscript):
            target = target.value
        receiver = self.frame.receiver_name
        return (
            receiver is not None and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name) and target.value.id == receiver
        )

    def reader_class(self) -> str:
        """The class of the method reading a field ("" for a function): a buffer a method
        filled through its own receiver's field is in flight for that class's methods only
        (``Program.buffer_fill``)."""
        return self.frame.info.class_qualname or ""

    def fills_of(self, leaves) -> frozenset:
        """The copies in flight into the pinned buffers among ``leaves`` (views of a buffer
        share its bytes: reading one reads what the copy is still filling)."""
        filled = self.facts.filled_buffers
        if not filled:
            return frozenset()
        out: frozenset = frozenset()
        for leaf in leaves:
            if not pinned_buffer(leaf):
                continue
            for (site, objects), fill in filled.items():  # one object's fill is not another's
                if site == leaf.site and same_object(objects, leaf.objects):
                    out = out | fill.leaves
        return out

    def with_fills(self, value: Value) -> Value:
        """``value`` with the copies in flight into the pinned buffers it holds, where it
        holds them (``fills_of``): a sink reading what it is handed on the host (a task,
        a queue's getter) reads ``self.pinned`` after ``self.pinned.copy_(gpu,
        non_blocking=True)`` as it reads a variable the copy filled."""
        if not self.facts.filled_buffers:
            return value
        fills = self.fills_of(value.leaves)
        elems = self.with_fills(value.elems) if value.elems is not None else None
        items = tuple(self.with_fills(item) for item in value.items) if value.items is not None else None
        if not fills and elems is value.elems and (items is None or all(a is b for a, b in zip(items, value.items or ()))):
            return value
        return evolve(value, leaves=value.leaves | fills, elems=elems, items=items)

    def landed(self, value: Value) -> Value:
        """``value`` without the in-flight copies a synchronisation on this path completed
        (what a function hands back: its callers see those as ordinary host tensors)."""
        st = self.frame.st
        if st is None or not any(isinstance(leaf, Borrow) and leaf.flight for leaf in deep_leaves(value)):
            return value
        flying = st.flying
        return map_leaves(value, lambda leaf: None if landed_leaf(leaf, flying) else leaf)

    # -- producers ---------------------------------------------------------------------------

    def refresh(self, value: Value) -> None:
        """``value``'s borrowed objects were just handed out (by a source, a helper, the next
        element of a stream): not refilled, whatever an ``advances`` call did to older ones."""
        st = self.frame.st
        if st is not None and st.refilled:
            fresh = {leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow)}
            st.refilled = frozenset(entry for entry in st.refilled if entry[0] not in fresh)

    def advance(self, node: ast.AST, what: str, specs: tuple = (), kept: bool = False) -> None:
        """``ring.release(slot)``: the producer may refill its buffer now, as when its loop
        advances: work still reading a view is a race, and the views in hand are stale
        (until a ``ready-after`` call of every source in ``specs``, the ones declaring it).
        ``kept``: the call is made on a field of the receiver (``self.enc.encode(out)``), so
        the method's next call makes it again (``advance_next_call``)."""
        st = self.frame.st
        if st is None:
            return
        if kept:
            site = (self.frame.info.qualname, node.lineno, node.col_offset)  # type: ignore[attr-defined]
            self.facts.kept_advances[site] = what
        self.facts.advanced = True  # and so may a call of this function (``Summary.advances``)
        step = self.frame.step(node, f"the producer may refill its buffer after `{what}(...)`")
        self.facts.advanced_by[step] = specs
        if step not in self.facts.advanced_under:
            self.facts.advanced_under[step] = branch_flags(self.frame.tables.node, node, self.frame.tables.stable_names)
        if st.pending:
            self.commit(st, step)
            st.pending = frozenset(p for p in _after_step(st.pending) if p.key[:1] == ("param",) or p.hazard.ended_by_write or p.leaves)
        held = {
            name: {leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow) and not program_memory(leaf)}
            for name, value in st.vars.items()
        }
        held = {name: sites for name, sites in held.items() if sites and not name.startswith("<")}
        if held:
            st.stale = st.stale | frozenset(held)
            st.refilled = st.refilled | frozenset((site, step) for sites in held.values() for site in sites)

    def ready(self, specs: tuple) -> None:
        """``layout = worker.next_layout()`` (a source's ``ready-after`` call): the writer has
        refilled the buffer, so the refills that advances of those sources let happen are
        over; the views in hand read the new contents from here on, as if handed out again
        (``refresh``). Views of an advance that some other source also declares, or of a
        helper that advances, stay stale. Granularity is the source's site, as for
        ``refresh``: a view taken before the advance and read after this call is not told
        from one taken after it (one kept in a container past its step is reported as kept anyway)."""
        st = self.frame.st
        if st is None or not st.refilled:
            return
        advanced_by = self.facts.advanced_by

        def over(step: TraceStep) -> bool:
            by = advanced_by.get(step, ())
            return bool(by) and all(spec in specs for spec in by)

        ended = frozenset(entry for entry in st.refilled if over(entry[1]))
        if not ended:
            return
        st.refilled = st.refilled - ended
        fresh = {site for site, _ in ended} - {site for site, _ in st.refilled}
        st.stale = frozenset(name for name in st.stale if not _only_at(st.vars.get(name, EMPTY), fresh))

    def refill(self, node: ast.AST, target: ast.expr, value: Value, what: str) -> None:
        """``sock.recv_into(buf)``: the call reads new records into ``buf``. Work still
        reading a view of what the buffer held is a race (the view's next refill is its
        producer's step), and the views in hand are out of date; from here on ``buf`` holds a
        new borrowed object, this call's, which the buffer's next refill ends in turn. A buffer
        the receiver keeps in a field is refilled again by the next call of the method
        (``refill_next_call``); a local one only by a refill here. Views of a kept buffer
        held across a refill are not marked out of date (its field gives every refill's
        object back: a known gap)."""
        frame, facts = self.frame, self.facts
        st = frame.st
        if st is None:
            return
        site = (frame.info.qualname, node.lineno, node.col_offset)  # type: ignore[attr-defined]
        old = {leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow) and leaf.refill}
        text = short(target)
        step = frame.step(node, f"`{what}(...)` refills `{text}` with the next records")
        if old:
            self.commit_refilled(st, old, step)
            if isinstance(target, ast.Name):  # the views of the buffer's last contents are out of date
                st.refilled = st.refilled | frozenset((s, step) for s in old if s != site)
        for loop in frame.op.loops if frame.op is not None else ():
            frame.advancing[node_key(loop)] = True  # each round refills the buffer: a producer's loop
        kind = frame.vocab.vocab.kind_of_types(value.types | value.declared)
        note = f"`{what}(...)` reads into `{text}` in place: its views are borrowed until it is refilled"
        source = replace(frame.step(node, note), fact=("source", kind, "borrowed"))
        fresh = Borrow(site, False, (source,), kind=kind, refill=True, pageable=pageable_buffer(value))
        if isinstance(target, ast.Name):
            st.vars[target.id] = evolve(value, leaves=frozenset(
                leaf for leaf in value.leaves if not (isinstance(leaf, Borrow) and leaf.refill and leaf.site == site)
            ) | {fresh})
        elif isinstance(target, ast.Attribute) and self.frame.keeps_in_receiver(target):
            facts.kept_refills[site] = text
            # the same object, refilled: still of its class (a bytearray, whose slices are copies)
            refilled = Value(leaves=frozenset({fresh}), types=value.types, declared=value.declared)
            frame.program.store_field(cast(str, frame.info.class_qualname), target.attr, refilled)
        self.refresh(Value(leaves=frozenset({fresh})))

    def reuse(self, sites: frozenset, node: ast.AST, what: str) -> None:
        """``reader.on_chunk(self.remember)``: the registrar reuses the buffer it lent the
        callback once the callback returns, so what the callback left pending on it (a view
        a method kept in its receiver's field, handed back to this call like a future) is a
        race now, not at this function's own step."""
        st = self.frame.st
        if st is None or not st.pending:
            return
        step = self.frame.step(node, f"`{what}(...)` reuses its buffer once the callback returns")
        self.commit_lent(st, lambda leaf: isinstance(leaf, Borrow) and leaf.site in sites, step)

    def commit_refilled(self, state: State, sites: set, step: TraceStep) -> None:
        """The buffers at ``sites`` are refilled now: the work reading their views is a race
        (reported with that work's hazard); what it reads of other producers stays pending."""
        self.commit_lent(state, lambda leaf: isinstance(leaf, Borrow) and leaf.refill and leaf.site in sites, step)

    def commit_lent(self, state: State, reused: Callable[[object], bool], step: TraceStep) -> None:
        """The borrowed objects ``reused`` selects are reused now: the work reading them is a
        race (reported with that work's hazard); what it reads of other producers stays pending."""
        facts = self.facts
        kept = set()
        for pending in state.pending:
            refilled = frozenset(leaf for leaf in pending.leaves if reused(leaf))
            for leaf in refilled:
                if pending.holder is not None:
                    facts.retained_in.setdefault(pending.holder[0], set()).add((pending.hazard, pending.site))
                facts.report(pending.site, leaf.trace + (pending.step, step), pending.hazard)
            if pending.leaves - refilled:
                kept.add(replace(pending, leaves=pending.leaves - refilled) if refilled else pending)
        state.pending = frozenset(kept)

    def handed_out(self, value: Value, yielded: bool) -> Value:
        """What a function hands its caller of the buffers it refills: a generator yielding a
        view refills the buffer at its next step, and a function returning a view of a buffer
        its receiver keeps at its next call, so the caller gets a view its producer reuses
        (an ordinary borrowed object); a view of a buffer made for the call is the caller's."""
        if not any(refilled_buffer(leaf) for leaf in deep_leaves(value)):
            return value
        kept = self.facts.kept_refills

        def handed(leaf):
            if not refilled_buffer(leaf):
                return leaf
            return replace(leaf, refill=False) if yielded or leaf.site in kept else None

        return map_leaves(value, handed)

    def refill_next_call(self, node: ast.AST) -> None:
        """The function ends with work still reading a buffer the receiver keeps, which the
        next call refills (``kept_refills``): a race, reported with that work's hazard."""
        frame, facts = self.frame, self.facts
        st = frame.st
        if st is None or not facts.kept_refills or not st.pending:
            return
        for site, text in sorted(facts.kept_refills.items(), key=lambda item: repr(item[0])):
            step = frame.step(node, f"`{frame.info.display}` returns: its next call refills `{text}`")
            self.commit_refilled(st, {site}, step)

    def advance_next_call(self, node: ast.AST) -> None:
        """The method ends with views kept in its receiver's containers that a call on one of
        its receiver's fields handed out, a call that also advances their producer
        (``kept_advances``: an encoder writing each frame into one buffer): the method's next
        call makes it again and refills them, whatever the caller does. Kept there, they
        would otherwise be handed to the caller, whose own producer's step ends them."""
        frame, facts = self.frame, self.facts
        st = frame.st
        receiver = frame.receiver_name
        if st is None or not facts.kept_advances or not receiver:
            return
        again = facts.kept_advances
        left = set()
        for pending in st.pending:
            holder = (pending.holder[0] or "") if pending.hazard.kept and pending.holder else ""
            refilled = frozenset(
                leaf for leaf in pending.leaves if isinstance(leaf, Borrow) and leaf.site in again
            ) if holder.startswith(receiver + ".") else frozenset()
            for leaf in refilled:
                note = f"`{frame.info.display}` returns: its next call calls `{again[leaf.site]}(...)` again, which refills the buffer"
                facts.retained_in.setdefault(holder, set()).add((pending.hazard, pending.site))
                facts.report(pending.site, leaf.trace + (pending.step, frame.step(node, note)), pending.hazard)
            if pending.leaves - refilled:
                left.add(replace(pending, leaves=pending.leaves - refilled) if refilled else pending)
        st.pending = frozenset(left)

    def use_after_refill(self, node: ast.AST, value: Value, what: str) -> None:
        """A call reads a view whose producer may have refilled the buffer (a view kept past
        its step)."""
        frame = self.frame
        st = frame.st
        if st is None or not st.refilled:
            return
        steps = {site: step for site, step in st.refilled}
        facts = self.facts
        through = frozenset(deep_leaves(value)) - value.leaves  # read through a container
        for leaf in deep_leaves(value):
            if not (isinstance(leaf, Borrow) and leaf.site in steps):
                continue
            kept = facts.kept_at.get(leaf.site) if leaf in through else None
            if kept is None:
                use = replace(frame.step(node, ""), fact=sink_fact(Hazard.KEPT_PAST_STEP, what, READ_AFTER_ADVANCE))
                facts.report(frame.site(node, what), leaf.trace + (steps[leaf.site], use), Hazard.KEPT_PAST_STEP)
                continue
            # One report per bug: where the view escaped into the container, the read a step.
            site, store, holder = kept
            read = frame.step(node, f"read by `{what}(...)` after the producer may have refilled it")
            if holder is not None and holder in facts.retained_in:
                facts.read_steps.setdefault(holder, read)  # the store is a finding already
            else:
                facts.report(site, leaf.trace + (store, steps[leaf.site], read), Hazard.KEPT_PAST_STEP)

    def materialize(
        self,
        node: ast.AST,
        value: Value,
        what: str,
        reach: SinkReach | None = None,
        hazard: Hazard = Hazard.KEPT_PAST_STEP,
        note: str | None = None,
    ) -> None:
        """``list(stream)``: every element is held at once while the producer advances (kept
        past its step); an eager sink (``Executor.map``) queues every element the same way,
        with the sink's hazard."""
        frame, facts = self.frame, self.facts
        st = frame.st
        if st is None:
            return
        step = frame.step(node, note or f"every element is kept at once by `{what}` while the producer advances")
        if value.lazy:
            leaves = frozenset(leaf for leaf in deep_leaves(value.elems, through_lazy=True) if not program_memory(leaf))
            site = reach.site if reach is not None and reach.site else frame.site(node, what)
            for leaf in leaves:
                trace = leaf.trace + (reach.trace if reach is not None else ()) + (step,)
                if isinstance(leaf, Borrow):
                    facts.report(site, trace, hazard)
                else:
                    facts.add_reach(SinkReach(leaf.index, leaf.path, st.assume | leaf.when, site, trace, hazard, True))
            return
        for leaf in value.leaves:
            if isinstance(leaf, ParamRef) and reach is None:
                facts.add_reach(SinkReach(leaf.index, leaf.path, st.assume | leaf.when, frame.site(node, what), (step,), hazard, True))

    def signal(self, objects: frozenset, keys: frozenset) -> None:
        """A task marks the objects ``objects`` done when it ends (``call_tasks.
        signal_when_done``): the variables holding one stand for its work (``keys``), so a
        wait on one (``done.wait()``) settles it."""
        st = self.frame.st
        if st is None:
            return
        for name, value in list(st.vars.items()):
            if value.alloc & objects:
                st.vars[name] = evolve(value, pending=value.pending | keys)

    def mark(self, target: ast.expr, stmt: ast.AST, kind: str) -> None:
        """``setattr(t, MARKER, True)``: ``t`` is now a borrowed value (its producer is here)
        of the kind that names the marker."""
        frame = self.frame
        spec = frame.vocab.vocab.kinds.get(kind)
        if spec is not None and not spec.lends:
            return  # no version of the library the project admits lends (``lends-in``)
        st = frame.st
        if isinstance(target, ast.Name) and st is not None:
            old = st.vars.get(target.id, EMPTY)
            if any(isinstance(leaf, Borrow) and not leaf.view for leaf in old.leaves):
                return  # already known borrowed (from a source): one origin, one trace
            condition = f" {spec.condition}" if spec is not None and spec.condition else ""
            note = f"`{target.id}` is marked borrowed (zero-copy view of a reused buffer){condition}"
            version = (spec.condition, spec.admitted, spec.floor) if spec is not None and condition else ()
            step = replace(frame.step(stmt, note), fact=("source", kind, "borrowed", *version))  # for words and fixes
            leaf = Borrow((frame.info.qualname, stmt.lineno, stmt.col_offset), False, (step,), kind=kind)  # type: ignore[attr-defined]
            st.vars[target.id] = Value(
                leaves=old.leaves | {leaf}, elems=old.elems, items=old.items, lazy=old.lazy, types=old.types
            )


def refilled_buffer(leaf: object) -> bool:
    """A view of a buffer the program refills (``Borrow.refill``)."""
    return isinstance(leaf, Borrow) and leaf.refill


def _after_step(pending: frozenset) -> frozenset:
    """What a producer's step leaves of the pending work: each entry cut to its views of
    buffers the program refills (only their next refill ends them; the caller drops the
    entries left with none), stand-ins and the copies only a write ends as they were."""
    out = set()
    for p in pending:
        if is_stand_in(p) or p.hazard.ended_by_write:
            out.add(p)
            continue
        refilled = frozenset(leaf for leaf in p.leaves if refilled_buffer(leaf))
        out.add(replace(p, leaves=refilled))
    return frozenset(out)


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _with_preferred_traces(known: Pending, new: Pending) -> Pending:
    """``known`` (equal to ``new``: equality ignores traces) with each leaf's and the step's
    shorter trace of the two (ties broken by content, so the choice is the same every run)."""
    theirs = {leaf: leaf for leaf in new.leaves}
    leaves = frozenset(theirs[leaf] if preferred_trace(theirs[leaf].trace, leaf.trace) else leaf for leaf in known.leaves)
    step = new.step if preferred_trace((new.step,), (known.step,)) else known.step
    return replace(known, leaves=leaves, step=step)


def polls_done(function: ast.AST, name: str, flags: frozenset) -> bool:
    """Does ``function`` test a done-flag of an element of the local container ``name``
    (``name[-1][0].done``, ``name[0].done()``)?"""
    for node in walk(function):
        if isinstance(node, ast.Attribute) and node.attr in flags and isinstance(node.value, ast.Subscript):
            base: ast.expr = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Name) and base.id == name:
                return True
    return False


def _on_current_stream(pending: Pending) -> bool:
    """A copy to the device this function issued on the current stream (``stage``), not on
    a side stream nor in a callee."""
    key = pending.key
    return len(key) == 3 and key[0] == "staged"


def _only_at(value: Value, sites: set) -> bool:
    """Every borrowed object ``value`` holds is from one of ``sites`` (and it holds one)."""
    borrowed = [leaf.site for leaf in deep_leaves(value) if isinstance(leaf, Borrow)]
    return bool(borrowed) and all(site in sites for site in borrowed)


def flag_test(test: ast.expr, truth: bool, stable: frozenset[str]) -> tuple[str, bool] | None:
    """``if flag:`` / ``if not flag:`` of a name with one value in the whole call (``stable``):
    (the name, the truth it has on the branch taken with ``truth``)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, truth = test.operand, not truth
    return (test.id, truth) if isinstance(test, ast.Name) and test.id in stable else None


def branch_flags(function: ast.AST, node: ast.AST, stable: frozenset[str]) -> frozenset[tuple[str, bool]]:
    """The flags (``flag_test``) that hold wherever ``node`` runs: it is in the body or the
    ``else`` of an ``if flag:`` or a ``... if flag else ...``. A flag keeps its value for the
    whole call, so a path on which it tests the other way never ran ``node``."""
    out: set[tuple[str, bool]] = set()
    for branch in walk(function):
        if not isinstance(branch, (ast.If, ast.IfExp)):
            continue
        body = branch.body if isinstance(branch.body, list) else [branch.body]
        orelse = branch.orelse if isinstance(branch.orelse, list) else [branch.orelse]
        for part, truth in ((body, True), (orelse, False)):
            flag = flag_test(branch.test, truth, stable)
            if flag is not None and any(sub is node for stmt in part for sub in walk(stmt)):
                out.add(flag)
    return frozenset(out)


def refills_not_taken(st: State, test: ast.expr, truth: bool, facts: FunctionFacts, tables: FunctionTables) -> State:
    """``st`` on a branch where a flag tests ``truth``, without the refills of the
    ``advances`` calls made only where the flag tests the other way: that path made none
    (``if is_driver: sock.send(ack)``, then ``sock.recv() if is_driver else None``: on the
    other ranks nothing was acknowledged, so nothing is being refilled)."""
    flag = flag_test(test, truth, tables.stable_names) if st.refilled else None
    if flag is None:
        return st
    other = (flag[0], not flag[1])
    kept = frozenset(entry for entry in st.refilled if other not in facts.advanced_under.get(entry[1], ()))
    if kept == st.refilled:
        return st
    st = st.copy()
    st.refilled = kept
    return st


def handed_records(value: Value) -> frozenset:
    """The device work the events handed along in ``value`` were recorded after (an item
    ``(slot, ev)`` put on a queue, ``ev.record()`` issued after the copy into ``slot``): the
    reader that gets the item can wait for those copies, so handing them over is no host
    read, as a task handed such an event is judged (``call_tasks``)."""
    found = value.recorded or frozenset()
    for part in (*(value.items or ()), value.elems):
        if part is not None:
            found = found | handed_records(part)
    return found
