"""Comprehensions: loops of their own inside an expression. Over a producer they advance
between elements (work submitted for one element is a race with the next), and a list, set
or dict built from the elements holds every view at once."""

from __future__ import annotations

import ast
from collections.abc import Callable

from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.summaries import SinkReach
from bufferlint.analysis.domain.values import EMPTY, Borrow, ParamRef, Value, advances_producer, deep_leaves, iterate
from bufferlint.analysis.frontend.syntax import short
from bufferlint.analysis.transfer.effects import Effects
from bufferlint.analysis.transfer.facts import FunctionFacts
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.refine import refine
from bufferlint.hazards import Hazard


class Comprehensions:
    """Runs a comprehension's generators and elements in a state of their own. ``evaluate``,
    ``evaluate_recorded``, ``assign`` and ``evaluate_iterable`` come from the expression
    evaluator that owns it."""

    def __init__(
        self,
        frame: Frame,
        facts: FunctionFacts,
        effects: Effects,
        evaluate: Callable[[ast.expr | None], Value],
        evaluate_recorded: Callable[[ast.expr], tuple[Value, dict[int, Value]]],
        assign: Callable[[ast.expr, Value, ast.AST], None],
        evaluate_iterable: Callable[[ast.expr], Value],
    ) -> None:
        self.frame = frame
        self.facts = facts
        self.effects = effects
        self.eval = evaluate
        self.eval_recorded = evaluate_recorded
        self.assign = assign
        self.eval_iterable = evaluate_iterable  # ``for x in obj``: its ``__iter__`` runs

    def run(self, node, elt_nodes: list[ast.expr], keeps: str | None = None) -> list[Value]:
        """A comprehension is a loop of its own. Over a producer (a lazy stream, an iterable
        parameter) it advances between elements: work submitted for one element and still
        pending is a race with the next, and a list/set/dict built from the elements
        (``keeps``) holds every view at once, like ``list(stream)``."""
        frame = self.frame
        outer = frame.st
        assert outer is not None  # eval checked it
        frame.st = outer.copy()
        streams = self.enter_generators(node)
        if frame.st is None:
            frame.st = outer
            return [EMPTY for _ in elt_nodes]
        before = frame.st.pending
        values = [self.eval(e) for e in elt_nodes]
        inner = frame.st
        frame.st = outer
        if inner is None:
            return values
        added = inner.pending - before
        if streams and added:
            gen = streams[-1][0]
            self.effects.commit(State(pending=added), frame.step(gen.iter, "the comprehension advances to its next element"))
            inner.pending = inner.pending - added
        outer.pending = outer.pending | inner.pending
        # Copies to the host issued by the elements (``[g.to("cpu", non_blocking=True) for g
        # in groups]``) are still in flight after it.
        outer.flying = outer.flying | inner.flying
        if keeps and streams:
            self.keep_elements(node, streams, values[-1], keeps)
        return values

    def enter_generators(self, node) -> list[tuple[ast.comprehension, Value]]:
        """Bind each ``for`` of a comprehension and refine on its ``if``s; the generators
        whose iterable is a producer."""
        frame = self.frame
        streams = []
        for gen in node.generators:
            iterable = self.eval_iterable(gen.iter)
            if frame.st is None:
                break
            if advances_producer(iterable):
                streams.append((gen, iterable))
            element = iterate(iterable, frame.step(gen.iter, f"element taken by `for {short(gen.target)} in ...`"))
            self.assign(gen.target, element, node)
            for cond in gen.ifs:
                _, tested = self.eval_recorded(cond)
                if frame.st is not None:
                    frame.st = refine(frame.st, cond, True, tested, frame.defaults, frame.program.index)
                if frame.st is None:
                    break
            if frame.st is None:
                break
        return streams

    def keep_elements(self, node, streams, kept: Value, what: str) -> None:
        """A list/set/dict comprehension over a producer keeps what its elements hold: the
        borrowed views in hand now; for a parameter stream, the parts of each element kept
        (``(name, w.clone())`` keeps only the name), judged where a caller passes a stream."""
        frame = self.frame
        leaves = list(deep_leaves(kept, through_lazy=True))
        in_hand = [leaf for leaf in leaves if isinstance(leaf, Borrow)]
        if in_hand and any(iterable.lazy for _, iterable in streams):
            self.effects.materialize(node, Value(lazy=True, elems=Value(leaves=frozenset(in_hand))), what)
        step = frame.step(node, f"every element is kept at once by `{what}` while the producer advances")
        for _, iterable in streams:
            for source in iterable.leaves:
                if not isinstance(source, ParamRef) or "view" in source.path:
                    continue
                prefix = source.path + ("iter",)
                subs = frozenset(
                    leaf.path[len(prefix):]
                    for leaf in leaves
                    if isinstance(leaf, ParamRef) and leaf.index == source.index and leaf.path[: len(prefix)] == prefix
                )
                if subs:
                    assume = frame.st.assume  # type: ignore[union-attr]  # the comprehension's outer state
                    reach = SinkReach(source.index, source.path, assume | source.when, frame.site(node, what), (step,), Hazard.KEPT_PAST_STEP, True, subs)
                    self.facts.add_reach(reach)
