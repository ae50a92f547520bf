"""Expression evaluation: what each kind of expression evaluates to in the abstract domain.
Mixed into ``FunctionInterpreter``."""

from __future__ import annotations

import ast

from bufferlint.analysis.domain.state import State, is_stand_in, join_states
from bufferlint.analysis.domain.summaries import SinkReach
from bufferlint.analysis.frontend.syntax import short
from bufferlint.analysis.domain.values import (
    EMPTY,
    advances_producer,
    Borrow,
    Cond,
    ParamRef,
    Value,
    collection,
    const,
    container,
    checked,
    deep_leaves,
    index,
    iterate,
    join,
    join_all,
    map_leaves,
    view_of,
)


class ExpressionsMixin:
    def captured(self, node: ast.AST) -> Value | None:
        """A closure's captured variables, as a container (the task reads them later), and
        its default values, evaluated now (``def job(src=w.clone())`` captures a copy)."""
        args = node.args
        assigned = {a.arg for a in ast.walk(args) if isinstance(a, ast.arg)}
        values = [self.eval(d) for d in args.defaults + [d for d in args.kw_defaults if d is not None]]
        body = node.body if isinstance(node.body, list) else [node.body]
        for child in (n for stmt in body for n in ast.walk(stmt)):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id not in assigned:
                value = self.st.vars.get(child.id) if self.st is not None else None
                if value is not None and child.id != getattr(node, "name", None):
                    values.append(value)
        values = [v for v in values if not v.is_empty()]
        if not values:
            return None
        return container(join_all(values))

    def eval(self, node: ast.expr | None) -> Value:
        if node is None or self.st is None:
            return EMPTY
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is not None:
            value = method(node)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child)
            value = EMPTY
        if self.recorded is not None:
            self.recorded[id(node)] = value
        return value

    def eval_recorded(self, node: ast.expr) -> tuple[Value, dict]:
        """Evaluate a test once, keeping the values of its parts for the branch refinement."""
        outer = self.recorded
        self.recorded = outer if outer is not None else {}
        try:
            return self.eval(node), self.recorded
        finally:
            self.recorded = outer

    def expr_Constant(self, node: ast.Constant) -> Value:
        return const(node.value)

    def expr_Name(self, node: ast.Name) -> Value:
        value = self.st.vars.get(node.id)
        return value if value is not None else self.lookup(node.id)

    def lookup(self, name: str) -> Value:
        if name in self.info.local_defs:
            return Value(ref=self.info.local_defs[name])
        outer = self.info.outer
        while outer is not None:
            if name in outer.local_defs:
                return Value(ref=outer.local_defs[name])
            if name in outer.params or name in outer.assigned:
                return EMPTY  # a closure variable: some object of the enclosing call, unknown here
            outer = outer.outer
        module = self.module
        if name in module.globals:
            return Value(ref=module.globals[name])
        if name in module.imports:
            qualname = self.program.index.canonical(module.imports[name])
            known, literal = self.program.index.constant(qualname)
            return Value(ref=qualname, const=literal, has_const=True) if known else Value(ref=qualname)
        if name in module.constants:
            return const(module.constants[name])
        if name in module.variables:
            return EMPTY  # module state: some object, unknown here
        if name in ("True", "False", "None"):
            return const({"True": True, "False": False, "None": None}[name])
        return Value(ref=f"builtins.{name}")

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.eval(node.value)
        if base.ref is not None and not base.leaves:
            qualname = self.program.index.canonical(f"{base.ref}.{node.attr}")
            known, literal = self.program.index.constant(qualname)
            return Value(ref=qualname, const=literal, has_const=True) if known else Value(ref=qualname)
        if node.attr in self.vocab.view_attributes:
            return view_of(base, self.step(node, f"`.{node.attr}` is a view of the borrowed value"))
        if node.attr in self.vocab.markers:
            return Value(cond=Cond(clean_if_false=checked(base, self.vocab.marker_tags(node.attr))))
        classes = base.types | base.declared
        if classes:
            source = self.vocab.attribute_source(node.attr, classes)
            if source is not None:
                return self.borrowed_attribute(node, source)
        project_classes = self.program.index.classes  # a dict: ``isdisjoint`` would walk all of it
        if any(name in project_classes for name in classes):
            declared = self.program.index.field_types(classes, node.attr)  # `self.pool = MyPool()`
            kept = self.program.field_value(classes, node.attr)  # what other methods stored there
            if declared or kept is not None:
                return join(Value(declared=declared), kept) or EMPTY
        if base.leaves or base.types or base.declared or base.alloc:
            # Maybe a bound method (``submit = executor.submit``). One of a borrowed value
            # that the packs know as a method (``w.clone``) holds the value itself.
            holds = base.leaves if self.vocab.knows_method(node.attr) else frozenset()
            return Value(leaves=holds, method=node.attr, bound=base)
        return EMPTY

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        base = self.eval(node.value)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, (ast.Name, ast.Attribute)):
            self.read_back(node.value, node)
        key = self.eval(node.slice)
        step = self.step(node, "indexed/sliced: a view of the borrowed value")
        if isinstance(node.slice, ast.Slice) or (isinstance(node.slice, ast.Tuple)):
            return join(view_of(base, step), container(base.elems, None) if base.elems or base.items else None)
        if key.has_const and isinstance(key.const, int) and not isinstance(key.const, bool):
            return index(base, key.const, step)
        return index(base, None, step)

    def expr_Tuple(self, node: ast.Tuple | ast.List | ast.Set) -> Value:
        values, starred = [], False
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                starred = True
                inner = self.eval(elt.value)
                self.materialize(node, inner, "[*...]")
                values.append(iterate(inner))
            else:
                values.append(self.eval(elt))
        if isinstance(node, ast.Tuple) and not starred:
            return container(None, tuple(values))
        return collection(join_all(values))

    expr_List = expr_Tuple

    expr_Set = expr_Tuple

    def expr_Dict(self, node: ast.Dict) -> Value:
        values = []
        for key, value in zip(node.keys, node.values):
            if key is not None:
                self.eval(key)
                values.append(self.eval(value))
            else:
                values.append(index(self.eval(value), None))
        return collection(join_all(values))

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        values = [self.eval(v) for v in node.values]
        conds = [v.cond or Cond() for v in values]
        if isinstance(node.op, ast.And):
            cond = Cond(frozenset().union(*(c.clean_if_true for c in conds)), frozenset.intersection(*(c.clean_if_false for c in conds)))
        else:
            cond = Cond(frozenset.intersection(*(c.clean_if_true for c in conds)), frozenset().union(*(c.clean_if_false for c in conds)))
        result = join_all(Value(leaves=v.leaves, elems=v.elems, items=v.items, lazy=v.lazy, types=v.types) for v in values)
        return Value(leaves=result.leaves, elems=result.elems, items=result.items, lazy=result.lazy, cond=cond)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        value = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            if value.has_const:
                return const(not value.const)
            return Value(cond=value.cond.negate() if value.cond else None)
        return EMPTY

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left, right = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, ast.Add) and any(v.elems is not None or v.items is not None for v in (left, right)):
            return container(join(iterate(left), iterate(right)))
        return EMPTY

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.eval(node.left)
        rights = [self.eval(c) for c in node.comparators]
        if len(node.ops) == 1 and left.cond is not None and rights[0].has_const and isinstance(rights[0].const, bool):
            positive = isinstance(node.ops[0], (ast.Is, ast.Eq)) == rights[0].const
            return Value(cond=left.cond if positive else left.cond.negate())
        return EMPTY

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        _, tested = self.eval_recorded(node.test)
        if self.st is None:
            return EMPTY
        before = self.st
        self.st = before.copy()
        self.refine(node.test, True, tested)
        body = self.eval(node.body) if self.st is not None else None
        then_state = self.st
        self.st = before.copy()
        self.refine(node.test, False, tested)
        orelse = self.eval(node.orelse) if self.st is not None else None
        self.st = join_states(then_state, self.st) or before
        return join(body, orelse) or EMPTY

    def expr_NamedExpr(self, node: ast.NamedExpr) -> Value:
        value = self.eval(node.value)
        self.assign(node.target, value, node)
        return value

    def expr_Lambda(self, node: ast.Lambda) -> Value:
        captured = self.captured(node)
        return captured or EMPTY

    def expr_Await(self, node: ast.Await) -> Value:
        value = self.eval(node.value)
        self.settle(value)
        return EMPTY

    def expr_Yield(self, node: ast.Yield) -> Value:
        value = self.eval(node.value) if node.value is not None else EMPTY
        self.hand_back_stale(node.value, value, node)
        self.add_yield(value, node)
        return EMPTY

    def expr_YieldFrom(self, node: ast.YieldFrom) -> Value:
        value = self.eval(node.value)
        self.add_yield(iterate(value), node)
        return EMPTY

    def add_yield(self, value: Value, node: ast.AST) -> None:
        step = self.step(node, "yielded to the caller")
        value = map_leaves(value, lambda leaf: leaf.with_trace(leaf.trace + (step,)))
        self.yields = join(self.yields, value)
        if self.st is not None:
            self.commit(self.st, step)
            self.st.pending = frozenset(p for p in self.st.pending if is_stand_in(p))

    def comprehension(self, node, elt_nodes, keeps: str | None = None) -> list[Value]:
        """A comprehension is a loop of its own. Over a producer (a lazy stream, an iterable
        parameter) it advances between elements: work submitted for one element and still
        pending is a race with the next, and a list/set/dict built from the elements
        (``keeps``) holds every view at once, like ``list(stream)``."""
        outer = self.st
        self.st = outer.copy()
        streams = []
        for gen in node.generators:
            iterable = self.eval(gen.iter)
            if self.st is None:
                break
            if advances_producer(iterable):
                streams.append((gen, iterable))
            self.assign(gen.target, iterate(iterable, self.step(gen.iter, f"element taken by `for {short(gen.target)} in ...`")), node)
            for cond in gen.ifs:
                _, tested = self.eval_recorded(cond)
                self.refine(cond, True, tested)
                if self.st is None:
                    break
            if self.st is None:
                break
        if self.st is None:
            self.st = outer
            return [EMPTY for _ in elt_nodes]
        before = self.st.pending
        values = [self.eval(e) for e in elt_nodes]
        inner = self.st
        self.st = outer
        if inner is None:
            return values
        added = inner.pending - before
        if streams and added:
            gen = streams[-1][0]
            self.commit(State(pending=added), self.step(gen.iter, "the comprehension advances to its next element"))
            inner.pending = inner.pending - added
        self.st.pending = self.st.pending | inner.pending
        if keeps and streams:
            self.keep_elements(node, streams, values[-1], keeps)
        return values

    def keep_elements(self, node, streams, kept: Value, what: str) -> None:
        """A list/set/dict comprehension over a producer keeps what its elements hold: the
        borrowed views in hand now; for a parameter stream, the parts of each element kept
        (``(name, w.clone())`` keeps only the name), judged where a caller passes a stream."""
        leaves = list(deep_leaves(kept, through_lazy=True))
        in_hand = [leaf for leaf in leaves if isinstance(leaf, Borrow)]
        if in_hand and any(iterable.lazy for _, iterable in streams):
            self.materialize(node, Value(lazy=True, elems=Value(leaves=frozenset(in_hand))), what)
        step = self.step(node, f"every element is kept at once by `{what}` while the producer advances")
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
                    reach = SinkReach(source.index, source.path, self.st.assume, self.site(node, what), (step,), "BL003", True, subs)
                    self.add_reach(reach)

    def expr_ListComp(self, node) -> Value:
        what = "[... for ...]" if isinstance(node, ast.ListComp) else "{... for ...}"
        return container(self.comprehension(node, [node.elt], keeps=what)[0])

    expr_SetComp = expr_ListComp

    def expr_GeneratorExp(self, node) -> Value:
        return container(self.comprehension(node, [node.elt])[0], lazy=True)

    def expr_DictComp(self, node) -> Value:
        return container(self.comprehension(node, [node.key, node.value], keeps="{...: ... for ...}")[1])

    def expr_Starred(self, node: ast.Starred) -> Value:
        return iterate(self.eval(node.value))

    def borrowed_attribute(self, node: ast.Attribute, source) -> Value:
        """``shm.buf``: an attribute a pack names as a view of a reused buffer."""
        from bufferlint.analysis.transfer.calls import borrowed_from

        value = borrowed_from(self, node, source, f"{short(node)}")
        self.refresh(value)
        return value

    def expr_Call(self, node: ast.Call) -> Value:
        from bufferlint.analysis.transfer.calls import evaluate_call

        return evaluate_call(self, node)

