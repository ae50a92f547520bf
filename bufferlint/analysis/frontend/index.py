"""Per-module facts the interpreter needs to resolve names: module names, imports,
functions and classes (with their bases), and module-level constants (literals, and tuples of them).

Only what is cheap to read from the syntax tree lives here; behaviour lives in summaries.
"""

from __future__ import annotations

import ast
import bisect
import re
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, cast

from bufferlint.analysis.frontend.constants import DeviceObject, static_constant
from bufferlint.analysis.frontend.dispatch import overload_qualname, registered_on
from bufferlint.analysis.frontend.records import RecordShape, functional_record, record_class, record_shape
from bufferlint.analysis.frontend.registrations import keyed_registrations, registered_callables
from bufferlint.analysis.frontend.syntax import dotted_name

SOURCE_DIRS = ("src", "python", "lib")
# `"attr": fn` in a dict display, or `x.attr = fn` (not `==`), optionally through partial(...)
ATTACHMENT = re.compile(
    r"""(?:["'](\w+)["']\s*:|\.(\w+)\s*=(?!=))\s*(?:(?:functools\.)?partial\(\s*)?([A-Za-z_][\w.]*)"""
)


@dataclass
class FunctionInfo:
    qualname: str  # "pkg.mod.Class.method", "pkg.mod.func.<locals>.inner", "pkg.mod.<module>"
    display: str  # "pkg.mod:Class.method"
    node: ast.AST  # FunctionDef, AsyncFunctionDef, Lambda or Module
    module: "ModuleInfo"
    class_qualname: str | None = None
    kind: str = "function"  # "function" | "method" | "staticmethod" | "classmethod" | "module"
    params: list[str] = field(default_factory=list)  # positional-or-keyword then keyword-only
    n_positional: int = 0
    n_required: int = 0  # positional parameters without a default
    required_kwonly: tuple[str, ...] = ()
    vararg: int | None = None
    kwarg: int | None = None
    outer: "FunctionInfo | None" = None
    local_defs: dict[str, str] = field(default_factory=dict)  # nested def name -> qualname
    _generator: bool | None = None
    _assigned: frozenset | None = None
    _globals: frozenset | None = None
    _lambdas: dict[int, str] | None = None
    _closure: bool | None = None
    _captured: tuple[str, ...] | None = None
    _returned_calls: frozenset | None = None
    _returned_globals: frozenset | None = None

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def is_generator(self) -> bool:
        """Computed on first use: only analysed functions need it."""
        if self._generator is None:
            self._read_own_body()
        return bool(self._generator)

    @property
    def assigned(self) -> frozenset:
        """Names the function's own body assigns (closure variables of its nested functions)."""
        if self._assigned is None:
            self._read_own_body()
        assert self._assigned is not None
        return self._assigned

    @property
    def declared_globals(self) -> frozenset:
        """Names the function's own body declares ``global``."""
        if self._globals is None:
            self._read_own_body()
        assert self._globals is not None
        return self._globals

    def _read_own_body(self) -> None:
        """One walk of the body (nested functions excluded) for the facts above: each walk
        visits every node of the function, and analysed functions need all three."""
        generator, assigned, declared = False, set(), set()
        for node in _walk_own_body(self.node):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Store):
                    assigned.add(node.id)
            elif isinstance(node, (ast.Yield, ast.YieldFrom)):
                generator = True
            elif isinstance(node, ast.Global):
                declared.update(node.names)
        self._generator, self._assigned, self._globals = generator, frozenset(assigned), frozenset(declared)

    @property
    def captured(self) -> tuple[str, ...]:
        """The closure variables of the enclosing function (``outer``) this function's own
        body reads, sorted: the names whose values a call of it made inside the enclosing
        call takes from that call (``CAPTURED``). Empty for a function that nests in none."""
        if self._captured is None:
            outer = self.outer
            found: set[str] = set()
            if outer is not None:
                own = self.assigned | set(self.params) | set(self.local_defs)
                enclosing = outer.assigned | set(outer.params)
                found = {
                    node.id for node in _walk_own_body(self.node)
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own
                    and node.id in enclosing
                }
            self._captured = tuple(sorted(found))
        return self._captured

    def returns_call(self, node: ast.Call) -> bool:
        """Is ``node`` a call of one of the function's parameters, other than its receiver,
        whose result the function returns as it is (``return fn(data, *args)``)? A callback
        called so hands its result to this function's callers (``ParamCall.returned``).
        (``return cls(...)`` in a class method builds an instance: not a callback.)"""
        return id(node) in self._read_returned_calls()

    @property
    def returns_parameter_call(self) -> bool:
        """Does the function return what a call of one of its parameters returns (``return
        function(data)`` in a helper mapping a callback over a collection)? What it returns
        then depends on the callable each caller passes (``call_project._call_back``)."""
        return bool(self._read_returned_calls())

    def _read_returned_calls(self) -> frozenset:
        if self._returned_calls is None:
            params = set(self.params[1:] if self.binds_receiver else self.params)
            self._returned_calls = frozenset(
                id(stmt.value) for stmt in _walk_own_body(self.node)
                if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in params
            )
        return self._returned_calls

    def lambda_name(self, node: ast.Lambda) -> str | None:
        """The qualname of a lambda of this function's own body (``f.<locals>.<lambda0>``,
        numbered in source order, so a line moved above leaves it as it was): the index
        holds it as a function (``ProjectIndex.add_module``), which a call of the lambda's
        value reaches (a callback passed on)."""
        if self._lambdas is None:
            self._lambdas = {id(found): name for found, name in self.own_lambdas()}
        return self._lambdas.get(id(node))

    def own_lambdas(self) -> list[tuple[ast.Lambda, str]]:
        """The lambdas of the function's own body (nested functions' are theirs), in source
        order, each with its qualname."""
        found = sorted((n for n in _own_scopes(self.node) if isinstance(n, ast.Lambda)), key=lambda n: (n.lineno, n.col_offset))
        return [(node, f"{self.qualname}.<locals>.<lambda{i}>") for i, node in enumerate(found)]

    def builds_chosen_class(self) -> bool:
        """Does the function return a call of one of its own variables (``return chosen()``,
        ``return candidate()`` in a loop): a factory that picks the class at run time, whose
        result's classes only its analysis tells (``Value.type_when``)."""
        assigned = self.assigned
        return any(
            isinstance(node, ast.Return) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id in assigned
            for node in _walk_own_body(self.node)
        )

    @property
    def returns_closure(self) -> bool:
        """Does the function return a function it defines (``return _set``, ``return lambda
        ...``, ``return partial(_set, ...)``): a factory whose result is a closure, which its
        callers call later with what it captured (``call_project._with_closure``)?"""
        if self._closure is None:
            self._closure = any(
                isinstance(node, ast.Return) and node.value is not None and self._own_function(node.value)
                for node in _walk_own_body(self.node)
            )
        return self._closure

    @property
    def returned_globals(self) -> frozenset:
        """The module variables a ``return`` of the function's own body hands out a part of
        (``return _POOL[i % len(_POOL)]``, ``return _STAGING``): a pool function whose
        callers get the module's objects (``Program.store_field`` of a module global)."""
        if self._returned_globals is None:
            variables = self.module.variables
            found = set()
            for node in _walk_own_body(self.node):
                if isinstance(node, ast.Return) and node.value is not None:
                    root = _root_variable(node.value)
                    if root is not None and root in variables and root not in self.params:
                        found.add(root)
            self._returned_globals = frozenset(n for n in found if n not in self.assigned or n in self.declared_globals)
        return self._returned_globals

    def _own_function(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Lambda):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.local_defs
        if isinstance(node, ast.Call) and node.args and (dotted_name(node.func) or "").rsplit(".", 1)[-1] == "partial":
            return self._own_function(node.args[0])
        return False

    @property
    def is_async(self) -> bool:
        """An ``async def``: calling it makes a coroutine that holds the arguments until it runs."""
        return isinstance(self.node, ast.AsyncFunctionDef)

    @property
    def binds_receiver(self) -> bool:
        return self.kind in ("method", "classmethod")

    def accepts(self, n_args: int | None, keywords: set[str], bound_receiver: bool) -> bool:
        """Could a call with ``n_args`` positional arguments (None: unknown, starred) and these
        keywords bind to this signature? Used to narrow calls resolved by method name."""
        offset = 1 if bound_receiver and self.binds_receiver else 0
        named = set(self.params)
        if self.kwarg is None and not keywords <= named:
            return False
        if not set(self.required_kwonly) <= keywords and self.kwarg is None:
            return False
        if n_args is None:
            return True
        given = n_args + offset
        covered = given + len(keywords & set(self.params[given:self.n_positional]))
        if covered < self.n_required:
            return False
        return self.vararg is not None or given <= self.n_positional


