"""Small questions about syntax nodes that the interpreter asks in several places."""

from __future__ import annotations

import ast
from collections import deque
from typing import Iterator


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for that chain of attributes on a name (None for any other expression)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def is_slice(key: ast.expr) -> bool:
    return isinstance(key, ast.Slice) or (isinstance(key, ast.Tuple) and any(isinstance(e, ast.Slice) for e in key.elts))


def annotations_of(node: ast.AST) -> dict[str, ast.expr]:
    args = getattr(node, "args", None)
    if not isinstance(args, ast.arguments):
        return {}
    every = args.posonlyargs + args.args + args.kwonlyargs
    return {a.arg: a.annotation for a in every if a.annotation is not None}


def callable_annotation(annotation: ast.expr | None) -> bool:
    """Does the annotation say the parameter is a callable (``Callable[..., Any]``,
    ``typing.Callable``, ``collections.abc.Callable``)?"""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    name = annotation.attr if isinstance(annotation, ast.Attribute) else getattr(annotation, "id", None)
    return name == "Callable"


def parameter_defaults(node: ast.AST) -> dict[int, ast.expr]:
    """The default expressions of a function's parameters, by their index in
    ``FunctionInfo.params`` (positional ones, then ``*args``, then keyword-only ones)."""
    args = getattr(node, "args", None)
    if not isinstance(args, ast.arguments):
        return {}
    positional = args.posonlyargs + args.args
    out = {len(positional) - len(args.defaults) + i: d for i, d in enumerate(args.defaults)}
    first_kwonly = len(positional) + (1 if args.vararg else 0)
    out.update({first_kwonly + i: d for i, d in enumerate(args.kw_defaults) if d is not None})
    return out


def root_name(node: ast.AST) -> str | None:
    """The variable at the root of ``a.b[c].d`` or ``a.setdefault(k, {})[...]``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk``: the same nodes in the same order (breadth first), reading the fields
    directly: ``ast.iter_child_nodes`` and ``ast.iter_fields`` are generators, and the
    interpreter's questions about a test, a body or a function walk about two million nodes
    in a cold check of sglang 0.5.16, which this does in half the time."""
    todo = deque([node])
    take, put = todo.popleft, todo.append
    while todo:
        node = take()
        for name in node._fields:
            child = getattr(node, name, None)
            if type(child) is list:
                for item in child:
                    if isinstance(item, ast.AST):
                        put(item)
            elif isinstance(child, ast.AST):
                put(child)
        yield node


def assigned_names(stmts: list) -> set[str]:
    """Names (re)bound in these statements; ``x += ...`` updates ``x`` in place, not a rebinding."""
    names, updated = set(), set()
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                updated.add(id(node.target))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in updated:
                names.add(node.id)
    return names


def carried_names(loop: ast.For | ast.AsyncFor | ast.While) -> set[str]:
    """Names a loop body binds that may be read, on some path from the top of the body,
    before the body binds them: what they hold was bound by an earlier iteration
    (``batch.append(w)`` before ``if full: batch = []``; ``prev`` in ``use(prev); prev = w``),
    so it outlives the iteration that made it. The loop's own target is bound afresh at the
    top of each iteration. Reads inside nested functions and lambdas are not counted (they
    run later, if at all), nor a comprehension's reads of its own variables."""
    bound = assigned_names(loop.body)
    start = assigned_names([loop.target]) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
    exposed: set[str] = set()
    _exposed_reads(loop.body, set(start), exposed)
    return bound & exposed


_ENDS_BLOCK = (ast.Break, ast.Continue, ast.Return, ast.Raise)


def _meet(*defined: set[str] | None) -> set[str] | None:
    """Names bound on every path that goes on (None: no path goes on)."""
    going_on = [d for d in defined if d is not None]
    return set.intersection(*going_on) if going_on else None


