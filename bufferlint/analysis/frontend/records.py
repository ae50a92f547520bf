"""Record classes: ``typing.NamedTuple`` subclasses and ``@dataclass`` classes, whose
constructor the language writes from the class's annotated fields, and named tuples made by
a call (``namedtuple("Pair", "name tensor")``), read as the class statement they stand for.

A loader that wraps each weight in ``Item(name, tensor)`` or ``Entry(name=..., tensor=...)``
and submits or keeps the record hands on the view inside it. No ``__init__`` in the source
stores the fields, so the analysis reads the constructor's signature here instead: the
fields in parameter order, and how many of them may be passed by position. The analysis
then builds the record as a value with one part per field (``transfer.records``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from bufferlint.analysis.frontend.index import ClassInfo, ModuleInfo, ProjectIndex

# ``index.base_name``: the qualname a name or dotted attribute names in a module (passed in,
# since the index asks this module and this module asks nothing else of it)
Resolve = Callable[["ModuleInfo", ast.expr], "str | None"]

NAMED_TUPLE_BASES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "pydantic.dataclasses.dataclass"})
NOT_FIELDS = frozenset({"typing.ClassVar", "typing_extensions.ClassVar"})  # class attributes
KW_ONLY_MARKERS = frozenset({"dataclasses.KW_ONLY"})  # ``_: KW_ONLY``: later fields by keyword only

# (field names in the constructor's parameter order, how many may be passed by position)
RecordShape = tuple[tuple[str, ...], int]
# ``Pair = namedtuple("Pair", "name tensor")``, ``NamedTuple("Pair", [("name", str), ...])``
FUNCTIONAL_RECORDS = frozenset({"collections.namedtuple", *NAMED_TUPLE_BASES})


def functional_record(module: "ModuleInfo", stmt: ast.Assign, resolve: Resolve) -> ast.ClassDef | None:
    """The class statement a functional named tuple assignment stands for (``Pair =
    namedtuple("Pair", "name tensor")`` is ``class Pair(NamedTuple)`` with the fields
    ``name`` and ``tensor``), so the index holds it as any record class; None for any other
    assignment, and for field names not written as literals."""
    call = stmt.value
    if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and isinstance(call, ast.Call)):
        return None
    return record_class(module, stmt.targets[0].id, call, resolve)


def record_class(module: "ModuleInfo", name: str, call: ast.expr, resolve: Resolve) -> ast.ClassDef | None:
    """The class statement ``namedtuple("Pair", "name tensor")`` (or ``NamedTuple(...)``)
    stands for, called ``name``: what an assignment of it binds, or the base a class derives
    from (``class Named(namedtuple("Named", "name tensor")): ...``); None for any other
    expression, and for field names not written as literals."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute))):
        return None
    if resolve(module, call.func) not in FUNCTIONAL_RECORDS:
        return None
    given = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg in ("field_names", "fields")), None)
    names = _field_names(given)
    if names is None:
        return None
    fields: list[ast.stmt] = [
        ast.copy_location(ast.AnnAssign(ast.Name(field, ast.Store()), ast.Name("object", ast.Load()), None, 1), call)
        for field in names
    ]
    record = ast.ClassDef(name=name, bases=[], keywords=[], body=fields or [ast.Pass()], decorator_list=[])
    return ast.fix_missing_locations(ast.copy_location(record, call))


def _field_names(given: ast.expr | None) -> list[str] | None:
    """``"a b"``, ``"a, b"``, ``["a", "b"]`` or ``[("a", int), ("b", T)]``: the names."""
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        return given.value.replace(",", " ").split()
    if not isinstance(given, (ast.List, ast.Tuple)):
        return None
    names = []
    for element in given.elts:
        if isinstance(element, ast.Tuple) and element.elts:
            element = element.elts[0]
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return None
        names.append(element.value)
    return names


def record_shape(index: "ProjectIndex", class_qualname: str, resolve: Resolve) -> RecordShape | None:
    """The generated constructor of a record class; None for any other class, and for a
    record whose project hierarchy defines ``__init__`` (the source then says what it does)."""
    info = index.classes.get(index.canonical(class_qualname))
    if info is None:
        return None
    lineage = [index.classes[name] for name in reversed(index.class_ancestors(info.qualname)) if name in index.classes]
    named_tuple = [a for a in lineage if any(base in NAMED_TUPLE_BASES for base in a.bases)]
    if named_tuple:  # its fields are those of the class that names NamedTuple as its base
        names = _annotated_fields(named_tuple[0], resolve)
        return tuple(name for name, _ in names), len(names)
    for nearest in reversed(lineage):  # the class whose ``__init__`` a call runs
        if "__init__" in nearest.methods:
            return None
        if _is_dataclass(index, nearest, resolve):
            break
    else:
        return None
    fields: dict[str, bool] = {}  # name -> keyword-only; bases first, an override keeps its place
    for ancestor in lineage[: lineage.index(nearest) + 1]:
        if _dataclass_decorator(index, ancestor, resolve) is not None:
            for name, keyword_only in _annotated_fields(ancestor, resolve, _decorator_flag(index, ancestor, resolve, "kw_only")):
                fields[name] = keyword_only
    ordered = [name for name, keyword_only in fields.items() if not keyword_only]
    return tuple(ordered + [name for name, keyword_only in fields.items() if keyword_only]), len(ordered)


def _annotated_fields(info: "ClassInfo", resolve: Resolve, keyword_only: bool = False) -> list[tuple[str, bool]]:
    """The class body's own ``name: T`` fields in order, with whether each is keyword-only;
    ``ClassVar`` attributes and ``field(init=False)`` fields take no parameter."""
    out: list[tuple[str, bool]] = []
    for stmt in info.node.body if info.node is not None else ():
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        annotation = stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation
        kind = resolve(info.module, annotation)
        if kind in KW_ONLY_MARKERS:
            keyword_only = True
            continue
        if kind in NOT_FIELDS or _init_false(stmt.value):
            continue
        out.append((stmt.target.id, keyword_only))
    return out


def _init_false(value: ast.expr | None) -> bool:
    """``field(init=False)``: the constructor takes no parameter for it."""
    return isinstance(value, ast.Call) and any(
        k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in value.keywords
    )


def _is_dataclass(index: "ProjectIndex", info: "ClassInfo", resolve: Resolve) -> bool:
    """Decorated ``@dataclass`` or ``@dataclass(...)``, with the generated ``__init__``."""
    return _dataclass_decorator(index, info, resolve) is not None and _decorator_flag(index, info, resolve, "init", True)


def _dataclass_decorator(index: "ProjectIndex", info: "ClassInfo", resolve: Resolve) -> ast.expr | None:
    for decorator in info.node.decorator_list if info.node is not None else ():
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = resolve(info.module, target)
        if name is not None and index.canonical(name) in DATACLASS_DECORATORS:
            return decorator
    return None


def _decorator_flag(index: "ProjectIndex", info: "ClassInfo", resolve: Resolve, key: str, default: bool = False) -> bool:
    """A literal flag of ``@dataclass(key=...)``; the default when it is not passed as one."""
    decorator = _dataclass_decorator(index, info, resolve)
    if isinstance(decorator, ast.Call):
        for keyword in decorator.keywords:
            if keyword.arg == key and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, bool):
                return keyword.value.value
    return default
