"""Recorded analyses, and replaying one against an edited function.

Why: after an edit inside a function the analysis interpreted (a model's ``load_weights``),
only that function's code changed. The fixpoint (``analysis.program``) analysed it a few
times, each time reading some of the project's state (callees' summaries, what objects
keep, which parameters receive borrowed values, names resolved in the index) and writing
some (functions activated and queued, values flowing into callees, fields stored) besides
its outcome. A run is deterministic, so if the edited function, given exactly what each
recorded analysis read, writes exactly what it wrote and ends with the same outcome, the
whole run is the recorded one: every other analysis reads what it read before. That is
checked here (a *trajectory* check, as build systems verify traces), and the recorded
findings are then the answer.

Recording: during a run with the cache, each analysis sees the Program through a
``RecordingProgram`` that forwards to it and logs every read with its answer and every
write, in order (``AnalysisLog``). Replaying: a ``ReplayProgram`` answers the same reads
from the log and refuses any read it does not hold (``NotRecorded``): a question the recorded
analysis never asked has no recorded answer, and the run must be analysed afresh, unless
it is about a name outside the project (``outside_answer``: a call of ``print``). Reads are
keyed by how many writes came before them, so a read moved across a write is never
answered from before it (questions whose answers no write can change, ``STABLE``, are
not). Functions, classes and methods the index answered with are looked
up in the files that define them, which must be the analysed versions.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import PurePath
from typing import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field

from bufferlint.analysis.incremental.codec import CLASSES, FIELDS, Decoder, Encoder, Unencodable, digest
from bufferlint.analysis.frontend.imports import Reached
from bufferlint.analysis.frontend.index import AttachedCallable, ClassInfo, FunctionInfo, ModuleInfo, PartialBinding, ProjectIndex
from bufferlint.analysis.frontend.records import RecordShape
from bufferlint.analysis.frontend.spans import Spans
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, Summary
from bufferlint.analysis.domain.values import Value
from bufferlint.analysis.transfer.call_project import CallEdge
from bufferlint.analysis.transfer.interpreter import FunctionInterpreter
from bufferlint.analysis.world import IndexView, ProjectView, Table
from bufferlint.findings import Span
from bufferlint.hazards import Hazard


class NotRecorded(Exception):
    """The replayed analysis asked something the recorded one did not (or wrote otherwise)."""


@dataclass
class AnalysisLog:
    """One analysis of one function: its reads (keyed by the number of writes before them)
    with their answers, and fingerprints (``codec.digest``) of its writes in order and of
    what it produced: enough to check a replay, far less to keep than the values. The
    fingerprints are taken once the fixpoint is done (``seal``): the values written and
    produced share much (a callee's summary in many calls), and are fingerprinted once."""

    reads: dict = field(default_factory=dict)  # (epoch, question) -> answer
    where: dict = field(default_factory=dict)  # function or class qualname -> its module's name
    writes: int = 0
    parts: list | None = field(default_factory=list)  # until sealed: the writes (``write_part``)
    produced: tuple | None = None  # until sealed: its ``step_facts``
    written: bytes | None = None  # the fingerprint of its writes in order
    step: bytes | None = None  # the digest of its summary, callees and demands; None: it failed
    final: bytes | None = None  # the digest of the whole outcome, for a function's last analysis
    seq: int = -1  # its place in the run (the fixpoint's count of analyses before it)
    # Whether every caller of the function known then was already queued when it ended: a
    # change of its summary there queued nothing new (``analysis.cutoff`` allows an edit to
    # change the summary at such an analysis, or no longer change it there).
    waiting: bool = False

    def read(self, question: tuple, answer):
        self.reads.setdefault(read_key(question, self.writes), answer)
        return answer

    def write(self, action: tuple) -> None:
        self.writes += 1
        self.parts.append(write_part(action))  # type: ignore[union-attr]

    def close(self, outcome) -> None:
        """The analysis ended with ``outcome``: what the fixpoint goes on with."""
        self.produced = step_facts(outcome)


def step_facts(outcome) -> tuple:
    """What the fixpoint goes on with after one analysis: its summary, and the callees,
    demands and callees' returned values it read (whose changes queue it again)."""
    return outcome.summary, outcome.callees, outcome.demands, outcome.returns_read


# Questions whose answer cannot change while one analysis runs: summaries change only between
# analyses, and the index only between rounds of parsing. The others (what fields hold, which
# parameters receive borrowed values) change with the analysis's own writes.
STABLE = frozenset({"summary", "in_project", "methods_named", "overrides_of", "canonical", "constant", "ancestors", "class_method",
                    "field_types", "field_objects", "attached", "overloads", "function", "class", "record_shape", "return_types",
                    "class_values", "class_constant"})


# Sets that only grow, and only by the writes of the analysis asking while it runs (the
# parameters that receive borrowed values, copies in flight, pinned buffers): a member at
# some point stays one after it, and one that is not was not before.
GROWING = frozenset({"hot", "flight", "pinned", "fields"})


def _grown_answer(reads: dict, question: tuple, writes: int) -> bool | None:
    """The answer to a membership question in a ``GROWING`` set, asked after ``writes``
    writes, from the same question asked at another point of the recorded analysis (None:
    it cannot be told). An edit that adds a statement asks one of these where the recorded
    analysis did not (``self._kept = w`` asks whether ``w``'s parameter is hot)."""
    if question[0] not in GROWING:
        return None
    for (epoch, asked), answer in reads.items():
        if asked == question and epoch is not None and (epoch <= writes if answer else epoch >= writes):
            return answer
    return None


def read_key(question: tuple, writes: int) -> tuple:
    """A read's key in the log: the question, and for one whose answer a write may change,
    how many writes came before it."""
    return (None if question[0] in STABLE else writes, question)


def seal(logs: dict[str, list[AnalysisLog]], outcomes: dict, observed: Container[str]) -> None:
    """After the fixpoint: fingerprint every analysis's writes and results, and each
    function's last outcome whole; let go of the values.

    A store into an attribute no analysis read and no method of a parsed class reads
    (``observed`` holds the others: ``observed_attributes``) changed nothing any analysis
    saw: it is left out of the writes, and the reads after it are keyed as if it had not
    been made. So an edit that only adds or removes such a store (``self._kept = w``)
    replays the same trajectory, and its callers' replays too (``analysis.cutoff``)."""
    memo: dict = {}  # by identity: values met again are fingerprinted once
    for qualname, runs in logs.items():
        for log in runs:
            try:
                if log.produced is not None:
                    kept = _observed_writes(log, observed)
                    log.written = fingerprint(kept, memo)
                    log.step = digest(log.produced, memo)
                if log is runs[-1] and log.step is not None and qualname in outcomes:
                    log.final = outcome_digest(outcomes[qualname], memo)
            except (Unencodable, RecursionError):
                log.step = None
            log.parts, log.produced = None, None


def _observed_writes(log: AnalysisLog, observed: Container[str]) -> list:
    """The log's writes others could see, its reads re-keyed by how many of those came
    before them (the first answer kept when two keys become one: only unseen writes
    came between them, which change no answer)."""
    parts = log.parts or []
    before = [0]  # observed writes before the i-th write
    kept = []
    for part in parts:
        if unobserved_store(part, observed) is None:
            kept.append(part)
        before.append(len(kept))
    if len(kept) != len(parts):
        rekeyed: dict = {}
        for (epoch, question), answer in log.reads.items():
            rekeyed.setdefault((None if epoch is None else before[epoch], question), answer)
        log.reads = rekeyed
    log.writes = len(kept)
    return kept


def unobserved_store(part, observed: Container[str] | None) -> str | None:
    """The attribute of a ``store_field`` write (as ``write_part`` made it) that nothing
    observes; None for any other write (and for every write when ``observed`` is None)."""
    if observed is None or type(part) is bytes or not part[0].startswith(b"store_field\0"):
        return None
    attr = part[0].split(b"\0")[2].decode("utf-8", "surrogatepass")
    return None if attr in observed else attr


def observed_attributes(logs: dict[str, list[AnalysisLog]], classes: Iterable) -> frozenset[str]:
    """The attributes whose stored values some analysis read (``field`` questions) or some
    method of a parsed class reads (``ClassInfo.readers``: a store there activates it)."""
    out: set[str] = set()
    for runs in logs.values():
        for log in runs:
            out.update(question[2] for _, question in log.reads if question[0] == "field")
    for info in classes:
        out.update(info.readers)
    return frozenset(out)


def write_part(action: tuple):
    """A write as its fingerprint will take it: names, numbers and flags as text (the common
    case, cheap); a stored value as (text, value), fingerprinted with the rest later."""
    kind = action[0]
    if kind == "store_field":
        return (f"store_field\0{action[1]}\0{action[2]}\0".encode("utf-8", "surrogatepass"), action[3])
    if kind == "fill_buffer":
        site, objects = action[1]  # a set's order is not the same in every run: sorted
        return (f"fill_buffer\0{site!r}\0{sorted(map(repr, objects))}\0{action[3]}\0".encode("utf-8", "surrogatepass"),
                action[2])
    if kind == "flow":
        caller, callee, param, concrete, params, flight, pinned = action[1:]
        return f"flow\0{caller}\0{callee}\0{param}\0{concrete}\0{sorted(params)}\0{flight}\0{pinned}".encode(
            "utf-8", "surrogatepass"
        )
    return "\0".join(map(repr, action)).encode("utf-8", "surrogatepass")


def fingerprint(parts: list, memo: dict | None = None) -> bytes:
    """The writes in order (each length first, so that they never run into each other)."""
    memo = {} if memo is None else memo
    chunks = []
    for part in parts:
        data = part if type(part) is bytes else part[0] + digest(part[1], memo)
        chunks.append(len(data).to_bytes(8, "little"))
        chunks.append(data)
    return hashlib.blake2b(b"".join(chunks), digest_size=16).digest()


OUTCOME_FIELDS = ("summary", "findings", "callees", "used_as_guard", "demands", "sited", "edges", "caps")


def outcome_digest(outcome, memo: dict | None = None) -> bytes:
    """Everything the findings are collected from (a function's last outcome)."""
    return digest(tuple(getattr(outcome, name) for name in OUTCOME_FIELDS), memo)


# -- recording ------------------------------------------------------------------------------

class RecordingProgram:
    """The Program as one analysis sees it, every read and write logged (see module doc)."""

    def __init__(self, program: ProjectView, log: AnalysisLog, info: FunctionInfo | None = None) -> None:
        self._program, self._log = program, log
        self.index = RecordingIndex(program.index, log)
        self.vocab, self.raw_vocab = program.vocab, program.raw_vocab
        self.by_name_summaries = program.by_name_summaries  # a memo of summaries: pure
        self.hot = _Members(program.hot, "hot", log)
        self.flight_hot = _Members(program.flight_hot, "flight", log)
        self.pinned_hot = _Members(program.pinned_hot, "pinned", log)
        self.field_hot = _Members(program.field_hot, "fields", log)
        self.span = program.span
        if info is not None:
            # Whether each parameter may receive borrowed values, as the analysis starts: an
            # edit that keeps a parameter's value where the recorded analysis did not asks
            # it there, and the answer then follows (``GROWING``).
            for index in range(len(info.params)):
                _ = (info.qualname, index) in self.hot

    def summary(self, qualname: str) -> Summary:
        return self._log.read(("summary", qualname), self._program.summary(qualname))

    def field_value(self, classes: Iterable[str], attr: str) -> Value | None:
        return self._log.read(("field", tuple(sorted(classes)), attr), self._program.field_value(classes, attr))

    def buffer_fill(self, buffer: tuple, reader: str) -> Value | None:
        return self._log.read(("buffer_fill", buffer, reader), self._program.buffer_fill(buffer, reader))

    def in_project(self, qualname: str) -> bool:
        return self._log.read(("in_project", qualname), self._program.in_project(qualname))

    def methods_named(self, name: str | None, module: str) -> list[tuple[FunctionInfo, Reached | None]]:
        found = self._program.methods_named(name, module)
        self._log.read(("methods_named", name, module), tuple((self.index.located(info), why) for info, why in found))
        return found

    def overrides_of(self, class_qualname: str, name: str) -> list[FunctionInfo]:
        found = self._program.overrides_of(class_qualname, name)
        self._log.read(("overrides_of", class_qualname, name), tuple(self.index.located(info) for info in found))
        return found

    def activate(self, qualname: str) -> None:
        self._log.write(("activate", qualname))
        self._program.activate(qualname)

    def flow(self, caller: str, callee: str, param: int, concrete: bool, params: frozenset[int],
             flight: bool = False, pinned: bool = False) -> None:
        self._log.write(("flow", caller, callee, param, concrete, params, flight, pinned))
        self._program.flow(caller, callee, param, concrete, params, flight, pinned)

    def flow_fields(self, caller: str, callee: str, param: int, fields: tuple[tuple[int, str], ...],
                    records: tuple[int, ...]) -> None:
        self._log.write(("flow_fields", caller, callee, param, fields, records))
        self._program.flow_fields(caller, callee, param, fields, records)

    def store_field(self, owner: str, attr: str, value: Value) -> None:
        self._log.write(("store_field", owner, attr, value))
        self._program.store_field(owner, attr, value)

    def fill_buffer(self, buffer: tuple, copy: Value, owner: str) -> None:
        self._log.write(("fill_buffer", buffer, copy, owner))
        self._program.fill_buffer(buffer, copy, owner)

    def consider(self, info: FunctionInfo) -> None:
        self._log.write(("consider", self.index.located(info)))
        self._program.consider(info)


class _Members:
    """``(function, parameter) in program.hot`` (or another of its growing sets), logged."""

    def __init__(self, members: Container[tuple[object, ...]], name: str, log: AnalysisLog) -> None:
        self._members, self._name, self._log = members, name, log

    def __contains__(self, item: object) -> bool:
        return self._log.read((self._name, item), item in self._members)


class RecordingIndex:
    """The project index as one analysis sees it, logged; functions and classes are logged
    by qualname, with the module defining them (``AnalysisLog.where``)."""

    def __init__(self, index: IndexView, log: AnalysisLog) -> None:
        self._index, self._log = index, log
        self.functions = _Lookup(index.functions, "function", self)
        self.classes = _Lookup(index.classes, "class", self)

    def located(self, info: FunctionInfo | ClassInfo) -> str:
        self._log.where[info.qualname] = info.module.name
        return info.qualname

    def canonical(self, qualname: str) -> str:
        return self._log.read(("canonical", qualname), self._index.canonical(qualname))

    def constant(self, qualname: str) -> tuple[bool, object]:
        return self._log.read(("constant", qualname), self._index.constant(qualname))

    def class_ancestors(self, qualname: str) -> Sequence[str]:
        return self._log.read(("ancestors", qualname), tuple(self._index.class_ancestors(qualname)))

    def class_method(self, class_qualname: str, name: str) -> str | None:
        return self._log.read(("class_method", class_qualname, name), self._index.class_method(class_qualname, name))

    def field_types(self, classes: Iterable[str], attr: str, elements: bool = False) -> frozenset[str]:
        question = ("field_types", tuple(sorted(classes)), attr) + (("elements",) if elements else ())
        return self._log.read(question, self._index.field_types(classes, attr, elements))

    def field_objects(self, classes: Iterable[str], attr: str) -> frozenset[tuple[str, str, str, int]]:
        return self._log.read(("field_objects", tuple(sorted(classes)), attr), self._index.field_objects(classes, attr))

    def registered_callables(self, classes: Iterable[str], attr: str) -> frozenset[str]:
        return self._log.read(("registered", tuple(sorted(classes)), attr), self._index.registered_callables(classes, attr))

    def registered_under(self, classes: Iterable[str], attr: str, key: str) -> frozenset[str]:
        return self._log.read(("registered_under", tuple(sorted(classes)), attr, key),
                              self._index.registered_under(classes, attr, key))

    def dispatch_overloads(self, qualname: str) -> tuple[str, ...]:
        return self._log.read(("overloads", qualname), self._index.dispatch_overloads(qualname))

    def record_shape(self, class_qualname: str) -> RecordShape | None:
        return self._log.read(("record_shape", class_qualname), self._index.record_shape(class_qualname))

    def return_types(self, qualname: str) -> frozenset[str]:
        return self._log.read(("return_types", qualname), self._index.return_types(qualname))

    def class_values(self, qualname: str) -> tuple[bool, tuple[str, ...]] | None:
        return self._log.read(("class_values", qualname), self._index.class_values(qualname))

    def partial_binding(self, qualname: str) -> PartialBinding | None:
        return self._log.read(("partial_binding", qualname), self._index.partial_binding(qualname))

    def class_constant(self, class_qualname: str, attr: str) -> tuple[bool, object]:
        return self._log.read(("class_constant", class_qualname, attr), self._index.class_constant(class_qualname, attr))

    def attached_functions(self, attr: str) -> list[AttachedCallable]:
        found = self._index.attached_functions(attr)
        self._log.read(("attached", attr), tuple((self.located(a.info), a.ahead, a.keywords) for a in found))
        return found


class _Lookup:
    """``index.functions`` / ``index.classes``: membership and lookups, logged."""

    def __init__(self, table: Table[FunctionInfo] | Table[ClassInfo], kind: str, index: RecordingIndex) -> None:
        self._table, self._kind, self._index = table, kind, index

    def get(self, qualname, default=None):
        info = self._table.get(qualname)
        self._index._log.read((self._kind, qualname), self._index.located(info) if info is not None else None)
        return info if info is not None else default

    def __contains__(self, qualname: object) -> bool:
        return self.get(qualname) is not None

    def __getitem__(self, qualname):
        info = self.get(qualname)
        if info is None:
            raise KeyError(qualname)
        return info


# -- replaying --------------------------------------------------------------------------------

class ReplayProgram:
    """Answers one replayed analysis's reads from its log; compares its writes as they come.

    ``observed``: the attributes a store into is seen by others (``seal``): the others are
    set aside (``unobserved``), not compared (None: every attribute is). ``substitute``: the answer to a ``summary``
    question given the recorded one and the analysis's place in the run (``analysis.cutoff``:
    a callee whose summary the edit changed); it raises ``NotRecorded`` when it cannot tell. ``watch``: a file (path, module
    name, the analysed version's lines that moved or changed); an answer from the log that
    names a position on one of those lines is refused (it would be an old one)."""

    def __init__(self, log: AnalysisLog, vocab, raw_vocab, modules: "ModuleSource", observed: Container[str] | None = None,
                 substitute: Callable[[str, object, int], object] | None = None, watch: "Watch | None" = None) -> None:
        self._log, self._done, self._modules = log, 0, modules
        self._observed, self._substitute, self._watch = observed, substitute, watch
        self._parts: list = []
        self.unobserved: list[str] = []  # attributes stored into that nothing observes
        self.index = ReplayIndex(self, modules)
        self.vocab, self.raw_vocab = vocab, raw_vocab
        self.by_name_summaries: dict = {}
        self.hot = _Answers(self, "hot")
        self.flight_hot = _Answers(self, "flight")
        self.pinned_hot = _Answers(self, "pinned")
        self.field_hot = _Answers(self, "fields")
        self._spans = Spans()

    def span(self, module: ModuleInfo, node: ast.AST) -> Span:
        return self._spans.span(module, node)  # a pure function of the module's text

    def answer(self, question: tuple):
        key = read_key(question, self._done)
        if key in self._log.reads:
            answer = self._log.reads[key]
            if self._substitute is not None and question[0] == "summary":
                substituted = self._substitute(question[1], answer, self._log.seq)
                if substituted is not answer:
                    return substituted
            if self._watch is not None and self._watch.named_by(answer):
                raise NotRecorded(question)
            return answer
        grown = _grown_answer(self._log.reads, question, self._done)
        if grown is not None:
            return grown
        found = outside_answer(question, self._modules.names)
        if found is NotRecorded:
            raise NotRecorded(question)
        return found

    def wrote(self, action: tuple) -> None:
        """Reads after a write are answered as recorded after as many writes; the writes
        themselves are compared once the analysis ends (``same_writes``)."""
        part = write_part(action)
        attr = unobserved_store(part, self._observed)
        if attr is not None:
            self.unobserved.append(attr)
            return
        if self._done >= self._log.writes:
            raise NotRecorded(action)
        self._done += 1
        self._parts.append(part)

    @property
    def written(self) -> int:
        """The observed writes made so far."""
        return self._done

    def same_writes(self) -> bool:
        return self._done == self._log.writes and fingerprint(self._parts) == self._log.written

    def summary(self, qualname: str) -> Summary:
        return self.answer(("summary", qualname))

    def field_value(self, classes: Iterable[str], attr: str) -> Value | None:
        return self.answer(("field", tuple(sorted(classes)), attr))

    def buffer_fill(self, buffer: tuple, reader: str) -> Value | None:
        return self.answer(("buffer_fill", buffer, reader))

    def in_project(self, qualname: str) -> bool:
        return self.answer(("in_project", qualname))

    def methods_named(self, name: str | None, module: str) -> list[tuple[FunctionInfo, Reached | None]]:
        return [(self.index.info(q), why) for q, why in self.answer(("methods_named", name, module))]

    def overrides_of(self, class_qualname: str, name: str) -> list[FunctionInfo]:
        return [self.index.info(q) for q in self.answer(("overrides_of", class_qualname, name))]

    def activate(self, qualname: str) -> None:
        self.wrote(("activate", qualname))

    def flow(self, caller: str, callee: str, param: int, concrete: bool, params: frozenset[int],
             flight: bool = False, pinned: bool = False) -> None:
        self.wrote(("flow", caller, callee, param, concrete, params, flight, pinned))

    def flow_fields(self, caller: str, callee: str, param: int, fields: tuple[tuple[int, str], ...],
                    records: tuple[int, ...]) -> None:
        self.wrote(("flow_fields", caller, callee, param, fields, records))

    def store_field(self, owner: str, attr: str, value: Value) -> None:
        self.wrote(("store_field", owner, attr, value))

    def fill_buffer(self, buffer: tuple, copy: Value, owner: str) -> None:
        self.wrote(("fill_buffer", buffer, copy, owner))

    def consider(self, info: FunctionInfo) -> None:
        self.wrote(("consider", info.qualname))


class Watch:
    """A file whose moved lines a replay's recorded answers must not name (``cutoff``'s
    check of the edited file): its path, its module prefix and those lines. The replays of
    one cut-off ask thousands of recorded answers, which share most of their parts (a
    callee's summary in many of them): what each part names is worked out once."""

    def __init__(self, path: str, module: str, moved: frozenset[int]) -> None:
        self.path, self.module, self.moved = path, module, moved
        self._parts: dict[int, tuple[object, bool]] = {}  # id(part) -> (the part, kept alive; its verdict)

    def named_by(self, value) -> bool:
        """Does ``value`` hold a position on a moved line of the file: a trace step or span
        there, or an object identified by where a function of its module made it
        (``(qualname, line, column)``)? A value the codec cannot hold counts as naming it."""
        try:
            return self._walk(value)
        except RecursionError:
            return True

    def _walk(self, value) -> bool:
        if value is None or isinstance(value, (bool, int, float, str, bytes, PurePath, Hazard)):
            return False
        seen = self._parts.get(id(value))
        if seen is None or seen[0] is not value:
            seen = self._parts[id(value)] = (value, self._holds(value))
        return seen[1]

    def _holds(self, value) -> bool:
        kind = type(value)
        name = kind.__name__
        if CLASSES.get(name) is kind:
            fields = [getattr(value, f) for f in FIELDS[name]]
            if name in ("TraceStep", "Span") and isinstance(fields[0], PurePath) and str(fields[0]) == self.path:
                lines = [fields[1]] + ([fields[3]] if name == "Span" else [])
                if any(line in self.moved for line in lines):
                    return True
            return any(self._walk(f) for f in fields)
        if isinstance(value, tuple):
            if (len(value) == 3 and isinstance(value[0], str) and value[0].startswith(self.module)
                    and isinstance(value[1], int) and value[1] in self.moved):
                return True
            return any(self._walk(v) for v in value)
        if isinstance(value, (list, frozenset, set)):
            return any(self._walk(v) for v in value)
        if isinstance(value, dict):
            return any(self._walk(k) or self._walk(v) for k, v in value.items())
        if isinstance(value, CallEdge):
            return any(self._walk(getattr(value, f)) for f in CallEdge.__slots__)
        return True  # not a value the codec writes: no recorded answer holds one


def outside_answer(question: tuple, modules: frozenset):
    """The answer to a question about names outside the project (``print``, ``torch.cat``):
    the same whatever the state of the fixpoint, since no summary, class or field of theirs
    is ever known (``NotRecorded`` when the question is not of that kind)."""
    kind = question[0]
    if kind in ("field", "field_types", "field_objects"):
        names = question[1]
    elif kind in ("in_project", "function", "class", "canonical", "constant", "ancestors", "summary", "class_method",
                  "record_shape", "overrides_of", "return_types", "class_values", "class_constant"):
        names = (question[1],)
    else:
        return NotRecorded
    for name in names:
        parts = name.split(".")
        if name in modules or any(".".join(parts[:cut]) in modules for cut in range(len(parts) - 1, 0, -1)):
            return NotRecorded
    return {
        "in_project": False, "function": None, "class": None, "canonical": question[1], "constant": (False, None),
        "ancestors": (question[1],), "summary": EMPTY_SUMMARY, "class_method": None, "field_types": frozenset(),
        "field_objects": frozenset(), "field": None, "record_shape": None, "overrides_of": (), "return_types": frozenset(),
        "class_values": None, "class_constant": (False, None),
    }[kind]


class _Answers:
    def __init__(self, program: ReplayProgram, name: str) -> None:
        self._program, self._name = program, name

    def __contains__(self, item: object) -> bool:
        return self._program.answer((self._name, item))


def outline_of(info: FunctionInfo) -> list | None:
    """What resolving and binding a call reads of a function, without its syntax tree
    (``OutlinedFunction``); None for a nested function (its enclosing one is part of it)."""
    if info.outer is not None:
        return None
    return [info.display, info.class_qualname, info.kind, list(info.params), info.n_positional, info.n_required,
            list(info.required_kwonly), info.vararg, info.kwarg, info.is_async, info.returns_parameter_call]


class OutlinedFunction(FunctionInfo):
    """A function of a module the edit did not touch, as a replay first meets it: a call by
    method name is given hundreds (every model's ``load_weights``), and for most of them
    binds only the arguments to the signature recorded with the run (``outline_of``). Its
    syntax tree, module and the rest are read from the module, parsed then, when something
    asks for them (``__getattr__``). One per function in a replay, so identity is equality,
    as for the analysis's own ``FunctionInfo``s."""

    def __init__(self, qualname: str, outline: list, load: Callable[[], FunctionInfo]) -> None:
        self.qualname = qualname
        (self.display, self.class_qualname, self.kind, params, self.n_positional, self.n_required, kwonly,
         self.vararg, self.kwarg, self._async, self._returns_call) = outline
        self.params, self.required_kwonly = list(params), tuple(kwonly)
        self._load = load

    @property
    def is_async(self) -> bool:
        return self._async

    @property
    def returns_parameter_call(self) -> bool:
        return self._returns_call

    def __getattr__(self, name: str):
        if name in ("_load", "_async", "_returns_call"):
            raise AttributeError(name)
        return getattr(self._load(), name)

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = None  # type: ignore[assignment]  # as FunctionInfo's


class ModuleSource:
    """The modules a replay looks functions and classes up in: the edited one (its analysed
    version with the edited functions in place) and, on demand, others as analysed; a
    function of another module that has a recorded outline is an ``OutlinedFunction``."""

    def __init__(self, load, names, outline: Callable[[str, str], list | None] | None = None,
                 own: str | None = None) -> None:
        self._load = load  # module name -> ProjectIndex holding it (None: not the analysed version)
        self._names = names  # () -> every module of the project, parsed or not (asked rarely)
        self._outline, self._own = outline, own  # (module, qualname) -> recorded outline; the edited module
        self._known: frozenset | None = None
        self._indexes: dict[str, ProjectIndex | None] = {}
        self._outlined: dict[str, OutlinedFunction | None] = {}

    def outlined(self, qualname: str, module: str) -> OutlinedFunction | None:
        """The function as its recorded outline, if there is one (never in the edited module)."""
        if qualname not in self._outlined:
            outline = self._outline(module, qualname) if self._outline is not None and module != self._own else None
            self._outlined[qualname] = None if outline is None else OutlinedFunction(
                qualname, outline, lambda: self._defined(qualname, module))
        return self._outlined[qualname]

    def _defined(self, qualname: str, module: str) -> FunctionInfo:
        found = self.index_of(module).functions.get(qualname)
        if found is None:
            raise NotRecorded(("function", qualname))
        return found

    @property
    def names(self) -> frozenset:
        if self._known is None:
            self._known = frozenset(self._names())
        return self._known

    def index_of(self, module: str) -> ProjectIndex:
        if module not in self._indexes:
            self._indexes[module] = self._load(module)
        index = self._indexes[module]
        if index is None:
            raise NotRecorded(("module", module))
        return index


class ReplayIndex:
    def __init__(self, program: ReplayProgram, modules: ModuleSource) -> None:
        self._program, self._modules = program, modules
        self.functions = _Found(self, "function")
        self.classes = _Found(self, "class")

    def info(self, qualname: str, kind: str = "function"):
        module = self._program._log.where.get(qualname)
        if module is None:
            raise NotRecorded((kind, qualname))
        if kind == "function":
            outlined = self._modules.outlined(qualname, module)
            if outlined is not None:
                return outlined
        table = self._modules.index_of(module)
        found = (table.functions if kind == "function" else table.classes).get(qualname)
        if found is None:
            raise NotRecorded((kind, qualname))
        return found

    def canonical(self, qualname: str) -> str:
        return self._program.answer(("canonical", qualname))

    def constant(self, qualname: str) -> tuple[bool, object]:
        return self._program.answer(("constant", qualname))

    def class_ancestors(self, qualname: str) -> Sequence[str]:
        return list(self._program.answer(("ancestors", qualname)))

    def class_method(self, class_qualname: str, name: str) -> str | None:
        return self._program.answer(("class_method", class_qualname, name))

    def field_types(self, classes: Iterable[str], attr: str, elements: bool = False) -> frozenset[str]:
        return self._program.answer(("field_types", tuple(sorted(classes)), attr) + (("elements",) if elements else ()))

    def field_objects(self, classes: Iterable[str], attr: str) -> frozenset[tuple[str, str, str, int]]:
        return self._program.answer(("field_objects", tuple(sorted(classes)), attr))

    def registered_callables(self, classes: Iterable[str], attr: str) -> frozenset[str]:
        return self._program.answer(("registered", tuple(sorted(classes)), attr))

    def registered_under(self, classes: Iterable[str], attr: str, key: str) -> frozenset[str]:
        return self._program.answer(("registered_under", tuple(sorted(classes)), attr, key))

    def dispatch_overloads(self, qualname: str) -> tuple[str, ...]:
        return tuple(self._program.answer(("overloads", qualname)))

    def attached_functions(self, attr: str) -> list[AttachedCallable]:
        return [AttachedCallable(self.info(q), ahead, tuple(keywords))
                for q, ahead, keywords in self._program.answer(("attached", attr))]

    def record_shape(self, class_qualname: str) -> RecordShape | None:
        return self._program.answer(("record_shape", class_qualname))

    def return_types(self, qualname: str) -> frozenset[str]:
        return self._program.answer(("return_types", qualname))

    def class_values(self, qualname: str) -> tuple[bool, tuple[str, ...]] | None:
        return self._program.answer(("class_values", qualname))

    def partial_binding(self, qualname: str) -> PartialBinding | None:
        return self._program.answer(("partial_binding", qualname))

    def class_constant(self, class_qualname: str, attr: str) -> tuple[bool, object]:
        return self._program.answer(("class_constant", class_qualname, attr))


class _Found:
    def __init__(self, index: ReplayIndex, kind: str) -> None:
        self._index, self._kind = index, kind

    def get(self, qualname, default=None):
        found = self._index._program.answer((self._kind, qualname))
        return self._index.info(found, self._kind) if found is not None else default

    def __contains__(self, qualname: object) -> bool:
        return self._index._program.answer((self._kind, qualname)) is not None

    def __getitem__(self, qualname):
        info = self.get(qualname)
        if info is None:
            raise KeyError(qualname)
        return info


def replay_runs(info: FunctionInfo, logs: list[AnalysisLog], vocab, raw_vocab, modules: ModuleSource,
                observed: Container[str], substitute: Callable[[str, object, int], object] | None = None,
                watch: "Watch | None" = None) -> list[tuple] | None:
    """Each recorded analysis of ``info`` run again (see ``ReplayProgram`` for the rest):
    (outcome, same writes, as many writes) per analysis; None when one asked what its log
    does not hold, or failed."""
    out = []
    for log in logs:
        if log.step is None:
            return None
        program = ReplayProgram(log, vocab, raw_vocab, modules, observed, substitute, watch)
        try:
            outcome = FunctionInterpreter(info, program).run()
            out.append((outcome, program.same_writes(), program.written == log.writes))
        except Exception:  # NotRecorded, Unencodable, or the edited code fails where the recorded did not
            return None
    return out


def replay_function(info: FunctionInfo, logs: list[AnalysisLog], vocab, raw_vocab, modules: ModuleSource,
                    observed: Container[str]) -> bool:
    """Does ``info`` (an edited function) redo every recorded analysis exactly?"""
    for i, log in enumerate(logs):
        runs = replay_runs(info, [log], vocab, raw_vocab, modules, observed)
        if runs is None:
            return False
        outcome, same, _ = runs[0]
        if not same or digest(step_facts(outcome)) != log.step:
            return False
        if i == len(logs) - 1 and (log.final is None or outcome_digest(outcome) != log.final):
            return False
    return True


# -- the logs as JSON (``analysis.codec``) -----------------------------------------------------

def encode_logs(logs: dict[str, list[AnalysisLog]]) -> dict | None:
    """One file's functions' logs as a JSON document (None if a value cannot be encoded)."""
    encoder = Encoder()
    try:
        body = {
            qualname: [
                [[[epoch, encoder.encode(q), encoder.encode(a)] for (epoch, q), a in log.reads.items()],
                 log.where, log.writes, log.written.hex() if log.written is not None else None,
                 log.step.hex() if log.step is not None else None, log.final.hex() if log.final is not None else None,
                 log.seq, log.waiting]
                for log in runs
            ]
            for qualname, runs in logs.items()
        }
    except (Unencodable, RecursionError):
        return None
    return {"rows": encoder.rows, "logs": body}


def decode_logs(document: dict, qualnames: set[str]) -> dict[str, list[AnalysisLog]]:
    """The logs of ``qualnames`` from ``encode_logs``'s document (Unencodable if damaged)."""
    try:
        decoder = Decoder(document["rows"])
        out = {}
        for qualname in qualnames:
            runs = []
            for reads, where, writes, written, step, final, seq, waiting in document["logs"][qualname]:
                log = AnalysisLog({(epoch, decoder.decode(q)): decoder.decode(a) for epoch, q, a in reads}, dict(where))
                log.writes, log.written = int(writes), bytes.fromhex(written) if written is not None else None
                log.step = bytes.fromhex(step) if step is not None else None
                log.final = bytes.fromhex(final) if final is not None else None
                log.seq, log.waiting = int(seq), bool(waiting)
                runs.append(log)
            out[qualname] = runs
        return out
    except (KeyError, TypeError, ValueError) as exc:
        raise Unencodable(str(exc)) from exc
