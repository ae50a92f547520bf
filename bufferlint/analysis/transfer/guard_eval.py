"""Guards by evaluation: what a function returns for a value that carries a marker.

A guard is correct when it returns a falsy value for every value carrying its kind's marker,
whatever way it is written: ``if getattr(w, M, False)``, a loop over a tuple of marker names,
``any(getattr(w, m, False) for m in MARKERS)``, ``match``, ``try: w.<M> except
AttributeError``, a helper, ``super()``. Rather than recognise those shapes, this module runs
the function's body on an abstract argument whose marker attribute is set (the *subject*) and
folds constants along every path: module constants and literal tuples are known, loops over
them are unrolled, ``getattr``/``hasattr``/attribute access on the subject answer for the
marker (``True``) and for the other markers (absent), and calls of the project's helpers and
of the packs' guards answer with what their summaries say (the interpreter recorded each
call's value and targets on the way: ``Frame.calls``).

Every other value is *blind* (unknown, but computed without looking at the marker: ``w.is_cpu``,
a library call) or *unknown* (it may depend on the marker in a way this evaluation cannot
follow: ``getattr(w, name)`` with a name it cannot fold, ``vars(w)``, a helper the analysis
could not decide). A branch on a blind value may go either way for some marked value; a
branch on an unknown value makes the paths below it *uncertain*.

The verdict for one parameter and one marker (``evaluate``):

* ``REJECTS``: every path returns a falsy value or raises (a guard that raises on a marked
  value does not let it through: its caller's async path is not taken);
* ``ACCEPTS``: every path returns a truthy value (a marker check such as ``is_streamed(w)``);
* ``APPROVES``: some certain path returns a truthy or blind value: the guard lets marked
  values through (``Hazard.GUARD_APPROVES_MARKED``);
* ``UNDECIDED``: neither (an uncertain path approves, or the evaluation gave up at its
  budget): not reported as approving, and no call site is taken as guarded by it; a notice
  says so;
* ``IGNORES``: the marker was never read and nothing unknown was met: what the function
  returns does not depend on it (no fact; a guard then approves marked values, as before).
"""


from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from bufferlint.analysis.frontend.index import dotted_name
from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.transfer.guard_expressions import NO_CALLS, ExpressionFolder, _argument_at
from bufferlint.analysis.transfer.guard_values import (
    BLIND,
    NONE,
    SUBJECT,
    UNKNOWN,
    Abstract,
    Exit,
    GiveUp,
    Path,
    const,
    involved,
    merge,
    raised,
    truth,
)

REJECTS, ACCEPTS, APPROVES, UNDECIDED, IGNORES = "rejects", "accepts", "approves", "undecided", "ignores"

MAX_PATHS = 64  # paths alive at once
MAX_INLINE = 2  # project helpers run inside a guard's evaluation, nested (``inline_helper``)


@dataclass(frozen=True)
class Verdict:
    outcome: str
    why: str = ""  # for UNDECIDED: what could not be decided, for the notice


