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
import operator
from dataclasses import dataclass, field
from typing import Any

from bufferlint.analysis.frontend.index import FunctionInfo, dotted_name

REJECTS, ACCEPTS, APPROVES, UNDECIDED, IGNORES = "rejects", "accepts", "approves", "undecided", "ignores"

MAX_STEPS = 2000  # statements and expressions evaluated per (parameter, marker)
MAX_PATHS = 64  # paths alive at once
MAX_TARGETS = 8  # a call reaching more project functions than this is not followed as a helper


class GiveUp(Exception):
    """The evaluation hit a budget, or met a statement it does not model."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class Abstract:
    """One abstract value. ``kind``: ``const`` (``value`` known), ``subject`` (the marked
    argument), ``blind`` (unknown, marker-independent; ``truth`` when a branch decided it),
    ``unknown`` (may depend on the marker), ``raise`` (evaluating it raised ``value``)."""

    kind: str
    value: Any = None
    truth: bool | None = None


SUBJECT = Abstract("subject")
BLIND = Abstract("blind")
UNKNOWN = Abstract("unknown")
NONE = Abstract("const", None)


def const(value: Any) -> Abstract:
    return Abstract("const", value)


def raised(name: str) -> Abstract:
    return Abstract("raise", name)


def truth(value: Abstract) -> str:
    """``true``, ``false``, ``blind`` (either, independently of the marker) or ``unknown``."""
    if value.kind == "const":
        try:
            return "true" if value.value else "false"
        except Exception:  # noqa: BLE001 - a literal whose truth raises: say nothing of it
            return "blind"
    if value.kind == "blind" and value.truth is not None:
        return "true" if value.truth else "false"
    if value.kind == "unknown":
        return "unknown"
    return "blind"


def with_truth(value: Abstract, wanted: bool) -> Abstract:
    """``value`` on the branch where its truth is ``wanted``."""
    return Abstract("blind", None, wanted) if value.kind in ("blind", "subject") else value


@dataclass
class Path:
    """The variables on one path and whether every branch taken on it was decidable."""

    env: dict = field(default_factory=dict)
    certain: bool = True

    def fork(self, certain: bool = True) -> "Path":
        return Path(dict(self.env), self.certain and certain)


@dataclass
class Exit:
    """How a path leaves a block: ``fall`` (on to the next statement), ``return``,
    ``raise`` (``value.value`` is the exception's name), ``break`` or ``continue``."""

    how: str
    path: Path
    value: Abstract = NONE


@dataclass(frozen=True)
class Verdict:
    outcome: str
    why: str = ""  # for UNDECIDED: what could not be decided, for the notice


class CallFacts:
    """What the interpreter said of the calls in the function (``Frame.calls``), per call
    node: the tags its value proves of each parameter when it is true (``clean_if_true``) or
    false (``clean_if_false``), and for each argument expression, the tags the targets'
    summaries are undecided for at the parameter it binds to."""

    def __init__(self, frame: Any) -> None:
        self.true_proves: dict[int, dict[int, set]] = {}
        self.false_proves: dict[int, dict[int, set]] = {}
        self.undecided: dict[int, list[tuple[ast.expr, set]]] = {}
        program = frame.program
        params = set(frame.info.params)
        for key, (node, value, targets) in frame.calls.items():
            if value.cond is not None:
                _by_param(self.true_proves.setdefault(key, {}), value.cond.clean_if_true)
                _by_param(self.false_proves.setdefault(key, {}), value.cond.clean_if_false)
            if len(targets) > MAX_TARGETS or not _passes_parameter(node, params):
                continue  # a by-name call reaching many methods is no guard's helper
            for qualname in targets:
                info = program.index.functions.get(qualname)
                facts = program.summary(qualname).undecided if info is not None else ()
                for param, tag, _ in facts:
                    argument = _argument_at(node, info, param)
                    if argument is not None:
                        self.undecided.setdefault(key, []).append((argument, {tag}))


def _passes_parameter(node: ast.Call, params: set[str]) -> bool:
    """Does the call pass one of the function's parameters as it is (a helper's argument)?"""
    passed = [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords]
    return any(isinstance(a, ast.Name) and a.id in params for a in passed)


def _by_param(out: dict[int, set], facts: frozenset) -> None:
    for identity, tag in facts:
        if identity[0] == "p" and identity[2] == ():
            out.setdefault(identity[1], set()).add(tag)


def _argument_at(node: ast.Call, info: FunctionInfo, param: int) -> ast.expr | None:
    """The argument expression of ``node`` that binds to ``info``'s parameter ``param``."""
    offset = 1 if info.binds_receiver and isinstance(node.func, ast.Attribute) else 0
    position = param - offset
    if 0 <= position < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
        return node.args[position]
    name = info.params[param] if param < len(info.params) else None
    return next((k.value for k in node.keywords if k.arg == name), None)


def judge(frame: Any) -> tuple[frozenset, frozenset, frozenset]:
    """The function's guard facts by evaluation: (param, tag) it rejects marked values for
    (``Summary.guards``), (param, tag) it always accepts them for (``Summary.marker_checks``),
    and (param, tag, why) it could not decide (``Summary.undecided``). A function whose body
    touches no marker (by name, through a constant, reflectively, or through a call whose
    facts name one) is not evaluated: what it returns does not depend on a marker."""
    info = frame.info
    node = info.node
    if not isinstance(node, ast.FunctionDef) or info.is_generator or not _returns_value(node):
        return frozenset(), frozenset(), frozenset()
    calls = CallFacts(frame)
    if not _touches_markers(frame, node, calls):
        return frozenset(), frozenset(), frozenset()
    rejects, accepts, undecided = set(), set(), set()
    vocab = frame.vocab
    first = 1 if info.binds_receiver else 0
    for param in range(first, len(info.params)):
        if param in (info.vararg, info.kwarg):
            continue
        for marker in sorted(vocab.markers):
            verdict = GuardEvaluator(info, frame.program.index, vocab, calls).evaluate(param, marker)
            tags = vocab.marker_tags(marker)
            if verdict.outcome == REJECTS:
                rejects |= {(param, tag) for tag in tags}
            elif verdict.outcome == ACCEPTS:
                accepts |= {(param, tag) for tag in tags}
            elif verdict.outcome == UNDECIDED:
                undecided |= {(param, tag, verdict.why) for tag in tags}
    return frozenset(rejects), frozenset(accepts), frozenset(undecided)


def _returns_value(node: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(node))


def _touches_markers(frame: Any, node: ast.FunctionDef, calls: CallFacts) -> bool:
    markers = frame.vocab.markers
    module = frame.info.module
    if calls.undecided or any(calls.true_proves.values()) or any(calls.false_proves.values()):
        return True
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and child.value in markers:
            return True
        if isinstance(child, ast.Attribute) and child.attr in markers:
            return True
        if isinstance(child, ast.MatchClass) and markers.intersection(child.kwd_attrs):
            return True
        if isinstance(child, ast.Name) and child.id in module.constants and names_marker(module.constants[child.id], markers):
            return True
        if isinstance(child, ast.Name) and child.id in module.imports:
            known, literal = frame.program.index.constant(frame.program.index.canonical(module.imports[child.id]))
            if known and names_marker(literal, markers):
                return True
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in ("getattr", "hasattr", "vars"):
            if child.func.id == "vars" or (len(child.args) > 1 and not isinstance(child.args[1], ast.Constant)):
                return True
    return False


def names_marker(value: Any, markers: set) -> bool:
    """Is this module constant a marker's name, or a tuple holding one?"""
    if isinstance(value, tuple):
        return any(isinstance(v, str) and v in markers for v in value)
    return isinstance(value, str) and value in markers


class GuardEvaluator:
    """Evaluates one function for one parameter carrying one marker (``evaluate``)."""

    def __init__(self, info: FunctionInfo, index: Any, vocab: Any, calls: CallFacts) -> None:
        self.info = info
        self.index = index
        self.vocab = vocab
        self.calls = calls
        self.steps = 0
        self.param = 0
        self.marker = ""
        self.tags: frozenset = frozenset()
        self.may_raise = False  # an opaque call was met (it may raise anything)
        self.unknowns = 0  # unknown values made so far (a loop whose body made one decides nothing)
        self.touched = False  # the marker was read (or a call's facts spoke for it)

    # -- the verdict -------------------------------------------------------------------------

    def evaluate(self, param: int, marker: str) -> Verdict:
        self.param, self.marker = param, marker
        self.tags = frozenset(self.vocab.marker_tags(marker))
        self.steps = self.unknowns = 0
        self.touched = False
        node = self.info.node
        start = Path()
        for i, name in enumerate(self.info.params):
            start.env[name] = SUBJECT if i == param else BLIND
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

    def undecided_why(self, exits: list[Exit]) -> str:
        for e in exits:
            if e.how == "return" and (truth(e.value) == "unknown" or not e.path.certain):
                return "a return that depends on the value in a way the evaluation cannot follow"
        return "a path it cannot follow"

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise GiveUp(f"more than {MAX_STEPS} steps")

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
            live = _merge(following)
            if len(live) > MAX_PATHS:
                raise GiveUp(f"more than {MAX_PATHS} paths")
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
                value = UNKNOWN if value.kind == "unknown" or _involved(stmt.target, p) else BLIND
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

    def bind(self, target: ast.expr, value: Abstract, path: Path) -> None:
        if isinstance(target, ast.Name):
            path.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.value if value.kind == "const" and isinstance(value.value, tuple) else None
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    self.bind(element.value, BLIND if value.kind != "unknown" else UNKNOWN, path)
                elif items is not None and len(items) == len(target.elts):
                    self.bind(element, const(items[i]), path)
                else:
                    self.bind(element, UNKNOWN if value.kind == "unknown" else BLIND, path)
        # attributes and subscripts: stores into objects, not variables of this evaluation

    def stmt_If(self, stmt: ast.If | ast.While, path: Path) -> list[Exit]:
        out: list[Exit] = []
        for taken, p in self.branches(stmt.test, path):
            out += self.block(stmt.body if taken else stmt.orelse, p)
        return out

    def branches(self, test: ast.expr, path: Path) -> list[tuple[bool, Path]]:
        """The ways a test can go: (truth, path), a path per feasible truth."""
        out = []
        for value, p in self.expr(test, path):
            t = truth(value)
            if value.kind == "raise":
                raise GiveUp(f"line {test.lineno}: a test that raises")
            if t in ("true", "false"):
                out.append((t == "true", p))
            else:
                out.append((True, p.fork(t == "blind")))
                out.append((False, p.fork(t == "blind")))
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
            live = _merge(following)
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
            pending += [(h, start.fork(False)) for h in stmt.handlers]
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
            live = [p]
            for case in stmt.cases:
                unmatched: list[Path] = []
                for current in live:
                    for matched, q in self.pattern(case.pattern, subject, current):
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
                live = _merge(unmatched)
            out += [Exit("fall", q) for q in live]
        return out

    def pattern(self, pattern: ast.pattern, value: Abstract, path: Path) -> list[tuple[bool, Path]]:
        """Does ``pattern`` match ``value``: (matched, path) per feasible answer, with its bindings."""
        self.tick()
        if isinstance(pattern, ast.MatchAs):
            found = [(True, path)] if pattern.pattern is None else self.pattern(pattern.pattern, value, path)
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
                    for matched, q in self.pattern(alternative, value, p):
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
        return self.either(value, BLIND, path)

    def either(self, value: Abstract, other: Abstract, path: Path) -> list[tuple[bool, Path]]:
        decided = value.kind != "unknown" and other.kind != "unknown"
        return [(True, path.fork(decided)), (False, path.fork(decided))]

    def class_pattern(self, pattern: ast.MatchClass, value: Abstract, path: Path) -> list[tuple[bool, Path]]:
        """``case Tensor(_marker=True)``: the class test is blind; keyword patterns read attributes."""
        everything = dotted_name(pattern.cls) in ("object", "builtins.object")
        live = [(True, path)] if everything or value.kind == "const" else self.either(value, BLIND, path)
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

    # -- expressions -----------------------------------------------------------------------------

    def expr(self, node: ast.expr, path: Path) -> list[tuple[Abstract, Path]]:
        """What ``node`` evaluates to: (value, path) per alternative (``and``, ``or`` and
        conditional expressions split the path)."""
        self.tick()
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is not None:
            return method(node, path)
        return [(self.opaque(node, path), path)]

    def one(self, node: ast.expr, path: Path) -> Abstract:
        """``node``'s value when it does not split the path (else joined)."""
        values = [v for v, _ in self.expr(node, path)]
        return values[0] if len(values) == 1 else _join(values)

    def opaque(self, node: ast.expr, path: Path) -> Abstract:
        """An expression the evaluation does not model: unknown if it involves the subject."""
        if _involved(node, path):
            self.unknowns += 1
            return UNKNOWN
        return BLIND

    def expr_Constant(self, node: ast.Constant, path: Path) -> list[tuple[Abstract, Path]]:
        return [(const(node.value), path)]

    def expr_Name(self, node: ast.Name, path: Path) -> list[tuple[Abstract, Path]]:
        if node.id in path.env:
            return [(path.env[node.id], path)]
        return [(self.global_value(node.id), path)]

    def global_value(self, name: str) -> Abstract:
        module = self.info.module
        if name in self.info.local_defs:
            return BLIND
        if name in module.constants:
            return _constant(module.constants[name])
        if name in module.imports:
            known, literal = self.index.constant(self.index.canonical(module.imports[name]))
            return _constant(literal) if known else BLIND
        return BLIND

    def expr_Attribute(self, node: ast.Attribute, path: Path) -> list[tuple[Abstract, Path]]:
        name = dotted_name(node)
        head = name.split(".", 1)[0] if name else None
        module = self.info.module
        if head and head not in path.env and head in module.imports:
            known, literal = self.index.constant(self.index.canonical(module.imports[head] + name[len(head):]))  # type: ignore[index]
            if known:
                return [(_constant(literal), path)]
        return [(self.attribute(base, node.attr), p) if base.kind != "raise" else (base, p) for base, p in self.expr(node.value, path)]

    def attribute(self, base: Abstract, attr: str) -> Abstract:
        if base.kind == "subject":
            if attr == self.marker:
                self.touched = True
                return const(True)
            if attr in self.vocab.markers:
                return raised("AttributeError")  # it carries one marker, not the others
            return BLIND
        return UNKNOWN if base.kind == "unknown" else BLIND

    def expr_UnaryOp(self, node: ast.UnaryOp, path: Path) -> list[tuple[Abstract, Path]]:
        out = []
        for value, p in self.expr(node.operand, path):
            if value.kind == "raise":
                out.append((value, p))
            elif isinstance(node.op, ast.Not):
                t = truth(value)
                out.append((const(t == "false") if t in ("true", "false") else (UNKNOWN if t == "unknown" else BLIND), p))
            elif value.kind == "const":
                out.append((_fold(_UNARY.get(type(node.op), _no_fold), value.value), p))
            else:
                out.append((UNKNOWN if value.kind == "unknown" else BLIND, p))
        return out

    def expr_BoolOp(self, node: ast.BoolOp, path: Path) -> list[tuple[Abstract, Path]]:
        """``a and b``: ``a`` where it is falsy, else ``b`` (``or`` the other way round)."""
        stop_on = isinstance(node.op, ast.Or)
        live, out = [path], []
        for i, operand in enumerate(node.values):
            last = i == len(node.values) - 1
            following = []
            for p in live:
                for value, q in self.expr(operand, p):
                    t = truth(value)
                    if last or value.kind == "raise":
                        out.append((value, q))
                    elif t in ("true", "false"):
                        if (t == "true") == stop_on:
                            out.append((value, q))
                        else:
                            following.append(q)
                    else:
                        out.append((with_truth(value, stop_on), q.fork(t == "blind")))
                        following.append(q.fork(t == "blind"))
            live = following
        return out

    def expr_IfExp(self, node: ast.IfExp, path: Path) -> list[tuple[Abstract, Path]]:
        out = []
        for taken, p in self.branches(node.test, path):
            out += self.expr(node.body if taken else node.orelse, p)
        return out

    def expr_Compare(self, node: ast.Compare, path: Path) -> list[tuple[Abstract, Path]]:
        values = [self.one(node.left, path)] + [self.one(c, path) for c in node.comparators]
        for value in values:
            if value.kind == "raise":
                return [(value, path)]
        if any(v.kind == "unknown" for v in values):
            return [(UNKNOWN, path)]
        result: Abstract = const(True)
        for op, left, right in zip(node.ops, values, values[1:]):
            if left.kind == "const" and right.kind == "const":
                step = _fold(lambda a, b: _COMPARE[type(op)](a, b), left.value, right.value)
            elif isinstance(op, (ast.Is, ast.IsNot)) and "subject" in (left.kind, right.kind) and "const" in (left.kind, right.kind):
                step = const(isinstance(op, ast.IsNot))  # the marked object is no literal
            else:
                step = BLIND
            result = _and(result, step)
        return [(result, path)]

    def expr_BinOp(self, node: ast.BinOp, path: Path) -> list[tuple[Abstract, Path]]:
        left, right = self.one(node.left, path), self.one(node.right, path)
        for value in (left, right):
            if value.kind in ("raise", "unknown"):
                return [(value, path)]
        if left.kind == "const" and right.kind == "const" and type(node.op) in _BINARY:
            return [(_fold(_BINARY[type(node.op)], left.value, right.value), path)]
        return [(BLIND, path)]

    def expr_Tuple(self, node: ast.Tuple | ast.List, path: Path) -> list[tuple[Abstract, Path]]:
        values = [self.one(e, path) for e in node.elts if not isinstance(e, ast.Starred)]
        if len(values) == len(node.elts) and all(v.kind == "const" for v in values):
            return [(const(tuple(v.value for v in values)), path)]
        return [(UNKNOWN if any(v.kind == "unknown" for v in values) else BLIND, path)]

    expr_List = expr_Tuple

    def expr_NamedExpr(self, node: ast.NamedExpr, path: Path) -> list[tuple[Abstract, Path]]:
        out = self.expr(node.value, path)
        for value, p in out:
            self.bind(node.target, value, p)
        return out

    def expr_Subscript(self, node: ast.Subscript, path: Path) -> list[tuple[Abstract, Path]]:
        base, key = self.one(node.value, path), self.one(node.slice, path)
        if base.kind == "const" and key.kind == "const":
            return [(_fold(operator.getitem, base.value, key.value), path)]
        if base.kind == "unknown" or key.kind == "unknown":
            return [(UNKNOWN, path)]
        return [(BLIND, path)]

    # -- calls -----------------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call, path: Path) -> list[tuple[Abstract, Path]]:
        func = node.func
        if isinstance(func, ast.Name) and func.id not in path.env and self.is_builtin(func.id):
            handler = getattr(self, "builtin_" + func.id, None)
            if handler is not None:
                return [(handler(node, path), path)]
        return [(self.project_call(node, path), path)]

    def is_builtin(self, name: str) -> bool:
        module = self.info.module
        return not (
            name in self.info.local_defs or name in module.globals or name in module.imports
            or name in module.constants or name in module.variables
        )

    def argument(self, node: ast.Call, position: int, path: Path) -> Abstract | None:
        if len(node.args) <= position or isinstance(node.args[position], ast.Starred):
            return None
        return self.one(node.args[position], path)

    def builtin_getattr(self, node: ast.Call, path: Path) -> Abstract:
        obj, name = self.argument(node, 0, path), self.argument(node, 1, path)
        default = self.argument(node, 2, path)
        if obj is None or name is None or node.keywords:
            return self.opaque(node, path)
        for value in (obj, name, default):
            if value is not None and value.kind == "raise":
                return value
        if obj.kind == "subject" and name.kind != "const":
            self.unknowns += 1
            return UNKNOWN  # which attribute: not known here
        if name.kind == "const" and isinstance(name.value, str):
            got = self.attribute(obj, name.value)
            if got.kind == "raise" and default is not None:
                return default
            return got
        return UNKNOWN if obj.kind == "unknown" else BLIND

    def builtin_hasattr(self, node: ast.Call, path: Path) -> Abstract:
        obj, name = self.argument(node, 0, path), self.argument(node, 1, path)
        if obj is None or name is None:
            return self.opaque(node, path)
        if obj.kind == "subject" and name.kind == "const" and isinstance(name.value, str):
            got = self.attribute(obj, name.value)
            return got if got.kind == "blind" else const(got.kind != "raise")
        if obj.kind == "subject" or "unknown" in (obj.kind, name.kind):
            self.unknowns += 1
            return UNKNOWN
        return BLIND

    def builtin_vars(self, node: ast.Call, path: Path) -> Abstract:
        """``vars(w)``, ``dir(w)``: every attribute at once, the marker among them."""
        if any(self.one(a, path).kind in ("subject", "unknown") for a in node.args):
            self.unknowns += 1
            return UNKNOWN
        return BLIND

    builtin_dir = builtin_vars

    def builtin_bool(self, node: ast.Call, path: Path) -> Abstract:
        value = self.argument(node, 0, path)
        if value is None:
            return const(False) if not node.args else self.opaque(node, path)
        t = truth(value)
        return const(t == "true") if t in ("true", "false") else (UNKNOWN if t == "unknown" else BLIND)

    def builtin_any(self, node: ast.Call, path: Path) -> Abstract:
        return self.quantifier(node, path, True)

    def builtin_all(self, node: ast.Call, path: Path) -> Abstract:
        return self.quantifier(node, path, False)

    def quantifier(self, node: ast.Call, path: Path, any_: bool) -> Abstract:
        """``any``/``all`` over a literal, or a generator over a literal: element by element."""
        if len(node.args) != 1 or node.keywords:
            return self.opaque(node, path)
        arg = node.args[0]
        elements: list[tuple[ast.expr, Path]] | None = None
        if isinstance(arg, (ast.Tuple, ast.List, ast.Set)) and not any(isinstance(e, ast.Starred) for e in arg.elts):
            elements = [(e, path) for e in arg.elts]
        elif isinstance(arg, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and len(arg.generators) == 1:
            elements = self.comprehension_elements(arg, path)
        else:
            value = self.one(arg, path)
            if value.kind == "const" and isinstance(value.value, (tuple, str, frozenset)):
                return const(any(value.value) if any_ else all(value.value))
        if elements is None:
            return self.opaque(node, path)
        truths = set()
        for element, p in elements:
            alternatives = self.expr(element, p)
            for value, _ in alternatives:
                if value.kind == "raise":
                    return value
            seen = {truth(v) if q.certain or truth(v) in ("true", "false") else "unknown" for v, q in alternatives}
            truths.add(seen.pop() if len(seen) == 1 else ("unknown" if "unknown" in seen else "blind"))
        decisive = "true" if any_ else "false"
        if decisive in truths:
            return const(any_)
        if truths <= {"true", "false"}:
            return const(not any_)
        if "unknown" in truths:
            self.unknowns += 1
            return UNKNOWN
        return BLIND

    def comprehension_elements(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp, path: Path) -> list[tuple[ast.expr, Path]] | None:
        generator = node.generators[0]
        if generator.is_async:
            return None
        iterable = self.one(generator.iter, path)
        if iterable.kind != "const" or not isinstance(iterable.value, (tuple, str, frozenset)):
            return None
        out = []
        for element in iterable.value:
            p = path.fork()
            self.bind(generator.target, const(element), p)
            kept = [(True, p)]
            for condition in generator.ifs:
                kept = [(t, q) for taken, r in kept if taken for t, q in self.branches(condition, r)]
            out += [(node.elt, q) for taken, q in kept if taken]
        return out

    def project_call(self, node: ast.Call, path: Path) -> Abstract:
        """A call the interpreter resolved: its value's guard facts and its targets' summaries
        decide; anything else is opaque (marker-independent unless it is given an unknown)."""
        self.may_raise = True
        key = id(node)
        proves_false = self.calls.true_proves.get(key, {}).get(self.param, set())
        proves_true = self.calls.false_proves.get(key, {}).get(self.param, set())
        undecided = {
            tag for argument, tags in self.calls.undecided.get(key, ()) if self.one(argument, path.fork()).kind == "subject"
            for tag in tags
        }
        if _speaks(proves_false, self.tags) or _speaks(proves_true, self.tags):
            self.touched = True
            return const(_speaks(proves_true, self.tags) and not _speaks(proves_false, self.tags))
        if _speaks(undecided, self.tags):
            self.unknowns += 1
            return UNKNOWN
        values = [self.one(a.value if isinstance(a, ast.Starred) else a, path) for a in node.args]
        values += [self.one(k.value, path) for k in node.keywords]
        if isinstance(node.func, ast.Attribute):
            values.append(self.one(node.func.value, path))
        for value in values:
            if value.kind == "raise":
                return value
        named = any(v.kind == "const" and names_marker(v.value, self.vocab.markers) for v in values)
        if any(v.kind == "unknown" for v in values) or (named and any(v.kind == "subject" for v in values)):
            self.unknowns += 1  # given the value and a marker's name, it may well check it
            return UNKNOWN
        return BLIND


def _speaks(tags: set, wanted: frozenset) -> bool:
    """Do facts with ``tags`` speak for a marker with these tags (``values.clean``'s rule)?"""
    return bool(tags) and (None in tags or bool(tags & wanted) or (None in wanted))


def _involved(node: ast.AST, path: Path) -> bool:
    """Does ``node`` read a variable holding the subject or an unknown?"""
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and path.env.get(child.id, BLIND).kind in ("subject", "unknown"):
            return True
    return False


def _constant(value: Any) -> Abstract:
    return const(value)


def _fold(fn: Any, *args: Any) -> Abstract:
    try:
        return const(fn(*args))
    except Exception:  # noqa: BLE001 - what Python would raise here: not followed
        return BLIND


def _and(left: Abstract, right: Abstract) -> Abstract:
    t = truth(left)
    if t == "false":
        return left
    if t == "true":
        return right
    return BLIND


def _join(values: list[Abstract]) -> Abstract:
    if all(v == values[0] for v in values):
        return values[0]
    if any(v.kind == "unknown" for v in values):
        return UNKNOWN
    return BLIND


def _merge(paths: list[Path]) -> list[Path]:
    """Paths with the same variables are one (certain if either is)."""
    out: dict[tuple, Path] = {}
    for p in paths:
        try:
            key: tuple = tuple(sorted(p.env.items(), key=lambda kv: kv[0]))
            hash(key)
        except TypeError:
            key = (id(p),)
        old = out.get(key)
        if old is None:
            out[key] = p
        elif p.certain and not old.certain:
            out[key] = p
    return list(out.values())


def _no_fold(*args: Any) -> Any:
    raise TypeError("not folded")


_UNARY: dict[type, Any] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod}
