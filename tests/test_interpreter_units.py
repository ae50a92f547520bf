"""The interpreter below the corpus: one function analysed on its own (``FunctionInterpreter``
with a real ``Program``), branch refinement, and the per-function side table."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

from bufferlint.analysis.domain.conditions import FALSY, IS_NOT, TRUTHY, ParamTest
from bufferlint.analysis.domain.state import Pending, State
from bufferlint.analysis.domain.summaries import Site
from bufferlint.analysis.domain.values import Borrow, ParamRef, Value, const, join
from bufferlint.analysis.frontend.index import ModuleInfo
from bufferlint.analysis.transfer import frame
from bufferlint.analysis.transfer.frame import tables_of
from bufferlint.analysis.transfer.interpreter import FunctionInterpreter
from bufferlint.analysis.transfer.refine import refine
from bufferlint.analysis.whole.program import Program
from bufferlint.findings import Span, TraceStep
from bufferlint.hazards import Hazard
from bufferlint.packs import builtin_vocabulary, vocabulary_from_dict

MODULE = '''
import ringbuf

def load(pool, ring: ringbuf.Ring):
    for w in ring.stream():
        pool.submit(print, w)

def load_copies(pool, ring: ringbuf.Ring):
    for w in ring.stream():
        pool.submit(print, w.clone())

def passes(x):
    if x:
        return x
    return None
'''


def program() -> Program:
    vocab = builtin_vocabulary()
    vocab.merge(vocabulary_from_dict({"sources": [{"call": ["ringbuf.Ring.stream"], "produces": "iter[borrowed]"}]}, "p"))
    program = Program(Path("/project"), vocab)
    program.index.add_module(ModuleInfo("m", Path("/project/m.py"), ast.parse(MODULE), MODULE, False))
    return program


def analyse(name: str):
    project = program()
    return FunctionInterpreter(project.index.functions[f"m.{name}"], project).run()


def test_a_borrowed_view_submitted_in_its_loop_is_found_at_the_submit() -> None:
    outcome = analyse("load")
    sites = [site for _, site in outcome.findings]
    assert [(site.span.line, site.sink, site.subject) for site in sites] == [(6, "pool.submit", "w")]
    trace = next(iter(outcome.findings.values()))
    assert [step.line for step in trace][0] == 5  # from the source


def test_a_copy_submitted_is_no_finding() -> None:
    assert analyse("load_copies").findings == {}


def test_the_summary_is_in_terms_of_the_parameters() -> None:
    outcome = analyse("passes")
    assert outcome.findings == {} and outcome.callees == set()
    # ``x`` is handed back only where it is true: a condition each call decides
    assert outcome.summary.returns.leaves == {ParamRef(0, when=frozenset({ParamTest(0, TRUTHY)}))}


def test_a_branch_whose_test_is_constant_false_is_unreachable() -> None:
    test = ast.parse("flag", mode="eval").body
    state = State({"flag": const(False)})
    assert refine(state.copy(), test, True, {id(test): const(False)}, {}) is None
    refined = refine(state.copy(), test, False, {id(test): const(False)}, {})
    assert refined is not None and refined.vars == state.vars
    negated = ast.parse("not flag", mode="eval").body
    assert refine(state.copy(), negated, False, {id(negated.operand): const(False)}, {}) is None


def test_a_parameter_tested_becomes_an_assumption_on_each_branch() -> None:
    test = ast.parse("x", mode="eval").body
    passed = Value(leaves=frozenset({ParamRef(2)}), param=2)
    state = refine(State(), test, True, {id(test): passed}, {2: True})
    assert state is not None and state.assume == {ParamTest(2, TRUTHY, None, True, True)}
    state = refine(State(), test, False, {id(test): passed}, {})
    assert state is not None and state.assume == {ParamTest(2, FALSY)}


def test_a_parameter_compared_with_a_constant_becomes_an_assumption() -> None:
    test = ast.parse("x is None", mode="eval").body
    values = {id(test.left): Value(leaves=frozenset({ParamRef(1)}), param=1), id(test.comparators[0]): const(None)}
    state = refine(State(), test, False, values, {1: None})
    assert state is not None and state.assume == {ParamTest(1, IS_NOT, None, True, None)}


def test_a_value_that_may_be_something_else_is_no_assumption() -> None:
    """``to_cpu = plan.to_cpu`` on one path: what is tested is not only what the caller passed."""
    test = ast.parse("x", mode="eval").body
    passed = Value(leaves=frozenset({ParamRef(2)}), param=2)
    joined = join(passed, Value())
    assert joined.leaves == passed.leaves and joined.param is None
    state = refine(State(), test, True, {id(test): joined}, {})
    assert state is not None and state.assume == frozenset()


def test_the_graph_is_built_once_per_function_and_kept_off_its_info() -> None:
    project = program()
    info = project.index.functions["m.load"]
    tables = tables_of(info)
    assert tables_of(info) is tables
    assert tables.graph is tables.graph
    FunctionInterpreter(info, project).run()
    assert tables_of(info).graph is tables.graph
    assert not any(name.startswith("_graph") or name.startswith("_loop") for name in vars(info))


def test_the_tables_go_with_their_function() -> None:
    project = program()
    tables_of(project.index.functions["m.load"])
    before = len(frame._TABLES)
    del project
    gc.collect()
    assert len(frame._TABLES) < before


def test_an_analysis_leaves_no_cyclic_garbage() -> None:
    """Analyses run with the cyclic collector paused (bufferlint.gcpause): what one leaves
    behind must be freed by reference counting alone."""
    project = program()
    functions = [project.index.functions[f"m.{name}"] for name in ("load", "load_copies", "passes")]
    for info in functions:  # the first analyses build what stays (graphs, the pack index)
        FunctionInterpreter(info, project).run()
    gc.collect()
    gc.disable()
    try:
        for info in functions:
            FunctionInterpreter(info, project).run()
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_future_adopted_twice_keeps_the_preferred_trace_in_either_order() -> None:
    """Two futures of a callee can be one pending entry in the caller; which one the caller
    met first follows set order (string hashes), so the shorter trace is kept either way."""
    interpreter = FunctionInterpreter(program().index.functions["m.load"], program())
    path = Path("/project/m.py")
    source, store = TraceStep(path, 5, "source"), TraceStep(path, 9, "kept")
    short = Borrow(("m.f", 5, 0), False, (source,))
    long = Borrow(("m.f", 5, 0), False, (source, TraceStep(path, 7, "passed on")))
    site = Site(Span(path, 9, 1, 9, 5), "m:load", "self.kept")
    kept = [Pending((3, 0), frozenset({leaf}), site, frozenset(), store, Hazard.KEPT_PAST_STEP) for leaf in (short, long)]
    for order in (kept, kept[::-1]):
        interpreter.frame.st = State()
        for pending in order:
            interpreter.effects.adopt(pending)
        (adopted,) = interpreter.frame.st.pending
        assert next(iter(adopted.leaves)).trace == (source,)
