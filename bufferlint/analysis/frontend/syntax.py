"""Small questions about syntax nodes that the interpreter asks in several places."""

from __future__ import annotations

import ast

from bufferlint.analysis.frontend.index import dotted_name


def is_slice(key: ast.expr) -> bool:
    return isinstance(key, ast.Slice) or (isinstance(key, ast.Tuple) and any(isinstance(e, ast.Slice) for e in key.elts))


def annotations_of(node: ast.AST) -> dict[str, ast.expr]:
    args = getattr(node, "args", None)
    if not isinstance(args, ast.arguments):
        return {}
    every = args.posonlyargs + args.args + args.kwonlyargs
    return {a.arg: a.annotation for a in every if a.annotation is not None}


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


def assigned_names(stmts: list) -> set[str]:
    """Names (re)bound in these statements; ``x += ...`` updates ``x`` in place, not a rebinding."""
    names, updated = set(), set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                updated.add(id(node.target))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in updated:
                names.add(node.id)
    return names


def short(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Tuple):
        return ", ".join(short(e) for e in node.elts)
    return dotted_name(node) or "..."



def holder_name(node: ast.AST) -> str | None:
    """How a container is named for pairing stores with clears: ``pending``,
    ``self.pending`` (``self.pending[k] = w`` ... ``self.pending.clear()``)."""
    return dotted_name(node) or root_name(node)
