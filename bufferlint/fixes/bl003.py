"""BL003 fix: keep an owned copy instead of the borrowed view.

At a store the finding points at, the stored value gets ``.clone()``:

* ``cache[k] = w`` -> ``cache[k] = w.clone()`` (also ``self.x[k] = w``, ``param.data = w``,
  ``pending.setdefault(k, {})["w"] = w``, annotated assignments);
* ``kept.append(w.narrow(0, 0, 1))`` -> ``kept.append(w.narrow(0, 0, 1).clone())`` (also
  ``add``, ``appendleft``, ``insert`` and ``setdefault``'s default: the argument the engine
  treats as stored);
* ``module.weight = nn.Parameter(w, ...)`` -> ``nn.Parameter(w.clone(), ...)``: a
  ``Parameter``/``Buffer`` wraps its data without copying, and the clone goes inside so the
  stored object is still a ``Parameter``.

Only values that are tensors by their shape are cloned: a name, attribute or subscript, or
a call the vocabulary lists as returning a view of its input (``w.narrow(...)``,
``w.t()``, ...). No fix is offered when the value may be something else -- a tuple, list or
dict display (``(w, scale)``: which element is borrowed is not known here), a name bound
to one in the same function, a call the packs' ``not-one-value`` lists (a view returning
several tensors, ``w.chunk(2)``; a NumPy array or ``memoryview``), an arbitrary call -- nor
for the findings that are not a store:
materialising a stream (``list(weights)``: the fix is to consume or clone while iterating)
and returning a view after its loop moved on.

The fix is ``unsafe``: it changes memory use and timing (every kept view becomes an owned
copy, allocated and filled at the store, and a cache that holds many tensors now holds
their bytes), and it assumes the value is a tensor, which the analysis does not check.
Having the producer hand out owned tensors (``stream_files(..., owned=True)``,
runai-model-streamer >= 0.17) is the alternative that costs no extra copy.
"""

from __future__ import annotations

import weakref

import libcst as cst

# The catalog rule these fixes repair, re-exported: fixes/planners.py looks fixers up by it.
from bufferlint.catalog.bl003 import RULE as RULE
from bufferlint.catalog.words import kind_for
from bufferlint.findings import Finding, Fix
from bufferlint.fixes import materialisation
from bufferlint.fixes.base import UNSAFE, FixContext, SourceModule, dotted_name
from bufferlint.packs import Vocabulary

# Container methods whose argument the engine treats as stored: name -> positional index
# (None: the last positional argument).
STORE_METHODS: dict[str, int | None] = {"append": None, "add": None, "appendleft": None, "insert": 1, "setdefault": 1}
# Constructors that wrap a tensor's storage without copying: the clone goes on their data.
WRAPPERS = {"Parameter": "data", "Buffer": "data"}
# Calls and displays that make containers, for names bound to them.
CONTAINER_CALLS = {
    "list", "dict", "tuple", "set", "frozenset", "sorted", "zip", "enumerate", "map", "filter",
    "reversed", "iter", "defaultdict", "OrderedDict", "deque", "Counter",
}
CONTAINER_NODES = (
    cst.Tuple, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
)


def candidates(finding: Finding, source_text: str, context: FixContext) -> list[Fix]:
    kind = kind_for(finding, context.vocab)
    if kind is None or not kind.copy:
        return []  # how to copy a value of this kind is not known
    src = context.source(source_text)
    value = _stored_value(src, finding)
    if value is None:
        return materialisation.candidates(finding, src, kind)
    parts = _borrowed_parts(src, value, finding)
    targets = [_clone_target(src, part, context) for part in parts]
    if not targets or None in targets:
        return []
    edits = tuple(edit for target in targets for edit in materialisation.copy_edits(src, target, kind))
    shown = [src.code(t) for t in targets if src.range(t).start.line == src.range(t).end.line]
    what = f"`{kind.copy_of(shown[0])}`" if len(shown) == 1 and len(shown[0]) <= 60 else "copy the stored value"
    return [Fix(UNSAFE, f"Keep an owned copy: {what} at the store", edits)]


def _borrowed_parts(src: SourceModule, value: cst.BaseExpression, finding: Finding) -> list[cst.BaseExpression]:
    """The stored value, or the elements of a stored display that hold the borrowed values:
    of a tuple, those at the positions the engine reports (``items:1``); of a dict or list
    display, the names the enclosing loop binds to borrowed parts of its stream's elements."""
    if isinstance(value, (cst.Dict, cst.List)) and not finding.subject:
        elements = [e.value for e in value.elements if isinstance(e, (cst.DictElement, cst.Element))]
        names = materialisation.borrowed_loop_names(src, value, finding)
        return [e for e in elements if isinstance(e, cst.Name) and e.value in names]
    if not finding.subject.startswith("items:"):
        return [value]
    if not isinstance(value, cst.Tuple) or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return []
    positions = [int(p) for p in finding.subject[len("items:"):].split(",")]
    if max(positions) >= len(value.elements):
        return []
    return [value.elements[p].value for p in positions]


