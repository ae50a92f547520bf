"""Expressions in the guard evaluation (``guard_eval``): what each evaluates to when one
parameter carries one marker, path by path (``and``, ``or`` and conditional expressions
split the path). ``getattr``, ``hasattr`` and attribute access on the subject answer for the
marker (``True``) and for the other markers (absent); ``any``/``all`` over literals and over
generators on literals go element by element; module constants and literal tuples are
known; a call the interpreter resolved answers with the guard facts of its value and the
undecided facts of its targets' summaries (``CallFacts``, from ``Frame.calls``); any other
call is blind unless it is given an unknown value, or the subject and a marker's name.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any

from bufferlint.analysis.frontend.index import FunctionInfo, base_name, dotted_name
from bufferlint.analysis.transfer.guard_values import (
    BLIND,
    NAMES,
    UNKNOWN,
    Abstract,
    GiveUp,
    Path,
    const,
    involved,
    raised,
    truth,
    with_truth,
)

MAX_STEPS = 2000  # statements and expressions evaluated per (parameter, marker)
MAX_TARGETS = 8  # a call reaching more project functions than this is not followed as a helper


class CallFacts:
    """What the interpreter said of the calls in the function (``Frame.calls``), per call
    node: the tags its value proves of each parameter when it is true (``clean_if_true``) or
    false (``clean_if_false``), and for each argument expression, the tags the targets'
    summaries are undecided for at the parameter it binds to."""

    def __init__(self, frame: Any = None) -> None:
        self.true_proves: dict[int, dict[int, set]] = {}
        self.false_proves: dict[int, dict[int, set]] = {}
        self.undecided: dict[int, list[tuple[ast.expr, set]]] = {}
        self.helpers: dict[int, str] = {}  # call -> the one project function it reaches
        if frame is None:  # no call resolved (a helper run inside a guard: ``inline_helper``)
            return
        program = frame.program
        params = set(frame.info.params)
        for key, (node, value, targets) in frame.calls.items():
            if len(targets) == 1:
                self.helpers[key] = next(iter(targets))
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


NO_CALLS = CallFacts()


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


def names_marker(value: Any, markers: set) -> bool:
    """Is this module constant a marker's name, or a tuple or set holding one?"""
    if isinstance(value, (tuple, frozenset)):
        return any(isinstance(v, str) and v in markers for v in value)
    return isinstance(value, str) and value in markers


