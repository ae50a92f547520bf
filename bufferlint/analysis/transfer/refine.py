"""Branch refinement: the state on the paths where a test has a given truth."""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.conditions import (
    APPROVES,
    ATTR,
    EQ,
    FALSY,
    FIELD_NONE,
    IN,
    IS,
    IS_NOT,
    NE,
    NOT_IN,
    TRUTHY,
    ParamTest,
    exact_parameter,
    refuted,
)
from bufferlint.analysis.domain.state import State, waited_for
from bufferlint.analysis.domain.values import (
    Borrow,
    Field,
    ParamRef,
    Value,
    clean,
    clear_leaf,
    deep_leaves,
    fact_tags,
    program_memory,
)
from bufferlint.analysis.transfer.class_tests import narrow_classes
from bufferlint.analysis.world import IndexView


def refine(st: State, test: ast.expr, branch: bool, values: dict[int, Value], defaults: dict[int, object],
           index: IndexView | None = None) -> State | None:
    """Narrow ``st`` (in place) to the paths where ``test`` has the given truth value, using
    the values its parts evaluated to (``values``: recorded when the test ran). None: no
    path has it (the branch is unreachable). A test of a parameter as the caller passed it
    becomes an assumption of the path (``State.assume``; ``defaults``: the parameters'
    defaults), which the facts made on it carry to each call. With ``index``, a variable
    holding class values is narrowed to the classes that take the branch
    (``class_tests``)."""
    if index is not None:
        narrow_classes(st, test, branch, index, lambda node: parameter_test(node, values, defaults))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return refine(st, test.operand, not branch, values, defaults)
    implied = implied_truth(test, branch)
    if implied is not None:
        return refine(st, test.left, implied, values, defaults)  # type: ignore[attr-defined]  # a Compare
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == branch:
        for operand in test.values:
            refined = refine(st, operand, branch, values, defaults)
            if refined is None:
                return None
        return st
    refine_dtype(st, test, branch, values)
    compared = parameter_compared(test, values, defaults)
    if compared is not None:
        st.assume = st.assume | {compared if branch else compared.negate()}
        return st
    value = values.get(id(test))
    if value is None:
        return st
    if value.has_const and bool(value.const) != branch and not isinstance(value.const, str):
        return None
    if branch and value.origin is not None and isinstance(test, ast.Call):
        st.tested = st.tested | predicate_tested(value.origin, test, values)
    if value.cond is not None:
        done = value.cond.settles_if_true if branch else value.cond.settles_if_false
        if done:  # ``if tracker.done:``, ``if event.query():``: that work is finished on this branch
            st.pending = frozenset(p for p in st.pending if p.key not in done)
            waited_for(st, done)
        assume_clean(st, value.cond.clean_if_true if branch else value.cond.clean_if_false)
    param = exact_parameter(value)
    if param is not None:
        st.assume = st.assume | {ParamTest(param, TRUTHY if branch else FALSY).on(param, defaults)}
    if branch and isinstance(value.truth, ParamTest) and value.truth.test == APPROVES:
        st.assume = st.assume | {value.truth}  # ``if decide(w):``: each call decides by what it passes
    if isinstance(test, ast.Attribute) and st.flying:
        # ``if not self.overlap:``, a field of a parameter: what it says of a copy in flight
        # made with ``non_blocking=self.overlap`` (``conditions.refuted``); a path with none
        # keeps no such test (every ``if self.x:`` would make its facts apart, and their
        # number grow through the methods calling each other on ``self``)
        field = parameter_field_of(test, values)
        if field is not None:
            st.assume = st.assume | {ParamTest(field[0], ATTR, (field[1], branch))}
            blocking_here(st)
    return st


def blocking_here(st: State) -> None:
    """Take off ``st.flying`` the copies the path's assumptions made blocking: ``host =
    t.to("cpu", non_blocking=self.cfg.overlap)`` is in flight on no path where ``self.cfg.overlap``
    is false, so after ``if self.cfg.overlap: torch.cuda.synchronize()`` it has landed on
    both (the join of the two branches would forget the false branch's assumption)."""
    whens: dict[object, list[frozenset[ParamTest]]] = {}
    for value in st.vars.values():
        for leaf in deep_leaves(value):
            if isinstance(leaf, Borrow) and leaf.flight and leaf.site in st.flying:
                whens.setdefault(leaf.site, []).append(leaf.when)
    blocking = {site for site, each in whens.items() if all(when and refuted(when, st.assume) for when in each)}
    if blocking:
        st.flying = st.flying - blocking


# Attributes a field test may go down from a parameter (``self.cfg.overlap``: two).
MAX_FIELD_DEPTH = 3


def parameter_field_of(expr: ast.Attribute, values: dict[int, Value]) -> tuple[int, str] | None:
    """The parameter a field read (``self.overlap``, ``self.cfg.overlap``) starts from as
    the caller passed it, and the dotted path read from it (``cfg.overlap``); None for any
    other expression, or a path deeper than ``MAX_FIELD_DEPTH``. A test of the same path in
    the function is a test of the same field: a record's field is read twice alike."""
    attrs: list[str] = []
    node: ast.expr = expr
    while isinstance(node, ast.Attribute) and len(attrs) < MAX_FIELD_DEPTH:
        attrs.append(node.attr)
        node = node.value
        owner = exact_parameter(values.get(id(node)))
        if owner is not None:
            return owner, ".".join(reversed(attrs))
    return None