@dataclass
class ClassInfo:
    qualname: str
    module: "ModuleInfo"
    bases: list[str]  # resolved qualnames where possible
    methods: dict[str, str] = field(default_factory=dict)  # name -> function qualname
    # attribute -> expressions naming its class: an annotation, or the constructor called in
    # ``self.attr = Ctor(...)`` / ``self.attr: T = ...`` / ``self.attr = param`` (annotated);
    # ``self.attr = [Ctor(n) for n in names]`` is recorded as the annotation ``list[Ctor]``
    node: ast.ClassDef | None = None
    _fields: dict[str, list[ast.expr]] | None = None
    _readers: dict[str, set[str]] | None = None
    _constants: dict[str, object] | None = None
    _held: dict[str, str] | None = None
    _stores: dict[str, list[tuple[str, ast.expr | None]]] | None = None
    _makers: dict[str, list[ast.expr]] | None = None
    _registrars: dict[str, list[tuple[str, int, str]]] | None = None
    _keyed_registrars: dict[str, list] | None = None  # field -> ``registrations.KeyedRegistrar``s

    @property
    def held(self) -> dict[str, str]:
        """Attributes the class body binds to a function wrapped in ``staticmethod``
        (``guard = staticmethod(checks_marker)``): read on the class or on an instance, the
        function is called without a receiver, as a ``@staticmethod`` is. Attribute -> the
        dotted name of the function (resolved by ``ProjectIndex.class_method``, where every
        module is known). A plain ``guard = f`` is not one: an instance binds ``f`` to itself."""
        if self._held is None:
            self._held = _collect_held(self) if self.node is not None else {}
        return self._held

    @property
    def stores(self) -> dict[str, list[tuple[str, ast.expr | None]]]:
        """Attribute -> each store into ``self.<attr>`` in the class's methods (and of the
        attribute in the class body: ``""``), in order: the method's name and the callee of
        the call whose result it stores (None: another value; a store of None is left out).
        Which objects a field may hold (``ProjectIndex.field_objects``)."""
        if self._stores is None:
            self._stores, self._makers = {}, {}
            if self.node is not None:
                _collect_stores(self.node, self)
        return self._stores

    @property
    def makers(self) -> dict[str, list[ast.expr]]:
        """Method name -> the callees of the calls its every ``return`` hands back (a method
        returning anything else, or nothing, is not here): what a store of its result
        may make (``_make_buffer`` returning ``CpuGpuBuffer(...)``)."""
        if self._makers is None:
            self._stores, self._makers = {}, {}
            if self.node is not None:
                _collect_stores(self.node, self)
        return self._makers

    @property
    def constants(self) -> dict[str, object]:
        """Attributes the class body binds once to a literal (``supports_key_filter:
        ClassVar[bool] = False``): what reading them on the class object gives."""
        if self._constants is None:
            self._constants = _collect_class_constants(self) if self.node is not None else {}
        return self._constants

    @property
    def fields(self) -> dict[str, list[ast.expr]]:
        """Read from the class body on first use: only classes used as receivers need it."""
        if self._fields is None:
            self._fields = {}
            if self.node is not None:
                _collect_fields(self.node, self)
        return self._fields

    @property
    def readers(self) -> dict[str, set[str]]:
        """Attribute -> methods reading ``self.<attr>``; read when something is kept there."""
        if self._readers is None:
            self._readers = {}
            if self.node is not None:
                _collect_readers(self.node, self)
        return self._readers


# What a module's ``NAME = functools.partial(target, ...)`` binds: the target's name, the
# positional and the keyword arguments it presets, each ``(known, literal)``.
PartialBinding = tuple[str, tuple[tuple[bool, object], ...], tuple[tuple[str, tuple[bool, object]], ...]]


