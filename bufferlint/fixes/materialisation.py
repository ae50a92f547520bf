"""BL003 fix for a materialised stream (``list(weights)``, ``dict(weights)``, a comprehension
over the stream): copy each element's borrowed part while iterating, so what is kept owns its
memory. Which part of an element is borrowed comes from the producer's ``produces`` shape in
the pack (``iter[tuple[_, borrowed]]``: the second item of each pair), reported by the engine
in the finding's trace."""

from __future__ import annotations

import libcst as cst

from bufferlint.findings import Edit, Finding, Fix
from bufferlint.fixes.base import UNSAFE, SourceModule
from bufferlint.packs import BorrowKind, Shape

COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def exact_nodes(src: SourceModule, kind: type, finding: Finding) -> list[cst.CSTNode]:
    """The nodes of type ``kind`` whose range is exactly the finding's span."""
    span = finding.span
    start, end = (span.line, span.column - 1), (span.end_line, span.end_column - 1)
    found = []
    for node in src.walk(kind):
        where = src.range(node)
        if ((where.start.line, where.start.column), (where.end.line, where.end.column)) == (start, end):
            found.append(node)
    return found


def candidates(finding: Finding, src: SourceModule, kind: BorrowKind) -> list[Fix]:
    element = _element_shape(finding)
    if element is None:
        return []
    for node in exact_nodes(src, cst.Call, finding):
        fix = _copying_call(src, node, element, kind)
        return [fix] if fix is not None else []
    for node in exact_nodes(src, cst.BaseExpression, finding):
        if isinstance(node, COMPREHENSIONS):
            fix = _copying_comprehension(src, node, element, kind)
            return [fix] if fix is not None else []
    return []


def borrowed_loop_names(src: SourceModule, node: cst.CSTNode, finding: Finding) -> set[str]:
    """The names the loop around ``node`` binds to the borrowed parts of each element
    (``for name, weight in stream`` with pairs ``(_, borrowed)``: ``weight``)."""
    element = _element_shape(finding)
    names = _names(element) if element is not None else None
    loop = next((a for a in src.ancestors(node) if isinstance(a, cst.For)), None)
    if names is None or loop is None:
        return set()
    bound = [loop.target] if isinstance(loop.target, cst.Name) else [e.value for e in getattr(loop.target, "elements", ())]
    if len(bound) != len(names) or not all(isinstance(b, cst.Name) for b in bound):
        return set()
    return {b.value for b, (_, borrowed) in zip(bound, names) if borrowed}


def _element_shape(finding: Finding) -> Shape | None:
    """What each element of the stream is, from the producer the trace starts at."""
    fact = next((step.fact for step in finding.trace if step.fact[:1] == ("source",)), ())
    if len(fact) < 3:
        return None
    shape = Shape.parse(fact[2])
    return shape.items[0] if shape.kind in ("iter", "list") else None


def copying_element(names: list[tuple[str, bool]], kind: BorrowKind) -> tuple[str, str]:
    """(the element expression with its borrowed parts copied, the loop target)."""
    parts = [kind.copy_of(name) if borrowed else name for name, borrowed in names]
    item = parts[0] if len(parts) == 1 else f"({', '.join(parts)})"
    return item, ", ".join(name for name, _ in names)


def copying_generator(finding: Finding, stream: str, kind: BorrowKind) -> str | None:
    """``(value.clone() for value in <stream>)`` for the stream's element shape, if known."""
    element = _element_shape(finding)
    names = _names(element) if element is not None else None
    if names is None:
        return None
    item, target = copying_element(names, kind)
    return f"({item} for {target} in {stream})"


def _names(element: Shape) -> list[tuple[str, bool]] | None:
    """(name, borrowed) for each part of an element: one name, or one per tuple item."""
    if element.kind == "borrowed":
        return [("value", True)]
    if element.kind != "tuple" or any(item.kind not in ("owned", "borrowed") for item in element.items):
        return None
    borrowed = [i for i, item in enumerate(element.items) if item.kind == "borrowed"]
    names = []
    for i, item in enumerate(element.items):
        if item.kind == "borrowed":
            names.append(("value" if len(borrowed) == 1 else f"value{i}", True))
        else:
            names.append(("name" if i == 0 else f"item{i}", False))
    return names if borrowed else None


def _copying_call(src: SourceModule, call: cst.Call, element: Shape, kind: BorrowKind) -> Fix | None:
    """``list(ws)`` -> ``[(name, value.clone()) for name, value in ws]``; ``dict``, ``tuple``
    and ``sorted`` likewise (the other arguments of ``sorted`` are kept)."""
    func = call.func.value if isinstance(call.func, cst.Name) else None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    names = _names(element)
    if func not in ("list", "tuple", "dict", "sorted") or not positional or names is None:
        return None
    if func != "sorted" and len(call.args) != 1:
        return None
    stream = src.code(positional[0].value)
    item, target = copying_element(names, kind)
    parts = [kind.copy_of(name) if borrowed else name for name, borrowed in names]
    if func == "list":
        text = f"[{item} for {target} in {stream}]"
    elif func == "tuple":
        text = f"tuple({item} for {target} in {stream})"
    elif func == "dict":
        if len(parts) != 2:
            return None
        text = f"{{{parts[0]}: {parts[1]} for {target} in {stream}}}"
    else:
        where = src.range(positional[0].value)
        edit = Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1,
                    f"({item} for {target} in {stream})")
        return Fix(UNSAFE, f"Copy each element while sorting: {kind.copy_of('value')}", (edit,))
    where = src.range(call)
    edit = Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, text)
    return Fix(UNSAFE, f"Keep owned copies: {kind.copy_of('value')} for each element", (edit,))


def _copying_comprehension(src: SourceModule, node, element: Shape, kind: BorrowKind) -> Fix | None:
    """``[(n, w) for n, w in ws if ...]`` -> ``[(n, w.clone()) for n, w in ws if ...]``: the
    names the target binds to the borrowed parts are copied where the result keeps them."""
    names = _names(element)
    clauses = []
    clause = node.for_in
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    if names is None or len(clauses) != 1:
        return None
    target = clauses[0].target
    bound = [target] if isinstance(target, cst.Name) else [e.value for e in getattr(target, "elements", ())]
    if len(bound) != len(names) or not all(isinstance(b, cst.Name) for b in bound):
        return None
    borrowed = {b.value for b, (_, is_borrowed) in zip(bound, names) if is_borrowed}
    kept = node.value if isinstance(node, cst.DictComp) else node.elt
    parts = kept.elements if isinstance(kept, cst.Tuple) else None
    candidates = [e.value for e in parts] if parts is not None else [kept]
    targets = [c for c in candidates if isinstance(c, cst.Name) and c.value in borrowed]
    if not targets:
        return None
    edits = tuple(edit for name in targets for edit in copy_edits(src, name, kind))
    return Fix(UNSAFE, f"Keep owned copies: {kind.copy_of('value')} for each element", edits)


def copy_edits(src: SourceModule, target: cst.BaseExpression, kind: BorrowKind) -> tuple[Edit, ...]:
    """The edits that turn ``target`` into the kind's copy of it (``w.clone()``, ``bytes(w)``)."""
    where = src.range(target)
    prefix, suffix = kind.copy.split("{}")
    start, end = (where.start.line, where.start.column + 1), (where.end.line, where.end.column + 1)
    edits = (Edit(*start, *start, prefix),) if prefix else ()
    return edits + ((Edit(*end, *end, suffix),) if suffix else ())
