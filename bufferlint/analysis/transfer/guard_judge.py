"""Which functions the guard evaluation (``guard_eval``) runs on, and what its verdicts
become: once a function's run is done, each parameter (not the receiver) is evaluated
carrying each marker in turn, and the verdicts become the summary's guard facts
(``Summary.guards``: rejects; ``Summary.marker_checks``: accepts; ``Summary.undecided``).
A function whose body touches no marker (by name, through a module constant, reflectively,
or through a call whose facts name one) is not evaluated: what it returns cannot depend
on a marker.
"""

from __future__ import annotations

import ast
import weakref
from typing import Any

from bufferlint.analysis.domain.conditions import EQ, FIELD, ParamTest
from bufferlint.analysis.domain.summaries import NO_FACTS, GuardFacts
from bufferlint.analysis.transfer.construction import field_by_default
from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.transfer.guard_eval import ACCEPTS, REJECTS, UNDECIDED, GuardEvaluator
from bufferlint.analysis.transfer.guard_expressions import CallFacts, names_marker


def judge(frame: Any) -> GuardFacts:
    """The function's guard facts by evaluation: what it rejects and accepts marked values
    for, what it could not decide, and what it decides once its caller names the marker. A
    function whose body touches no marker (by name, through a constant, reflectively, or
    through a call whose facts name one) is not evaluated: what it returns does not depend on
    a marker."""
    info = frame.info
    node = info.node
    if not isinstance(node, ast.FunctionDef) or info.is_generator or not _returns_value(node):
        return NO_FACTS
    calls = CallFacts(frame)
    first = 1 if info.binds_receiver else 0
    params = [p for p in range(first, len(info.params)) if p not in (info.vararg, info.kwarg)]
    if not _touches_markers(frame, node, calls):
        if _never_approves(node):  # ``def can_overlap(self, w): return False`` in a base class
            tags = {tag for marker in frame.vocab.markers for tag in frame.vocab.marker_tags(marker)}
            return GuardFacts(frozenset((param, tag) for param in params for tag in tags),
                              frozenset(), frozenset(), frozenset(), frozenset())
        return NO_FACTS
    rejects: set = set()
    accepts: set = set()
    undecided: set = set()
    rejects_when: set = set()
    accepts_when: set = set()
    vocab = frame.vocab
    for param in params:
        for marker in sorted(vocab.markers):
            verdict = GuardEvaluator(info, frame.program.index, vocab, calls).evaluate(param, marker)
            tags = vocab.marker_tags(marker)
            if verdict.outcome == REJECTS:
                rejects |= {(param, tag) for tag in tags}
            elif verdict.outcome == ACCEPTS:
                accepts |= {(param, tag) for tag in tags}
            elif verdict.outcome == UNDECIDED:
                named = _decided_by_name(frame, calls, param, marker, [p for p in params if p != param])
                if named is not None:
                    outcome, tests = named
                    (rejects_when if outcome == REJECTS else accepts_when).update((param, tag, tests) for tag in tags)
                else:
                    undecided |= {(param, tag, verdict.why) for tag in tags}
    return GuardFacts(frozenset(rejects), frozenset(accepts), frozenset(undecided),
                      frozenset(rejects_when), frozenset(accepts_when))


def _decided_by_name(frame: Any, calls: CallFacts, param: int, marker: str,
                     others: list[int]) -> tuple[str, frozenset] | None:
    """A guard the evaluation could not decide because it reads the marker through a name
    it is given (``getattr(t, attr, False)``, ``getattr(t, self.attr, False)``): the verdict
    once that name (a parameter, or a field of the receiver its constructor sets) is
    ``marker``, when that decides it, with the test the caller's argument (or the object
    passed as the receiver) must pass. Only the names the body hands to
    ``getattr``/``hasattr`` are tried (at most a few: a guard takes one)."""
    info = frame.info
    index = frame.program.index
    for key in _name_sources(info, others)[:MAX_NAME_SOURCES]:
        verdict = GuardEvaluator(info, index, frame.vocab, calls).evaluate(param, marker, {key: marker})
        if verdict.outcome not in (REJECTS, ACCEPTS):
            continue
        if isinstance(key, tuple):
            known, default = field_by_default(index, info.class_qualname, key[1]) if info.class_qualname else (False, None)
            test = ParamTest(0, FIELD, (key[1], marker), known, default)
        else:
            test = ParamTest(key, EQ, marker, key in frame.defaults, frame.defaults.get(key))
        return verdict.outcome, frozenset({test})
    return None


MAX_NAME_SOURCES = 3