def _exposed_reads(stmts: list, defined: set[str], exposed: set[str]) -> set[str] | None:
    """Add to ``exposed`` the names these statements may read before binding them, given
    the names ``defined`` on entry; returns the names bound on every path that reaches their
    end, or None when none does (each ends in ``break``, ``continue``, ``return`` or ``raise``)."""
    current: set[str] | None = set(defined)
    for stmt in stmts:
        if current is None:
            return None  # the rest cannot run
        if isinstance(stmt, ast.If):
            exposed.update(_loads(stmt.test) - current)
            current = _meet(_exposed_reads(stmt.body, current, exposed), _exposed_reads(stmt.orelse, current, exposed))
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            head = stmt.iter if isinstance(stmt, (ast.For, ast.AsyncFor)) else stmt.test
            exposed.update(_loads(head) - current)
            inner = current | (assigned_names([stmt.target]) if isinstance(stmt, (ast.For, ast.AsyncFor)) else set())
            _exposed_reads(stmt.body, inner, exposed)
            _exposed_reads(stmt.orelse, current, exposed)  # the body may not run: it binds nothing for sure
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                exposed.update(_loads(item.context_expr) - current)
                if item.optional_vars is not None:
                    current = current | assigned_names([item.optional_vars])
            current = _exposed_reads(stmt.body, current, exposed)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            # A handler may start after any statement of the body: it knows only the entry's names.
            ends = [_exposed_reads(stmt.body + stmt.orelse, current, exposed)]
            ends += [_exposed_reads(handler.body, current, exposed) for handler in stmt.handlers]
            after = _meet(*ends)
            # ``finally`` read as after the body's normal end: a read there of what the body
            # binds is of this iteration's value but on an exceptional path (which ends the loop).
            final = _exposed_reads(stmt.finalbody, current if after is None else after, exposed)
            current = None if final is None or after is None else after | final
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            exposed.update(_loads(stmt, nested=False) - current)  # decorators, defaults, bases
            current = current | {stmt.name}
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Delete, ast.Assert, ast.Pass,
                               ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, *_ENDS_BLOCK)):
            exposed.update(_loads(stmt) - current)
            current = None if isinstance(stmt, _ENDS_BLOCK) else current | (
                set() if isinstance(stmt, ast.AugAssign) else assigned_names([stmt]))
        else:  # ``match`` and anything newer: every read counts, nothing is taken as bound
            exposed.update(_loads(stmt) - current)
    return current


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _loads(node: ast.AST, nested: bool = True) -> set[str]:
    """Names ``node`` reads (an augmented assignment's target too), outside nested
    functions and lambdas (``nested``: ``node`` itself may be one, whose body is skipped); a
    comprehension's reads of the variables it binds itself are not reads of the enclosing
    scope's."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.AugAssign) and isinstance(current.target, ast.Name):
            found.add(current.target.id)
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            found.add(current.id)
        elif isinstance(current, _COMPREHENSIONS) and current is not node:
            own = assigned_names([g.target for g in current.generators])
            found.update(_loads(current) - own)
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and (current is not node or not nested):
            args = current.args
            stack.extend([*args.defaults, *(d for d in args.kw_defaults if d is not None)])
            stack.extend(getattr(current, "decorator_list", ()))
        elif isinstance(current, ast.ClassDef) and not nested:
            stack.extend([*current.bases, *current.decorator_list])
        else:
            stack.extend(ast.iter_child_nodes(current))
    return found


def short(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Tuple):
        return ", ".join(short(e) for e in node.elts)
    if isinstance(node, ast.Subscript) and dotted_name(node.value) is not None:  # ``params[name]``
        key = ast.unparse(node.slice)
        return f"{dotted_name(node.value)}[{key if len(key) <= 24 else '...'}]"
    if isinstance(node, ast.Call) and dotted_name(node.func) is not None:  # ``module.parameters()``
        return f"{dotted_name(node.func)}(...)" if node.args or node.keywords else f"{dotted_name(node.func)}()"
    return dotted_name(node) or "..."



def holder_name(node: ast.AST) -> str | None:
    """How a container is named for pairing stores with clears: ``pending``,
    ``self.pending`` (``self.pending[k] = w`` ... ``self.pending.clear()``)."""
    return dotted_name(node) or root_name(node)


def bound_call(node: ast.Call) -> ast.Call | None:
    """``Cls.method(obj, *rest)`` written as ``obj.method(*rest)``, at the same positions
    (the instance's expression is the same node), so a method called through its class
    (``torch.Tensor.to(w, dev, non_blocking=True)``) is the call the packs' method patterns
    describe; None when the call passes no instance first (nothing, or a ``*args``)."""
    func = node.func
    if not isinstance(func, ast.Attribute) or not node.args or isinstance(node.args[0], ast.Starred):
        return None
    method = ast.copy_location(ast.Attribute(value=node.args[0], attr=func.attr, ctx=ast.Load()), func)
    return ast.copy_location(ast.Call(func=method, args=node.args[1:], keywords=node.keywords), node)
