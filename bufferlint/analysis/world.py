"""What one function's analysis may read and write of the project: the interpreter's world.

Why: the interpreter (``transfer/``) analyses one function at a time, and everything it
learns about the rest of the project (callees' summaries, what objects keep in their
fields, which parameters receive borrowed values, the index's functions, classes, constants
and names) and everything it changes there (functions activated, values flowing into
callees, fields stored) goes through the program it is given. Three programs answer: the
analysis's own (``whole.program.Program``), the one that records every read and write for
the cache (``incremental.replay.RecordingProgram``) and the one that answers a replayed
analysis from that record (``incremental.replay.ReplayProgram``). The cache is correct only
while the three answer the same questions, so the questions are declared here, once:
``ProjectView`` and ``IndexView`` are the contract, mypy checks that each program
implements them, and ``tests/test_world.py`` checks that every member is recorded and
replayed (a member added here without both fails it).

Members listed in ``UNRECORDED`` are not project state: they answer from the vocabulary,
from the source text of the module being analysed, or memoise a pure function of what
was read, so a recording need not log them.
"""

from __future__ import annotations

import ast
from typing import Container, Iterable, Protocol, Sequence, TypeVar

from bufferlint.analysis.domain.summaries import Summary
from bufferlint.analysis.domain.values import Value
from bufferlint.analysis.frontend.imports import Reached
from bufferlint.analysis.frontend.index import AttachedCallable, ClassInfo, FunctionInfo, ModuleInfo, PartialBinding
from bufferlint.analysis.frontend.records import RecordShape
from bufferlint.analysis.frontend.vocabmatch import VocabIndex
from bufferlint.findings import Span
from bufferlint.packs import Vocabulary

Info = TypeVar("Info", covariant=True)


class Table(Protocol[Info]):
    """``index.functions`` or ``index.classes``: looked up by qualname."""

    def get(self, qualname: str, /) -> Info | None: ...

    def __contains__(self, qualname: object, /) -> bool: ...

    def __getitem__(self, qualname: str, /) -> Info: ...


class IndexView(Protocol):
    """What the interpreter reads of the project index (``frontend.index.ProjectIndex``)."""

    @property
    def functions(self) -> Table[FunctionInfo]: ...

    @property
    def classes(self) -> Table[ClassInfo]: ...

    def canonical(self, qualname: str) -> str: ...

    def constant(self, qualname: str) -> tuple[bool, object]: ...

    def class_ancestors(self, qualname: str) -> Sequence[str]: ...

    def class_method(self, class_qualname: str, name: str) -> str | None: ...

    def field_types(self, classes: Iterable[str], attr: str, elements: bool = False) -> frozenset[str]: ...

    def registered_callables(self, classes: Iterable[str], attr: str) -> frozenset[str]: ...

    def registered_under(self, classes: Iterable[str], attr: str, key: str) -> frozenset[str]: ...

    def dispatch_overloads(self, qualname: str) -> tuple[str, ...]: ...

    def field_objects(self, classes: Iterable[str], attr: str) -> frozenset[tuple[str, str, str, int]]: ...

    def attached_functions(self, attr: str) -> list[AttachedCallable]: ...

    def record_shape(self, class_qualname: str) -> RecordShape | None: ...

    def return_types(self, qualname: str) -> frozenset[str]: ...

    def class_values(self, qualname: str) -> tuple[bool, tuple[str, ...]] | None: ...

    def partial_binding(self, qualname: str) -> PartialBinding | None: ...

    def class_constant(self, class_qualname: str, attr: str) -> tuple[bool, object]: ...


class ProjectView(Protocol):
    """What the interpreter reads and writes of the program (see the module's docstring)."""

    @property
    def index(self) -> IndexView: ...

    @property
    def vocab(self) -> VocabIndex: ...

    @property
    def raw_vocab(self) -> Vocabulary: ...

    @property
    def by_name_summaries(self) -> dict[str, tuple[Summary, Summary]]: ...

    @property
    def hot(self) -> Container[tuple[str, int]]:
        """(function, parameter) pairs that may receive borrowed values."""

    @property
    def flight_hot(self) -> Container[tuple[str, int]]:
        """(function, parameter) pairs that may receive device copies in flight."""

    @property
    def pinned_hot(self) -> Container[tuple[str, int]]:
        """(function, parameter) pairs that may receive pinned buffers the program owns."""

    @property
    def field_hot(self) -> Container[tuple[object, ...]]:
        """(function, parameter, field position, kind) of record parameters whose field may
        hold a borrowed value (kind "borrowed") or a device copy in flight ("flight"), and
        (function, parameter) for a parameter with any such field."""

    def span(self, module: ModuleInfo, node: ast.AST) -> Span: ...

    def summary(self, qualname: str) -> Summary: ...

    def field_value(self, classes: Iterable[str], attr: str) -> Value | None: ...

    def buffer_fill(self, buffer: tuple[object, ...], reader: str) -> Value | None:
        """The copies from the device another method left filling the pinned buffer ``buffer``
        (its site and object), as a method of the class ``reader`` sees them."""

    def in_project(self, qualname: str) -> bool: ...

    def methods_named(self, name: str | None, module: str) -> list[tuple[FunctionInfo, Reached | None]]:
        """The project's methods called ``name``, each with why a call in ``module`` may
        reach it (None: no import of ``module``'s loads its class's module)."""

    def overrides_of(self, class_qualname: str, name: str) -> list[FunctionInfo]:
        """What ``self.<name>()`` in a method of the class may run besides the class's own
        ``name``: what the project's subclasses reach by that name instead."""

    def activate(self, qualname: str) -> None: ...

    def flow(self, caller: str, callee: str, param: int, concrete: bool, params: frozenset[int],
             flight: bool = False, pinned: bool = False) -> None: ...

    def flow_fields(self, caller: str, callee: str, param: int, fields: tuple[tuple[int, str], ...],
                    records: tuple[int, ...]) -> None: ...

    def store_field(self, owner: str, attr: str, value: Value) -> None: ...

    def fill_buffer(self, buffer: tuple[object, ...], copy: Value, owner: str) -> None: ...

    def consider(self, info: FunctionInfo) -> None: ...


# Members that answer from no project state (the vocabulary; the analysed module's text;
# a memo of a pure function of summaries read through ``summary``): never logged.
UNRECORDED = frozenset({"vocab", "raw_vocab", "by_name_summaries", "span"})


def is_hot(view: ProjectView, qualname: str, concrete: bool, params: Iterable[int]) -> bool:
    """Does a value passed on by ``qualname`` carry borrowed values: one of its own
    (``concrete``), or one of its parameters ``params`` that may receive them? One rule
    over ``view.hot``, so each program's ``hot`` (logged, or answered from a log) decides."""
    return concrete or any((qualname, p) in view.hot for p in params)

