"""The call handlers as a table: a call (and the pack entry it matches) in a given state ->
the value it evaluates to and the effect records it returns (``call_effects``), which the
interpreter applies. Each row evaluates one real call through ``CallResolver`` and
``calls.dispatch`` with the shipped packs (plus a small project pack), below the corpus."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.values import EMPTY, Borrow, ParamRef, Value, deep_leaves
from bufferlint.analysis.frontend.index import ModuleInfo
from bufferlint.analysis.transfer import call_effects as fx
from bufferlint.analysis.transfer.calls import dispatch
from bufferlint.analysis.transfer.interpreter import FunctionInterpreter
from bufferlint.analysis.whole.program import Program
from bufferlint.hazards import Hazard
from bufferlint.packs import builtin_vocabulary, vocabulary_from_dict

PACK = {
    "sources": [{"call": ["ringbuf.Ring.read"], "advances": ["ringbuf.Ring.release"]}],
    "guards": [{"call": "guardlib.is_owned", "param": 0}],
}

MODULE = '''
import concurrent.futures
import functools
import guardlib
import itertools
import ringbuf
import torch

def helper(t, pool):
    return pool.submit(print, t)

class Loader:
    def load(self, w, ws, pool, fut, ring, kept):
        pass
'''

BORROWED = Value(leaves=frozenset({Borrow(("m.Loader.load", 1, 0))}))
STATE = {
    "self": Value(leaves=frozenset({ParamRef(0)}), types=frozenset({"m.Loader"})),
    "w": BORROWED,
    "ws": Value(elems=BORROWED, lazy=True),
    "pool": Value(types=frozenset({"concurrent.futures.ThreadPoolExecutor"}), alloc=frozenset({("m", 2, 0)})),
    "fut": Value(pending=frozenset({(3, 0)})),
    "ring": Value(types=frozenset({"ringbuf.Ring"})),
    "kept": Value(elems=EMPTY, collection=True),
}


def evaluate(call: str) -> tuple[Value, list]:
    """The value of ``call`` in ``Loader.load`` (its variables as in STATE) and its records."""
    vocab = builtin_vocabulary()
    vocab.merge(vocabulary_from_dict(PACK, "pyproject.toml"))
    program = Program(Path("/project"), vocab)
    program.index.add_module(ModuleInfo("m", Path("/project/m.py"), ast.parse(MODULE), MODULE, False))
    program.hot.add(("m.helper", 0))
    interpreter = FunctionInterpreter(program.index.functions["m.Loader.load"], program)
    interpreter.frame.st = State(dict(STATE))
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    site = interpreter.evaluator.calls.site_of(node)
    assert site is not None
    return dispatch(site), site.effects


def borrowed(value: Value) -> bool:
    return any(isinstance(leaf, Borrow) for leaf in deep_leaves(value, through_lazy=True))


# (pack entry kind, call, the records' types, a check of the value and records)
TABLE = [
    ("synchronizers", "torch.cuda.synchronize()", ["Synchronize"], lambda v, r: v == EMPTY),
    ("settlers", "fut.result()", ["Settle"], lambda v, r: r[0].value.pending == {(3, 0)}),
    ("settlers", "concurrent.futures.wait([fut])", ["Settle"], lambda v, r: r[0].value.elems.pending == {(3, 0)}),
    ("drains", "pool.shutdown()", ["Drain"], lambda v, r: r[0].executor is STATE["pool"]),
    ("sources", "ring.read()", ["Issue"], lambda v, r: borrowed(v) and r[0].value is v),
    ("advances", "ring.release()", ["Advance"], lambda v, r: r[0].what == "ring.release"),
    (
        "sinks", "pool.submit(print, w)", ["Submit"],
        lambda v, r: (r[0].sink, r[0].subject, r[0].hazard, r[0].owners) == ("pool.submit", "w", Hazard.ASYNC_READ_AFTER_ADVANCE, STATE["pool"].alloc)
        and v.pending == {(1, 0)},
    ),
    (  # an eager sink queues every element up front: the stream is held at once
        "sinks", "pool.map(print, ws)", ["Materialize", "Materialize"],
        lambda v, r: r[1].value is STATE["ws"] and r[1].hazard is Hazard.ASYNC_READ_AFTER_ADVANCE and v == EMPTY,
    ),
    ("sanitizers", "w.clone()", [], lambda v, r: v == EMPTY),
    ("guards", "guardlib.is_owned(w)", [], lambda v, r: v.cond is not None and v.cond.clean_if_true),
    ("views", "w.view(-1)", [], lambda v, r: borrowed(v)),
    ("retainers", "self.register_buffer('b', w)", ["Retain"], lambda v, r: r[0].holder_text == "self.register_buffer"),
    ("binds", "functools.partial(print, w)", [], lambda v, r: borrowed(v)),
    ("passthrough", "itertools.islice(ws, 2)", [], lambda v, r: v.lazy and borrowed(v)),
    ("host-reads", "w.tolist()", ["HostRead"], lambda v, r: r[0].value is BORROWED and v == EMPTY),
    ("builtins", "list(ws)", ["Materialize"], lambda v, r: r[0].what == "list(...)" and borrowed(v)),
    (
        "builtins", "setattr(w, '_sglang_runai_streamer_tensor', True)", ["Mark"],
        lambda v, r: r[0].kind == "runai-streamer",
    ),
    ("containers", "kept.append(w)", ["Store"], lambda v, r: r[0].value is BORROWED),
    ("containers", "kept.pop(0)", ["Release", "ReadBack"], lambda v, r: (r[0].name, r[0].key) == ("kept", "0")),
    ("containers", "kept.clear()", ["Release"], lambda v, r: r[0].key is None),
    ("project", "helper(w, pool)", ["Record", "Record", "Record"],
     lambda v, r: [e.kind for e in r] == ["callee", "returns", "edge"]),
]


@pytest.mark.parametrize("kind, call, records, check", TABLE, ids=[f"{row[0]}: {row[1]}" for row in TABLE])
def test_call_handler(kind, call, records, check) -> None:
    value, effects = evaluate(call)
    assert [type(e).__name__ for e in effects] == records
    assert all(isinstance(e, tuple(vars(fx)[name] for name in records)) for e in effects)
    assert check(value, effects)


def test_an_unknown_call_asks_for_its_definition() -> None:
    """Passed a borrowed value, a call nothing knows asks for the files defining it, and
    stands for an object of its name; passed nothing borrowed, it asks for nothing."""
    value, effects = evaluate("torch.unknown_function(w)")
    assert effects == [fx.Record("demand", ("qualname", "torch.unknown_function"))]
    assert value.types == {"torch.unknown_function"}
    assert evaluate("torch.unknown_function(1)")[1] == []