# -- the stored value ----------------------------------------------------------------------


def _stored_value(src: SourceModule, finding: Finding) -> cst.BaseExpression | None:
    """The value the finding's store keeps: the right-hand side of the assignment whose span
    the finding is, or the stored argument of the container-method call whose span it is."""
    for stmt in materialisation.exact_nodes(src, cst.Assign, finding) + materialisation.exact_nodes(src, cst.AnnAssign, finding):
        return stmt.value
    for call in materialisation.exact_nodes(src, cst.Call, finding):
        if not isinstance(call.func, cst.Attribute):
            continue  # `list(weights)`: a materialisation, not a store
        position = STORE_METHODS.get(call.func.attr.value, -1)
        if position == -1 or any(arg.star for arg in call.args):
            continue
        positional = [arg for arg in call.args if arg.keyword is None]
        if not positional:
            continue
        index = len(positional) - 1 if position is None else position
        if index < len(positional):
            return positional[index].value
    return None


def _clone_target(src: SourceModule, value: cst.BaseExpression, context: FixContext, depth: int = 0):
    """The expression to append ``.clone()`` to, or None when ``value`` may not be one tensor."""
    if depth > 3:
        return None
    if isinstance(value, cst.Name):
        return None if value.value in ("None", "True", "False") or _bound_to_container(src, value, context.vocab) else value
    if isinstance(value, (cst.Attribute, cst.Subscript)):
        return value
    if not isinstance(value, cst.Call) or any(arg.star for arg in value.args):
        return None
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    if name is None:
        return None
    if name in WRAPPERS:
        data = _data_argument(value, WRAPPERS[name])
        return _clone_target(src, data, context, depth + 1) if data is not None else None
    if not_one_value(src, func, context.vocab):
        return None
    if name in {pattern.last_name for pattern in context.vocab.views}:
        return value
    return None


def _data_argument(call: cst.Call, keyword: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None]
    return positional[0].value if positional else None


def not_one_value(src: SourceModule, func: cst.BaseExpression, vocab: Vocabulary) -> bool:
    """Does the vocabulary's ``not-one-value`` list the called ``func``? ``.name`` entries
    match the called name, others the qualified name (through the module's imports:
    ``np.frombuffer`` is ``numpy.frombuffer``), ``pkg.*`` every function of ``pkg``."""
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if any(entry == "." + last for entry in vocab.not_one_value):
        return True
    dotted = dotted_name(func)
    if dotted is None:
        return False
    head, _, rest = dotted.partition(".")
    imported = src.imported_names().get(head)
    qualname = f"{imported}.{rest}" if imported and rest else imported or dotted
    return any(
        qualname.startswith(entry[:-1]) if entry.endswith(".*") else qualname == entry
        for entry in vocab.not_one_value
        if not entry.startswith(".")
    )


def _bound_to_container(src: SourceModule, name: cst.Name, vocab: Vocabulary) -> bool:
    """Is ``name`` assigned a container (display, comprehension, ``list(...)``, a view that
    returns several tensors) anywhere in its function?"""
    scope = next((a for a in src.ancestors(name) if isinstance(a, (cst.FunctionDef, cst.Lambda))), src.tree)
    for value in _assigned_values(src, scope).get(name.value, ()):
        if isinstance(value, CONTAINER_NODES):
            return True
        if isinstance(value, cst.Call):
            func = value.func
            last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if last in CONTAINER_CALLS or not_one_value(src, func, vocab):
                return True
    return False


# SourceModule -> {function node -> its assignments}; nodes hash by identity, like the parent map.
_ASSIGNED: "weakref.WeakKeyDictionary[SourceModule, dict]" = weakref.WeakKeyDictionary()


def _assigned_values(src: SourceModule, scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """Name -> the values assigned to it directly in ``scope`` (not in nested functions):
    one walk of the function per file, however many of its findings ask (a loader with
    dozens of retained weights asks once per weight)."""
    per_scope = _ASSIGNED.setdefault(src, {})
    values = per_scope.get(scope)
    if values is not None:
        return values
    values = per_scope[scope] = {}
    for node in src.descendants(scope):
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            targets = [node.target]
        names = [t.value for t in targets if isinstance(t, cst.Name)]
        if names and node.value is not None and _scope_of(src, node) is scope:
            for target in names:
                values.setdefault(target, []).append(node.value)
    return values


def _scope_of(src: SourceModule, node: cst.CSTNode) -> cst.CSTNode:
    return next((a for a in src.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))), src.tree)
