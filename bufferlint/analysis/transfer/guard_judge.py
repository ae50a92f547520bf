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

from bufferlint.analysis.frontend.syntax import walk
from bufferlint.analysis.transfer.guard_eval import ACCEPTS, REJECTS, UNDECIDED, GuardEvaluator
from bufferlint.analysis.transfer.guard_expressions import CallFacts, names_marker


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
    return any(isinstance(n, ast.Return) and n.value is not None for n in walk(node))


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
        known, literal = index.constant(index.canonical(module.imports[name]))
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
        if isinstance(child, ast.Name) and child.id in module.imports:
            imported[child.id] = None
        if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in ("getattr", "hasattr", "vars"):
            if child.func.id == "vars" or (len(child.args) > 1 and not isinstance(child.args[1], ast.Constant)):
                return True, ()
    return False, tuple(imported)