def _name_sources(info: Any, candidates: list[int]) -> list:
    """Of ``candidates``, the parameters the body passes to ``getattr``/``hasattr`` as the
    attribute's name, and (``("field", attr)``) the receiver's fields it passes so."""
    names = {info.params[p]: p for p in candidates}
    receiver = info.params[0] if info.binds_receiver and info.params else None
    found: list = []
    for node in ast.walk(info.node):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2):
            continue
        name = node.args[1]
        key: Any = None
        if isinstance(name, ast.Name) and name.id in names:
            key = names[name.id]
        elif isinstance(name, ast.Attribute) and isinstance(name.value, ast.Name) and name.value.id == receiver:
            key = ("field", name.attr)
        if key is not None and key not in found:
            found.append(key)
    return sorted(found, key=repr)


def _returns_value(node: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in walk(node))


def _never_approves(node: ast.FunctionDef) -> bool:
    """Does every ``return`` of the function's own body give a false constant (``False``,
    ``None``, ``0``)? Such a predicate rejects every value, marked ones included: a base
    class's default that subclasses override is a guard that never approves."""
    last = node.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Constant) and not last.value.value):
        return False  # the common case, decided without a walk
    todo: list[ast.AST] = list(node.body)
    returns = 0
    while todo:
        current = todo.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(current, ast.Return):
            returns += 1
            if not (isinstance(current.value, ast.Constant) and not current.value.value):
                return False
        elif isinstance(current, (ast.Yield, ast.YieldFrom, ast.Raise)):
            return False
        todo.extend(ast.iter_child_nodes(current))
    return returns > 0


def _touches_markers(frame: Any, node: ast.FunctionDef, calls: CallFacts) -> bool:
    if calls.undecided or any(calls.true_proves.values()) or any(calls.false_proves.values()):
        return True
    return mentions_markers(frame, node)


def mentions_markers(frame: Any, node: ast.AST) -> bool:
    """Does ``node``'s text name a marker (by name, through a module constant or an imported
    one) or read attributes reflectively (``getattr`` with a computed name, ``vars``)?

    The walk of the text is done once per node and vocabulary (``_marker_text``): the
    interpreter asks for every analysis of a function, thousands per run. The index is
    asked about the imported names each time, so an analysis the cache records logs the
    questions its answer depends on."""
    markers = frame.vocab.marker_words
    module = frame.info.module
    named, imported = _marker_text(node, markers, module)
    if named:
        return True
    index = frame.program.index
    for name in imported:
        qualname = index.canonical(module.imports[name])
        known, literal = index.constant(qualname)
        if not known:  # a library's name for its marker (pack ``marker-constants``)
            known, literal = frame.vocab.library_constant(qualname)
        if known and names_marker(literal, markers):
            return True
    return False


_TEXT_SEEN: "weakref.WeakKeyDictionary[ast.AST, tuple]" = weakref.WeakKeyDictionary()


def _marker_text(node: ast.AST, markers: set, module: Any) -> tuple[bool, tuple[str, ...]]:
    """What ``node``'s own text says, without asking the index: whether it names a marker
    (a literal, an attribute, a ``match`` keyword, a module constant) or reads attributes
    reflectively, and else the imported names it uses (in the order met), whose constants
    may name one."""
    seen = _TEXT_SEEN.get(node)
    if seen is not None and seen[0] == markers and seen[1]() is module:
        return seen[2], seen[3]
    named, imported = _walk_marker_text(node, markers, module)
    # The module by a weak reference: it holds the tree that holds ``node``, so a strong one
    # would keep every entry, and each analysis's trees, for the process's life.
    _TEXT_SEEN[node] = (frozenset(markers), weakref.ref(module), named, imported)
    return named, imported


def _walk_marker_text(node: ast.AST, markers: set, module: Any) -> tuple[bool, tuple[str, ...]]:
    imported: dict[str, None] = {}
    for child in walk(node):
        if isinstance(child, ast.Constant) and child.value in markers:
            return True, ()
        if isinstance(child, ast.Attribute) and child.attr in markers:
            return True, ()
        if isinstance(child, ast.Name) and child.id in markers:  # a marked class (``isinstance``)
            return True, ()
        if isinstance(child, ast.MatchClass) and markers.intersection(child.kwd_attrs):
            return True, ()
        if isinstance(child, ast.Name) and child.id in module.constants and names_marker(module.constants[child.id], markers):
            return True, ()
        if isinstance(child, ast.Name) and module.variable_classes.get(child.id) == "operator.attrgetter":
            return True, ()  # a module's attribute getter (``_marker_of = operator.attrgetter(M)``) reads reflectively
        if isinstance(child, ast.Name) and child.id in module.imports:
            imported[child.id] = None
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in ("getattr", "hasattr", "vars"):
            if child.func.id == "vars" or (len(child.args) > 1 and not isinstance(child.args[1], ast.Constant)):
                return True, ()
    return False, tuple(imported)