@dataclass
class ModuleInfo:
    name: str
    path: Path
    tree: ast.Module
    text: str  # every line ending made "\n" (see __post_init__)
    is_package: bool
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualname
    globals: dict[str, str] = field(default_factory=dict)  # top-level def/class name -> qualname
    constants: dict[str, object] = field(default_factory=dict)  # NAME -> literal
    variables: set[str] = field(default_factory=set)  # names assigned at the top level (module state)
    # NAME -> (a tuple?, the dotted names it is bound to): names bound once at the top level
    # to another name (``FALLBACK = MappedReader``) or a tuple of names (``READERS = (A, B)``).
    bound_names: dict[str, tuple[bool, tuple[str, ...]]] = field(default_factory=dict)
    # NAME -> the class (a dotted name as the module writes it, resolved through its imports)
    # of the object a module variable holds, when it is bound once at the top level to a call
    # of that name or annotated with it (``OUT = queue.Queue()``, ``q: queue.Queue = ...``):
    # what the functions reading it may call on it. "" for a name bound otherwise or again.
    variable_classes: dict[str, str] = field(default_factory=dict)
    # NAME -> what a top-level ``NAME = functools.partial(target, ...)`` binds, the module's
    # own alias of a callable with arguments preset (``open_streaming = partial(safe_open,
    # copy=False)``): (the target's dotted name through the imports, the positional and the
    # keyword arguments, each ``(known, literal)``). None for a name bound again.
    partials: dict[str, PartialBinding | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The syntax tree counts "\r\n", "\r" and "\n" as line ends; the engine finds
        # lines by "\n", so a file with CR-only (old Mac) line endings would be one line.
        # Columns are unchanged: line endings only end lines.
        self.text = normalize_newlines(self.text)


# What the engine reads of the index's entries besides their syntax: the facts of a module,
# a function and a class, by attribute. A file's interface for the cache
# (``incremental.interface``) is made of exactly these, so a fact declared here is compared
# there; ``NOT_FACTS`` says why each other field of an entry is none (tests/test_interface.py
# holds every field of an entry to one of the two).
FACTS: dict[type, tuple[str, ...]] = {
    ModuleInfo: ("imports", "globals", "constants", "variables", "bound_names", "variable_classes", "partials"),
    FunctionInfo: ("qualname", "kind", "params", "n_positional", "n_required", "required_kwonly", "vararg", "kwarg",
                   "class_qualname", "outer", "local_defs", "returns_closure", "returned_globals"),
    ClassInfo: ("qualname", "bases", "methods", "fields", "readers", "constants", "held", "stores", "makers"),
}
NOT_FACTS: dict[type, dict[str, str]] = {
    ModuleInfo: {
        "name": "the module of the file the interface is of", "path": "the file the interface is of",
        "is_package": "follows from the path", "tree": "compared as syntax (top-level statements, signatures, "
        "analysed functions' trees)", "text": "compared as the analysed ranges' text and the words functions mention",
    },
    FunctionInfo: {
        "display": "made from the qualname", "module": "the file the interface is of",
        "node": "compared as syntax (its signature and decorators; its whole tree when analysed)",
        "_generator": "read from the body", "_assigned": "read from the body", "_globals": "read from the body",
        "_lambdas": "read from the body (each lambda is an entry of its own)",
        "_closure": "the store of ``returns_closure``",
        "_returned_calls": "read from the body",
        "_returned_globals": "the store of ``returned_globals``",
        "_captured": "read from the body and the enclosing function's (its params and assigned names)",
    },
    ClassInfo: {
        "module": "the file the interface is of", "node": "compared as syntax (keywords, decorators, body)",
        "_fields": "the store of ``fields``", "_readers": "the store of ``readers``",
        "_constants": "the store of ``constants``", "_held": "the store of ``held``",
        "_stores": "the store of ``stores``", "_makers": "the store of ``makers``",
        "_registrars": "read from the methods' bodies (``registrations._read_registrars``)",
        "_keyed_registrars": "read from the methods' bodies (``registrations._read_registrars``)",
    },
}


def normalize_newlines(text: str) -> str:
    """``text`` with "\r\n" and "\r" line endings made "\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """Dotted module name of ``path`` within the project, and whether it is a package.

    Files under ``src/``, ``python/`` or ``lib/`` count from there; namespace packages
    (folders without ``__init__.py``) are accepted, as in PEP 420.
    """
    base = root
    for name in SOURCE_DIRS:
        candidate = root / name
        if candidate.is_dir() and candidate in path.parents:
            base = candidate
            break
    prefix: list[str] = []
    top = base
    while (top / "__init__.py").is_file() and top.parent != top:
        prefix.insert(0, top.name)
        top = top.parent
    try:
        parts = list(path.relative_to(base).with_suffix("").parts)
    except ValueError:
        parts = [path.stem]
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(prefix + parts) or path.stem, is_package


def absolute_module(module: str | None, level: int, current: str, is_package: bool) -> str | None:
    """The absolute name of ``from <level dots><module> import ...`` inside module ``current``
    (None: more dots than packages). Here because module names are the index's business;
    the fixers resolve the imports of the file they edit with it too."""
    if not level:
        return module
    parts = current.split(".") if current else []
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    if module:
        parts.append(module)
    return ".".join(parts) or None


def literal_constant(module: ModuleInfo, node: ast.expr) -> tuple[object] | None:
    """A module constant's value, in a 1-tuple: a literal, a tuple (or list, as a tuple)
    of literals, devices (``constants.DeviceObject``) and names of the module's constants
    assigned before it (``MARKERS = (RUNAI_ATTR, "_other")``), a set of such literals
    (``frozenset({MARKER})``, ``{A, B}``: a frozenset), or a device
    (``constants.static_constant``);
    None for anything else."""
    if isinstance(node, ast.Constant):
        return (node.value,)
    if isinstance(node, ast.Set) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "frozenset"
            and node.func.id not in module.imports and node.func.id not in module.variables and not node.keywords
            and len(node.args) == 1 and isinstance(node.args[0], (ast.Set, ast.Tuple, ast.List))):
        display = node if isinstance(node, ast.Set) else node.args[0]
        members = literal_constant(module, ast.Tuple(elts=display.elts))  # type: ignore[attr-defined]
        if members is None or not isinstance(members[0], tuple) or any(isinstance(v, DeviceObject) for v in members[0]):
            return None
        return (frozenset(members[0]),)
    if isinstance(node, (ast.Tuple, ast.List)):
        items: list[object] = []
        for element in node.elts:
            if isinstance(element, ast.Constant) and not isinstance(element.value, bytes):
                items.append(element.value)
            elif isinstance(element, ast.Name) and isinstance(module.constants.get(element.id), (str, int, bool)):
                items.append(module.constants[element.id])
            elif isinstance(element, ast.Call):  # ``torch.device("cpu")``: a device, not its string
                known, value = static_constant(element, lambda name: _module_constant(module, name), lambda f: _imported(module, f))
                if not (known and isinstance(value, str)):
                    return None
                items.append(DeviceObject(value))
            else:
                return None
        return (tuple(items),)
    if isinstance(node, ast.Call):  # ``CPU = torch.device("cpu")``
        known, value = static_constant(node, lambda name: _module_constant(module, name), lambda f: _imported(module, f))
        return (value,) if known else None
    return None


def _module_constant(module: ModuleInfo, node: ast.expr) -> tuple[bool, object]:
    """A name of the module's constants assigned before (what the index knows so far)."""
    if isinstance(node, ast.Name) and node.id in module.constants:
        return True, module.constants[node.id]
    return False, None


def _imported(module: ModuleInfo, node: ast.expr) -> str | None:
    """The qualified name a dotted expression names through the module's imports."""
    name = dotted_name(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    target = module.imports.get(head)
    return None if target is None else (f"{target}.{rest}" if rest else target)


def import_bindings(module: ModuleInfo, node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """Local names an import statement binds, mapped to qualified names."""
    out: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                out[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                out[head] = head
        return out
    base = absolute_module(node.module, node.level, module.name, module.is_package) or ""
    for alias in node.names:
        if alias.name != "*":
            out[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return out


def _required(args: ast.arguments) -> tuple[int, tuple[str, ...]]:
    n_positional = len(args.posonlyargs) + len(args.args)
    kwonly = tuple(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None)
    return n_positional - len(args.defaults), kwonly


def _params(args: ast.arguments) -> tuple[list[str], int, int | None, int | None]:
    positional = [a.arg for a in args.posonlyargs + args.args]
    names = list(positional)
    vararg = kwarg = None
    if args.vararg:
        vararg = len(names)
        names.append(args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        kwarg = len(names)
        names.append(args.kwarg.arg)
    return names, len(positional), vararg, kwarg


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


LAMBDA = re.compile(r"\blambda\b")


def _root_variable(node: ast.expr) -> str | None:
    """The name ``a.b[c]`` or ``a[i].b`` reads a part of (no call on the way)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


GLOBALS = ".<globals>"


def globals_owner(module: str) -> str:
    """The heap's owner of a module's variables (``Program.store_field``): no class's name."""
    return module + GLOBALS


def _walk_own_body(node: ast.AST) -> list[ast.AST]:
    """The nodes below ``node`` outside nested functions, lambdas and classes (callers only
    read the list)."""
    return _own_body(node)[0]


def _own_scopes(node: ast.AST) -> list[ast.AST]:
    """The nested functions, lambdas and classes met by ``_walk_own_body``."""
    return _own_body(node)[1]


_OWN_BODIES: "weakref.WeakKeyDictionary[ast.AST, tuple[list[ast.AST], list[ast.AST]]]" = weakref.WeakKeyDictionary()


def _own_body(node: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """One walk per node, kept while the tree lives: the index asks several questions of
    each analysed function's body (assigned names, returned calls, lambdas, closures, the
    class facts), six walks of it before (7% of a cold sglang 0.5.23 check, under cProfile). Reads the
    fields directly (``ast.iter_child_nodes`` costs twice as much on the larger trees)."""
    found = _OWN_BODIES.get(node)
    if found is not None:
        return found
    out: list[ast.AST] = []
    scopes: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        for name in current._fields:
            child = getattr(current, name, None)
            if type(child) is list:
                for item in child:
                    if isinstance(item, _NESTED_SCOPES):
                        scopes.append(item)
                    elif isinstance(item, ast.AST):
                        stack.append(item)
                        out.append(item)
            elif isinstance(child, _NESTED_SCOPES):
                scopes.append(child)
            elif isinstance(child, ast.AST):
                stack.append(child)
                out.append(child)
    _OWN_BODIES[node] = found = (out, scopes)
    return found


class Attachment(NamedTuple):
    """A callable stored as an attribute, as the text writes it: ``fn``, or ``self.method``
    of the class ``owner``; and what a ``functools.partial`` around it binds ahead of the
    arguments of a call of the attribute (how many by position, which keywords)."""

    dotted: str
    ahead: int = 0
    keywords: tuple[str, ...] = ()
    owner: str = ""


class AttachedCallable(NamedTuple):
    """A project function or method a call of an attribute may reach, with what a partial
    binds ahead of the call's arguments (their values are not known at the call: the
    attaching code is elsewhere). A method is bound to an instance of its class."""

    info: FunctionInfo
    ahead: int = 0
    keywords: tuple[str, ...] = ()


# ``x.attr = a.fast if overlap else ...``: the attached callable is one of two
CONDITIONAL = re.compile(r"[ \t]+if[ \t]")
# ``loader = fast if overlap else safe``: a local name chosen between callables
CHOSEN_LOCAL = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*[A-Za-z_][\w.]*[ \t]+if[ \t]", re.M)


def _enclosing_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function holding ``line`` (descending only into the nodes that span it)."""
    scope = None
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = node
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is None or first <= line <= (getattr(child, "end_lineno", None) or first):
                stack.append(child)
    return scope


def _parameter_annotation(tree: ast.Module, line: int, name: str) -> ast.expr | None:
    """The annotation of parameter ``name`` of the function holding ``line``, if any."""
    scope = _enclosing_function(tree, line)
    args = scope.args if scope is not None else None
    for arg in (args.posonlyargs + args.args + args.kwonlyargs) if args is not None else ():
        if arg.arg == name:
            return arg.annotation
    return None


def _conditional_choices(tree: ast.Module, line: int, attr: str) -> list[str]:
    """Both branches of ``x.<attr> = a if c else b`` at ``line``, each a dotted name (none
    when a branch is anything else)."""
    scope = _enclosing_function(tree, line) or tree
    for node in ast.walk(scope):
        if (isinstance(node, ast.Assign) and node.lineno <= line <= (node.end_lineno or node.lineno)
                and isinstance(node.value, ast.IfExp)
                and any(isinstance(t, ast.Attribute) and t.attr == attr for t in node.targets)):
            names = [dotted_name(node.value.body), dotted_name(node.value.orelse)]
            return [n for n in names if n is not None] if None not in names else []
    return []


def _local_choices(tree: ast.Module, line: int, name: str) -> list[str]:
    """The dotted names a local variable of the function holding ``line`` may be: what each
    assignment to it writes, a name or either branch of a conditional expression
    (``loader = fast if overlap else safe``); none when some assignment writes anything else
    or the variable is a parameter (what it is is not known)."""
    scope = _enclosing_function(tree, line)
    if scope is None or name in {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}:
        return []
    choices: list[str] = []
    for node in ast.walk(scope):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For)) else []
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        value = getattr(node, "value", None)
        options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        names = [dotted_name(option) for option in options if option is not None]
        if isinstance(node, (ast.AugAssign, ast.For)) or len(names) != len(options) or None in names:
            return []
        choices.extend(n for n in names if n is not None and n not in choices)
    return choices


def _bound_by_partial(tree: ast.Module, line: int, dotted: str) -> tuple[int, tuple[str, ...]]:
    """(positional arguments bound, keywords bound) by the ``partial(dotted, ...)`` whose
    first argument is on ``line``; -1 when not known. Descends only into the nodes that
    span the line, so a module is not walked whole for each attachment."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and node.args and _named(node.func, "partial") and \
                node.args[0].lineno == line and dotted_name(node.args[0]) == dotted:
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                return -1, ()
            return len(node.args) - 1, tuple(k.arg for k in node.keywords if k.arg is not None)
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is None or first <= line <= (getattr(child, "end_lineno", None) or first):
                stack.append(child)
    return -1, ()


def _named(node: ast.expr, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


@dataclass
class ProjectIndex:
    modules: dict[str, ModuleInfo] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    methods_by_name: dict[str, list[str]] = field(default_factory=dict)
    functions_by_node: dict[int, FunctionInfo] = field(default_factory=dict)
    # attribute -> (module, attachment) of callables the project attaches under that name:
    # ``set_weight_attrs(p, {"weight_loader": fn})``, ``p.weight_loader = fn``
    attached: dict[str, list[tuple[ModuleInfo, "Attachment"]]] = field(default_factory=dict)
    _attachments_read: set[str] = field(default_factory=set)  # modules read for attachments
    _attached_memo: dict[str, list["AttachedCallable"]] = field(default_factory=dict)  # attr -> answer
    # module -> (first line, last line, class) of each method, to tell the class of ``self``
    _method_spans: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    _ancestors: dict[str, list[str]] = field(default_factory=dict)
    _field_objects: dict[tuple[str, str], frozenset] = field(default_factory=dict)  # (class, attr) -> answer
    _registered: dict[tuple, frozenset] = field(default_factory=dict)  # (classes, attr) -> handlers
    _keyed: dict[tuple, list] = field(default_factory=dict)  # (classes, attr) -> [(key, function)]
    # the dispatcher as the registering module names it -> its overloads (``frontend.dispatch``)
    _overloads: dict[str, dict[str, None]] = field(default_factory=dict)
    _module_defs: set[str] = field(default_factory=set)  # qualnames the module being added defines
    _descendants: dict[str, list[str]] | None = None  # class -> it and its known subclasses, by name

    def add_module(self, module: ModuleInfo) -> list[FunctionInfo]:
        """Index a parsed module; returns its functions (module body included)."""
        self.modules[module.name] = module
        self._ancestors.clear()  # a base class may be defined here
        self._field_objects.clear()  # ... or a subclass storing into a field
        self._descendants = None
        self._attached_memo.clear()  # the module may attach callables
        self._registered.clear()  # ... or register handlers
        self._keyed.clear()
        self._module_defs = set()
        self._method_spans[module.name] = []
        added: list[FunctionInfo] = []
        top = FunctionInfo(f"{module.name}.<module>", module.name, module.tree, module, kind="module")
        self._register(top, added)
        for stmt in module.tree.body:
            self._index_top_statement(module, stmt)
        self._index_body(module, module.tree.body, module.name, None, top, added)
        if "lambda" in module.text:
            self._index_lambdas(module, added)
        return added

    def _index_lambdas(self, module: ModuleInfo, added: list[FunctionInfo]) -> None:
        """Each lambda is a function of its own (``FunctionInfo.own_lambdas``): a callable
        passed as a callback is called where it is passed (``Summary.calls``). Only the
        functions whose lines hold the word are walked."""
        text = module.text
        lines: list[int] = []
        line, counted = 1, 0
        for match in LAMBDA.finditer(text):
            line += text.count("\n", counted, match.start())
            counted = match.start()
            lines.append(line)
        if not lines:
            return
        pending = list(added)
        while pending:
            outer = pending.pop()
            first = getattr(outer.node, "lineno", 1)
            last = getattr(outer.node, "end_lineno", None) or 10**9
            position = bisect.bisect_left(lines, first)
            if position == len(lines) or lines[position] > last:
                continue
            for node, qualname in outer.own_lambdas():
                names, n_pos, vararg, kwarg = _params(node.args)
                info = FunctionInfo(
                    qualname=qualname, display=f"{module.name}:{qualname[len(module.name) + 1:]}", node=node,
                    module=module, params=names, n_positional=n_pos, n_required=_required(node.args)[0],
                    required_kwonly=_required(node.args)[1], vararg=vararg, kwarg=kwarg,
                    outer=outer if outer.kind != "module" else None,
                )
                self._register(info, added)
                pending.append(info)

    def attachments_in(self, module: ModuleInfo) -> dict[str, list["Attachment"]]:
        """Callables ``module`` attaches under some attribute name: ``{"attr": fn}``,
        ``x.attr = fn``, ``partial(fn, ...)`` of them and ``self.method``, found in the text
        in one pass (cheaper than walking the tree); the tree is read only where a match
        needs it (what a partial binds, the class of ``self``, the choices of a conditional
        expression: ``x.attr = a.fast if overlap else a.safe``, or of a local variable
        assigned one: ``loader = fast if overlap else safe; x.attr = partial(loader, ...)``)."""
        found: dict[str, list[Attachment]] = {}
        text = module.text
        chosen: set[str] | None = None  # local names some line assigns a conditional expression
        line, counted = 1, 0
        for match in ATTACHMENT.finditer(text):
            attr, dotted = match.group(1) or match.group(2), match.group(3)
            head, _, method = dotted.partition(".")
            partial = "partial(" in match.group(0)
            conditional = not partial and CONDITIONAL.match(text, match.end()) is not None
            if not method and not conditional and head not in module.globals and head not in module.imports:
                if chosen is None:
                    chosen = set(CHOSEN_LOCAL.findall(text))
                local = head in chosen
            else:
                local = False
            if not (partial or conditional or local or head in ("self", "cls")):
                found.setdefault(attr, []).append(Attachment(dotted))
                continue
            line += text.count("\n", counted, match.start(3))
            counted = match.start(3)
            ahead, keywords = _bound_by_partial(module.tree, line, dotted) if partial else (0, ())
            if ahead < 0:
                continue  # ``partial(fn, *args)``: what it binds is not known
            if conditional:
                choices = _conditional_choices(module.tree, line, attr)
            elif local:
                choices = _local_choices(module.tree, line, dotted)
            else:
                choices = [dotted]
            for choice in choices:
                attachment = self._attachment(module, line, choice, ahead, keywords)
                if attachment is not None:
                    found.setdefault(attr, []).append(attachment)
        return found

    def _attachment(self, module: ModuleInfo, line: int, dotted: str, ahead: int,
                    keywords: tuple[str, ...]) -> "Attachment | None":
        """The attachment of ``dotted`` at ``line``: a method of ``self``'s class, of a
        parameter's annotated class (``loaders: PooledLoaders``, ``loaders.deferred``), or a
        name of the module."""
        head, _, method = dotted.partition(".")
        if not method:
            return Attachment(dotted, ahead, keywords)
        if "." in method:
            return None  # a method of a field
        owner = ""
        if head in ("self", "cls"):
            owner = self._class_at(module, line)
        elif head not in module.globals and head not in module.imports:
            annotation = _parameter_annotation(module.tree, line, head)
            name = base_name(module, annotation) if annotation is not None else None
            owner = self.canonical(name) if name is not None else ""
        if not owner:
            return Attachment(dotted, ahead, keywords) if head in module.globals or head in module.imports else None
        return Attachment(dotted, ahead, keywords, owner)

    def _class_at(self, module: ModuleInfo, line: int) -> str:
        """The class of the innermost method of ``module`` holding this line ("" if none)."""
        spans = [(first, owner) for first, last, owner in self._method_spans.get(module.name, ()) if first <= line <= last]
        return max(spans)[1] if spans else ""

    def attached_functions(self, attr: str) -> list["AttachedCallable"]:
        """Project functions, and methods of a class its own methods attach (``self.load``),
        stored on objects as ``attr``, each with what a partial binds ahead of the call's
        arguments. A module is read for attachments the first time a name it mentions is
        asked for."""
        if not attr:
            return []
        if attr in self._attached_memo:
            return self._attached_memo[attr]
        if len(self._attachments_read) < len(self.modules):
            for name, module in self.modules.items():
                if name not in self._attachments_read:
                    self._attachments_read.add(name)
                    for name_attached, attachments in self.attachments_in(module).items():
                        self.attached.setdefault(name_attached, []).extend((module, a) for a in attachments)
        found: dict[tuple, AttachedCallable] = {}
        for module, attachment in self.attached.get(attr, ()):
            if attachment.owner:
                qualname = self.class_method(attachment.owner, attachment.dotted.partition(".")[2])
            else:
                name = base_name(module, dotted_expr(attachment.dotted))
                qualname = self.canonical(name) if name else None
            info = self.functions.get(qualname) if qualname is not None else None
            if info is None or info.kind not in (("method", "classmethod") if attachment.owner else ("function",)):
                continue
            found[(info.qualname, attachment.ahead, attachment.keywords)] = \
                AttachedCallable(info, attachment.ahead, attachment.keywords)
        self._attached_memo[attr] = answer = list(found.values())
        return answer

    def _index_top_statement(self, module: ModuleInfo, stmt: ast.stmt) -> None:
        """Imports and constants of a top-level statement, looking into ``if`` (``if
        TYPE_CHECKING:``, elif chains of any length) and ``try`` (try-imports)."""
        stack = [stmt]
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                module.imports.update(import_bindings(module, stmt))
            elif isinstance(stmt, ast.Assign) and (record := functional_record(module, stmt, base_name)) is not None:
                self._add_class(module, record, f"{module.name}.{record.name}", ["typing.NamedTuple"], True)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        _bind_name(module, target.id, stmt.value)
                        _bind_class(module, target.id, stmt.value.func if isinstance(stmt.value, ast.Call) else None)
                        _bind_partial(module, target.id, stmt.value)
                        module.variables.add(target.id)
                        literal = literal_constant(module, stmt.value)
                        if literal is not None:
                            module.constants[target.id] = literal[0]
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
                _bind_name(module, stmt.target.id, stmt.value)
                annotation = stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation
                _bind_class(module, stmt.target.id, annotation)
                _bind_partial(module, stmt.target.id, stmt.value)
                module.variables.add(stmt.target.id)
                literal = literal_constant(module, stmt.value)
                if literal is not None:
                    module.constants[stmt.target.id] = literal[0]
            elif isinstance(stmt, ast.If):
                stack.extend(reversed(stmt.body + stmt.orelse))  # in source order: later bindings win
            elif isinstance(stmt, ast.Try):
                stack.extend(reversed(stmt.body + [s for h in stmt.handlers for s in h.body]))

    def _register(self, info: FunctionInfo, added: list[FunctionInfo]) -> None:
        self.functions[info.qualname] = info
        self.functions_by_node[id(info.node)] = info
        added.append(info)

    def _index_body(self, module, body, prefix, class_info, outer, added) -> None:
        """Index the functions and classes of ``body`` in source order. An explicit stack of
        blocks, not recursion: an elif chain nests as deep as it is long."""
        blocks = [(iter(body), prefix, class_info, outer)]
        while blocks:
            statements, prefix, class_info, outer = blocks[-1]
            stmt = next(statements, None)
            if stmt is None:
                blocks.pop()
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info = self._index_function(module, stmt, prefix, class_info, outer, added)
                blocks.append((iter(stmt.body), f"{info.qualname}.<locals>", None, info))
            elif isinstance(stmt, ast.ClassDef):
                qualname = f"{prefix}.{stmt.name}"
                bases = [self._record_base(module, qualname, b) or base_name(module, b) for b in stmt.bases]
                top = class_info is None and outer is not None and outer.kind == "module"
                info = self._add_class(module, stmt, qualname, [b for b in bases if b], top)
                blocks.append((iter(stmt.body), qualname, info, outer))
            elif class_info is None:
                blocks.append((iter(nested_statements(stmt)), prefix, class_info, outer))

    def _record_base(self, module: ModuleInfo, qualname: str, base: ast.expr) -> str | None:
        """``class Named(namedtuple("Named", "name tensor"))``: the record class the base
        expression makes, indexed under a name of its own (None: the base is no such call)."""
        record = record_class(module, "<record base>", base, base_name)
        if record is None:
            return None
        self._add_class(module, record, f"{qualname}.<record base>", ["typing.NamedTuple"], False)
        return f"{qualname}.<record base>"

    def _add_class(self, module: ModuleInfo, node: ast.ClassDef, qualname: str, bases: list[str], top: bool) -> ClassInfo:
        info = ClassInfo(qualname, module, bases)
        self.classes[qualname] = info
        if top:
            module.globals[node.name] = qualname
        info.node = node
        return info

    def _index_function(self, module, node, prefix, class_info, outer, added) -> FunctionInfo:
        """Register one function (its body is indexed by the caller)."""
        kind = "function"
        if class_info is not None:
            decorators = decorator_names(node)
            kind = "staticmethod" if "staticmethod" in decorators else "classmethod" if "classmethod" in decorators else "method"
        qualname = f"{prefix}.{node.name}"
        top_level = class_info is None and outer is not None and outer.kind == "module"
        dispatcher = registered_on(module, node, base_name) if top_level else None
        if dispatcher is not None:  # an overload, usually one of several named ``_``
            qualname = overload_qualname(qualname, self._module_defs.__contains__)
            self._overloads.setdefault(dispatcher, {})[qualname] = None
        self._module_defs.add(qualname)
        names, n_pos, vararg, kwarg = _params(node.args)
        display_path = qualname[len(module.name) + 1:] if qualname.startswith(module.name + ".") else qualname
        info = FunctionInfo(
            qualname=qualname,
            display=f"{module.name}:{display_path}",
            node=node,
            module=module,
            class_qualname=class_info.qualname if class_info else None,
            kind=kind,
            params=names,
            n_positional=n_pos,
            n_required=_required(node.args)[0],
            required_kwonly=_required(node.args)[1],
            vararg=vararg,
            kwarg=kwarg,
            outer=outer if outer is not None and outer.kind != "module" else None,
        )
        self._register(info, added)
        if class_info is not None:
            class_info.methods[node.name] = qualname
            self._method_spans[module.name].append((node.lineno, node.end_lineno or node.lineno, class_info.qualname))
            self.methods_by_name.setdefault(node.name, []).append(qualname)
        elif outer is not None and outer.kind == "module":
            module.globals[node.name] = qualname
        elif outer is not None:
            outer.local_defs[node.name] = qualname
        return info

    # -- resolution -------------------------------------------------------------------

    def canonical(self, qualname: str, depth: int = 0) -> str:
        """Follow re-exports (``from .impl import f`` in a package) to the defining name."""
        if depth > 8 or qualname in self.functions or qualname in self.classes or qualname in self.modules:
            return qualname
        module_name, _, attr = qualname.rpartition(".")
        while module_name:
            module = self.modules.get(module_name)
            if module is not None:
                head, _, rest = attr.partition(".")
                target = module.imports.get(head) or module.globals.get(head)
                if target and target != qualname:
                    return self.canonical(target + ("." + rest if rest else ""), depth + 1)
                return qualname
            module_name, _, prefix = module_name.rpartition(".")
            attr = f"{prefix}.{attr}"
        return qualname

    def constant(self, qualname: str) -> tuple[bool, object]:
        qualname = self.canonical(qualname)
        module_name, _, name = qualname.rpartition(".")
        module = self.modules.get(module_name)
        if module is not None and name in module.constants:
            return True, module.constants[name]
        return False, None

    def partial_binding(self, qualname: str) -> PartialBinding | None:
        """What a module name bound to ``functools.partial(target, ...)`` is (``ModuleInfo.partials``):
        the target's canonical name and the arguments it presets; None for any other name."""
        qualname = self.canonical(qualname)
        module_name, _, name = qualname.rpartition(".")
        module = self.modules.get(module_name)
        bound = module.partials.get(name) if module is not None else None
        if bound is None:
            return None
        target, positional, keywords = bound
        return self.canonical(target), positional, keywords

    def class_values(self, qualname: str) -> tuple[bool, tuple[str, ...]] | None:
        """The project classes a name is: a class itself, or a module name bound once to
        one (an alias) or to a tuple of them (``(True, classes)``). None when it is not, or
        when some element is not a project class (what it is is not known)."""
        qualname = self.canonical(qualname)
        if qualname in self.classes:
            return False, (qualname,)
        module_name, _, name = qualname.rpartition(".")
        module = self.modules.get(module_name)
        bound = module.bound_names.get(name) if module is not None else None
        if bound is None:
            return None
        classes = tuple(self.canonical(dotted) for dotted in bound[1])
        if not classes or any(c not in self.classes for c in classes):
            return None
        return bound[0], classes

    def class_constant(self, class_qualname: str, attr: str, depth: int = 0) -> tuple[bool, object]:
        """The literal ``attr`` is on the class object, its own or inherited (bases in
        order, depth first); not known when a method of that name, or a base that is not
        the project's (it may define it) comes first."""
        info = self.classes.get(self.canonical(class_qualname))
        if info is None or depth > 10 or attr in info.methods or attr in info.held:
            return False, None
        if attr in info.constants:
            return True, info.constants[attr]
        for base in info.bases:
            if self.canonical(base) not in self.classes:
                if base in NEUTRAL_BASES:
                    continue
                return False, None
            known = self.class_constant(base, attr, depth + 1)
            if known[0]:
                return known
        return False, None

    def class_method(self, class_qualname: str, name: str, depth: int = 0) -> str | None:
        """A method looked up through the project's class hierarchy (MRO by depth-first),
        or the project function a class attribute holds as a static method (``held``; None
        when what it holds is not a project function: it hides the bases' all the same)."""
        info = self.classes.get(self.canonical(class_qualname))
        if info is None or depth > 10:
            return None
        if name in info.held:
            target = self.canonical(info.held[name])
            function = self.functions.get(target)
            return target if function is not None and function.kind in ("function", "staticmethod") else None
        if name in info.methods:
            return info.methods[name]
        for base in info.bases:
            found = self.class_method(base, name, depth + 1)
            if found:
                return found
        return None

    def record_shape(self, class_qualname: str) -> "RecordShape | None":
        """The generated constructor of a NamedTuple or dataclass (``frontend.records``)."""
        return record_shape(self, class_qualname, base_name)

    def registered_callables(self, class_qualnames, attr: str) -> frozenset:
        """The handlers objects of these classes keep as elements of ``self.<attr>``:
        project functions, and classes whose objects are called (``frontend.registrations``)."""
        key = (tuple(sorted(class_qualnames)), attr)
        known = self._registered.get(key)
        if known is None:
            known = self._registered[key] = registered_callables(self, class_qualnames, attr, base_name)
        return known

    def registered_under(self, class_qualnames, attr: str, key: str) -> frozenset:
        """The project functions registered under ``key`` in the keyed registry
        ``<x>.<attr>`` of these classes (``@Policies.register("owned")``:
        ``frontend.registrations``)."""
        memo = (tuple(sorted(class_qualnames)), attr)
        known = self._keyed.get(memo)
        if known is None:
            known = self._keyed[memo] = keyed_registrations(self, class_qualnames, attr, base_name)
        return frozenset(qualname for k, qualname in known if k == key)

    def dispatched_by(self) -> dict[str, str]:
        """Each registered overload's dispatcher (``dispatch_overloads`` inverted)."""
        return {o: self.canonical(name) for name, found in self._overloads.items() for o in found}

    def dispatch_overloads(self, qualname: str) -> tuple[str, ...]:
        """The functions registered on the function ``qualname`` (``@qualname.register``), in
        the order the modules were read: a single dispatcher's overloads (``frontend.dispatch``)."""
        return tuple(o for name, found in self._overloads.items() if self.canonical(name) == qualname for o in found)

    def field_types(self, class_qualnames, attr: str, elements: bool = False) -> frozenset:
        """The classes ``obj.attr`` may be declared as, for ``obj`` of these classes
        (inherited fields included), or a property's return annotation (``@property def
        loop(self) -> EvaluationLoop``). With ``elements``: the classes of what the field's
        list, tuple or dict holds (``self.blocks = [SharedMemory(n) for n in names]``,
        ``self.blocks: list[SharedMemory]``), so that ``self.blocks[i].buf`` is an attribute
        of a ``SharedMemory`` as ``block.buf`` of a local one is."""
        if elements:
            return self._field_element_types(class_qualnames, attr)
        out = set()
        for class_qualname in class_qualnames:
            for name in self.class_ancestors(class_qualname):
                info = self.classes.get(name)
                for expr in info.fields.get(attr, ()) if info is not None else ():
                    resolved = self.resolve_type(info.module, expr) or _byte_string_class(info.module, expr)
                    if resolved:
                        out.add(resolved)
                    else:
                        out.update(self._own_method_returns(class_qualname, expr))
            getter = self.class_method(class_qualname, attr)
            if getter is not None and is_property(self.functions.get(getter)):
                out.update(self.return_types(getter))
        return frozenset(out)

    def _field_element_types(self, class_qualnames, attr: str) -> frozenset:
        out = set()
        for class_qualname in class_qualnames:
            for name in self.class_ancestors(class_qualname):
                info = self.classes.get(name)
                if info is None:
                    continue
                for expr in info.fields.get(attr, ()):
                    element = _element_annotation(expr)
                    resolved = self.resolve_type(info.module, element) if element is not None else None
                    if resolved:
                        out.add(resolved)
        return frozenset(out)

    def field_objects(self, class_qualnames, attr: str) -> frozenset:
        """Which objects ``obj.attr`` may be, for ``obj`` of these classes, told apart from
        the other objects of their class: one identity per store into the field in the
        class's methods (its ancestors' and known subclasses' too), when every store keeps
        what a construction makes anew (``self.a = Buf(n)``, ``self.a = self._make_buffer(n)``
        with ``_make_buffer`` returning ``Buf(...)``). Two fields whose stores differ hold
        different objects. Empty: not known (a store of another value, a field no store of
        the class sets; a store from outside the class is not seen)."""
        out: set = set()
        for class_qualname in class_qualnames:
            key = (class_qualname, attr)
            known = self._field_objects.get(key)
            if known is None:
                known = self._field_objects[key] = self._objects_of(class_qualname, attr)
            if not known:
                return frozenset()
            out |= known
        return frozenset(out)

    def _objects_of(self, class_qualname: str, attr: str) -> frozenset:
        out = set()
        for name in self._field_holders(class_qualname):
            info = self.classes.get(name)
            if info is None:
                continue
            for k, (method, callee) in enumerate(info.stores.get(attr, ())):
                if callee is None or not self._makes_new(info, callee):
                    return frozenset()
                out.add((name, method, attr, k))
        return frozenset(out)

    def _field_holders(self, class_qualname: str) -> list[str]:
        """The class, its ancestors and the known classes deriving from it: whose methods'
        stores into ``self.<attr>`` an object of the class may have run."""
        if self._descendants is None:  # one pass over the classes, not one per question
            self._descendants = {}
            for name in sorted(self.classes):
                for ancestor in self.class_ancestors(name):
                    self._descendants.setdefault(ancestor, []).append(name)
        below = self._descendants.get(class_qualname, [])
        return list(dict.fromkeys(self.class_ancestors(class_qualname) + below))

    def _makes_new(self, info: ClassInfo, callee: ast.expr) -> bool:
        """Does a call of ``callee`` in a method of ``info`` make a new object: a project
        class constructed, or an own method whose every return constructs one."""
        if self._constructs(info.module, callee):
            return True
        if not (isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name)):
            return False
        method = self.class_method(info.qualname, callee.attr)
        found = self.functions.get(method) if method is not None else None
        owner = self.classes.get(found.class_qualname) if found is not None and found.class_qualname else None
        made = owner.makers.get(callee.attr) if owner is not None else None
        return bool(made) and all(self._constructs(owner.module, expr) for expr in made or ())  # type: ignore[union-attr]

    def _constructs(self, module: ModuleInfo, callee: ast.expr) -> bool:
        resolved = self.resolve_type(module, callee)
        return resolved is not None and self.canonical(resolved) in self.classes

    def _own_method_returns(self, class_qualname: str, expr: ast.expr) -> frozenset:
        """``self.buf = self._make_buffer(...)`` in ``__init__``: the project classes the
        return annotation of the object's own method names (``-> CpuGpuBuffer``)."""
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
            return frozenset()
        method = self.class_method(class_qualname, expr.attr)
        return frozenset(t for t in self.return_types(method) if t in self.classes) if method is not None else frozenset()

    def return_types(self, qualname: str) -> frozenset:
        """The class a function's return annotation names (``-> Sink``, a project class, or
        ``-> ThreadPoolExecutor``, a library's): what a call of it builds, whether or not
        the function is ever analysed. Callers keep the classes they can use."""
        info = self.functions.get(qualname)
        returns = getattr(info.node, "returns", None) if info is not None else None
        resolved = self.resolve_type(info.module, returns) if info is not None and returns is not None else None
        return frozenset({self.canonical(resolved)}) if resolved else frozenset()

    def resolve_type(self, module: ModuleInfo, expr: ast.expr) -> str | None:
        """``X``, ``mod.X``, ``"X"``, ``Optional[X]``, ``X | None``, a generic class
        ``queue.Queue[Item]`` (the class; ``Union``, ``List`` and the other ``typing`` forms
        name no one class) in ``module`` -> qualname."""
        unquoted = _unquoted(expr)
        if unquoted is None:
            return None
        expr = unquoted
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return self.resolve_type(module, expr.left) or self.resolve_type(module, expr.right)
        if isinstance(expr, ast.Subscript):
            outer = (dotted_name(expr.value) or "").rsplit(".", 1)[-1]
            if outer == "Optional":
                return self.resolve_type(module, expr.slice)
            expr = expr.value  # ``Queue[Item]`` is a Queue; a ``typing`` form resolves to None below
        name = base_name(module, expr)
        if name is None or name.startswith(("typing.", "builtins.")):
            return None
        if name.startswith(module.name + ".") and name[len(module.name) + 1:] not in module.globals:
            return None  # a local name that is not a class of this module (a builtin, say)
        return self.canonical(name)

    def class_ancestors(self, class_qualname: str) -> list[str]:
        """The class and its bases, transitively (memoised until another module is added)."""
        known = self._ancestors.get(class_qualname)
        if known is None:
            known = self._ancestors[class_qualname] = self._compute_ancestors(class_qualname)
        return known

    def _compute_ancestors(self, class_qualname: str) -> list[str]:
        out: list[str] = []
        stack = [class_qualname]
        while stack and len(out) < 32:
            name = self.canonical(stack.pop())
            if name in out:
                continue
            out.append(name)
            info = self.classes.get(name)
            if info:
                stack.extend(info.bases)
        return out


# Bases outside the project that bind no class attribute of the project's classes.
NEUTRAL_BASES = frozenset({"builtins.object", "typing.Protocol", "typing.Generic", "abc.ABC", "typing_extensions.Protocol"})


def _bind_class(module: ModuleInfo, name: str, callee: ast.expr | None) -> None:
    """Keep the class a module variable is built as (``ModuleInfo.variable_classes``): the
    dotted name called (or annotated); bound again, or to anything else, nothing is known."""
    dotted = dotted_name(callee) if callee is not None else None
    known = name not in module.variable_classes and name not in module.variables
    module.variable_classes[name] = (base_name(module, callee) or "") if known and dotted else ""  # type: ignore[arg-type]


def _bind_name(module: ModuleInfo, name: str, value: ast.expr) -> None:
    """Keep a top-level binding of ``name`` to a dotted name or a tuple of them
    (``ModuleInfo.bound_names``); a name bound twice, or to anything else, is bound to
    nothing known (``(False, ())``)."""
    bound: tuple[bool, tuple[str, ...]] = (False, ())
    if name in module.variables or name in module.bound_names or name in module.constants:
        pass  # rebound: no longer known
    elif isinstance(value, (ast.Name, ast.Attribute)):
        dotted = base_name(module, value)
        bound = (False, (dotted,)) if dotted is not None else bound
    elif isinstance(value, ast.Tuple) and value.elts and all(isinstance(e, (ast.Name, ast.Attribute)) for e in value.elts):
        names = [base_name(module, e) for e in value.elts]
        bound = (True, tuple(n for n in names if n is not None)) if all(names) else bound
    module.bound_names[name] = bound


def _bind_partial(module: ModuleInfo, name: str, value: ast.expr) -> None:
    """Keep what a top-level ``name = functools.partial(target, ...)`` presets
    (``ModuleInfo.partials``): each argument a literal (``(True, value)``) or not known
    (``(False, None)``); bound again, or with ``*args``/``**kwargs`` (which arguments it
    binds is not known), it is no partial known."""
    if name in module.variables or name in module.partials:
        if name in module.partials:
            module.partials[name] = None
        return
    if not (isinstance(value, ast.Call) and value.args and base_name(module, value.func) == "functools.partial"):
        return
    target = base_name(module, value.args[0])
    if target is None or any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
        module.partials[name] = None
        return

    def argument(node: ast.expr) -> tuple[bool, object]:
        literal = literal_constant(module, node)
        return (True, literal[0]) if literal is not None else (False, None)

    module.partials[name] = (target, tuple(argument(a) for a in value.args[1:]),
                             tuple((k.arg, argument(k.value)) for k in value.keywords if k.arg is not None))


def _collect_class_constants(info: ClassInfo) -> dict[str, object]:
    """A class body's attributes bound once, to a literal."""
    found: dict[str, object] = {}
    seen: set[str] = set()
    for stmt in info.node.body if info.node is not None else ():
        if isinstance(stmt, ast.Assign):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            value: ast.expr | None = stmt.value
            if len(names) != len(stmt.targets):
                continue
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names, value = [stmt.target.id], stmt.value
        else:
            continue
        for name in names:
            literal = literal_constant(info.module, value) if value is not None and name not in seen else None
            if name in seen or value is None or literal is None:
                found.pop(name, None)
            else:
                found[name] = literal[0]
            if value is not None:
                seen.add(name)
    return found


def _collect_held(info: ClassInfo) -> dict[str, str]:
    """A class body's ``name = staticmethod(f)`` (``f`` a name or a dotted name), unless a
    later statement binds ``name`` again (a ``def``, or another value)."""
    found: dict[str, str] = {}
    for stmt in info.node.body if info.node is not None else ():
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.pop(stmt.name, None)
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        value = getattr(stmt, "value", None)
        held = _static_function(info.module, value) if len(targets) == 1 else None
        for target in targets:
            if isinstance(target, ast.Name):
                if held is not None:
                    found[target.id] = held
                else:
                    found.pop(target.id, None)
    return found


def _static_function(module: ModuleInfo, value: ast.expr | None) -> str | None:
    """``staticmethod(f)`` -> the dotted name ``f`` names in ``module`` (None otherwise)."""
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords):
        return None
    wrapper = base_name(module, value.func) if isinstance(value.func, (ast.Name, ast.Attribute)) else None
    if wrapper != "builtins.staticmethod" and not (wrapper == f"{module.name}.staticmethod" and "staticmethod" not in module.globals):
        return None
    wrapped = value.args[0]
    return base_name(module, wrapped) if isinstance(wrapped, (ast.Name, ast.Attribute)) else None


def _collect_fields(node: ast.ClassDef, info: ClassInfo) -> None:
    """What names each attribute's class: class-level annotations, and in ``__init__``
    ``self.attr = Ctor(...)``, ``self.attr: T = ...`` and ``self.attr = param`` (annotated)."""
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            info._fields.setdefault(stmt.target.id, []).append(stmt.annotation)
        if not isinstance(stmt, ast.FunctionDef) or stmt.name != "__init__" or not stmt.args.args:
            continue
        this = stmt.args.args[0].arg
        annotated = {a.arg: a.annotation for a in stmt.args.args + stmt.args.kwonlyargs if a.annotation is not None}
        for child in _walk_own_body(stmt):
            if isinstance(child, ast.AnnAssign):
                targets, value, annotation = [child.target], child.value, child.annotation
            elif isinstance(child, ast.Assign):
                targets, value, annotation = child.targets, child.value, None
            else:
                continue
            for target in targets:
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == this):
                    continue
                if annotation is not None:
                    named: ast.expr | None = annotation
                elif isinstance(value, ast.Call) and dotted_name(value.func):
                    named = value.func
                elif isinstance(value, ast.Name) and value.id in annotated:
                    named = annotated[value.id]
                else:
                    named = _constructed_elements(value)
                if named is not None:
                    info._fields.setdefault(target.attr, []).append(named)


# The generic containers whose last type argument is the class of what they hold: a list,
# tuple, sequence or set of ``X``, or a dict or mapping to ``X``.
_HOLDERS = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "MutableSequence", "set", "Set",
                      "frozenset", "FrozenSet", "dict", "Dict", "Mapping", "MutableMapping", "deque", "Deque"})


def _constructed_elements(value: ast.expr | None) -> ast.expr | None:
    """``[Ctor(n) for n in names]``, ``[Ctor(a), Ctor(b)]``, ``{k: Ctor(k) for k in keys}``
    stored in ``self.attr``: the annotation ``list[Ctor]`` the store amounts to (None when
    the elements are not all calls of one named callee)."""
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        elements = [value.elt]
    elif isinstance(value, ast.DictComp):
        elements = [value.value]
    elif isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        elements = list(value.elts)
    else:
        return None
    callees = {dotted_name(e.func) for e in elements if isinstance(e, ast.Call)}
    if len(callees) != 1 or len(elements) != sum(isinstance(e, ast.Call) for e in elements) or None in callees:
        return None
    callee = cast(ast.Call, elements[0]).func
    return ast.Subscript(value=ast.Name(id="list", ctx=ast.Load()), slice=callee, ctx=ast.Load())


def _unquoted(expr: ast.expr) -> ast.expr | None:
    """A string annotation (``"X"``, a forward reference) parsed; None if it is no expression.
    Any other annotation as it is."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        try:
            return ast.parse(expr.value, mode="eval").body
        except SyntaxError:
            return None
    return expr


def _element_annotation(expr: ast.expr) -> ast.expr | None:
    """``list[X]``, ``Sequence[X]``, ``tuple[X, ...]``, ``dict[K, X]`` (``Optional`` of one,
    a string annotation) -> ``X``; None for anything else."""
    unquoted = _unquoted(expr)
    if unquoted is None:
        return None
    expr = unquoted
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _element_annotation(expr.left) or _element_annotation(expr.right)
    if not isinstance(expr, ast.Subscript):
        return None
    outer = (dotted_name(expr.value) or "").rsplit(".", 1)[-1]
    if outer == "Optional":
        return _element_annotation(expr.slice)
    if outer not in _HOLDERS:
        return None
    args = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
    if outer in ("tuple", "Tuple"):
        return args[0] if len(args) == 1 or (len(args) == 2 and isinstance(args[1], ast.Constant)) else None
    return args[-1]


def _collect_readers(node: ast.ClassDef, info: ClassInfo) -> None:
    """Which methods read ``self.<attr>`` (they see what other methods keep there)."""
    for stmt in node.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or not stmt.args.args:
            continue
        this = stmt.args.args[0].arg
        for child in _walk_own_body(stmt):
            if (
                isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Load)
                and isinstance(child.value, ast.Name) and child.value.id == this
            ):
                info._readers.setdefault(child.attr, set()).add(f"{info.qualname}.{stmt.name}")


def _collect_stores(node: ast.ClassDef, info: ClassInfo) -> None:
    """``ClassInfo.stores`` and ``ClassInfo.makers`` from the class body."""
    for stmt in node.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and not _is_none(stmt.value):
                    info._stores.setdefault(target.id, []).append(("", None))  # type: ignore[union-attr]
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or not stmt.args.args:
            continue
        this = stmt.args.args[0].arg
        returns: list[ast.expr] | None = []
        for child in _walk_own_body(stmt):
            if isinstance(child, ast.Return) and returns is not None:
                made = _callee(child.value)
                returns = returns + [made] if made is not None else None
            for target, value in _stored(child):
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == this:
                    if not _is_none(value):
                        info._stores.setdefault(target.attr, []).append((stmt.name, _callee(value)))  # type: ignore[union-attr]
        if returns:
            info._makers[stmt.name] = returns  # type: ignore[index]


def _stored(node: ast.AST) -> list[tuple[ast.expr, ast.expr | None]]:
    """The targets a statement stores into, each with the value stored (None: not one
    value of its own: an unpacked element, an augmented or ``for`` target)."""
    if isinstance(node, ast.Assign):
        return [(target, node.value) for target in node.targets if not isinstance(target, (ast.Tuple, ast.List))] + [
            (element, None) for target in node.targets if isinstance(target, (ast.Tuple, ast.List)) for element in target.elts
        ]
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [(node.target, node.value)]
    if isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
        return [(node.target, None)]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [(node.optional_vars, None)]
    if isinstance(node, ast.NamedExpr):
        return [(node.target, None)]
    return []


def _callee(value: ast.expr | None) -> ast.expr | None:
    """The callee of ``value`` when it is a call of a dotted name (``Buf(n)``,
    ``self._make_buffer(n)``)."""
    if isinstance(value, ast.Call) and dotted_name(value.func):
        return value.func
    return None


def _is_none(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def base_name(module: ModuleInfo, node: ast.expr) -> str | None:
    """The qualname ``node`` (a name or dotted attribute) names in ``module``, through its
    imports (``np.ndarray`` -> ``numpy.ndarray``), else as one of its own globals; None for
    any other expression. A fact of the module alone: no other module is looked at."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    if head in module.imports:
        return module.imports[head] + ("." + rest if rest else "")
    return f"{module.name}.{dotted}"


def annotation_types(module: ModuleInfo, expr: ast.expr) -> frozenset[str]:
    """Every class an annotation in ``module`` names, through its imports (a name neither
    imported nor defined there is a builtin): ``Iterator[tuple[str, np.ndarray]]`` ->
    ``typing.Iterator``, ``builtins.tuple``, ``builtins.str``, ``numpy.ndarray``; string
    annotations are read as expressions. A fact of the module alone, like ``base_name``."""
    out: set[str] = set()
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                continue
        dotted = dotted_name(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if dotted is None or not isinstance(node, ast.expr):
            stack.extend(ast.iter_child_nodes(node))
            continue
        head = dotted.partition(".")[0]
        builtin = head == dotted and head not in module.imports and head not in module.globals
        out.add(f"builtins.{dotted}" if builtin else base_name(module, node) or dotted)
    return frozenset(out)


def dotted_expr(text: str) -> ast.expr:
    """The expression ``a.b.c`` (without parsing: it is built from the names)."""
    head, *rest = text.split(".")
    node: ast.expr = ast.Name(head, ast.Load())
    for part in rest:
        node = ast.Attribute(node, part, ast.Load())
    return node


def nested_statements(stmt: ast.stmt) -> list[ast.stmt]:
    """The statements directly nested in a compound statement (if/for/while/try/with/match)."""
    inner: list[ast.stmt] = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if isinstance(block, list):
            inner.extend(block)
    for handler in getattr(stmt, "handlers", []):
        inner.extend(handler.body)
    for case in getattr(stmt, "cases", []):
        inner.extend(case.body)
    return inner


def decorator_names(node: ast.AST) -> set[str]:
    """The last names of a definition's decorators (``staticmethod``, ``contextmanager`` of
    ``@contextlib.contextmanager``); a decorator call (``@cache(maxsize=1)``) names none."""
    return {d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in getattr(node, "decorator_list", ())}


_GENERATOR_CONTEXTS = frozenset({"contextmanager", "asynccontextmanager"})


def generator_context(function: ast.AST) -> bool:
    """Is ``function`` decorated ``@contextlib.contextmanager`` (or the async one), by its
    imported or qualified name?"""
    return not _GENERATOR_CONTEXTS.isdisjoint(decorator_names(function))


def is_property(info: FunctionInfo | None) -> bool:
    """Is this method a property's getter (``@property``, ``@functools.cached_property``),
    read as an attribute: its return annotation is the attribute's class."""
    return bool(_decorator_names(info) & {"property", "cached_property"})


def is_cached_property(info: FunctionInfo | None) -> bool:
    """A ``functools.cached_property``: its getter runs once per object, whose later reads
    get the object it returned then."""
    return "cached_property" in _decorator_names(info)


def _decorator_names(info: FunctionInfo | None) -> set[str]:
    decorators = getattr(info.node, "decorator_list", ()) if info is not None else ()
    return {(dotted_name(d) or "").rsplit(".", 1)[-1] for d in decorators}


_BYTE_STRINGS = frozenset({"builtins.bytearray", "builtins.bytes"})


def _byte_string_class(module: ModuleInfo, expr: ast.expr) -> str | None:
    """``self.buf = bytearray(n)``: a field the builtin byte-string classes make, whose
    slices are copies (the other builtins name no class a field is declared as)."""
    if not isinstance(expr, ast.Name) or expr.id in module.globals or expr.id in module.imports:
        return None  # a name the module binds is not the builtin
    name = f"builtins.{expr.id}"
    return name if name in _BYTE_STRINGS else None
