"""Where the interpreter is in one function: the function and its program, the state at the
current operation, the operation, and the loops and ``with`` contexts around it. One
``Frame`` per analysis, shared by the parts of the interpreter (expression evaluation, call
dispatch, pending work, stores); each reads the position from here instead of from the others.

What is built once per function and never changes with an analysis (its control-flow graph,
the names each loop body binds) is kept in a side table keyed by the function
(``tables_of``), not on the ``FunctionInfo``; an entry goes when its function does.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable
from typing import Any

from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.summaries import Site
from bufferlint.analysis.domain.regions import region_of, stable_names
from bufferlint.analysis.domain.values import Value, pinned_buffer
from bufferlint.analysis.flow import cfg
from bufferlint.analysis.frontend.index import FunctionInfo
from bufferlint.analysis.frontend.syntax import assigned_names, carried_names
from bufferlint.analysis.transfer.keyword_maps import keyword_map_names
from bufferlint.analysis.transfer.periodic_syncs import periodic_syncs
from bufferlint.analysis.transfer.ready_tests import ready_tests
from bufferlint.analysis.world import ProjectView
from bufferlint.findings import TraceStep


def node_key(node: ast.AST) -> tuple:
    """A statement's position, the key of what the interpreter keeps per loop or ``with``."""
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), type(node).__name__)


class FunctionTables:
    """What is derived once from a function's tree: its graph, each loop body's bound names,
    and the parents and regions inline marker checks evaluate (``guard_inline``)."""

    __slots__ = ("node", "_graph", "loop_names", "loop_fresh", "inline", "_stable", "_keyword_maps", "_periodic", "_ready_tests", "exit_calls",
                 "chosen_calls")

    def __init__(self, node: ast.AST) -> None:
        self.node = node
        self._graph: cfg.Graph | None = None
        self.loop_names: dict[ast.AST, set[str]] = {}
        self.loop_fresh: dict[ast.AST, set[str]] = {}
        self.inline: Any = None  # guard_inline.InlineTables, built when first asked
        self._stable: frozenset[str] | None = None
        self._keyword_maps: frozenset[str] | None = None
        self._periodic: dict[int, frozenset[str]] | None = None
        self._ready_tests: dict[int, tuple[int, bool]] | None = None
        self.exit_calls: dict[int, ast.Call] = {}  # ``exit_callbacks.exit_calls``'s calls, built once
        self.chosen_calls: dict[tuple, ast.IfExp | None] = {}  # ``chosen.chosen_call``'s calls, built once

    @property
    def keyword_maps(self) -> frozenset[str]:
        """Names read only as dicts of keyword arguments (``keyword_maps.keyword_map_names``)."""
        if self._keyword_maps is None:
            self._keyword_maps = keyword_map_names(self.node)
        return self._keyword_maps

    def periodic_syncs(self, is_device_sync: Callable[[ast.Call], bool]) -> dict[int, frozenset[str]]:
        """The tests synchronising a ring every few rounds (``periodic_syncs``)."""
        if self._periodic is None:
            self._periodic = periodic_syncs(self.node, is_device_sync)
        return self._periodic

    @property
    def ready_tests(self) -> dict[int, tuple[int, bool]]:
        """The tests of what a call returned, right where it is made (``ready_tests``)."""
        if self._ready_tests is None:
            self._ready_tests = ready_tests(self.node)
        return self._ready_tests

    @property
    def stable_names(self) -> frozenset[str]:
        """Names with one value wherever the function reads them (``regions.stable_names``)."""
        if self._stable is None:
            self._stable = stable_names(self.node)
        return self._stable

    @property
    def graph(self) -> cfg.Graph:
        if self._graph is None:
            self._graph = cfg.build(self.node)
        return self._graph

    def assigned_in(self, loop: ast.AST) -> set[str]:
        """Names a loop body (re)binds."""
        names = self.loop_names.get(loop)
        if names is None:
            names = self.loop_names[loop] = assigned_names(loop.body)  # type: ignore[attr-defined]
        return names

    def fresh_in(self, loop: ast.AST) -> set[str]:
        """Names a loop body binds anew in each iteration before reading them: what they
        hold dies with the iteration (the others are carried to the next: ``carried_names``)."""
        names = self.loop_fresh.get(loop)
        if names is None:
            names = self.loop_fresh[loop] = self.assigned_in(loop) - carried_names(loop)  # type: ignore[arg-type]
        return names


# id(FunctionInfo) -> its tables, dropped when the FunctionInfo is collected (the graph refers
# to the function's own node, so the node could not be a weak key).
_TABLES: dict[int, FunctionTables] = {}


def tables_of(info: FunctionInfo) -> FunctionTables:
    key = id(info)
    tables = _TABLES.get(key)
    if tables is None:
        tables = _TABLES[key] = FunctionTables(info.node)
        weakref.finalize(info, _TABLES.pop, key, None)
    return tables