def implied_truth(test: ast.expr, branch: bool) -> bool | None:
    """``if guard(w) is True:``, ``== False``, ``is not True``: a value compared by identity
    or equality with a bool, on the branch where that says what the value's truth is (True
    on ``is True``'s true branch, False on ``is not True``'s false one); None on the other
    branch (a truthy value other than True fails ``is True``) and for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.comparators[0].value, bool)):
        return None
    holds = isinstance(test.ops[0], (ast.Is, ast.Eq)) == branch
    if not isinstance(test.ops[0], (ast.Is, ast.Eq, ast.IsNot, ast.NotEq)) or not holds:
        return None
    return test.comparators[0].value


def refine_dtype(st: State, test: ast.expr, branch: bool, values: dict[int, Value]) -> None:
    """``w.dtype == torch.bfloat16`` (``is``; ``!=``, ``is not`` on the false branch) of a
    variable: on the paths where it holds, the variable's tensor has that dtype
    (``Value.dtype``), so a conversion to another one copies."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return
    op = test.ops[0]
    if not ((isinstance(op, (ast.Eq, ast.Is)) and branch) or (isinstance(op, (ast.NotEq, ast.IsNot)) and not branch)):
        return
    for side, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if isinstance(side, ast.Attribute) and side.attr == "dtype" and isinstance(side.value, ast.Name):
            dtype = values.get(id(other))
            name = side.value.id
            if dtype is not None and dtype.ref is not None and not dtype.leaves and name in st.vars:
                st.vars[name] = replace(st.vars[name], dtype=dtype.ref)
            return


def predicate_tested(origin: str, test: ast.Call, values: dict[int, Value]) -> frozenset[tuple[str, tuple[object, ...]]]:
    """``if guard(w):`` on its True branch: (the predicate, each borrowed object passed to
    it), what ``State.tested`` keeps. ``origin`` names the predicate as the call resolved it
    (``Class.name`` for one dispatched through a class hierarchy: ``Program.guard_dispatch``)."""
    found = set()
    for arg in [*test.args, *(k.value for k in test.keywords)]:
        value = values.get(id(arg.value if isinstance(arg, ast.Starred) else arg))
        for leaf in value.leaves if value is not None else ():
            if isinstance(leaf, (Borrow, ParamRef)) and not program_memory(leaf):
                found.add((origin, leaf.base))
    return frozenset(found)


def assume_clean(st: State, facts: frozenset[tuple[object, object]]) -> State:
    """Narrow ``st`` (in place) to the paths where guard ``facts`` hold: the objects they
    name are not borrowed (for their tags) in its variables and its pending work."""
    if facts:
        st.vars = {k: clean(v, facts) for k, v in st.vars.items()}
        st.cleaned = st.cleaned | facts
        tags = fact_tags(facts)
        st.pending = frozenset(
            replace(p, leaves=frozenset(filter(None, (clear_leaf(leaf, tags.get(leaf.base)) for leaf in p.leaves))))
            for p in st.pending
        )
    return st


def parameter_compared(test: ast.expr, values: dict[int, Value], defaults: dict[int, object]) -> ParamTest | None:
    """``flag is None``, ``mode == "copy"``, ``mode != "copy"``, ``device not in
    _CPU_DEVICES``: a parameter compared with a constant (``is`` only with None, True or
    False; ``in`` with a module constant's tuple), as a test of the parameter."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    kinds = {ast.Is: IS, ast.IsNot: IS_NOT, ast.Eq: EQ, ast.NotEq: NE, ast.In: IN, ast.NotIn: NOT_IN}
    kind = kinds.get(type(test.ops[0]))
    left, right = values.get(id(test.left)), values.get(id(test.comparators[0]))
    if kind is None or left is None or right is None:
        return None
    if kind in (IN, NOT_IN):  # ``device not in _CPU_DEVICES``: a parameter in a constant tuple
        param = exact_parameter(left)
        if param is None or not (right.has_const and isinstance(right.const, tuple)):
            return None
        return ParamTest(param, kind, right.const).on(param, defaults)
    field = record_field_compared(test.left, left, right, kind)
    if field is not None:
        return field
    param, other = exact_parameter(left), right
    if param is None:
        param, other = exact_parameter(right), left
    if param is None or not other.has_const:
        return None
    if kind in (IS, IS_NOT) and not (other.const is None or isinstance(other.const, bool)):
        return None
    return ParamTest(param, kind, other.const).on(param, defaults)


def record_field_compared(node: ast.expr, left: Value, right: Value, kind: str) -> ParamTest | None:
    """``out.ready is None`` (``is not``) of a record parameter's field (``values.Field``),
    as a test each call decides by the record it builds (``conditions.FIELD_NONE``)."""
    if kind not in (IS, IS_NOT) or not (right.has_const and right.const is None) or left.has_const \
            or not isinstance(node, ast.Attribute):
        return None
    fields = {(leaf.index, leaf.path[0].position) for leaf in left.leaves
              if isinstance(leaf, ParamRef) and len(leaf.path) == 1 and isinstance(leaf.path[0], Field)}
    if len(fields) != 1 or len(left.leaves) != 1:
        return None
    ((param, position),) = fields
    return ParamTest(param, FIELD_NONE, (position, node.attr, kind == IS))


def parameter_test(node: ast.expr, values: dict[int, Value], defaults: dict[int, object]) -> ParamTest | None:
    """``node`` as a test of a parameter as the caller passed it: its truth, or a
    comparison with a constant."""
    compared = parameter_compared(node, values, defaults)
    if compared is not None:
        return compared
    param = exact_parameter(values.get(id(node)))
    return ParamTest(param, TRUTHY).on(param, defaults) if param is not None else None


def truth_tested(test: ast.expr) -> list[ast.expr]:
    """The expressions whose truth a branch test takes (``bool(t)`` reads a tensor's bytes):
    the test itself, through ``not`` and the operands of ``and`` / ``or``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return truth_tested(test.operand)
    if isinstance(test, ast.BoolOp):
        return [part for operand in test.values for part in truth_tested(operand)]
    return [test]