class ExpressionFolder:
    """Evaluates expressions for one parameter carrying one marker (the statements are
    ``guard_eval.GuardEvaluator``'s, a subclass)."""

    def __init__(self, info: FunctionInfo, index: Any, vocab: Any, calls: CallFacts) -> None:
        self.info = info
        self.index = index
        self.vocab = vocab
        self.calls = calls
        self.steps = 0
        self.param = 0
        self.marker = ""
        self.given_fields: dict[str, object] = {}  # the receiver's fields taken as constants (``evaluate``)
        self.tags: frozenset = frozenset()
        self.depth = 0  # helpers run inside one another (``inline_helper``)
        self.may_raise = False  # an opaque call was met (it may raise anything)
        self.unknowns = 0  # unknown values made so far (a loop whose body made one decides nothing)
        self.touched = False  # the marker was read (or a call's facts spoke for it)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise GiveUp(f"more than {MAX_STEPS} steps", budget=True)

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
        if involved(node, path):
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
            known, literal = self.constant(self.index.canonical(module.imports[name]))
            return _constant(literal) if known else BLIND
        return BLIND

    def constant(self, qualname: str) -> tuple[bool, object]:
        """A module constant of the project's, or a library's marker name a pack knows."""
        known, literal = self.index.constant(qualname)
        return (known, literal) if known else self.vocab.library_constant(qualname)

    def expr_Attribute(self, node: ast.Attribute, path: Path) -> list[tuple[Abstract, Path]]:
        fields = self.given_fields
        if (fields and node.attr in fields and isinstance(node.value, ast.Name) and self.info.params
                and node.value.id == self.info.params[0] and path.env.get(node.value.id) is BLIND):
            return [(const(fields[node.attr]), path)]  # the receiver's field, as its constructor left it
        name = dotted_name(node)
        head = name.split(".", 1)[0] if name else None
        module = self.info.module
        if head and head not in path.env and head in module.imports:
            known, literal = self.constant(self.index.canonical(module.imports[head] + name[len(head):]))  # type: ignore[index]
            if known:
                return [(_constant(literal), path)]
        member = self.enum_member(node, path)
        if member is not None:
            return [(member, path)]
        return [(self.attribute(base, node.attr), p) if base.kind != "raise" else (base, p) for base, p in self.expr(node.value, path)]

    def enum_member(self, node: ast.Attribute, path: Path) -> Abstract | None:
        """``LoadMode.INLINE`` of a project ``enum.Enum`` class: a constant of its own, the
        same object wherever it is named (``is`` compares members), truthy, equal to
        nothing but itself (a plain ``Enum``'s members are not their values)."""
        base = dotted_name(node.value)
        if base is None or base.split(".", 1)[0] in path.env:
            return None
        qualname = base_name(self.info.module, node.value)
        info = self.index.classes.get(self.index.canonical(qualname)) if qualname is not None else None
        if info is None or "enum.Enum" not in info.bases or node.attr not in info.constants:
            return None
        return const(enum_member(f"{info.qualname}.{node.attr}"))

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
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) and (
                self.instance_dict(node.comparators[0], path) or self.attribute_names(node.comparators[0], path)):
            present = self.entry(self.one(node.left, path), const(False))  # ``M in vars(w)``, ``M in dir(w)``
            if present.kind == "const" and present.value is True:
                present = const(True)
            elif present.kind not in ("const", "raise", "unknown"):
                present = BLIND
            if isinstance(node.ops[0], ast.NotIn) and present.kind == "const":
                present = const(not present.value)
            return [(present, path)]
        values = [self.one(node.left, path)] + [self.one(c, path) for c in node.comparators]
        for value in values:
            if value.kind == "raise":
                return [(value, path)]
        if len(node.ops) == 1 and "names" in (values[0].kind, values[1].kind):
            return [(self.names_contain(node.ops[0], values[0], values[1]), path)]
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
        if isinstance(node.op, ast.BitAnd) and "names" in (left.kind, right.kind):
            other = right if left.kind == "names" else left
            return [(self.names_among(other), path)]
        if left.kind == "const" and right.kind == "const" and type(node.op) in _BINARY:
            return [(_fold(_BINARY[type(node.op)], left.value, right.value), path)]
        return [(BLIND, path)]

    def expr_Tuple(self, node: ast.Tuple | ast.List, path: Path) -> list[tuple[Abstract, Path]]:
        values = [self.one(e, path) for e in node.elts if not isinstance(e, ast.Starred)]
        if len(values) == len(node.elts) and all(v.kind == "const" for v in values):
            return [(const(tuple(v.value for v in values)), path)]
        return [(UNKNOWN if any(v.kind == "unknown" for v in values) else BLIND, path)]

    expr_List = expr_Tuple

    def expr_Set(self, node: ast.Set, path: Path) -> list[tuple[Abstract, Path]]:
        value = self.one(ast.Tuple(elts=node.elts), path)
        return [(_fold(frozenset, value.value) if value.kind == "const" else value, path)]

    def expr_NamedExpr(self, node: ast.NamedExpr, path: Path) -> list[tuple[Abstract, Path]]:
        out = self.expr(node.value, path)
        for value, p in out:
            self.bind(node.target, value, p)
        return out

    def expr_GeneratorExp(self, node: ast.GeneratorExp, path: Path) -> list[tuple[Abstract, Path]]:
        """A generator bound to a name (``flagged = (getattr(w, m, None) for m in MARKS)``):
        unknown to everything but ``any``/``all``, which run it element by element when
        they consume it (``quantifier``)."""
        if not involved(node, path):
            return [(BLIND, path)]
        self.unknowns += 1
        return [(Abstract("unknown", node), path)]

    def instance_dict(self, node: ast.expr, path: Path) -> bool:
        """Is ``node`` the subject's instance dictionary (``vars(w)``, ``w.__dict__``)? The
        marker set on the value (``setattr(w, M, True)``) is an entry of it; one a marked
        class sets on itself (a kind's ``marked-classes``) is not, so those are not read so."""
        if self.vocab.marked_classes(self.marker):
            return False
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            subject = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars"
              and node.func.id not in path.env and self.is_builtin("vars") and len(node.args) == 1 and not node.keywords):
            subject = node.args[0]
        else:
            return False
        return self.one(subject, path).kind == "subject"

    def attribute_names(self, node: ast.expr, path: Path) -> bool:
        """Is ``node`` ``dir(w)`` of the subject: the names of its attributes, the marker's
        among them whether the value or its class carries it."""
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dir"
                and node.func.id not in path.env and self.is_builtin("dir") and len(node.args) == 1
                and not node.keywords and self.one(node.args[0], path).kind == "subject")

    def names_among(self, names: Abstract) -> Abstract:
        """``frozenset(vars(w)) & BORROWED``: the subject's attribute names among a set of
        names, non-empty when the marker is one of them (else marker-independent)."""
        if names.kind != "const" or not isinstance(names.value, (frozenset, set)):
            self.unknowns += 1  # names not known may well be the marker's
            return UNKNOWN
        present = [self.entry(const(name), const(False)) for name in sorted(names.value) if isinstance(name, str)]
        if any(p.kind == "unknown" for p in present):
            return UNKNOWN
        if any(p.kind == "const" and p.value for p in present):
            return Abstract("blind", None, True)
        return BLIND

    def names_contain(self, op: ast.cmpop, left: Abstract, right: Abstract) -> Abstract:
        """``w.__dict__.keys() >= {M}``, ``{M} <= vars(w).keys()``: the subject's attribute
        names hold every name of a known set: true when each is the marker's, false when one
        is another marker's (absent); blind for other names (they may be the object's)."""
        wanted = right if left.kind == "names" else left
        superset = ast.GtE if left.kind == "names" else ast.LtE
        if not isinstance(op, superset) or wanted.kind != "const" or not isinstance(wanted.value, (set, frozenset)):
            return BLIND
        present = [self.entry(const(name), const(False)) if isinstance(name, str) else BLIND for name in sorted(wanted.value, key=repr)]
        if any(p.kind == "unknown" for p in present):
            return UNKNOWN
        if any(p.kind == "const" and not p.value for p in present):
            return const(False)
        return const(True) if present and all(p.kind == "const" for p in present) else BLIND

    def builtin_frozenset(self, node: ast.Call, path: Path) -> Abstract:
        """``frozenset(vars(w))``, ``set(dir(w))``: the subject's attribute names as a set
        (``names_among``); of a literal, the set."""
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            return self.project_call(node, path)
        given = node.args[0]
        if self.instance_dict(given, path) or self.attribute_names(given, path):
            return NAMES
        value = self.one(given, path)
        if value.kind == "const":
            return _fold(frozenset, value.value)
        return value if value.kind in ("names", "raise", "unknown") else BLIND

    builtin_set = builtin_frozenset

    def entry(self, key: Abstract, missing: Abstract) -> Abstract:
        """The subject's instance dictionary at ``key``: the marker's entry, or ``missing``
        for the other markers (absent); another key is blind, a key not known unknown."""
        if key.kind == "raise":
            return key
        if key.kind != "const" or not isinstance(key.value, str):
            self.unknowns += 1
            return UNKNOWN
        got = self.attribute(Abstract("subject"), key.value)
        return missing if got.kind == "raise" else got

    def expr_Subscript(self, node: ast.Subscript, path: Path) -> list[tuple[Abstract, Path]]:
        if self.instance_dict(node.value, path):  # ``vars(w)[M]``
            return [(self.entry(self.one(node.slice, path), raised("KeyError")), path)]
        base, key = self.one(node.value, path), self.one(node.slice, path)
        if base.kind == "const" and key.kind == "const":
            return [(_fold(operator.getitem, base.value, key.value), path)]
        if base.kind == "unknown" or key.kind == "unknown":
            return [(UNKNOWN, path)]
        return [(BLIND, path)]

    # -- calls -----------------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call, path: Path) -> list[tuple[Abstract, Path]]:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and self.instance_dict(func.value, path) \
                and 1 <= len(node.args) <= 2 and not node.keywords:  # ``vars(w).get(M)``
            default = self.one(node.args[1], path) if len(node.args) == 2 else const(None)
            return [(self.entry(self.one(node.args[0], path), default), path)]
        if isinstance(func, ast.Attribute) and func.attr == "keys" and not node.args and not node.keywords \
                and self.instance_dict(func.value, path):  # ``vars(w).keys()``: its names, as a set
            return [(NAMES, path)]
        if isinstance(func, ast.Name) and func.id not in path.env and self.is_builtin(func.id):
            handler = getattr(self, "builtin_" + func.id, None)
            if handler is not None:
                return [(handler(node, path), path)]
        head = dotted_name(func)
        if head is not None and head.split(".", 1)[0] not in path.env \
                and self.index.canonical(base_name(self.info.module, func) or "") == "inspect.getattr_static":
            return [(self.builtin_getattr(node, path), path)]  # finds an attribute set on the value as getattr does
        folded = self.string_method(node, path)
        if folded is not None:
            return [(folded, path)]
        getter = self.attribute_getter(func, path)
        if getter is not None and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            obj = self.one(node.args[0], path)  # ``_marker_of(w)`` with ``_marker_of = operator.attrgetter(M)``
            return [(obj if obj.kind == "raise" else self.attribute(obj, getter), path)]
        inlined = self.inline_helper(node, path)
        if inlined is not None:
            return inlined
        return [(self.project_call(node, path), path)]

    def attribute_getter(self, func: ast.expr, path: Path) -> str | None:
        """The attribute an ``operator.attrgetter(name)`` reads, written in place
        (``attrgetter(M)(w)``) or bound once to a module name (``_marker_of =
        operator.attrgetter(M)``); None for any other callee or a name not known."""
        made: ast.expr | None = func
        module = self.info.module
        if isinstance(func, ast.Name) and func.id not in path.env:
            if self.index.canonical(module.variable_classes.get(func.id, "")) != "operator.attrgetter":
                return None
            made = next((stmt.value for stmt in module.tree.body if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                         and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == func.id), None)
        if not (isinstance(made, ast.Call) and len(made.args) == 1 and not made.keywords):
            return None
        if self.index.canonical(base_name(module, made.func) or "") != "operator.attrgetter":
            return None
        name = self.one(made.args[0], path)
        return name.value if name.kind == "const" and isinstance(name.value, str) and "." not in name.value else None

    def string_method(self, node: ast.Call, path: Path) -> Abstract | None:
        """``MARKER.upper()``, ``PREFIX.removesuffix("_")``: a pure ``str`` method of a known
        string, folded (another attribute's name than the marker's); None for anything else."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _STR_METHODS or node.keywords:
            return None
        base = self.one(func.value, path)
        if base.kind != "const" or not isinstance(base.value, str):
            return None
        args = [self.one(a, path) for a in node.args]
        if any(a.kind != "const" for a in args):
            return None
        return _fold(getattr(str, func.attr), base.value, *(a.value for a in args))

    def inline_helper(self, node: ast.Call, path: Path) -> list[tuple[Abstract, Path]] | None:
        """What a project helper given the subject returns, by evaluating its body (the
        guard evaluator's): None when this folder does not (the evaluator does)."""
        return None

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

    def builtin_isinstance(self, node: ast.Call, path: Path) -> Abstract:
        """``isinstance(w, StreamedTensor)`` of a class whose instances carry the marker (a
        kind's ``marked-classes``) checks the marker; of any other class it is blind (a marked
        tensor is a ``torch.Tensor`` as an owned one is)."""
        obj = self.argument(node, 0, path)
        if obj is None or len(node.args) != 2 or node.keywords:
            return self.opaque(node, path)
        if obj.kind == "raise":
            return obj
        spec = node.args[1]
        named = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        if obj.kind == "const":  # ``isinstance(getattr(w, M, None), bool)``: the marker's value's class
            types = [_BUILTIN_TYPES.get(c.id) if isinstance(c, ast.Name) and c.id not in path.env and self.is_builtin(c.id)
                     else None for c in named]
            return BLIND if None in types else const(isinstance(obj.value, tuple(types)))  # type: ignore[arg-type]
        if obj.kind != "subject":
            return UNKNOWN if obj.kind == "unknown" else BLIND
        answers = [self.subject_instance(c) for c in named]
        if "marked" in answers:
            self.touched = True
        return const(True) if any(answers) else BLIND

    def subject_instance(self, cls: ast.expr) -> str:
        """Is the marked subject surely an instance of ``cls``: "marked" when ``cls`` is a
        class whose instances carry the marker (a kind's ``marked-classes``), "annotated"
        when the subject's parameter is annotated as ``cls`` or one of its project
        subclasses (``def g(t: torch.Tensor)``: ``case torch.Tensor(...)`` matches the
        values it is asked about), else "" (blind: a marked value may be of any class)."""
        name = base_name(self.info.module, cls)
        if name is None:
            return ""
        name = self.index.canonical(name)
        if name in self.vocab.marked_classes(self.marker):
            return "marked"
        annotated = self.subject_annotation()
        if annotated is not None and (annotated == name or name in self.index.class_ancestors(annotated)):
            return "annotated"
        return ""

    def subject_annotation(self) -> str | None:
        """The one class the subject's parameter is annotated as, if it names just one."""
        node = self.info.node
        arguments = getattr(node, "args", None)
        if arguments is None or self.param >= len(self.info.params):
            return None
        wanted = self.info.params[self.param]
        for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
            if arg.arg == wanted and arg.annotation is not None:
                annotation = arg.annotation
                if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                    try:
                        annotation = ast.parse(annotation.value, mode="eval").body
                    except SyntaxError:
                        return None
                name = base_name(self.info.module, annotation)
                return self.index.canonical(name) if name is not None else None
        return None

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
            if isinstance(value.value, ast.GeneratorExp) and len(value.value.generators) == 1:
                elements = self.comprehension_elements(value.value, path)  # ``any(flagged)``
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


@dataclass(frozen=True)
class EnumMember:
    """A member of a project ``enum.Enum`` class, by qualified name (``enum_member``)."""

    qualname: str


_MEMBERS: dict[str, EnumMember] = {}


def enum_member(qualname: str) -> EnumMember:
    """The one ``EnumMember`` of that name, so that ``is`` folds as Python's does."""
    return _MEMBERS.setdefault(qualname, EnumMember(qualname))


def _speaks(tags: set, wanted: frozenset) -> bool:
    """Do facts with ``tags`` speak for a marker with these tags (``values.clean``'s rule)?"""
    return bool(tags) and (None in tags or bool(tags & wanted) or (None in wanted))


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


def _no_fold(*args: Any) -> Any:
    raise TypeError("not folded")


_STR_METHODS = frozenset({"upper", "lower", "casefold", "title", "capitalize", "swapcase", "strip", "lstrip",
                          "rstrip", "removeprefix", "removesuffix", "replace"})
_BUILTIN_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float, "str": str, "bytes": bytes,
                                   "tuple": tuple, "list": list, "dict": dict, "set": set, "frozenset": frozenset}
_UNARY: dict[type, Any] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod}