class Frame:
    """The analysed function and the interpreter's position in it."""

    def __init__(self, info: FunctionInfo, program: ProjectView) -> None:
        self.info = info
        self.program = program
        self.module = info.module
        self.vocab = program.vocab
        self.tables = tables_of(info)
        self.st: State | None = State()  # None: the current operation is unreachable
        # The work a timed wait of the current block settled: still pending on the block's
        # way out when the wait raises (``cfg.Edge.raised``)
        self.unsettled_if_raised: frozenset = frozenset()
        self.op: cfg.Op | None = None
        self.advancing: dict[tuple, bool] = {}  # loop -> may advance a producer
        # the sites of this function's views from sources that declare ``advances`` calls:
        # their producer reuses the buffer at those calls only, not at a loop's next round
        self.call_advanced: set[tuple] = set()
        self.with_contexts: dict[tuple, str] = {}  # (with, item) -> `within` context it opens
        # the device-to-host copies issued here under a stream context (their allocation
        # sites): a wait for the current stream does not cover them (``Effects.synchronize``);
        # and the non-blocking copies to the device issued under one (their keys), which a
        # side stream's ``query()`` waits for (``call_packs.stream_work``)
        self.side_issued: set[tuple] = set()
        # the keys of the handles of tasks that wait for the device (``call_tasks.device_wait``)
        # -> what that wait covers (an event's records; None: everything): waiting for the
        # handle synchronises (``Effects.settle``)
        self.device_waits: dict[tuple, frozenset | None] = {}
        # parameter index -> its default's constant value (``devices`` of conditions: see call_site)
        self.defaults: dict[int, object] = {}
        # id(call node) -> (the node, its value, the project functions it reached): read by
        # the guard evaluation once the run is done (``guard_eval``)
        self.calls: dict[int, tuple[ast.Call, Value, tuple[str, ...]]] = {}
        # id(call) -> the sources a ``ready-after`` call tested where it is made declares
        # (``ready_tests``): made whole on the branch where it handed something back only
        self.deferred_ready: dict[int, tuple] = {}
        # the submissions awaiting whose future waits only until they are queued (pack
        # ``awaited = "queued"``): an ``await`` leaves them pending (``expr_Await``)
        self.queued_on_await: frozenset = frozenset()
        # the positions of the pack ``loop-yields`` calls made here (``asyncio.sleep(0)``):
        # awaiting one runs the loop's scheduled callbacks (``expr_Await``, ``LOOP_TURN``)
        self.loop_yields: set[tuple] = set()

    # -- positions and trace steps -----------------------------------------------------

    def step(self, node: ast.AST, note: str) -> TraceStep:
        return TraceStep(self.module.path, getattr(node, "lineno", 1), note)

    def site(self, node: ast.AST, sink: str, subject: str = "") -> Site:
        return Site(self.program.span(self.module, node), self.info.display, sink, subject)

    def region(self, index: ast.expr, base: Value) -> tuple | None:
        """The part of a pinned buffer in ``base`` that ``base[index]`` names (None: not a
        pinned buffer, or nothing known: ``regions.region_of``)."""
        if not any(pinned_buffer(leaf) for leaf in base.leaves):
            return None
        return region_of(index, self.tables.stable_names)

    def keeps_in_receiver(self, target: ast.expr) -> bool:
        """Is ``target`` an attribute of this method's receiver (``self.buf``), an object
        that outlives the call?"""
        info = self.info
        return bool(
            isinstance(target, ast.Attribute) and info.binds_receiver and info.class_qualname and info.params
            and isinstance(target.value, ast.Name) and target.value.id == info.params[0]
        )

    # -- the loops and contexts around the current operation ----------------------------

    @property
    def loop_fresh(self) -> list[set[str] | None]:
        """Names each enclosing loop that may advance a producer binds anew in each
        iteration (``FunctionTables.fresh_in``); None for a loop that advances none."""
        out: list[set[str] | None] = []
        for loop in self.op.loops if self.op is not None else ():
            if not self.advancing.get(node_key(loop), False):
                out.append(None)
                continue
            out.append(self.tables.fresh_in(loop))
        return out

    @property
    def contexts(self) -> frozenset:
        """The ``within`` contexts (CUDA streams) open around the current operation."""
        if self.op is None or not self.op.withs:
            return frozenset()
        found = (self.with_contexts.get((node_key(w), i)) for w, i in self.op.withs)
        return frozenset(c for c in found if c)

    @property
    def receiver_name(self) -> str | None:
        """``self`` in a method (what the receiver's containers are named through)."""
        info = self.info
        return info.params[0] if info.binds_receiver and info.params else None
