"""The interpreter's world (``analysis.world``) is the cache's contract: every member of
``ProjectView`` and ``IndexView`` is recorded by ``RecordingProgram`` and answered from the
record by ``ReplayProgram``. A member added to the Protocols without both fails here (its
sample question below is missing, or the recording logs nothing, or the replay does not
answer it from the log)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

import pytest

from bufferlint.analysis.domain.values import Borrow, Value
from bufferlint.analysis.frontend.index import ModuleInfo
from bufferlint.analysis.incremental.replay import (
    AnalysisLog, ModuleSource, NotRecorded, RecordingProgram, ReplayProgram, fingerprint,
)
from bufferlint.analysis.whole.program import Program
from bufferlint.analysis.world import UNRECORDED, IndexView, ProjectView, Table
from bufferlint.packs import Vocabulary

SOURCE = '''\
from typing import NamedTuple

LIMIT = "lim"


class Base:
    def run(self, x):
        return x


class Loader(Base):
    pool: Base
    mode = "copy"

    def load(self, w):
        return self.pool

    def run(self, x):
        return self.pool


def helper(a):
    return a


def make_base() -> Base:
    return Base()


HANDLERS = {"on_load": helper}
DEFAULT_LOADER = Loader
import functools
OPEN_FAST = functools.partial(helper, 1)


class Item(NamedTuple):
    name: str
    tensor: object
'''

Question = Callable[[ProjectView], object]


def _program() -> Program:
    program = Program(Path("/p"), Vocabulary())
    text = SOURCE
    program.index.add_module(ModuleInfo("pkg", Path("/p/pkg.py"), ast.parse(text), text, False))
    program.module_names.add("pkg")
    program.module_texts["pkg"] = (text.encode(), False)
    return program


def _borrowed() -> Value:
    return Value(leaves=frozenset({Borrow(("pkg.helper", 18, 11), False, ())}))


# One question per member: what the interpreter may ask or do through it.
VIEW: dict[str, Question] = {
    "summary": lambda view: view.summary("pkg.helper"),
    "field_value": lambda view: view.field_value(frozenset({"pkg.Loader"}), "pool"),
    "in_project": lambda view: view.in_project("pkg.helper"),
    "methods_named": lambda view: view.methods_named("run", "pkg"),
    "overrides_of": lambda view: view.overrides_of("pkg.Base", "run"),
    "hot": lambda view: ("pkg.helper", 0) in view.hot,
    "flight_hot": lambda view: ("pkg.helper", 0) in view.flight_hot,
    "pinned_hot": lambda view: ("pkg.helper", 0) in view.pinned_hot,
    "field_hot": lambda view: ("pkg.helper", 0, 1, "borrowed") in view.field_hot,
    "activate": lambda view: view.activate("pkg.helper"),
    "flow": lambda view: view.flow("pkg.Loader.load", "pkg.helper", 0, True, frozenset()),
    "flow_fields": lambda view: view.flow_fields("pkg.Loader.load", "pkg.helper", 0, ((1, "borrowed"),), ()),
    "store_field": lambda view: view.store_field("pkg.Loader", "pool", _borrowed()),
    "buffer_fill": lambda view: view.buffer_fill((("pkg.helper", 18, 11), frozenset()), "pkg.Loader"),
    "fill_buffer": lambda view: view.fill_buffer((("pkg.helper", 18, 11), frozenset()), _borrowed(), ""),
    "consider": lambda view: view.consider(_program().index.functions["pkg.helper"]),
}
INDEX: dict[str, Question] = {
    "canonical": lambda view: view.index.canonical("pkg.LIMIT"),
    "constant": lambda view: view.index.constant("pkg.LIMIT"),
    "class_ancestors": lambda view: list(view.index.class_ancestors("pkg.Loader")),
    "class_method": lambda view: view.index.class_method("pkg.Loader", "run"),
    "field_types": lambda view: view.index.field_types(frozenset({"pkg.Loader"}), "pool"),
    "registered_callables": lambda view: view.index.registered_callables(frozenset({"pkg.Loader"}), "pool"),
    "registered_under": lambda view: view.index.registered_under(frozenset({"pkg.Loader"}), "pool", "fast"),
    "dispatch_overloads": lambda view: view.index.dispatch_overloads("pkg.helper"),
    "field_objects": lambda view: view.index.field_objects(frozenset({"pkg.Loader"}), "pool"),
    "attached_functions": lambda view: view.index.attached_functions("on_load"),
    "record_shape": lambda view: view.index.record_shape("pkg.Item"),
    "return_types": lambda view: view.index.return_types("pkg.make_base"),
    "class_values": lambda view: view.index.class_values("pkg.DEFAULT_LOADER"),
    "partial_binding": lambda view: view.index.partial_binding("pkg.OPEN_FAST"),
    "class_constant": lambda view: view.index.class_constant("pkg.Loader", "mode"),
}
TABLE: dict[str, Callable[[Table[object], str], object]] = {
    "get": lambda table, name: table.get(name),
    "__contains__": lambda table, name: name in table,
    "__getitem__": lambda table, name: table[name],
}
TABLES = {"functions": "pkg.Loader.load", "classes": "pkg.Base"}
for _table, _name in TABLES.items():
    for _member, _ask in TABLE.items():
        INDEX[f"{_table}.{_member}"] = (
            lambda view, table=_table, name=_name, ask=_ask: ask(getattr(view.index, table), name)
        )
QUESTIONS = {**VIEW, **{f"index.{name}": ask for name, ask in INDEX.items()}}
# The machinery of each program that is not the view (the replay's log access).
OWN = {RecordingProgram: set(), ReplayProgram: {"answer", "wrote", "same_writes", "written"}}


def _members(protocol: type) -> set[str]:
    """What a Protocol declares: its public names and the operators it spells out."""
    return {name for name in vars(protocol) if not name.startswith("_") or name in TABLE}


def test_every_member_of_the_world_has_a_question_here() -> None:
    view = _members(ProjectView) - UNRECORDED - {"index"}
    index = _members(IndexView) - set(TABLES)
    assert set(VIEW) == view
    assert {name for name in INDEX if "." not in name} == index
    assert set(TABLE) == _members(Table)
    assert set(TABLES) <= _members(IndexView)


@pytest.mark.parametrize("kind", [RecordingProgram, ReplayProgram])
def test_the_recording_and_replaying_programs_are_the_view_and_no_more(kind: type) -> None:
    public = {name for name in dir(kind) if not name.startswith("_")}
    instance = {"index", "vocab", "raw_vocab", "by_name_summaries", "hot", "flight_hot", "pinned_hot", "field_hot", "span"}
    assert public | instance == _members(ProjectView) | OWN[kind]


def _modules(program: Program) -> ModuleSource:
    return ModuleSource(lambda name: program.index if name in program.index.modules else None,
                        lambda: frozenset(program.module_names))


@pytest.mark.parametrize("member", sorted(QUESTIONS))
def test_each_member_is_recorded_and_answered_from_the_record(member: str) -> None:
    ask = QUESTIONS[member]
    program = _program()
    log = AnalysisLog()
    answer = ask(RecordingProgram(program, log))
    assert log.reads or log.writes, f"{member}: the recording logged nothing"
    assert answer == ask(program)  # the recording forwards: the same answer as the program's

    log.written = fingerprint(log.parts or [])
    replay = ReplayProgram(log, program.vocab, program.raw_vocab, _modules(program))
    assert ask(replay) == answer
    assert replay.same_writes()

    blank = ReplayProgram(AnalysisLog(), program.vocab, program.raw_vocab, _modules(program))
    with pytest.raises(NotRecorded):  # answered from the record, not worked out again
        ask(blank)


def test_members_that_are_no_project_state_answer_alike_unrecorded() -> None:
    program = _program()
    log = AnalysisLog()
    recording = RecordingProgram(program, log)
    replay = ReplayProgram(log, program.vocab, program.raw_vocab, _modules(program))
    module = program.index.modules["pkg"]
    node = program.index.functions["pkg.helper"].node
    for view in (recording, replay):
        assert view.span(module, node) == program.span(module, node)
        assert view.vocab is program.vocab and view.raw_vocab is program.raw_vocab
    assert recording.by_name_summaries is program.by_name_summaries
    assert not log.reads and not log.writes
    assert {"vocab", "raw_vocab", "by_name_summaries", "span"} == UNRECORDED
