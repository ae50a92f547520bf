"""Project-wide propagation: choose the files that can matter, compute every function's
summary to a fixpoint across functions, methods and modules, and collect the findings.

Parsing every file of a large tree would dominate the run, so the analysis is driven by the
vocabulary: a file is parsed when it mentions a pack name that creates or judges borrowed
values (a source, marker or guard), when it defines a function that a parsed function passes
borrowed values (or parameters that may receive them) to, or when it mentions a function
that turned out to return borrowed values. Rounds
repeat until no new file is needed, so the result is the same as analysing everything for
every flow that name resolution can see.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Container, Iterable


from bufferlint.analysis.whole.callee_order import CalleesFirst
from bufferlint.analysis.frontend.imports import ImportGraph, Reached, reached, scan_imports
from bufferlint.analysis.frontend.index import GLOBALS, FunctionInfo, ModuleInfo, ProjectIndex, dotted_name, module_name
from bufferlint.analysis.transfer.facts import Outcome
from bufferlint.analysis.transfer.guard_expressions import names_marker
from bufferlint.analysis.transfer.interpreter import FunctionInterpreter
from bufferlint.analysis.incremental.replay import AnalysisLog, RecordingProgram
from bufferlint.analysis.frontend.spans import Spans
from bufferlint.analysis.frontend.syntax_check import SyntaxCheck
from bufferlint.analysis.frontend.trees import parse_tree
from bufferlint.analysis.frontend.textscan import (
    body_mentions, callee_words, defined_names, group_lines, match_lines, mentions_group, seed_groups, word_pattern,
)
from bufferlint.analysis.domain.conditions import FIELD, MAX_CONDITIONS, bounded, fails_by_default, field_operand
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, Summary, changes_returned_object_only, guards_kind, returns_borrowed
from bufferlint.analysis.domain.values import (
    Borrow, Value, deep_leaves, evolve, held_in_heap, join, pinned_buffer, program_memory, same_object,
)
from bufferlint.analysis.frontend.vocabmatch import VocabIndex
from bufferlint.analysis.world import is_hot
from bufferlint.catalog import rule_for
from bufferlint.gcpause import paused_gc
from bufferlint.lifetime import keep_until_exit, let_go
from bufferlint.analysis.domain.limits import told_with
from bufferlint.catalog.words import kind_of
from bufferlint.findings import COVERS, DECIDED_BY, PASSED_GUARD, AnalysisResult, FileError, Finding, Span, TraceStep, preferred_trace
from bufferlint.hazards import Hazard
from bufferlint.internal import debugging, internal_error
from bufferlint.packs import Vocabulary
from bufferlint.source import read_bytes, read_source

MAX_ANALYSES_PER_FUNCTION = 24


class Program:
    def __init__(self, root: Path, vocab: Vocabulary) -> None:
        self.root = root
        self.vocab = VocabIndex(vocab)
        self.raw_vocab = vocab
        self.index = ProjectIndex()
        self.summaries: dict[str, Summary] = {}
        self.outcomes: dict[str, Outcome] = {}
        self.callers: dict[str, set[str]] = {}
        self.analyses: dict[str, int] = {}
        self.sequence = 0  # analyses started so far (``AnalysisLog.seq``)
        self.active: set[str] = set()
        self.hot: set[tuple[str, int]] = set()
        self.flight_hot: set[tuple[str, int]] = set()  # parameters that may get a device copy in flight
        self.pinned_hot: set[tuple[str, int]] = set()  # parameters that may get a pinned buffer (their writes matter)
        # (function, parameter, field position, kind): record parameters' fields that may hold
        # a borrowed value ("borrowed") or a device copy in flight ("flight") (``flow_fields``),
        # and (function, parameter) for a parameter with any such field
        self.field_hot: set[tuple[object, ...]] = set()
        self._hot_fields: dict[tuple[str, int], set[tuple[int, str]]] = {}  # the same, by parameter
        # Functions to analyse: ``worklist`` first; ``deferred`` holds callers whose callee's
        # summary changed, analysed once the work in hand is done, callees first (so a caller
        # that dispatches to hundreds of methods runs once after they settle, not once each).
        self.worklist: deque[str] = deque()
        self.deferred: deque[str] = deque()
        self.failures: dict[str, Exception] = {}  # functions the interpreter could not analyse
        self.capped: set[str] = set()  # analysis limits hit, reported as notices
        self.module_names: set[str] = set()  # every module of the project, parsed or not
        # Every module's text and whether it is a package: the import graph's input (``import_graph``).
        self.module_texts: dict[str, tuple[bytes, bool]] = {}
        self._import_graph: ImportGraph | None = None
        self.heap: dict[tuple[str, str], Value] = {}  # (class, attribute) -> borrowed values kept there
        # (class, attribute) -> the functions that read it through an object of that class
        # (``field_value``): a function reading ``slab.slots`` of a parameter ``slab: Slab``
        # is no method of ``Slab`` (``ClassInfo.readers``), and must see a store made later.
        self.field_readers: dict[tuple[str, str], set[str]] = {}
        self.analysing: str | None = None  # the function the interpreter runs now (``solve``)
        # Pinned buffer (its site and object, ``Borrow.objects``) -> the copies from the device
        # some method left filling it when it returned (``Stores.keep_in_flight``): in flight
        # in every view of it kept in a field.
        self.buffer_fills: dict[tuple, Value] = {}
        self.filled_sites: dict[tuple, set[tuple]] = {}  # site -> its keys in ``buffer_fills``
        # ... and the classes whose methods filled it through their receiver's own field
        # ("": through another object's field, or in a function): only those classes'
        # methods (and their subclasses') read such a fill, since every object of the class
        # shares the buffer's allocation site and which one was filled is the caller's.
        self.buffer_owners: dict[tuple, frozenset[str]] = {}
        # What makes a callee matter with nothing borrowed passed to it (``consider``): the
        # pack's synchronisers and ``advances`` calls, then the functions found to call them.
        self.callee_words = callee_words(vocab)
        self._sync_pattern = word_pattern(self.callee_words)
        self._considered: set[str] = set()
        self._factories_checked: set[str] = set()  # callees asked whether they pick a class (``consider``)
        self.guards_seen: set[str] = set()  # functions used as guards whose overrides were asked for
        self.by_name_summaries: dict[str, tuple[Summary, Summary]] = {}  # see call_project.by_name_summary
        self.queued: set[str] = set()
        self.queued_later: set[str] = set()
        self.callees_first = CalleesFirst()  # picks from ``worklist`` (``callee_order``)
        self.spans = Spans()  # each module's lines, split once
        # Every analysis's reads, writes and outcome, when the run is recorded for the cache
        # (``analysis.replay``: an edit inside one function is checked against them).
        self.logs: dict[str, list[AnalysisLog]] | None = None
        self._subclass_memo: tuple[int, dict[str, list[str]]] | None = None  # see ``_subclasses``
        self._override_memo: tuple[int, dict[tuple[str, str], list[str]]] | None = None  # see ``overrides_in``

    # -- the heap: what the project's objects keep in their attributes ------------------

    def field_value(self, classes, attr: str) -> Value | None:
        """What ``obj.attr`` may hold, for ``obj`` of these classes: borrowed values any
        method of the class (or a base class) stored there."""
        out = None
        for name in classes:
            if self.analysing is not None:
                self.field_readers.setdefault((name, attr), set()).add(self.analysing)
            if name in self.index.classes:
                for owner in self.index.class_ancestors(name):
                    out = join(out, self.heap.get((owner, attr)))
            else:  # a module's variables (``index.globals_owner``), or a class not the project's
                out = join(out, self.heap.get((name, attr)))
        return out

    def store_field(self, owner: str, attr: str, value: Value) -> None:
        key = (owner, attr)
        value = held_in_heap(value)
        old = self.heap.get(key)
        new = join(old, value)
        if new == old:
            return
        self.heap[key] = new
        # Borrowed values, copies in flight and pinned buffers make the readers matter: a
        # method reading the field may hand the buffer on (``return self.slots[i % n]``, a
        # getter whose callers copy from it and write it; ``Borrow.held``), so it is analysed
        # wherever the buffer is read, not only once a copy from the device fills it. What
        # holds none of them (a construction's ``built``) changes only what readers see.
        self._wake_readers(owner, attr, next(deep_leaves(value), None) is not None)
        if any(pinned_buffer(leaf) and any("" in self.buffer_owners[key] for key in self._fills_meeting(leaf))
               for leaf in deep_leaves(value)):
            self._activate_mentioning({attr})  # a buffer filled already, kept here only now

    def _fills_meeting(self, leaf: Borrow) -> list[tuple]:
        """The buffers in ``buffer_fills`` that may be this pinned buffer: its site, an
        object that may be its (``Borrow.objects``)."""
        return [key for key in self.filled_sites.get(leaf.site, ()) if same_object(key[1], leaf.objects)]

    def buffer_fill(self, buffer: tuple, reader: str) -> Value | None:
        """The copies from the device some method left filling the pinned buffer ``buffer``
        (its site and object), as a method of the class ``reader`` ("": a function) sees them."""
        site, objects = buffer
        found = None
        for key in sorted(self.filled_sites.get(site, ()), key=repr):
            owners = self.buffer_owners[key]
            if not same_object(key[1], objects):
                continue
            if "" in owners or (reader and any(owner in self.index.class_ancestors(reader) for owner in owners)):
                found = join(found, self.buffer_fills[key])
        return found

    def fill_buffer(self, buffer: tuple, copy: Value, owner: str) -> None:
        """A method returns with ``copy`` still filling the pinned buffer ``buffer`` (its
        site and object; through a field of its own receiver, a method of ``owner``; else
        ""): the methods reading a field that keeps a view of it read the copy in flight."""
        site, objects = buffer
        old = self.buffer_fills.get(buffer)
        new = join(old, copy)
        owners = self.buffer_owners.get(buffer, frozenset())
        if new == old and owner in owners:
            return
        self.buffer_fills[buffer] = new
        self.buffer_owners[buffer] = owners | {owner}
        self.filled_sites.setdefault(site, set()).add(buffer)
        attrs = set()
        for (holder, attr), kept in list(self.heap.items()):
            if any(pinned_buffer(leaf) and leaf.site == site and same_object(leaf.objects, objects)
                   for leaf in deep_leaves(kept)):
                self._wake_readers(holder, attr, True)
                attrs.add(attr)
        if owner == "":  # read through any object's field (a fill of its own is its class's)
            self._activate_mentioning(attrs)

    def _activate_mentioning(self, attrs: set[str]) -> None:
        """Analyse the functions that read one of these attributes of some object
        (``self.state.accepted``: not a reader of ``state``'s class the index knows); the
        read decides, by the object's class, whether it is the field that keeps the buffer."""
        pattern = word_pattern(attrs)
        if pattern is None:
            return
        lines_by_module: dict[str, list[int]] = {}
        for info in list(self.index.functions.values()):
            if info.qualname in self.active:
                continue
            module = info.module
            lines = lines_by_module.get(module.name)
            if lines is None:
                lines = lines_by_module[module.name] = match_lines(pattern, module.text)
            first = getattr(info.node, "lineno", 1)
            last = getattr(info.node, "end_lineno", None) or 10**9
            position = bisect.bisect_left(lines, first)
            if position < len(lines) and lines[position] <= last:
                self.activate(info.qualname)

    def _wake_readers(self, owner: str, attr: str, lends: bool) -> None:
        """Analyse again the methods reading ``attr`` of ``owner``'s objects (and of its
        subclasses'); ``lends``: they matter now, analyse them even if they were not. The
        functions that read it through another object (``field_readers``) were analysed, so
        they are active: they see the new value. Of a module's variable (``owner`` its
        ``globals_owner``), the functions that read it, and those of the module returning it
        (``FunctionInfo.returned_globals``: a pool function hands its callers the buffer)."""
        if owner not in self.index.classes and owner.endswith(GLOBALS):
            module = owner[: -len(GLOBALS)]
            for function in list(self.index.functions.values()) if lends else ():
                if function.module.name == module and attr in function.returned_globals:
                    self.activate(function.qualname)
            for reader in sorted(self.field_readers.get((owner, attr), ())):
                if reader in self.active:
                    self.enqueue(reader)
            return
        for name, info in self.index.classes.items():
            if owner not in self.index.class_ancestors(name):
                continue
            for reader in sorted(info.readers.get(attr, ())):
                if lends:
                    self.activate(reader)
                if reader in self.active:
                    self.enqueue(reader)
            for reader in sorted(self.field_readers.get((name, attr), ())):
                if reader in self.active:
                    self.enqueue(reader)

    def in_project(self, qualname: str) -> bool:
        """Is this name defined in one of the project's modules (parsed or not)?"""
        parts = qualname.split(".")
        return any(".".join(parts[:cut]) in self.module_names for cut in range(len(parts) - 1, 0, -1))

    def summary(self, qualname: str) -> Summary:
        return self.summaries.get(qualname, EMPTY_SUMMARY)

    def methods_named(self, name: str | None, module: str) -> list[tuple[FunctionInfo, Reached | None]]:
        """The project's methods called ``name``, each with why a call in ``module`` can reach
        it (``reached``), or None when none of ``module``'s imports loads its module."""
        found = [self.index.functions[q] for q in self.index.methods_by_name.get(name or "", ())]
        if not found:
            return []
        graph = self.import_graph
        return [(info, reached(graph.reason(module, info.module.name))) for info in found]

    @property
    def import_graph(self) -> ImportGraph:
        """The project's import graph, read from every file's text on first use (only a
        call dispatched by method name asks for it)."""
        if self._import_graph is None:
            self._import_graph = ImportGraph(
                {name: scan_imports(data, name, is_package) for name, (data, is_package) in self.module_texts.items()}
            )
        return self._import_graph

    @property
    def read_imports(self) -> bool:
        """Did the analysis read the import graph (then the cache compares it: an edit to
        any file's imports may change what a call by name reaches)?"""
        return self._import_graph is not None

    def span(self, module: ModuleInfo, node: ast.AST) -> Span:
        return self.spans.span(module, node)

    # -- the fixpoint ---------------------------------------------------------------------

    def enqueue(self, qualname: str, later: bool = False) -> None:
        """Queue ``qualname`` for analysis (``later``: after the work in hand, see ``deferred``).
        A function waiting in ``deferred`` that is queued again now is analysed now."""
        if qualname not in self.index.functions:
            return
        waiting = self.queued_later if later else self.queued
        if qualname in waiting or (later and qualname in self.queued):
            return
        waiting.add(qualname)
        (self.deferred if later else self.worklist).append(qualname)
        if not later:
            self.callees_first.add(self.index.functions[qualname])

    @property
    def has_work(self) -> bool:
        return bool(self.worklist or self.queued_later)

    def _next(self) -> str:
        if self.worklist:
            qualname = self.callees_first.pick(self.worklist, self.queued, self.index.functions)
            self.queued.discard(qualname)
            self.queued_later.discard(qualname)
            return qualname
        qualname = self._callees_first()
        self.queued_later.discard(qualname)
        return qualname

    def _callees_first(self) -> str:
        """The deferred function to analyse next: the earliest queued whose callees wait for
        nothing deferred (analysing a caller before a callee that is still waiting would only
        queue it again); in a recursion cycle, the earliest queued."""
        waiting = [q for q in dict.fromkeys(self.deferred) if q in self.queued_later]
        self.deferred = deque(waiting)
        for qualname in waiting:
            outcome = self.outcomes.get(qualname)
            if outcome is None or not any(c in self.queued_later for c in outcome.callees if c != qualname):
                return qualname
        return waiting[0]

    def activate(self, qualname: str) -> None:
        """Analyse this function (its summary can matter to a borrowed value)."""
        if qualname not in self.active:
            self.active.add(qualname)
            self.enqueue(qualname)

    def consider(self, info: FunctionInfo) -> None:
        """A callee nobody passes borrowed values to still matters if it waits for the
        device (a helper around ``torch.cuda.synchronize()``), lets a producer refill its
        buffers (around ``ring.release(slot)``), picks the class of what it returns
        (``return chosen()``: which methods its callers' calls reach) or returns a closure
        (``return _set``: what its callers call later): analyse it then."""
        if info.qualname in self.active:
            return
        if info.qualname not in self._factories_checked:
            self._factories_checked.add(info.qualname)
            if info.builds_chosen_class() or info.returns_closure:
                self.activate(info.qualname)
                return
        if self._sync_pattern is None or info.qualname in self._considered:
            return
        self._considered.add(info.qualname)
        self._mentions_callee_word(info)

    def _mentions_callee_word(self, info: FunctionInfo) -> None:
        lines = self.spans.lines(info.module)
        node = info.node
        body = lines[getattr(node, "lineno", 1) - 1 : getattr(node, "end_lineno", None)]
        if any(self._sync_pattern.search(line) for line in body):
            self.activate(info.qualname)

    def _calls_a_callee_word(self, info: FunctionInfo) -> None:
        """``info`` waits for the device or lets a producer advance: a callee calling it by
        name matters too (a helper two levels above ``ring.release``); the callees already
        considered are asked again."""
        name = info.qualname.rsplit(".", 1)[-1]
        if name in self.callee_words or name.startswith("<"):
            return
        self.callee_words.add(name)
        self._sync_pattern = word_pattern(self.callee_words)
        for qualname in sorted(self._considered - self.active):
            self._mentions_callee_word(self.index.functions[qualname])

    def overrides(self, qualname: str) -> list[str]:
        """What the project's parsed subclasses run instead of method ``qualname`` of a class
        (``overrides_in`` of its class and name)."""
        info = self.index.functions.get(qualname)
        if info is None or info.class_qualname is None or info.kind == "module":
            return []
        return self.overrides_in(info.class_qualname, info.name)

    def overrides_in(self, class_qualname: str, name: str) -> list[str]:
        """What ``self.<name>(...)`` in a method of class ``class_qualname`` may run besides
        the class's own ``name``: what each parsed subclass reaches by that name through its
        hierarchy (a method, or a function a class attribute holds as a static method,
        ``ProjectIndex.class_method``), each once, in name order of the subclasses. Memoised
        until more modules are parsed: a base class's ``self.<name>()`` calls ask it at every
        analysis, for every subclass."""
        memo = self._override_memo
        if memo is None or memo[0] != len(self.index.modules):
            memo = self._override_memo = (len(self.index.modules), {})
        key = (class_qualname, name)
        found = memo[1].get(key)
        if found is None:
            found = memo[1][key] = self._reached_by_subclasses(class_qualname, name)
        return found

    def _reached_by_subclasses(self, class_qualname: str, name: str) -> list[str]:
        own = self.index.class_method(class_qualname, name)
        found: list[str] = []
        for class_name in self._subclasses().get(self.index.canonical(class_qualname), ()):
            target = self.index.class_method(class_name, name)
            if target is not None and target != own and target not in found and target in self.index.functions:
                found.append(target)
        return found

    def overrides_of(self, class_qualname: str, name: str) -> list[FunctionInfo]:
        """``overrides_in``, as the interpreter asks it: what ``self.<name>()`` in a method of
        the class may run besides the class's own ``name``."""
        return [self.index.functions[q] for q in self.overrides_in(class_qualname, name)]

    def guard_dispatch(self, used: str) -> tuple[str | None, list[str]]:
        """A guard as a call used it (``Outcome.used_as_guard``): a function, or ``Class.name``
        for ``self.name(w)`` dispatched through the class hierarchy (``targets_typed``) ->
        the function the class itself reaches, and what its subclasses run instead."""
        if used in self.index.functions:
            return used, self.overrides(used)
        owner, _, name = used.rpartition(".")
        if owner in self.index.classes:
            return self.index.class_method(owner, name), self.overrides_in(owner, name)
        return None, []

    def _subclasses(self) -> dict[str, list[str]]:
        """Class -> its parsed subclasses, in name order; worked out again once more modules
        are parsed (the index grows between rounds only). A ``typing.Protocol``'s are the
        classes that implement it structurally (``_implementations``): a parameter annotated
        with the protocol may hold any of them."""
        if self._subclass_memo is None or self._subclass_memo[0] != len(self.index.modules):
            table: dict[str, list[str]] = {}
            protocols: list[str] = []
            for class_name in sorted(self.index.classes):
                if _PROTOCOL_BASES.intersection(self.index.classes[class_name].bases):
                    protocols.append(class_name)
                for ancestor in self.index.class_ancestors(class_name):
                    if ancestor != class_name:
                        table.setdefault(ancestor, []).append(class_name)
            for protocol in protocols:
                implementations = self._implementations(protocol)
                if implementations:
                    table[protocol] = sorted(set(table.get(protocol, [])) | set(implementations))
            self._subclass_memo = (len(self.index.modules), table)
        return self._subclass_memo[1]

    def _implementations(self, protocol: str) -> list[str]:
        """The parsed project classes, not protocols themselves, that have every method the
        protocol declares (its own, not dunder): what a value annotated with it may be."""
        members = [name for name in self.index.classes[protocol].methods if not name.startswith("__")]
        if not members:
            return []
        own = self.index.classes[protocol].methods
        found: list[str] = []
        for class_name, info in self.index.classes.items():
            if class_name == protocol or _PROTOCOL_BASES.intersection(info.bases):
                continue
            if not info.bases and members[0] not in info.methods:
                continue  # the common case, decided without a lookup through the bases
            if all(self.index.class_method(class_name, member) not in (None, own[member]) for member in members):
                found.append(class_name)
        return found

    def flow(
        self, caller: str, callee: str, param: int, concrete: bool, params: frozenset, flight: bool = False,
        pinned: bool = False,
    ) -> None:
        """A call passes a value into ``callee``'s parameter; borrowed ones make it hot,
        device copies in flight make its host reads matter (only those parameters' reads do),
        and pinned buffers its writes."""
        if (callee, param) not in self.hot and is_hot(self, caller, concrete, params):
            self.hot.add((callee, param))
            self.activate(callee)
            self.enqueue(callee)
        if (callee, param) not in self.flight_hot and (flight or any((caller, p) in self.flight_hot for p in params)):
            self.flight_hot.add((callee, param))
            self.activate(callee)
        if (callee, param) not in self.pinned_hot and (pinned or any((caller, p) in self.pinned_hot for p in params)):
            self.pinned_hot.add((callee, param))
            self.activate(callee)

    def flow_fields(self, caller: str, callee: str, param: int, fields: tuple[tuple[int, str], ...],
                    records: tuple[int, ...]) -> None:
        """A call passes a record into ``callee``'s parameter: the record's fields at these
        positions hold borrowed values or copies in flight (``fields``: (position, kind)),
        and so do the hot fields of the caller's own record parameters passed whole
        (``records``). Only such fields of the parameter are followed past the callee's own
        sinks (``values.Field``): what the callee passes on, returns or keeps of them, and its
        host reads of fields in flight. Depth one: a field's field is no such field."""
        given = set(fields)
        for record in records:
            given.update(self._hot_fields.get((caller, record), ()))
        known = self._hot_fields.setdefault((callee, param), set())
        new = given - known
        if not new:
            return
        known.update(new)
        self.field_hot.add((callee, param))  # asked first: has the parameter any such field?
        self.field_hot.update((callee, param, position, kind) for position, kind in new)
        self.activate(callee)
        self.enqueue(callee)

    def solve(self, tick: Callable[[], None] | None = None, starting: Callable[[str], None] | None = None) -> None:
        """Run the worklist to a fixpoint; ``tick`` after each function analysed, ``starting``
        with its name before (progress)."""
        while self.has_work:
            qualname = self._next()
            info = self.index.functions.get(qualname)
            count = self.analyses.get(qualname, 0)
            if info is None:
                continue
            if count >= MAX_ANALYSES_PER_FUNCTION:
                self.capped.add(
                    f"{info.display}: summary still changing after {MAX_ANALYSES_PER_FUNCTION} analyses "
                    "(recursion through helpers?); findings through it may be incomplete"
                )
                continue
            self.analyses[qualname] = count + 1
            if starting is not None:
                starting(info.display)
            log = None
            if self.logs is not None:
                log = AnalysisLog(seq=self.sequence)
                self.logs.setdefault(qualname, []).append(log)
            self.sequence += 1
            self.analysing = qualname
            try:
                outcome = FunctionInterpreter(info, self if log is None else RecordingProgram(self, log, info)).run()
            except Exception as exc:  # an engine bug must cost one function, not the run
                if debugging():
                    raise
                self.failures[qualname] = exc
                continue
            finally:
                self.analysing = None
            self.outcomes[qualname] = outcome
            if log is not None:
                log.close(outcome)
            if tick is not None:
                tick()
            for callee in outcome.callees:
                self.callers.setdefault(callee, set()).add(qualname)
            for guard in sorted(outcome.used_as_guard - self.guards_seen):
                self.guards_seen.add(guard)
                for override in self.guard_dispatch(guard)[1]:  # what ``self.<guard>(w)`` may run too
                    # its first parameter after the receiver, if it binds one
                    guarded = (override, 1 if self.index.functions[override].binds_receiver else 0)
                    if guarded not in self.hot:
                        self.hot.add(guarded)
                        self.activate(override)
            if log is not None:
                log.waiting = all(c in self.queued_later or c in self.queued or c not in self.index.functions
                                  for c in self.callers.get(qualname, ()))
            before = self.summaries.get(qualname, EMPTY_SUMMARY)
            if outcome.summary != before:
                self.summaries[qualname] = outcome.summary
                if outcome.summary.advances or outcome.summary.synchronizes or outcome.summary.enters_synchronized:
                    self._calls_a_callee_word(info)
                readers = set(self.callers.get(qualname, ()))
                if changes_returned_object_only(before, outcome.summary):  # only callers using its value
                    readers = {c for c in readers if c not in self.outcomes or qualname in self.outcomes[c].returns_read}
                for caller in sorted(readers):  # an order that is the same in every run
                    self.enqueue(caller, later=True)


    def propagate_sited(self) -> dict[tuple, set]:
        """Every reach with a known report site carried up the call edges (``routes_to_sites``)."""
        incoming: dict[str, list] = {}
        for caller, outcome in self.outcomes.items():
            for edge in outcome.edges:
                incoming.setdefault(edge.callee, []).append((caller, edge))
        sited = {q: {reach: reach for reach in o.sited} for q, o in self.outcomes.items()}
        return routes_to_sites(sited, lambda callee: incoming.get(callee, ()), self.capped.add)


def routes_to_sites(sited: dict[str, dict], incoming: Callable[[str], Iterable], capped: Callable[[str], None]) -> dict[tuple, set]:
    """Carry reaches with a known report site up the call edges to a fixpoint: where a
    caller passes a borrowed value, the finding is made (at the site, with the trace).
    ``sited``: each function's own reaches (changed in place); ``incoming``: the (caller,
    edge) pairs of a function's calls; ``capped``: told each analysis limit hit.

    Each function keeps one trace per reach (the preferred one), so the fixpoint's
    result does not depend on the order it met them; the routes into each site are then
    read off that result: every call edge where a borrowed value meets a reach that ends
    there gives one trace. The finding shows the preferred one and counts the others.
    Reaches of different sites never meet, so the routes into some sites can be computed
    from the reaches of those sites alone (``analysis.incremental.cutoff``)."""
    queue = deque((q, reach) for q, reaches in sited.items() for reach in reaches)
    composed: dict[tuple, list] = {}  # the composition does not depend on the site or rule
    # (function, reach) -> the edges into it where a borrowed value meets the reach: whether
    # one does depends on what the reach equals (not on its trace), so the routes are read
    # off these edges alone, not off every edge of every reach again
    meeting: dict[tuple, dict[int, Any]] = {}  # the edges are untyped, as ``incoming`` gives them
    while queue:
        callee, reach = queue.popleft()
        for caller, edge in incoming(callee):
            for leaf, assume, materialized, decided in _compose(composed, edge, reach):
                if isinstance(leaf, Borrow):  # a route into the site: read off the fixpoint below
                    meeting.setdefault((callee, reach), {})[id(edge)] = edge
                    continue
                conditions, cut = bounded(assume | leaf.when)
                if cut:
                    capped(
                        f"{caller}: a finding's path depends on more than {MAX_CONDITIONS} conditions on the "
                        f"parameters; only {MAX_CONDITIONS} are checked at each call, so findings through it may be more than there are"
                    )
                new = evolve(reach, param=leaf.index, path=leaf.path, assume=conditions,
                             trace=leaf.trace + decided + (edge.step,) + reach.trace, materialized=materialized)
                reaches = sited.setdefault(caller, {})
                known = reaches.get(new)
                if known is None or preferred_trace(new.trace, known.trace):
                    reaches.pop(new, None)  # equal reaches compare equal whatever their trace
                    reaches[new] = new
                    queue.append((caller, new))
    routes: dict[tuple, set] = {}
    for callee, reaches in sited.items():
        for reach in reaches.values():
            for edge in meeting.get((callee, reach), {}).values():
                for leaf, _, _, decided in _compose(composed, edge, reach):
                    if isinstance(leaf, Borrow):
                        routes.setdefault((reach.hazard, reach.site), set()).add(leaf.trace + decided + (edge.step,) + reach.trace)
    return routes


def _compose(composed: dict[tuple, list], edge, reach) -> list:
    """What a caller passes along ``edge`` into ``reach``: (leaf, assumptions,
    materialized, the step naming the functions passed here that decided the reach's
    consumer, ``CallEdge.approving``) per leaf; copies in flight from the device are only
    host reads, never sited."""
    key = (id(edge), reach.param, reach.path, reach.materialized, reach.kept, reach.assume)
    if key not in composed:
        origins = edge.approving(reach.assume) if edge.verdicts else ()
        names = " or ".join(f"`{origin.rpartition('.')[2]}(...)`" for origin in origins or ())
        decided = (TraceStep(edge.step.path, edge.step.line, f"consumed there when {names} approves it",
                             (DECIDED_BY, origins)),) if origins else ()
        composed[key] = [
            (leaf, assume, reach.materialized and not payload.lazy, decided)
            for leaf, payload, assume, _ in edge.through(reach)
            if not program_memory(leaf)
        ]
    return composed[key]


def _decided_by_callers(trace: tuple, incoming: dict[str, list]) -> tuple | None:
    """``trace`` with each ``PASSED_GUARD`` step decided by the calls into its function
    (``ProjectAnalysis.decide_passed_guards``); None when the calls rule the path out."""
    out = []
    for step in trace:
        if step.fact[:1] != (PASSED_GUARD,):
            out.append(step)
            continue
        _, qualname, param, (asked, path, _) = step.fact
        approving: set[str] = set()
        known = True
        edges = incoming.get(qualname, [])
        for edge in edges:
            passed = [(function, rejects) for where, function, rejects in edge.verdicts if where == (param, path)]
            known = known and bool(passed)
            approving |= {function for function, rejects in passed if not set(asked) <= set(rejects)}
        if edges and known and not approving:
            return None
        if edges and known:
            names = " or ".join(f"`{origin.rpartition('.')[2]}(...)`" for origin in sorted(approving))
            out.append(replace(step, note=f"consumed here when {names} approves it",
                               fact=(DECIDED_BY, tuple(sorted(approving)))))
    return tuple(out)


def passed_guards(routes: dict[tuple, dict]) -> set[str]:
    """The functions a call passed to be called back as a guard that decided some route's
    consumer (``CallEdge.approving``, named by a ``DECIDED_BY`` step of the route): used as
    guards, judged as such (``ProjectAnalysis.collect_guards``)."""
    return {origin for traces in routes.values() for trace in traces for step in trace
            if step.fact[:1] == (DECIDED_BY,) for origin in step.fact[1]}


def direct_routes(routes: dict[tuple, dict], qualname: str, outcome: Outcome, covered: Container[str]) -> None:
    """Add the findings a function's own analysis made to ``routes`` ((hazard, span) ->
    {shown trace: site}); those only its next call makes are not hazards when every call
    of it is made after its callers synchronised (``ProjectAnalysis.covered_by_callers``)."""
    for (hazard, site), trace in outcome.findings.items():
        if (hazard, site) in outcome.next_call and qualname in covered:
            continue
        routes.setdefault((hazard, site.span), {})[dedupe(trace)] = site


def findings_of(routes: dict[tuple, dict], reported: Container[Path]) -> list[Finding]:
    """One finding per (hazard, span) in a reported file: the preferred trace shown, the
    others counted."""
    out = []
    for (hazard, span), sites in routes.items():
        if span.path in reported:
            best = None
            for trace in sites:
                if preferred_trace(trace, best):
                    best = trace
            site = sites[best]
            shown = tuple(step for step in best or () if step.fact[:1] not in ((DECIDED_BY,), (PASSED_GUARD,)))  # not shown
            out.append(Finding(rule_for(hazard).code, site.span, "", site.function, shown, subject=site.subject,
                               sink=site.sink, other_paths=len(sites) - 1))
    return out


class ProjectAnalysis:
    """One run: file selection rounds around the Program's fixpoint."""

    def __init__(self, root: Path, files, report_files, vocab: Vocabulary,
                 progress: Callable[[int, int], None] | None = None, *,
                 raw: dict[Path, bytes] | None = None, check_files=None, record: bool = False) -> None:
        """``raw``: the files' bytes when the caller has read them already; ``check_files``:
        the files to check for syntax and compile errors (default: ``report_files``);
        ``record``: log every analysis for the cache (``Program.logs``)."""
        self.root = root
        # (files parsed, functions analysed), for the progress line; it may also hear each
        # function's name as its analysis starts (``function_started``: bufferlint.progress)
        self.progress = progress
        self.files = sorted(set(files) | set(report_files))
        self.report_files = set(report_files)
        self.check_files = self.report_files if check_files is None else set(check_files)
        self.program = Program(root, vocab)
        if record:
            self.program.logs = {}
        self.result = AnalysisResult()
        self.given = raw or {}
        self.raw: dict[Path, bytes] = {}
        self.own_errors: list[FileError] = []  # the analysis's, before the syntax check's are merged in
        self.check_errors: list[FileError] = []
        self.module_files: dict[str, Path] = {}
        self.defines: dict[str, set[Path]] = {}
        self.parsed: set[Path] = set()
        self.trigger_names: set[str] = set()
        # Every method name whose definitions any round asked for (an outcome's demands are
        # its last round's): a file defining one is read by the analysis (``analysis.cached``).
        self.asked_methods: set[str] = set()
        self.new_triggers: set[str] = set()  # module constants holding a marker name
        self.iterable_producers: set[str] = set()  # classes whose ``__iter__`` hands out borrowed values
        self.seed_groups: list[tuple[str, ...]] = []  # words a source call names all of (see seed_word_groups)
        self.new_groups: list[tuple[str, ...]] = []  # groups added since the last round (``add_holder_groups``)
        # construction name -> methods of what it builds: seeds only where it is named (see seed_names)
        self.built_methods: dict[str, set[str]] = {}
        self.functions: list[FunctionInfo] = []
        self.callers_asked: set[str] = set()  # names of functions judged by their callers (activate_callers)
        self.pinned_makers: set[str] = set()  # names of functions returning a pinned buffer (activate_keepers)
        self.keepers_checked: set[str] = set()  # classes whose stores were matched against them

    def run(self) -> AnalysisResult:
        self.scan()
        check = SyntaxCheck(sorted(p for p in self.check_files if p in self.raw))
        self.trigger_names = self.seed_names()
        self.seed_groups = self.seed_word_groups()
        pending = self.files_mentioning(self.trigger_names) | self.files_mentioning_all(self.seed_groups)
        while pending or self.program.has_work:
            for path in sorted(pending):
                try:
                    self.parse(path)
                except Exception as exc:  # an indexing bug must cost one file, not the run
                    if debugging():
                        raise
                    self.error(path, internal_error("this file", exc))
                self.tick()
            self.program.solve(self.tick if self.progress is not None else None,
                               getattr(self.progress, "function_started", None))
            self.activate_callers()
            self.activate_keepers()
            pending = self.next_files()
            for qualname in self.functions_to_revisit(pending):
                self.program.enqueue(qualname)
        self.collect()
        known = {error.path for error in self.result.errors}
        self.own_errors = list(self.result.errors)
        self.check_errors = check.errors()
        self.result.errors += [error for error in self.check_errors if error.path not in known]
        self.result.errors.sort(key=lambda error: str(error.path))
        return self.result

    def tick(self) -> None:
        if self.progress is not None:
            self.progress(self.result.files_parsed, len(self.program.analyses))

    # -- reading and selecting files ---------------------------------------------------------

    def scan(self) -> None:
        for path in self.files:
            data = self.given.get(path)
            if data is None:
                data = read_bytes(path)
            if isinstance(data, FileError):
                self.error(path, data.message)
                continue
            self.result.files_seen += 1
            self.raw[path] = data
            name, is_package = module_name(path, self.root)
            self.module_files.setdefault(name, path)
            self.program.module_texts.setdefault(name, (self.raw[path], is_package))
            self.program.module_names.add(name)
            for name in defined_names(data):
                self.defines.setdefault(name, set()).add(path)

    def seed_names(self) -> set[str]:
        """Names whose mention can create or judge a borrowed value: sources, markers, guards,
        refills and pinned allocations (the program's own buffers a copy to the device reads). Sinks
        and helpers are reached from there by demand."""
        vocab = self.program.raw_vocab
        names = set(vocab.markers)
        names.update(p.last_name for p in vocab.pinned_allocations if _named_alone(p))
        for spec in vocab.sources:
            built_by = [c.built_by for c in spec.owned_if if c.built_by is not None]
            for p in spec.calls:
                owner = next((b for b in built_by if p.name.startswith(b.name + ".")), None)
                if owner is not None:
                    # `f.tensors()` of `instanttensor.safe_open(...)`: only where the object is
                    # made (`tensors` is everywhere); a helper that makes it is added by
                    # ``next_files``
                    self.built_methods.setdefault(owner.last_name, set()).add(p.last_name)
                elif _named_alone(p):
                    names.add(p.last_name)
            # `shm.buf`: the class is named where the object is made (`buf` is everywhere)
            names.update(p.qualname.split(".")[-2] for p in spec.attributes)
            # a helper that builds the producer (`return safe_open(..., copy=False)`) hands
            # back what its construction said (``owned-if``'s ``built-by``)
            names.update(b.last_name for b in built_by)
        for spec in vocab.guards:
            names.update(p.last_name for p in spec.calls)
        for registrar in vocab.registrars:  # it calls back with views of a buffer it reuses
            if "borrowed" in registrar.passes:
                names.update(p.last_name for p in registrar.calls if _named_alone(p))
        for write in vocab.host_writes:  # a buffer refilled in place (``sock.recv_into(buf)``) is reused
            if write.refills:
                names.update(p.last_name for p in write.calls if _named_alone(p))
        return names

    def seed_word_groups(self) -> list[tuple[str, ...]]:
        """Source patterns a call matches only with given arguments: the words all of which
        such a call names (``.to(device@0='cpu*', non_blocking=True)``: ``to``, ``cpu`` and
        ``non_blocking``), far more selective than any one of them."""
        vocab = self.program.raw_vocab
        groups = {group for spec in vocab.sources for p in spec.calls for group in seed_groups(p)}
        groups.update(group for p in vocab.pinned_allocations for group in seed_groups(p))
        return sorted(group for group in groups if len(group) > 1)

    def files_mentioning_all(self, groups: list[tuple[str, ...]]) -> set[Path]:
        return {p for p, data in self.raw.items() if p not in self.parsed and mentions_group(data, groups)}

    def activate_mentioning_all(self, functions: list[FunctionInfo], groups: list[tuple[str, ...]]) -> None:
        """Analyse the functions holding a call that names every word of a group."""
        lines_by_module: dict[tuple, list[int]] = {}
        for group in groups:
            for info in functions:
                if info.qualname in self.program.active:
                    continue
                key = (info.module.name, group)
                lines = lines_by_module.get(key)
                if lines is None:
                    text = info.module.text
                    lines = lines_by_module[key] = group_lines(text, group) if all(w in text for w in group) else []
                first = getattr(info.node, "lineno", 1)
                last = getattr(info.node, "end_lineno", None) or 10**9
                position = bisect.bisect_left(lines, first)
                if position < len(lines) and lines[position] <= last:
                    self.program.activate(info.qualname)

    def files_mentioning(self, names: set[str]) -> set[Path]:
        """Unparsed files that mention one of the names as a word. A substring search first:
        it is ten times faster than the word regex, which then confirms the few candidates."""
        pattern = word_pattern(names, binary=True)
        if pattern is None:
            return set()
        encoded = [name.encode() for name in names if name]
        return {
            p for p, data in self.raw.items()
            if p not in self.parsed and any(name in data for name in encoded) and pattern.search(data)
        }

    def parse(self, path: Path) -> None:
        """Parse and index a file; analyse its functions that mention a trigger name."""
        if path in self.parsed:
            return
        self.parsed.add(path)
        source = read_source(path, self.raw.get(path))
        if isinstance(source, FileError):
            self.error(path, source.message)
            return
        tree = parse_tree(source, self.root)  # shared with the run's other analyses: see frontend.trees
        if isinstance(tree, FileError):
            self.error(path, tree.message)
            return
        self.result.files_parsed += 1
        name, is_package = module_name(path, self.root)
        module = ModuleInfo(name, path, tree, source.text, is_package)
        functions = self.program.index.add_module(module)
        self.functions.extend(functions)
        markers = self.program.raw_vocab.markers
        self.new_triggers |= {name for name, value in module.constants.items() if names_marker(value, markers)}
        self.activate_mentioning(functions, self.trigger_names)
        self.activate_mentioning_all(functions, self.seed_groups)
        self.activate_attribute_readers(module, functions)
        self.add_holder_groups(module)
        self.activate_built_methods(functions, module.text, self.built_methods)

    def attribute_reads(self) -> list[tuple[str, str]]:
        """(class, attribute) of every attribute source (``SharedMemory.buf``)."""
        named = [p.qualname for spec in self.program.raw_vocab.sources for p in spec.attributes if p.qualname and "." in p.qualname]
        return [(owner, attr) for owner, attr in (name.rsplit(".", 2)[-2:] for name in named)]

    def activate_attribute_readers(self, module: ModuleInfo, functions: list[FunctionInfo]) -> None:
        """In a module that names an attribute source's class, analyse the functions that read
        the attribute: the object is often made in one method (``self.shm = SharedMemory(...)``
        in ``__init__``) and its attribute read in another (``return self.shm.buf[:n]``), which
        names no class. A method that so returns a view is then a producer its callers' calls
        are found by (``next_files``)."""
        for owner, attr in self.attribute_reads():
            if owner not in module.text or f".{attr}" not in module.text or not word_pattern({owner}).search(module.text):
                continue
            lines = match_lines(re.compile(rf"\.{re.escape(attr)}\b"), module.text)
            for info in functions:
                first = getattr(info.node, "lineno", 1)
                last = getattr(info.node, "end_lineno", None) or 10**9
                position = bisect.bisect_left(lines, first)
                if position < len(lines) and lines[position] <= last:
                    self.program.activate(info.qualname)

    def add_holder_groups(self, module: ModuleInfo) -> None:
        """In a module that names an attribute source's class, the fields of its classes that
        hold objects of that class (``self.block = SharedMemory(n)``, ``self.blocks =
        [SharedMemory(n) for n in names]``) become word groups (``blocks``, ``buf``): a
        function of another module that reads ``self.ring.blocks[i].buf`` names neither the
        class nor anything else that would select it. Functions already parsed are matched
        against the new groups by ``next_files``, files not parsed yet by their text."""
        index = self.program.index
        for owner, attr in self.attribute_classes():
            if owner.rsplit(".", 1)[-1] not in module.text:
                continue
            for node in module.tree.body:
                info = index.classes.get(f"{module.name}.{node.name}") if isinstance(node, ast.ClassDef) else None
                if info is None:
                    continue
                for field_name in info.fields:
                    held = index.field_types({info.qualname}, field_name) | \
                        index.field_types({info.qualname}, field_name, elements=True)
                    group = (field_name, attr)
                    if owner in held and group not in self.seed_groups:
                        self.seed_groups.append(group)
                        self.new_groups.append(group)

    def attribute_classes(self) -> list[tuple[str, str]]:
        """(class qualname, attribute) of every attribute source, the class as the index names it."""
        named = [p.qualname for spec in self.program.raw_vocab.sources for p in spec.attributes if p.qualname and "." in p.qualname]
        return [(self.program.index.canonical(owner), attr) for owner, attr in (name.rsplit(".", 1) for name in named)]

    def activate_built_methods(self, functions: list[FunctionInfo], text: str, built: dict[str, set[str]]) -> None:
        """Analyse the functions naming a method of a producer that a ``built-by`` construction
        makes (``f.tensors()``), in a module that names the construction (or a helper of the
        project that returns what it made): elsewhere the receiver is not known to be one."""
        named = {name for name in built if name in text}
        pattern = word_pattern(named)
        if pattern is not None and pattern.search(text):
            self.activate_mentioning(functions, set().union(*(built[name] for name in named)))

    def activate_mentioning(self, functions: list[FunctionInfo], names: set[str]) -> None:
        """Analyse the functions whose code names a source, marker, guard or producer.

        A text search over each function's lines (nested functions included): cheaper than
        walking every syntax tree, and a few extra functions analysed cost little."""
        guards = self.guard_qualnames()
        pattern = word_pattern(names)
        lines_by_module: dict[str, list[int]] = {}
        for info in functions:
            if info.qualname in self.program.active:
                continue
            module = info.module
            lines = lines_by_module.get(module.name)
            if lines is None:
                text = module.text
                # `from pkg import stream as it2`: the alias is how this module names it.
                aliases = {local for local, q in module.imports.items() if q.rsplit(".", 1)[-1] in names} - names
                local = word_pattern(names | aliases) if aliases else pattern
                # A substring test first: twenty times faster than the word regex, and most
                # modules name none of the words.
                named = local is not None and any(word in text for word in names | aliases)
                lines = lines_by_module[module.name] = match_lines(local, text) if named else []
            node = info.node
            first = getattr(node, "lineno", 1)
            last = getattr(node, "end_lineno", None) or 10**9
            position = bisect.bisect_left(lines, first)
            if (position < len(lines) and lines[position] <= last) or info.qualname in guards:
                self.program.activate(info.qualname)

    def activate_callers(self) -> None:
        """A function with findings that only its next call makes (``Outcome.next_call``) is
        judged by its callers (``covered_by_callers``): analyse the functions that name it,
        which nothing else may have asked for (a caller whose only device call is the
        synchronisation)."""
        names = {q.rsplit(".", 1)[-1] for q, o in self.program.outcomes.items() if o.next_call} - self.callers_asked
        if names:
            self.callers_asked |= names
            self.activate_mentioning(self.functions, names)

    def activate_keepers(self) -> None:
        """A helper returning a pinned buffer (``return torch.empty(n, pin_memory=True)``)
        makes no caller matter by itself (``returns_borrowed``), but a method keeping its
        result in a field (``self.stage = pinned_stage(n)`` in ``__init__``) is where the
        field gets the buffer the other methods copy into and read or write: analyse the
        methods whose stores call such a helper."""
        makers = {q.rsplit(".", 1)[-1] for q, s in self.program.summaries.items()
                  if any(pinned_buffer(leaf) for leaf in deep_leaves(s.returns))}
        new = makers - self.pinned_makers
        self.pinned_makers |= new
        if not self.pinned_makers:
            return
        index = self.program.index
        for qualname, info in list(index.classes.items()):
            if qualname in self.keepers_checked and not new:
                continue
            self.keepers_checked.add(qualname)
            if info.node is None or not any(name in info.module.text for name in self.pinned_makers):
                continue
            for stores in info.stores.values():
                for method, callee in stores:
                    name = dotted_name(callee) if callee is not None else None
                    if method and name and name.rsplit(".", 1)[-1] in self.pinned_makers:
                        target = info.methods.get(method)
                        if target is not None:
                            self.program.activate(target)

    def guard_qualnames(self) -> set[str]:
        index = self.program.index
        return {
            index.canonical(p.qualname) for spec in self.program.raw_vocab.guards for p in spec.calls if p.qualname
        }

    def error(self, path: Path, message: str) -> None:
        if path in self.report_files:
            self.result.errors.append(FileError(path, message))

    def next_files(self) -> set[Path]:
        """Files that the last round showed may matter: definitions of what borrowed values
        (or parameters that may receive them) are passed to, and mentions of functions
        that turned out to return borrowed values or of constants naming a marker."""
        wanted: set[Path] = set()
        for outcome in self.program.outcomes.values():
            for kind, name in outcome.demands:
                if kind == "method":
                    wanted |= self.defines.get(name, set())
                    self.asked_methods.add(name)
                elif kind == "waits":  # a base class's method that may synchronise
                    wanted |= self.defining_a_wait(name)
                else:
                    wanted |= self.module_of(name)
        producers, self.new_triggers = self.new_triggers - self.trigger_names, set()
        index = self.program.index
        dispatched_by = index.dispatched_by()  # an overload's callers call its dispatcher
        for qualname, summary in self.program.summaries.items():
            short = dispatched_by.get(qualname, qualname).rsplit(".", 1)[-1]
            if short == "__iter__" and returns_borrowed(summary):
                # ``for x in ckpt`` calls it: the loops are where its class is named (an
                # annotation, a constructor) or where a helper hands one out (below)
                info = index.functions.get(qualname)
                if info is not None and info.class_qualname:
                    self.iterable_producers.add(info.class_qualname)
                    producers.add(info.class_qualname.rsplit(".", 1)[-1])
            elif short not in self.trigger_names and not short.startswith("<") and returns_borrowed(summary):
                producers.add(short)
        if self.iterable_producers:  # ``ckpt = open_checkpoint(files)``: an object iterating borrowed views
            for qualname, summary in self.program.summaries.items():
                short = qualname.rsplit(".", 1)[-1]
                returned = summary.returns.types | summary.returns.declared
                if short not in self.trigger_names and not short.startswith("<") and returned & self.iterable_producers:
                    producers.add(short)
        partials = self.partial_aliases()
        producers |= {name for name, target in partials.items() if target in self.trigger_names}
        producers -= self.trigger_names
        if producers:
            self.trigger_names |= producers
            wanted |= self.files_mentioning(producers)
            self.activate_mentioning(self.functions, producers)
        wanted |= self.next_built_methods(partials)
        if self.new_groups:  # fields found holding an attribute source's objects (``add_holder_groups``)
            groups, self.new_groups = self.new_groups, []
            self.activate_mentioning_all(self.functions, groups)
            wanted |= self.files_mentioning_all(groups)
        return {p for p in wanted if p not in self.parsed}

    def partial_aliases(self) -> dict[str, str]:
        """Module names bound to ``functools.partial`` of something (``open_streaming =
        partial(safe_open, copy=False)``, ``ModuleInfo.partials``) -> the last name of what
        they call: a call of the alias is a call of it, so its mentions matter as the
        target's do (a producer, a constructor whose methods lend)."""
        return {name: bound[0].rsplit(".", 1)[-1]
                for module in self.program.index.modules.values()
                for name, bound in module.partials.items() if bound is not None}

    def defining_a_wait(self, method: str) -> set[Path]:
        """The module of ``method`` (``pkg.mod.Class.name``) when its text has a ``def name``
        whose body names a synchroniser, an ``advances`` call or a function found to call
        one (``Program.callee_words``): a base class read only for what it may wait for."""
        pattern = word_pattern(self.program.callee_words, binary=True)
        name = method.rsplit(".", 1)[-1]
        return {p for p in self.module_of(method)
                if pattern is not None and p in self.raw and body_mentions(self.raw[p], name, pattern)}

    def next_built_methods(self, partials: dict[str, str]) -> set[Path]:
        """Helpers that turned out to return an object a ``built-by`` construction made (``def
        open_reader(path): return safe_open(path, copy=False)``) make it too, and so do the
        module partials of its constructor (``partials``: ``partial_aliases``): their callers'
        files matter, and there the producer's methods (``seed_names``)."""
        helpers: dict[str, set[str]] = {
            name: self.built_methods[target] for name, target in partials.items()
            if target in self.built_methods and name not in self.built_methods
        }
        for qualname, summary in self.program.summaries.items():
            short = qualname.rsplit(".", 1)[-1]
            if short in self.built_methods or short.startswith("<") or not summary.returns.built:
                continue
            helpers[short] = {m for cond, _ in summary.returns.built for m in self.built_methods.get(cond.built_by.last_name, ())}
        if not helpers:
            return set()
        self.built_methods.update(helpers)
        self.trigger_names |= set(helpers)
        self.activate_mentioning(self.functions, set(helpers))
        by_module: dict[str, list[FunctionInfo]] = {}
        for info in self.functions:
            by_module.setdefault(info.module.name, []).append(info)
        for functions in by_module.values():
            self.activate_built_methods(functions, functions[0].module.text, helpers)
        return self.files_mentioning(set(helpers))

    def module_of(self, qualname: str) -> set[Path]:
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.module_files.get(".".join(parts[:cut]))
            if path is not None:
                return {path}
        return set()

    def functions_to_revisit(self, new_files: set[Path]) -> list[str]:
        """Functions whose calls may now resolve into the new files."""
        new_defs = {n for n, paths in self.defines.items() if paths & new_files}
        new_modules = {n for n, p in self.module_files.items() if p in new_files}
        revisit = []
        for qualname, outcome in self.program.outcomes.items():
            for kind, name in outcome.demands:
                if (kind == "method" and name in new_defs) or (
                    kind == "qualname" and any(name.startswith(m + ".") for m in new_modules)
                ) or (kind == "waits" and self.defining_a_wait(name) & new_files):  # read for what it waits for
                    revisit.append(qualname)
                    break
        return revisit

    # -- findings ------------------------------------------------------------------------

    def collect(self) -> None:
        for qualname, exc in sorted(self.program.failures.items()):
            info = self.program.index.functions[qualname]
            self.error(info.module.path, internal_error(f"{info.display} (line {getattr(info.node, 'lineno', 1)})", exc))
        routes: dict[tuple, dict] = {}  # (hazard, span) -> {shown trace: site}
        used_as_guard: set[str] = set()
        for (hazard, site), traces in self.program.propagate_sited().items():
            for trace in traces:
                routes.setdefault((hazard, site.span), {})[dedupe(trace)] = site
        covered = self.covered_by_callers()
        for qualname, outcome in self.program.outcomes.items():
            used_as_guard |= outcome.used_as_guard
            direct_routes(routes, qualname, outcome, covered)
        self.decide_passed_guards(routes)
        used_as_guard |= passed_guards(routes)
        self.result.findings.extend(findings_of(routes, self.report_files))
        self.cover_decided(routes, self.collect_guards(used_as_guard))
        self.result.findings.sort(key=Finding.sort_key)
        self.result.file_notices.sort(key=str)
        told = {text for text, path in self.result.file_notices if path in self.report_files}
        self.result.notices = sorted(set(self.result.notices) | self.limits_told() | told)

    def decide_passed_guards(self, routes: dict[tuple, dict]) -> None:
        """A function's own consumer reached only when what its callers pass as a parameter
        approves the value (a ``PASSED_GUARD`` step: ``if decide(w):``), decided over every
        call of the function the analysis saw (``CallEdge.verdicts``): when each passes
        project functions rejecting marked values there, the path is gone; when some pass
        ones approving them, those decided it (``DECIDED_BY``: their guard finding stands for it);
        when a call passes anything else (a lambda, its own parameter) or none is seen, the
        path stands as it is."""
        incoming: dict[str, list] | None = None
        for key in list(routes):
            kept = {}
            for trace, site in routes[key].items():
                if not any(step.fact[:1] == (PASSED_GUARD,) for step in trace):
                    kept[trace] = site
                    continue
                if incoming is None:
                    incoming = {}
                    for outcome in self.program.outcomes.values():
                        for edge in outcome.edges:
                            incoming.setdefault(edge.callee, []).append(edge)
                decided = _decided_by_callers(trace, incoming)
                if decided is not None:
                    kept[decided] = site
            if kept:
                routes[key] = kept
            else:
                del routes[key]

    def limits_told(self) -> set[str]:
        """The analysis limits hit, as notices. A marker check left unevaluated is told only
        when a finding is reported through its function (its site or a step of its trace
        there): it could only have made such a finding wrong, and otherwise the notice warns
        of nothing (a project with no finding at all would get notices about code that has
        nothing to do with buffers)."""
        told = set(self.program.capped)
        conditional = set()
        for outcome in self.program.outcomes.values():
            for limit in outcome.caps:
                if limit.if_reported and limit.where is not None:
                    conditional.add((limit.text, *limit.where))
                else:
                    told.add(limit.text)
        self.result.conditional_notices = sorted(conditional, key=str)
        return told | told_with(self.result.conditional_notices, self.result.findings)

    def covered_by_callers(self) -> set[str]:
        """The functions whose every call the analysis saw is made after the caller
        synchronised with the device on the host (``CallEdge.synced``; and called at least
        once): the copies a call leaves reading the buffers its object keeps are done before
        the next call writes them (vLLM's runner synchronises an event before each input
        preparation). The next-call findings of these functions are not hazards."""
        synced: dict[str, bool] = {}
        for outcome in self.program.outcomes.values():
            for edge in outcome.edges:
                synced[edge.callee] = synced.get(edge.callee, True) and edge.synced
        return {qualname for qualname, every in synced.items() if every}

    def cover_decided(self, routes: dict[tuple, dict], reported: dict[str, Finding]) -> None:
        """One finding per bug: a consumer every path into which a guard reported as
        approving marked values (``reported``: its finding by qualname) decided (a
        ``DECIDED_BY`` step naming it, or a call of the class hierarchy that may run it) is
        that guard's bug, whose fix removes it. Its finding becomes a step of the guard's
        trace (before the guard's own step) and leaves the findings for
        ``AnalysisResult.covered``, whence a guard finding the run does not report (its rule
        not selected) gives it back (``AnalysisResult.uncovered``)."""
        if not reported:
            return
        judged: dict[str, list[Finding]] = {}  # a decider -> the reported guards it may run

        def covering(origins: tuple) -> list[Finding]:
            found = []
            for origin in origins:
                if origin not in judged:
                    own, overrides = self.program.guard_dispatch(origin)
                    judged[origin] = [reported[q] for q in [own, *overrides] if q in reported]
                found += judged[origin]
            return found

        code = rule_for(Hazard.ASYNC_READ_AFTER_ADVANCE).code
        kept: list[Finding] = []
        steps: dict[Span, list[TraceStep]] = {}
        for finding in self.result.findings:
            guards = self._covering_guards(finding, routes, covering) if finding.rule == code else []
            if not guards:
                kept.append(finding)
                continue
            self.result.covered.append((finding, tuple(guard.span for guard in guards)))
            for guard in guards:
                note = f"`{finding.sink}` here consumes the borrowed values `{guard.sink}` approves"
                steps.setdefault(guard.span, []).append(TraceStep(finding.path, finding.span.line, note, (COVERS, code)))
        self.result.findings = [replace(f, trace=tuple(sorted(steps[f.span], key=lambda s: (str(s.path), s.line)))
                                        + f.trace) if f.span in steps and f.rule != code else f for f in kept]

    @staticmethod
    def _covering_guards(finding: Finding, routes: dict[tuple, dict],
                         covering: Callable[[tuple], list[Finding]]) -> list[Finding]:
        """The reported guards that decided every path into ``finding``'s site, of its kind."""
        traces = routes.get((Hazard.ASYNC_READ_AFTER_ADVANCE, finding.span), {})
        guards: dict[Span, Finding] = {}
        for trace in traces:
            here = [guard for step in trace if step.fact[:1] == (DECIDED_BY,) for guard in covering(step.fact[1])]
            here = [guard for guard in here if not guard.kind or guard.kind == kind_of(finding)]
            if not here:
                return []
            guards.update((guard.span, guard) for guard in here)
        return list(guards.values())

    def collect_guards(self, used_as_guard: set[str]) -> dict[str, Finding]:
        """A configured or used guard that does not reject marked values: it approves them
        (``Hazard.GUARD_APPROVES_MARKED``). A configured guard is judged for its kind's
        marker; one only used as a guard names no kind. The findings made, by the guard's
        qualname."""
        program = self.program
        checked: dict[str, tuple[int | None, str]] = {}  # a used guard's parameter: ``_judged_params``
        for spec in program.raw_vocab.guards:
            for pattern in spec.calls:
                if pattern.qualname:
                    qualname = program.index.canonical(pattern.qualname)
                    if qualname in program.index.functions:
                        checked[qualname] = (spec.param, spec.kind)
        dispatched: list[str] = []  # what ``self.guard(w)`` may run through a subclass
        for used in sorted(used_as_guard):
            own, overrides = program.guard_dispatch(used)
            if own is not None:
                checked.setdefault(own, (None, ""))
            dispatched += overrides
        for qualname, judged_as in list(checked.items()):  # ``self.guard(w)`` may run an override
            for override in program.overrides(qualname):
                if override in program.outcomes:
                    checked.setdefault(override, judged_as)
        for override in dispatched:
            if override in program.outcomes:
                checked.setdefault(override, (None, ""))
        made: dict[str, Finding] = {}
        if not program.raw_vocab.markers:
            return made
        for qualname, (declared, kind) in checked.items():
            info = program.index.functions.get(qualname)
            if info is None or info.module.path not in self.report_files or info.kind == "module":
                continue
            if kind in program.raw_vocab.kinds and not program.raw_vocab.kinds[kind].lends:
                continue  # its kind's values are owned in every version the project admits
            summary = program.summary(qualname)
            approving = [(p, tags) for p in self._judged_params(info, declared)
                         if not guards_kind(tags := _rejected_tags(summary, p), kind, program.raw_vocab)]
            if not approving:
                continue
            param, tags = approving[0]
            undecided = {tag: why for p, tag, why in sorted(summary.undecided, key=repr) if p == param}
            code = rule_for(Hazard.GUARD_APPROVES_MARKED).code
            if undecided and guards_kind(set(undecided), kind, program.raw_vocab):
                # Neither proven nor refuted: not reported as approving marked values, and its
                # calls were not taken as guarded.
                self.result.file_notices.append((
                    f"{info.display}: could not decide whether the guard returns False for marked values "
                    f"({next(iter(undecided.values()))}); {code} is not reported for it, and the calls it "
                    "decides are not taken as guarded", info.module.path,
                ))
                continue
            node = info.node
            span = program.span(info.module, node)
            span = Span(span.path, node.lineno, span.column, node.lineno, span.column + len("def ") + len(node.name))
            words = _named_default(info, summary, param) or _checks_another(info, summary, param, kind, program.raw_vocab)
            trace = (TraceStep(info.module.path, node.lineno, words, ("sink", Hazard.GUARD_APPROVES_MARKED, node.name)),)
            if tags:  # it checks markers, of other kinds only
                trace = (TraceStep(info.module.path, node.lineno, "", ("other-kinds", node.name, tuple(sorted(tags)))),) + trace
            made[qualname] = Finding(code, span, "", info.display, trace, sink=node.name, kind=kind)
            self.result.findings.append(made[qualname])
        return made

    def _judged_params(self, info: FunctionInfo, declared: int | None) -> list[int]:
        """The parameters a guard is judged at: a configured guard's declared one (after the
        receiver); a function only used as a guard, those its callers pass borrowed values to
        (``Program.hot``: a guard checking the marker on another parameter, the destination
        rather than the weight, approves every marked weight), else its first."""
        first = 1 if info.binds_receiver else 0
        if declared is not None:
            return [declared + first]
        hot = self.program.hot
        asked = [p for p in range(first, len(info.params))
                 if p not in (info.vararg, info.kwarg) and (info.qualname, p) in hot]
        return asked or [first]


def _named_alone(pattern) -> bool:
    """Does a call matching ``pattern`` name no word but the called one in some form (no
    keyword it must be passed by, or a flag it may pass by position as a variable)?"""
    return any(len(group) == 1 for group in seed_groups(pattern))


def _rejected_tags(summary: Summary, param: int) -> set:
    """The kinds whose marked values the guard rejects at ``param``. A guard told the
    marker's name is wrong only when the name it falls back to is."""
    tags = {tag for p, tag in summary.guards if p == param}
    return tags | {tag for p, tag, tests in summary.guards_when if p == param and not fails_by_default(tests)}


def _checks_another(info: FunctionInfo, summary: Summary, param: int, kind: str, vocab) -> str:
    """The words for a guard that rejects marked values at another parameter than the one
    its callers pass borrowed values to ("" for any other guard)."""
    first = 1 if info.binds_receiver else 0
    for other in range(first, len(info.params)):
        if other != param and guards_kind(_rejected_tags(summary, other), kind, vocab):
            return (f"`{info.qualname.rpartition('.')[2]}` checks the marker on `{info.params[other]}`, not on `{info.params[param]}`, "
                    "the value its callers ask about")
    return ""


_PROTOCOL_BASES = frozenset({"typing.Protocol", "typing_extensions.Protocol"})


def _named_default(info, summary, param: int) -> str:
    """The words for a guard told the marker's name whose fallback name is another (""
    for any other guard: the rule's own words)."""
    for p, _, tests in sorted(summary.guards_when, key=repr):
        for test in sorted(tests, key=repr) if p == param else ():
            if test.default_known and not test.decide(test.default) and test.test == FIELD:
                attr, marker = field_operand(test)
                return (f"`{info.node.name}` checks the attribute `self.{attr}` names: "
                        f"{test.default!r} in an object built without it, not `{marker}`")
            if test.default_known and not test.decide(test.default):
                return (f"`{info.node.name}` checks the attribute its parameter `{info.params[test.param]}` names: "
                        f"{test.default!r} where a call leaves it out, not `{test.operand}`")
    return ""


def dedupe(trace: tuple) -> tuple:
    out: list[TraceStep] = []
    for step in trace:
        if not out or out[-1] != step:
            out.append(step)
    return tuple(out)


def analyze(root: Path, files, report_files, vocab: Vocabulary,
            progress: Callable[[int, int], None] | None = None, check_files=None) -> AnalysisResult:
    return run_analysis(ProjectAnalysis(root, files, report_files, vocab, progress, check_files=check_files))


def run_analysis(analysis: ProjectAnalysis) -> AnalysisResult:
    let_go()  # the last analysis: one at a time in memory
    with paused_gc():  # see bufferlint.gcpause
        result = analysis.run()
        keep_until_exit(analysis)  # the command need not free it: see bufferlint.lifetime
        return result
