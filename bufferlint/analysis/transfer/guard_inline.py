"""Marker checks written inline, by evaluation: what a branch of a function tells about a
borrowed value it holds, however the check before the branch is written.

``refine.py`` reads what a test's own value says (a marker check, a guard call, ``any``/
``all`` unrolled). That misses a check computed into a flag by a loop over the marker names,
an ``except AttributeError`` around a read of the marker, and a ``match`` on it. Rather than
recognise those shapes, the guard evaluator (``guard_eval``) runs the code from the start of
the enclosing loop body (or the function body) to the branch with one variable carrying the
marker (its *subject*): a way on the branch that no path of that run takes (an ``if`` test's
truth, an ``except`` handler, a ``match`` case's body or the cases after it) is taken only
by values without the marker, so the variable's objects are clean there, as on the false
branch of a marker check.

The guard evaluation needs "some path approves"; this needs "no path takes the way", so
what it does not follow exactly is widened instead: a loop it does not unroll forgets what
its body assigns, an opaque call in a ``try`` may raise from anywhere in it, and reading an
attribute of anything but the subject may raise. Anything it does not model decides nothing
(the branch is refined as before); a budget hit is a notice. Not evaluated: ``while`` tests,
branches in a loop's ``else`` or a ``finally``, and a subject the region rebinds.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from bufferlint.analysis.domain.limits import Limit, function_lines
from bufferlint.analysis.domain.state import State
from bufferlint.analysis.domain.values import checked, identities
from bufferlint.analysis.flow import cfg
from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.transfer.guard_eval import GuardEvaluator
from bufferlint.analysis.transfer.guard_expressions import CallFacts
from bufferlint.analysis.transfer.guard_judge import mentions_markers
from bufferlint.analysis.transfer.guard_values import BLIND, SUBJECT, Abstract, Exit, GiveUp, Path, merge

SLOT = -1  # the subject's place in the call facts the evaluator reads (it is no parameter)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class Region:
    """The code run before a branch: ``chain`` from the root (a loop body or the function
    body) down to the branching statement, each level ``(container, field, index)`` (the
    branch's ancestor is ``getattr(container, field)[index]``); the names the evaluated code
    reads and binds, and its calls."""

    chain: tuple
    reads: frozenset
    binds: frozenset
    calls: tuple


class InlineChecks:
    """The guard facts inline marker checks prove on the ways out of a branch, for one
    analysis of a function (the interpreter asks on each edge and ``except`` handler)."""

    def __init__(self, frame: Any, caps: list[Limit]) -> None:
        self.frame = frame
        self.caps = caps
        self.mentions: bool | None = None  # does the function name a marker at all (asked once)
        self.mentioning: dict[int, bool] = {}  # id(region) -> does its code name a marker
        self.taken: dict[tuple, bool | None] = {}  # (way, name, marker, call facts) -> a marked value takes it
        self.told: set[int] = set()  # branches whose budget hit was told

    def on_edge(self, st: State, edge: cfg.Edge) -> frozenset:
        if edge.case is not None:
            match = _tables(self.frame).parent_of(edge.case)
            return self.proven(st, match, ("case", edge.case, edge.truth)) if match is not None else frozenset()
        if edge.test is not None:
            branch = _tables(self.frame).tests.get(id(edge.test))
            return self.proven(st, branch, ("test", edge.test, edge.truth)) if branch is not None else frozenset()
        return frozenset()

    def in_handler(self, st: State, handler: ast.ExceptHandler) -> frozenset:
        attempt = _tables(self.frame).parent_of(handler)
        return self.proven(st, attempt, ("handler", handler, True)) if attempt is not None else frozenset()

    def proven(self, st: State, statement: ast.AST, way: tuple) -> frozenset:
        """Guard facts for the variables no marked value reaches ``way`` of ``statement`` in."""
        frame = self.frame
        if self.mentions is None:
            self.mentions = mentions_markers(frame, frame.info.node)
        if not self.mentions:
            return frozenset()
        region = _tables(frame).region(statement, way)
        if region is None:
            return frozenset()
        proven: frozenset = frozenset()
        vocab = frame.vocab
        for name in sorted(region.reads - region.binds):
            value = st.vars.get(name)
            subject = identities(value) if value is not None else frozenset()
            if not subject:
                continue
            calls = SubjectCalls(frame, region.calls, subject)
            if not calls.speaks and not self.region_mentions(region):
                continue
            for marker in sorted(vocab.markers):
                key = (id(way[1]), way[0], way[2], name, marker, calls.signature)
                if key not in self.taken:
                    self.taken[key] = self.evaluate(region, statement, way, name, marker, calls)
                if self.taken[key] is False:
                    proven |= checked(value, vocab.marker_tags(marker))  # type: ignore[arg-type]
        return proven

    def region_mentions(self, region: Region) -> bool:
        key = id(region)
        if key not in self.mentioning:
            self.mentioning[key] = any(mentions_markers(self.frame, node) for node in _tables(self.frame).pieces(region))
        return self.mentioning[key]

    def evaluate(self, region: Region, statement: ast.AST, way: tuple, name: str, marker: str, calls: "SubjectCalls") -> bool | None:
        frame = self.frame
        evaluator = InlineEvaluator(frame.info, frame.program.index, frame.vocab, calls)  # type: ignore[arg-type]
        evaluator.param, evaluator.marker = SLOT, marker
        evaluator.tags = frozenset(frame.vocab.marker_tags(marker))
        start = Path()
        if frame.info.kind != "module":
            start.env = {local: BLIND for local in _tables(frame).locals}
        start.env[name] = SUBJECT
        try:
            return bool(evaluator.ways(region, statement, way, start))
        except GiveUp as stop:
            if stop.budget and id(statement) not in self.told:
                self.told.add(id(statement))
                line = getattr(statement, "lineno", 0)
                self.caps.append(unevaluated_notice(frame.info.display, line, stop.why, function_lines(frame.info)))
            return None


def unevaluated_notice(display: str, line: int, why: str, where: tuple | None = None) -> Limit:
    """The notice for a marker check the budget left unevaluated: the branch was refined as
    if there were no check, so a value it keeps from an asynchronous path may be reported.
    It can only make a finding through its own function wrong: told only with one."""
    return Limit(
        f"{display}: the marker check before line {line} was not evaluated ({why}); "
        f"a value it keeps from an asynchronous path may be reported there",
        if_reported=True,
        where=where,
    )


class SubjectCalls(CallFacts):
    """``CallFacts`` for a subject that is a variable, not a parameter: what each call in the
    region proves of the variable's objects (by their identities) when true or false."""

    def __init__(self, frame: Any, calls: tuple, subject: frozenset) -> None:
        self.true_proves, self.false_proves, self.undecided, self.helpers = {}, {}, {}, {}
        signature = []
        for key in calls:
            entry = frame.calls.get(key)
            if entry is not None and len(entry[2]) == 1:
                self.helpers[key] = next(iter(entry[2]))
            cond = entry[1].cond if entry is not None else None
            if cond is None:
                continue
            if_true = {tag for identity, tag in cond.clean_if_true if identity in subject}
            if_false = {tag for identity, tag in cond.clean_if_false if identity in subject}
            if if_true or if_false:
                self.true_proves[key] = {SLOT: if_true}
                self.false_proves[key] = {SLOT: if_false}
                signature.append((key, frozenset(if_true), frozenset(if_false)))
        self.speaks = bool(signature)
        self.signature = tuple(signature)


class InlineEvaluator(GuardEvaluator):
    """The guard evaluator asked which ways out of a branch a marked value takes. What it
    approximates is widened (see the module docstring), so "no path" is an answer."""

    def ways(self, region: Region, statement: ast.AST, way: tuple, start: Path) -> list[Path]:
        """The paths on which the subject reaches ``way`` of ``statement``."""
        live = [start]
        for container, field, index in region.chain:
            if isinstance(container, ast.Match):  # into case ``index``'s body
                live = [q for p in live for q in self.into_case(container, index, p, True)]
                continue
            if isinstance(container, ast.Try) and field == "handlers":
                live = [q for p in live for q in self.into_handler(container, container.handlers[index], p)]
                continue
            if isinstance(container, ast.If):
                live = [q for p in live for taken, q in self.branches(container.test, p) if taken == (field == "body")]
            elif isinstance(container, (ast.With, ast.AsyncWith)):
                for p in live:
                    for item in container.items:
                        if item.optional_vars is not None:
                            self.bind(item.optional_vars, BLIND, p)
                self.may_raise = True
            elif isinstance(container, ast.Try) and field == "orelse":
                live = [e.path for p in live for e in self.block(container.body, p) if e.how == "fall"]
            elif isinstance(container, ast.ExceptHandler) and container.name:
                for p in live:
                    p.env[container.name] = BLIND
            stmts = getattr(container, field)
            if stmts[index] is statement:
                live = [e.path for p in live for e in self.block(stmts[:index], p) if e.how == "fall"]
                break
            live = merge([e.path for p in live for e in self.block(stmts[:index], p) if e.how == "fall"])
        kind, node, truth = way
        if kind == "test":
            return [q for p in live for taken, q in self.branches(node, p) if taken == truth]
        if kind == "handler":
            return [q for p in live for q in self.into_handler(statement, node, p)]  # type: ignore[arg-type]
        index = statement.cases.index(node)  # type: ignore[attr-defined]
        return [q for p in live for q in self.into_case(statement, index, p, truth)]  # type: ignore[arg-type]

    def into_handler(self, attempt: ast.Try, handler: ast.ExceptHandler, path: Path) -> list[Path]:
        """The paths into ``handler``: a raise it is the first to catch, or (when something
        opaque in the body may raise) any point of the body."""
        before = self.may_raise
        self.may_raise = False
        exits = self.block(attempt.body, path.fork())
        opaque = self.may_raise
        self.may_raise = before or opaque
        out = [e.path for e in exits if e.how == "raise" and self.handler_for(attempt.handlers, e.value.value) is handler]
        if opaque:
            out.append(self.raised_anywhere(attempt, path))
        return out

    def into_case(self, match: ast.Match, index: int, path: Path, matched: bool) -> list[Path]:
        """The paths into case ``index``'s body (``matched``) or on past it (not)."""
        out: list[Path] = []
        for subject, p in self.expr(match.subject, path):
            if subject.kind == "raise":
                continue
            live = [p]
            for i, case in enumerate(match.cases[: index + 1]):
                body: list[Path] = []
                rest: list[Path] = []
                for current in live:
                    for hit, q in self.pattern(case.pattern, subject, current):
                        if not hit:
                            rest.append(q)
                        elif case.guard is None:
                            body.append(q)
                        else:
                            for taken, r in self.branches(case.guard, q):
                                (body if taken else rest).append(r)
                if i == index:
                    out += body if matched else rest
                live = merge(rest)
        return out

    # -- what the guard evaluation follows loosely, widened ------------------------------------

    def once(self, stmt: ast.For, iterable: Abstract, path: Path) -> list[Exit]:
        """A loop not unrolled: any number of rounds, so what its body assigns is forgotten."""
        head = forgetting(path, [stmt])
        exits = self.block(stmt.body, head.fork())
        out = self.block(stmt.orelse, head.fork())
        out += [Exit("fall", e.path) for e in exits if e.how == "break"]
        return out + [e for e in exits if e.how in ("return", "raise")]

    def stmt_While(self, stmt: ast.While, path: Path) -> list[Exit]:
        head = forgetting(path, [stmt])
        out: list[Exit] = []
        for taken, p in self.branches(stmt.test, head):
            if not taken:
                out += self.block(stmt.orelse, p)
                continue
            for e in self.block(stmt.body, p):
                if e.how == "break":
                    out.append(Exit("fall", e.path))
                elif e.how in ("return", "raise"):
                    out.append(e)
        return out

    def raised_anywhere(self, stmt: ast.Try, start: Path) -> Path:
        return forgetting(start, stmt.body)

    def attribute(self, base: Abstract, attr: str) -> Abstract:
        if base.kind not in ("subject", "const"):
            self.may_raise = True  # ``obj.attr`` may raise AttributeError
        return super().attribute(base, attr)

    stmt_AsyncFor = GuardEvaluator.stmt_For
    stmt_AsyncWith = GuardEvaluator.stmt_With


def forgetting(path: Path, stmts: list) -> Path:
    """``path`` with every name ``stmts`` may bind unknown (blind)."""
    out = path.fork()
    for name in bound_names(stmts):
        out.env[name] = BLIND
    return out


def bound_names(nodes: list) -> set[str]:
    """Names these nodes may bind or delete: assignments, loop and ``with`` targets, ``except
    ... as``, walrus, ``match`` captures."""
    names: set[str] = set()
    for top in nodes:
        for node in walk(top):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.add(node.rest)
    return names


class InlineTables:
    """What is derived once from a function's tree for inline checks: each statement's
    parent, each ``if`` test's statement, and the region before each branch."""

    def __init__(self, node: ast.AST) -> None:
        self.node = node
        self.parents: dict[int, tuple[ast.AST, str]] = {}
        self.tests: dict[int, ast.If] = {}
        self.regions: dict[tuple, Region | None] = {}
        self._pieces: dict[int, list] = {}
        stack = [node]
        while stack:
            parent = stack.pop()
            if isinstance(parent, ast.If):
                self.tests[id(parent.test)] = parent
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(parent, field, None)
                if not isinstance(children, list):
                    continue
                for child in children:
                    if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                        self.parents[id(child)] = (parent, field)
                        if not isinstance(child, SCOPES):
                            stack.append(child)
        # The function's local names: unknown where a region starts (never a module constant)
        self.locals: frozenset = frozenset()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = {a.arg for a in walk(node.args) if isinstance(a, ast.arg)}
            self.locals = frozenset(bound_names(node.body) | params)

    def parent_of(self, node: ast.AST) -> ast.AST | None:
        up = self.parents.get(id(node))
        return up[0] if up is not None else None

    def region(self, statement: ast.AST, way: tuple) -> Region | None:
        key = (id(statement), id(way[1]))
        if key not in self.regions:
            self.regions[key] = self._region(statement, way)
        return self.regions[key]

    def _region(self, statement: ast.AST, way: tuple) -> Region | None:
        chain: list[tuple[ast.AST, str, int]] = []
        node = statement
        while True:
            up = self.parents.get(id(node))
            if up is None:
                return None
            parent, field = up
            children = getattr(parent, field)
            index = next(i for i, child in enumerate(children) if child is node)
            chain.append((parent, field, index))
            if parent is self.node:
                break
            if isinstance(parent, LOOPS):
                if field != "body":
                    return None
                break
            if isinstance(parent, ast.Try) and field == "finalbody":
                return None
            node = parent
        chain.reverse()
        pieces = _pieces(chain, statement, way)
        reads = frozenset(n.id for p in pieces for n in walk(p) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        calls = tuple(id(n) for p in pieces for n in walk(p) if isinstance(n, ast.Call))
        region = Region(tuple(chain), reads, frozenset(bound_names(pieces)), calls)
        self._pieces[id(region)] = pieces
        return region

    def pieces(self, region: Region) -> list:
        return self._pieces.get(id(region), [])


def _pieces(chain: list, statement: ast.AST, way: tuple) -> list:
    """The syntax the evaluation of a region runs: each level's statements before the
    branch's ancestor, the headers it passes through, and the branch's own part."""
    out: list = []
    for container, field, index in chain:
        if isinstance(container, ast.If):
            out.append(container.test)
        elif isinstance(container, (ast.With, ast.AsyncWith)):
            out += container.items
        elif isinstance(container, ast.Try) and field in ("orelse", "handlers"):
            out += container.body
            if field == "handlers":
                out += _handler_header(container.handlers[index])
                continue
        elif isinstance(container, ast.Match):
            out.append(container.subject)
            out += [c.pattern for c in container.cases[: index + 1]] + [c.guard for c in container.cases[: index + 1] if c.guard]
            continue
        out += getattr(container, field)[:index]
    kind, node, _ = way
    if kind == "test":
        out.append(node)
    elif kind == "handler":
        out += statement.body + _handler_header(node)  # type: ignore[attr-defined]
    else:
        cases = statement.cases[: statement.cases.index(node) + 1]  # type: ignore[attr-defined]
        out += [statement.subject] + [c.pattern for c in cases] + [c.guard for c in cases if c.guard]  # type: ignore[attr-defined]
    return out


def _handler_header(handler: ast.ExceptHandler) -> list:
    """``except E as name``: what it reads (``E``) and binds (``name``), not its body."""
    out: list = [handler.type] if handler.type is not None else []
    return out + [ast.Name(id=handler.name, ctx=ast.Store())] if handler.name else out


def _tables(frame: Any) -> InlineTables:
    """The function's tables, kept with its other tables (``Frame.tables``)."""
    tables = frame.tables
    found = tables.inline
    if found is None:
        found = tables.inline = InlineTables(tables.node)
    return found