class GuardEvaluator(ExpressionFolder):
    """Evaluates one function for one parameter carrying one marker (``evaluate``)."""

    # -- the verdict -------------------------------------------------------------------------

    def evaluate(self, param: int, marker: str, given: dict | None = None) -> Verdict:
        """The verdict for ``param`` carrying ``marker``; ``given``: other parameters (by
        index) or fields of the receiver (``("field", attr)``) taken as these constants (a
        marker's name its caller, or its object's constructor, gives: ``guard_judge``)."""
        self.param, self.marker = param, marker
        self.given_fields = {key[1]: value for key, value in (given or {}).items() if isinstance(key, tuple)}
        self.tags = frozenset(self.vocab.marker_tags(marker))
        self.steps = self.unknowns = 0
        self.touched = False
        node = self.info.node
        start = Path()
        for i, name in enumerate(self.info.params):
            start.env[name] = SUBJECT if i == param else const(given[i]) if given and i in given else BLIND
        try:
            exits = self.block(node.body, start)  # type: ignore[attr-defined]
        except GiveUp as stop:
            return Verdict(UNDECIDED, stop.why)
        if not self.touched and not self.unknowns:
            return Verdict(IGNORES)
        returned = [(e.value if e.how == "return" else NONE, e.path.certain) for e in exits if e.how != "raise"]
        truths = [(truth(value), certain) for value, certain in returned]
        if all(t == "false" for t, _ in truths):
            return Verdict(REJECTS)
        if truths and all(t == "true" for t, _ in truths) and len(returned) == len(exits):
            return Verdict(ACCEPTS)
        if any(t in ("true", "blind") and certain for t, certain in truths):
            return Verdict(APPROVES)
        return Verdict(UNDECIDED, self.undecided_why(exits))

    def inline_helper(self, node: ast.Call, path: Path) -> list[tuple[Abstract, Path]] | None:
        """``classify(w) is LoadMode.DEFERRED``: a project function (the one the call
        reaches) given the subject is run here, its parameters bound to what the call
        passes, and each value it may return is an alternative: a helper that returns
        other things than a truth (an enum member, a string) is followed where its
        summary's facts, which speak of truth only, are not enough. Its own calls are
        opaque (its calls' facts are its frame's); helpers of helpers are run up to
        ``MAX_INLINE`` deep. None (the call's facts decide, as before) when a path of it
        returns anything but a constant, or it cannot be run."""
        nested = self.nested_helper(node, path)
        if nested is not None:
            return nested
        qualname = self.calls.helpers.get(id(node))
        info = self.index.functions.get(qualname) if qualname is not None else None
        if info is None or self.depth >= MAX_INLINE or not isinstance(info.node, ast.FunctionDef) \
                or info.is_generator or info.vararg is not None or info.kwarg is not None:
            return None
        env: dict[str, Abstract] = {}
        for i, name in enumerate(info.params):
            argument = _argument_at(node, info, i)
            if argument is None and i == 0 and info.binds_receiver and isinstance(node.func, ast.Attribute):
                argument = node.func.value
            env[name] = self.one(argument, path.fork()) if argument is not None else BLIND
        if not any(v.kind == "subject" for v in env.values()) or any(v.kind in ("raise", "unknown") for v in env.values()):
            return None
        out = self.run_inside(info, info.node.body, Path(env), path, {})
        if out is not None:
            self.may_raise = True
        return out

    def nested_helper(self, node: ast.Call, path: Path) -> list[tuple[Abstract, Path]] | None:
        """``not _must_inline()`` of a function the guard defines in its own body: run here
        on this path's variables (the closure reads the guard's parameters as they are
        when it is called), its parameters bound to what the call passes. None when the
        callee is no such function, takes more than the call passes positionally, or a
        path of it returns anything but a constant."""
        func = node.func
        if not isinstance(func, ast.Name) or node.keywords or self.depth >= MAX_INLINE:
            return None
        defs = [s for s in self.info.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == func.id]  # type: ignore[attr-defined]
        if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) or defs[0].decorator_list:
            return None
        nested = defs[0]
        args = nested.args
        params = [a.arg for a in args.posonlyargs + args.args]
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or len(params) != len(node.args) \
                or any(isinstance(a, ast.Starred) for a in node.args) or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk(nested)):
            return None
        env = dict(path.env)
        for name, argument in zip(params, node.args):
            env[name] = self.one(argument, path.fork())
        return self.run_inside(self.info, nested.body, Path(env, path.certain), path, self.given_fields)

    def run_inside(self, info, body: list[ast.stmt], start: Path, path: Path, given_fields: dict) -> list[tuple[Abstract, Path]] | None:
        """Run ``body`` (of ``info``) one level deeper from ``start``: each constant it may
        return (or exception it may raise) on ``path``; None when a path returns anything
        else, or the run gives up."""
        inner = GuardEvaluator(info, self.index, self.vocab, NO_CALLS)
        inner.param, inner.marker, inner.tags, inner.depth = self.param, self.marker, self.tags, self.depth + 1
        inner.given_fields, inner.steps = given_fields, self.steps
        try:
            exits = inner.block(body, start)
        except GiveUp:
            return None
        self.steps = inner.steps
        out = []
        for e in exits:
            value = e.value if e.how in ("return", "raise") else NONE
            if value.kind not in ("const", "raise"):
                return None
            out.append((value, path.fork(e.path.certain)))
        self.touched = self.touched or inner.touched
        return out or None

    def undecided_why(self, exits: list[Exit]) -> str:
        for e in exits:
            if e.how == "return" and (truth(e.value) == "unknown" or not e.path.certain):
                return "a return that depends on the value in a way the evaluation cannot follow"
        return "a path it cannot follow"

    # -- statements ------------------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt], path: Path) -> list[Exit]:
        """Run ``stmts`` from ``path``: the ways out of the block."""
        live: list[Path] = [path]
        done: list[Any] = []
        for stmt in stmts:
            following: list[Path] = []
            for current in live:
                for out in self.statement(stmt, current):
                    (following if out.how == "fall" else done).append(out.path if out.how == "fall" else out)  # type: ignore[arg-type]
            live = merge(following)
            if len(live) > MAX_PATHS:
                raise GiveUp(f"more than {MAX_PATHS} paths", budget=True)
            if not live:
                break
        return done + [Exit("fall", p) for p in live]

    def statement(self, stmt: ast.stmt, path: Path) -> list[Exit]:
        self.tick()
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is None:
            raise GiveUp(f"line {stmt.lineno}: a `{type(stmt).__name__}` statement")
        return method(stmt, path)

    def stmt_Return(self, stmt: ast.Return, path: Path) -> list[Exit]:
        if stmt.value is None:
            return [Exit("return", path, NONE)]
        return [self.exit_of(value, p, "return") for value, p in self.expr(stmt.value, path)]

    def exit_of(self, value: Abstract, path: Path, how: str) -> Exit:
        return Exit("raise", path, value) if value.kind == "raise" else Exit(how, path, value)

    def stmt_Expr(self, stmt: ast.Expr, path: Path) -> list[Exit]:
        return [self.exit_of(value, p, "fall") for value, p in self.expr(stmt.value, path)]

    def stmt_Pass(self, stmt: ast.stmt, path: Path) -> list[Exit]:
        return [Exit("fall", path)]

    stmt_Global = stmt_Nonlocal = stmt_Import = stmt_ImportFrom = stmt_Pass

    def stmt_Break(self, stmt: ast.stmt, path: Path) -> list[Exit]:
        return [Exit("break", path)]

    def stmt_Continue(self, stmt: ast.stmt, path: Path) -> list[Exit]:
        return [Exit("continue", path)]

    def stmt_Assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, path: Path) -> list[Exit]:
        if stmt.value is None:
            return [Exit("fall", path)]
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        out = []
        for value, p in self.expr(stmt.value, path):
            if value.kind == "raise":
                out.append(Exit("raise", p, value))
                continue
            if isinstance(stmt, ast.AugAssign):
                value = UNKNOWN if value.kind == "unknown" or involved(stmt.target, p) else BLIND
            for target in targets:
                self.bind(target, value, p)
            out.append(Exit("fall", p))
        return out

    stmt_AnnAssign = stmt_AugAssign = stmt_Assign

    def stmt_Delete(self, stmt: ast.Delete, path: Path) -> list[Exit]:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                path.env.pop(target.id, None)
        return [Exit("fall", path)]

    def stmt_If(self, stmt: ast.If | ast.While, path: Path) -> list[Exit]:
        out: list[Exit] = []
        for taken, p in self.branches(stmt.test, path):
            out += self.block(stmt.body if taken else stmt.orelse, p)
        return out

    def stmt_While(self, stmt: ast.While, path: Path) -> list[Exit]:
        """Once through the body at most: a guard's loops decide on their first pass or not at all."""
        out: list[Exit] = []
        for taken, p in self.branches(stmt.test, path):
            if not taken:
                out += self.block(stmt.orelse, p)
                continue
            for e in self.block(stmt.body, p):
                if e.how in ("fall", "continue", "break"):
                    out.append(Exit("fall", e.path.fork(False)))  # how many more rounds: not followed
                else:
                    out.append(e)
        return out

    def stmt_For(self, stmt: ast.For, path: Path) -> list[Exit]:
        out: list[Exit] = []
        for iterable, p in self.expr(stmt.iter, path):
            if iterable.kind == "raise":
                out.append(Exit("raise", p, iterable))
            elif iterable.kind == "const" and isinstance(iterable.value, (tuple, str, frozenset)):
                out += self.unrolled(stmt, list(iterable.value), p)
            else:
                out += self.once(stmt, iterable, p)
        return out

    def unrolled(self, stmt: ast.For, elements: list, path: Path) -> list[Exit]:
        """A loop over a literal: each element in turn, ``break`` and ``else`` as Python has them."""
        live, out = [path], []
        for element in elements:
            following: list[Path] = []
            for p in live:
                self.bind(stmt.target, const(element), p)
                for e in self.block(stmt.body, p):
                    if e.how in ("fall", "continue"):
                        following.append(e.path)
                    elif e.how == "break":
                        out.append(Exit("fall", e.path))
                    else:
                        out.append(e)
            live = merge(following)
        for p in live:
            out += self.block(stmt.orelse, p)
        return out

    def once(self, stmt: ast.For, iterable: Abstract, path: Path) -> list[Exit]:
        """A loop over something unknown: no element, or one (blind) element. How many there
        are is marker-independent only when the iterable and what the body decides are."""
        unknowns = self.unknowns
        inner = path.fork(iterable.kind != "unknown")
        self.bind(stmt.target, UNKNOWN if iterable.kind == "unknown" else BLIND, inner)
        exits = self.block(stmt.body, inner)
        decided = self.unknowns == unknowns and iterable.kind != "unknown"
        out: list[Exit] = []
        for p in [path.fork(decided)] + [e.path.fork(decided) for e in exits if e.how in ("fall", "continue")]:
            out += self.block(stmt.orelse, p)
        out += [Exit("fall", e.path.fork(decided)) for e in exits if e.how == "break"]
        out += [e for e in exits if e.how in ("return", "raise")]
        return out

    def stmt_With(self, stmt: ast.With, path: Path) -> list[Exit]:
        for item in stmt.items:
            if item.optional_vars is not None:
                self.bind(item.optional_vars, BLIND, path)
        self.may_raise = True
        return self.block(stmt.body, path)

    def stmt_Try(self, stmt: ast.Try, path: Path) -> list[Exit]:
        raising_before = self.may_raise
        self.may_raise = False
        start = path.fork()
        body_exits = self.block(stmt.body, path)
        opaque = self.may_raise
        self.may_raise = raising_before or opaque
        out: list[Exit] = []
        pending = []
        for e in body_exits:
            if e.how == "raise":
                handler = self.handler_for(stmt.handlers, e.value.value)
                if handler is not None:
                    pending.append((handler, e.path))
                    continue
            if e.how == "fall":
                out += self.block(stmt.orelse, e.path)
            else:
                out.append(e)
        if opaque:  # something in the body may raise what a handler catches: not followed
            pending += [(h, self.raised_anywhere(stmt, start)) for h in stmt.handlers]
        for handler, p in pending:
            if handler.name:
                p.env[handler.name] = BLIND
            out += self.block(handler.body, p)
        if stmt.finalbody:
            final: list[Exit] = []
            for e in out:
                for f in self.block(stmt.finalbody, e.path):
                    final.append(e if f.how == "fall" and e.how != "fall" else f)
            out = final
        return out

    stmt_TryStar = stmt_Try

    def raised_anywhere(self, stmt: ast.Try, start: Path) -> Path:
        """The path into a handler when something opaque in the ``try`` body may have raised:
        the variables at the ``try``, the path uncertain."""
        return start.fork(False)

    def handler_for(self, handlers: list[ast.ExceptHandler], name: str) -> ast.ExceptHandler | None:
        for handler in handlers:
            if handler.type is None:
                return handler
            names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            for caught in names:
                text = (dotted_name(caught) or "").rsplit(".", 1)[-1]
                if text in (name, "Exception", "BaseException"):
                    return handler
        return None

    def stmt_Raise(self, stmt: ast.Raise, path: Path) -> list[Exit]:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        name = (dotted_name(exc) or "Exception").rsplit(".", 1)[-1] if exc is not None else "Exception"
        return [Exit("raise", path, raised(name))]

    def stmt_Assert(self, stmt: ast.Assert, path: Path) -> list[Exit]:
        return [Exit("fall", p) if taken else Exit("raise", p, raised("AssertionError")) for taken, p in self.branches(stmt.test, path)]

    def stmt_FunctionDef(self, stmt: ast.FunctionDef | ast.ClassDef, path: Path) -> list[Exit]:
        path.env[stmt.name] = BLIND
        return [Exit("fall", path)]

    stmt_AsyncFunctionDef = stmt_ClassDef = stmt_FunctionDef

    def stmt_Match(self, stmt: ast.Match, path: Path) -> list[Exit]:
        out: list[Exit] = []
        for subject, p in self.expr(stmt.subject, path):
            if subject.kind == "raise":
                out.append(Exit("raise", p, subject))
                continue
            items = self.subject_items(stmt.subject, subject, p)
            live = [p]
            for case in stmt.cases:
                unmatched: list[Path] = []
                for current in live:
                    for matched, q in self.pattern(case.pattern, subject, current, items):
                        if not matched:
                            unmatched.append(q)
                            continue
                        if case.guard is None:
                            out += self.block(case.body, q)
                            continue
                        for taken, r in self.branches(case.guard, q):
                            if taken:
                                out += self.block(case.body, r)
                            else:
                                unmatched.append(r)
                live = merge(unmatched)
            out += [Exit("fall", q) for q in live]
        return out

    def subject_items(self, node: ast.expr, value: Abstract, path: Path) -> list[Abstract] | None:
        """The elements of a subject that is a sequence of known length, each its own value:
        a tuple display (``match (getattr(w, M, False), w.device.type)``), whose value as a
        whole is blind as soon as one element is, or a constant tuple or list."""
        if value.kind == "const" and isinstance(value.value, (tuple, list)):
            return [const(item) for item in value.value]
        if not isinstance(node, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        items = [self.one(element, path) for element in node.elts]
        return None if any(item.kind == "raise" for item in items) else items

    def pattern(
        self, pattern: ast.pattern, value: Abstract, path: Path, items: list[Abstract] | None = None,
    ) -> list[tuple[bool, Path]]:
        """Does ``pattern`` match ``value``: (matched, path) per feasible answer, with its
        bindings. ``items``: the value's elements, when it is a sequence of known length."""
        self.tick()
        if isinstance(pattern, ast.MatchAs):
            found = [(True, path)] if pattern.pattern is None else self.pattern(pattern.pattern, value, path, items)
            for matched, p in found:
                if matched and pattern.name:
                    p.env[pattern.name] = value
            return found
        if isinstance(pattern, ast.MatchOr):
            out: list[tuple[bool, Path]] = []
            live = [path]
            for alternative in pattern.patterns:
                following: list[Path] = []
                for p in live:
                    for matched, q in self.pattern(alternative, value, p, items):
                        (out if matched else following).append((True, q) if matched else q)  # type: ignore[arg-type]
                live = following
            return out + [(False, p) for p in live]
        if isinstance(pattern, (ast.MatchValue, ast.MatchSingleton)):
            if isinstance(pattern, ast.MatchValue):
                expected = [v for v, _ in self.expr(pattern.value, path.fork())]
                wanted = expected[0] if len(expected) == 1 else UNKNOWN
            else:
                wanted = const(pattern.value)
            if value.kind == "const" and wanted.kind == "const":
                same = value.value is wanted.value if isinstance(pattern, ast.MatchSingleton) else value.value == wanted.value
                return [(bool(same), path)]
            if value.kind == "subject" and wanted.kind == "const":
                return [(False, path)]  # the marked object is no literal
            return self.either(value, wanted, path)
        if isinstance(pattern, ast.MatchClass):
            return self.class_pattern(pattern, value, path)
        if isinstance(pattern, ast.MatchSequence) and items is not None:
            if not any(isinstance(sub, ast.MatchStar) for sub in pattern.patterns):
                return self.sequence_pattern(pattern.patterns, items, path)
        return self.either(value, BLIND, path)

    def sequence_pattern(self, patterns: list[ast.pattern], items: list[Abstract], path: Path) -> list[tuple[bool, Path]]:
        """``case (True, _)`` against a subject of known elements: element by element, no
        match when the lengths differ."""
        if len(patterns) != len(items):
            return [(False, path)]
        out: list[tuple[bool, Path]] = []
        live = [path]
        for sub, item in zip(patterns, items):
            following: list[Path] = []
            for p in live:
                for matched, q in self.pattern(sub, item, p):
                    if matched:
                        following.append(q)
                    else:
                        out.append((False, q))
            live = following
        return out + [(True, p) for p in live]

    def either(self, value: Abstract, other: Abstract, path: Path) -> list[tuple[bool, Path]]:
        decided = value.kind != "unknown" and other.kind != "unknown"
        return [(True, path.fork(decided)), (False, path.fork(decided))]

    def class_test(self, cls: ast.expr, value: Abstract, path: Path) -> list[tuple[bool, Path]]:
        """Is the value an instance of ``cls``: yes when the subject surely is one
        (``subject_instance``), else blind, but the same answer for the subject wherever a
        path asks again (``case Tensor(_marker=True)`` then ``case Tensor(is_cpu=True)``:
        a path that failed the first class test fails the second)."""
        name = dotted_name(cls)
        if value.kind != "subject" or name is None:
            return self.either(value, BLIND, path)
        surely = self.subject_instance(cls)
        if surely:
            self.touched = self.touched or surely == "marked"
            return [(True, path)]
        key = f"<instance of {name}>"
        known = path.env.get(key)
        if known is not None:
            return [(bool(known.value), path)]
        out = self.either(value, BLIND, path)
        for matched, p in out:
            p.env[key] = const(matched)
        return out

    def class_pattern(self, pattern: ast.MatchClass, value: Abstract, path: Path) -> list[tuple[bool, Path]]:
        """``case Tensor(_marker=True)``: the class test is blind; keyword patterns read attributes."""
        everything = dotted_name(pattern.cls) in ("object", "builtins.object")
        live = [(True, path)] if everything or value.kind == "const" else self.class_test(pattern.cls, value, path)
        if pattern.patterns:
            live = [(m, p.fork(False)) for m, p in live]  # positional sub-patterns need ``__match_args__``
        out = [(False, p) for matched, p in live if not matched]
        live_paths = [p for matched, p in live if matched]
        for attr, sub in zip(pattern.kwd_attrs, pattern.kwd_patterns):
            following: list[Any] = []
            for p in live_paths:
                got = self.attribute(value, attr)
                if got.kind == "raise":
                    out.append((False, p))
                    continue
                for matched, q in self.pattern(sub, got, p):
                    (following if matched else out).append(q if matched else (False, q))  # type: ignore[arg-type]
            live_paths = following
        return out + [(True, p) for p in live_paths]
