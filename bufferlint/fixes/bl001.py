"""BL001 fixes: make the async consumer depend on a guard bound to the borrowed value, or
hand it a copy.

Four shapes, tried in this order:

1. A sink that is async only when an argument says so (a pack sink with ``enabled-by``,
   e.g. ``maybe_executor_submit(..., use_async=...)``):

   * already decided by a configured guard (``use_async=guard(w)``, or a variable assigned
     from a guard call in the same function) -- no fix: the guard itself is broken, and the
     BL002 fix of the guard is the real fix (this finding goes away with it);
   * otherwise, when a guard is importable: ``use_async=guard(w)`` (for ``True``) or
     ``use_async=<old> and guard(w)``. ``safe``.

2. ``<executor>.submit(fn, *args)`` as a statement (or ``futures.append(<that>)``), when a
   guard is importable and the borrowed value is a plain name/attribute/subscript (not a
   view: a view does not carry the marker)::

       if guard(w):
           <the statement, unchanged>
       else:
           fn(*args)

   ``safe`` (it runs marked values inline, which is the fix).

3. Any other ``<executor>.submit(fn, *args)``: ``guarded_submit(executor, fn, *args)``
   from ``bufferlint.runtime``, importing it. ``unsafe``: it adds a run-time dependency on
   bufferlint and changes scheduling.

4. Every other hand-off: copy the borrowed value there with its kind's copy method
   (``Thread(target=fn, args=(w.clone(),))``, ``run_in_executor(None, fn, w.clone())``); a
   sink that queues every element of a stream up front (``Executor.map``) maps over copies.
   ``unsafe``: one copy per value, more memory.

A call whose switch or branch a configured guard already decides gets none of these: the
guard is what is broken, and its BL002 fix removes the finding.

"A guard is importable" means: a configured guard (``[[guards]]`` with ``param = 0``) is
already bound in the module (imported, or defined there), or is defined by a module of
this project (then ``from <module> import <guard>`` is added; no new dependency).
"""

from __future__ import annotations

import libcst as cst

# The catalog rule these fixes repair, re-exported: fixes/planners.py looks fixers up by it.
from bufferlint.catalog.bl001 import RULE as RULE
from bufferlint.catalog.words import kind_for
from bufferlint.findings import Edit, Finding, Fix
from bufferlint.fixes.base import SAFE, UNSAFE, FixContext, SourceModule
from bufferlint.fixes.materialisation import copy_edits, copying_generator

RUNTIME_GUARDED_SUBMIT = ("bufferlint.runtime.guarded_submit", "bufferlint.runtime.policies.guarded_submit")
VIEW_NOTE = "returns a view"  # trace note of a step that made a view (views carry no marker)


def candidates(finding: Finding, source_text: str, context: FixContext) -> list[Fix]:
    """The possible fixes, best first (a safe guard-based one, then guarded_submit)."""
    src = context.source(source_text)
    call = src.node_at_span(cst.Call, finding)
    if call is None or _under_guard_test(src, call, context):
        return []
    spec = _enabled_by_sink(call, context)
    copy = _plan_copy_at_handoff(src, call, finding, context)
    if spec is not None:
        fixes = [_plan_enabled_by(src, call, spec, finding, context), copy]
        if _switch(call, spec) is not None and _decided_by_guard(src, call, _switch(call, spec).value, context):
            fixes = []  # the guard deciding the switch is what is broken: its BL002 fix is the fix
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "submit":
        fixes = [_plan_if_else(src, call, finding, context), _plan_guarded_submit(src, call), copy]
    else:
        fixes = [copy]
    return [fix for fix in fixes if fix is not None]


def _plan_copy_at_handoff(src: SourceModule, call: cst.Call, finding: Finding, context: FixContext) -> Fix | None:
    """Copy the borrowed value where it is handed over: ``submit(f, w.clone())``,
    ``Thread(target=f, args=(w.clone(),))``; for a sink that queues every element of a stream
    up front (``Executor.map``), map over copies: ``map(f, (w.clone() for w in ws))``."""
    kind = kind_for(finding, context.vocab)
    if kind is None or not kind.copy:
        return None
    name = _last_name(call.func)
    eager = any(spec.eager and any(p.last_name == name for p in spec.calls) for spec in context.vocab.sinks)
    node = next((n for arg in call.args for n in _payload(arg.value) if finding.subject
                 and _text(src, n) == finding.subject), None)
    iterables = [arg.value for arg in call.args[1:] if arg.keyword is None and not arg.star]
    if node is None and eager and len(iterables) == 1 and len(call.args) == 2:
        node = iterables[0]  # map(f, stream): the one stream is what is queued
    if node is None:
        return None
    if eager:
        generator = copying_generator(finding, _text(src, node), kind)
        if generator is None:
            return None
        where = src.range(node)
        edit = Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, generator)
        return Fix(UNSAFE, f"Hand over copies: map over `{generator}`", (edit,))
    copied = kind.copy_of(finding.subject)
    return Fix(UNSAFE, f"Hand over a copy: `{copied}`", copy_edits(src, node, kind))


def _payload(node: cst.BaseExpression):
    """The expressions an argument hands over: the argument itself, and what a tuple, list,
    dict or set it is built of holds (``args=(w,)``); never what it passes to another call
    (in ``maybe_submit(ex, guard(w), fn, w)`` the guard's argument is not handed over, and
    copying it would leave the payload borrowed)."""
    stack = [node]
    while stack:
        current = stack.pop(0)
        yield current
        if isinstance(current, (cst.Tuple, cst.List, cst.Set)):
            stack.extend(element.value for element in current.elements)
        elif isinstance(current, cst.Dict):
            stack.extend(element.value for element in current.elements if isinstance(element, cst.DictElement))


def _switch(call: cst.Call, spec) -> cst.Arg | None:
    position = spec.params.index(spec.enabled_by) if spec.enabled_by in spec.params else -1
    return _argument(call, spec.enabled_by, position)


# -- sinks switched by an argument ------------------------------------------------------


def _last_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _enabled_by_sink(call: cst.Call, context: FixContext):
    name = _last_name(call.func)
    for spec in context.vocab.sinks:
        if spec.enabled_by and any(pattern.last_name == name for pattern in spec.calls):
            return spec
    return None


def _argument(call: cst.Call, keyword: str, position: int) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    positional = [a for a in call.args if a.keyword is None]
    if 0 <= position < len(positional) and not any(a.star for a in positional[: position + 1]):
        return positional[position]
    return None


def _plan_enabled_by(src: SourceModule, call: cst.Call, spec, finding: Finding, context: FixContext) -> Fix | None:
    arg = _switch(call, spec)
    if arg is None or _decided_by_guard(src, call, arg.value, context):
        return None
    subject = finding.subject
    if not _plain(subject) or _is_view(finding):
        return None
    guard = _guard_reference(src, context)
    if guard is None:
        return None
    guard_name, import_edit = guard
    value = arg.value
    old = _text(src, value)
    decided = f"{guard_name}({subject})"
    if isinstance(value, cst.Name) and value.value == "True":
        new = decided
    elif isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Comparison)) or value.lpar:
        new = f"{old} and {decided}"
    else:
        new = f"({old}) and {decided}"
    where = src.range(value)
    edits = [Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, new)]
    if import_edit is not None:
        edits.insert(0, import_edit)
    return Fix(SAFE, f"Decide `{spec.enabled_by}` with `{decided}`", tuple(edits))


def _guard_qualnames(context: FixContext) -> list[str]:
    return [p.qualname for spec in context.vocab.guards if spec.param == 0 for p in spec.calls if p.qualname]


def _decided_by_guard(src: SourceModule, call: cst.Call, value: cst.BaseExpression, context: FixContext) -> bool:
    """Whether the switch is already a guard's answer: a guard call, or a name assigned from
    an expression with a guard call in the enclosing function."""
    def has_guard_call(node: cst.CSTNode) -> bool:
        return _has_guard_call(node, context)

    if has_guard_call(value):
        return True
    if not isinstance(value, cst.Name):
        return False
    scope = next((a for a in src.ancestors(call) if isinstance(a, cst.FunctionDef)), src.tree)
    for node in src.descendants(scope):
        if isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == value.value for t in node.targets
        ):
            if has_guard_call(node.value):
                return True
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Name):
            if node.target.value == value.value and node.value is not None and has_guard_call(node.value):
                return True
    return False


def _under_guard_test(src: SourceModule, call: cst.Call, context: FixContext) -> bool:
    """Whether the call already sits in a branch of an ``if`` (or conditional expression)
    that tests a guard, in the same function: then the guard is what is broken (BL002)."""
    for ancestor in src.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and _has_guard_call(ancestor.test, context):
            return True
    return False


def _has_guard_call(node: cst.CSTNode, context: FixContext) -> bool:
    names = {p.last_name for spec in context.vocab.guards for p in spec.calls}
    return any(isinstance(n, cst.Call) and _last_name(n.func) in names for n in _walk(node))


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


# -- executor.submit ----------------------------------------------------------------------


def _plan_if_else(src: SourceModule, call: cst.Call, finding: Finding, context: FixContext) -> Fix | None:
    subject = finding.subject
    if not _plain(subject) or _is_view(finding):
        return None
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    line_stmt = _statement_of(src, call)
    if line_stmt is None or _has_multiline_string(src, line_stmt):
        return None
    guard = _guard_reference(src, context)
    if guard is None:
        return None
    guard_name, import_edit = guard

    where = src.range(line_stmt)
    start_line, start_col = where.start.line, where.start.column
    indent = src.indent_of(start_line)
    if len(indent) != start_col:
        return None
    end_line = where.end.line
    end_text = src.line_text(end_line)
    statement = _slice(src, start_line, start_col, end_line, where.end.column)
    tail = end_text[where.end.column:]  # spaces and a comment after the statement, if any
    nl, unit = src.newline, src.indent_unit

    fn = _text(src, call.args[0].value)
    inline = f"{fn}()"
    if len(call.args) > 1:
        # the call's own text from its "(", without the first argument: the layout,
        # comments and trailing comma of the other arguments are kept
        func, first, second, whole = (src.range(n) for n in (call.func, call.args[0], call.args[1], call))
        head = _slice(src, func.end.line, func.end.column, first.start.line, first.start.column)
        rest = _slice(src, second.start.line, second.start.column, whole.end.line, whole.end.column)
        inline = _shift(fn + head + rest, src.indent_of(src.range(call).start.line), indent + unit)
    decided = f"{guard_name}({subject})"
    replacement = (
        f"if {decided}:{nl}"
        f"{indent}{unit}{_reindent(statement, unit)}{tail}{nl}"
        f"{indent}else:{nl}"
        f"{indent}{unit}{inline}"
    )
    edits = [Edit(start_line, start_col + 1, end_line, len(end_text) + 1, replacement)]
    if import_edit is not None:
        edits.insert(0, import_edit)
    return Fix(SAFE, f"Submit only when `{decided}`; otherwise call `{fn}` inline", tuple(edits))


def _plan_guarded_submit(src: SourceModule, call: cst.Call) -> Fix | None:
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    assert isinstance(call.func, cst.Attribute)
    edits: list[Edit] = []
    name = next((n for n in map(src.local_name_for, RUNTIME_GUARDED_SUBMIT) if n), None)
    if name is None:
        if "guarded_submit" in src.bound_names():
            return None
        name = "guarded_submit"
        edits.append(src.import_edit("from bufferlint.runtime import guarded_submit"))
    receiver = _text(src, call.func.value)
    func, first = src.range(call.func), src.range(call.args[0])
    edits.append(Edit(func.start.line, func.start.column + 1, func.end.line, func.end.column + 1, name))
    edits.append(Edit(first.start.line, first.start.column + 1, first.start.line, first.start.column + 1, f"{receiver}, "))
    return Fix(
        UNSAFE,
        "Submit through `bufferlint.runtime.guarded_submit`, which runs the task inline when an argument is borrowed",
        tuple(edits),
    )


# -- helpers ------------------------------------------------------------------------------


def _guard_reference(src: SourceModule, context: FixContext) -> tuple[str, Edit | None] | None:
    """How to call a configured guard here: a name already bound (no edit), else a name
    imported from the project module that defines it (with the import edit)."""
    qualnames = _guard_qualnames(context)
    for qualname in qualnames:
        local = src.local_name_for(qualname)
        if local is not None:
            return local, None
    bound = src.bound_names()
    for qualname in qualnames:
        module, _, name = qualname.rpartition(".")
        if module and module != src.module_name and name not in bound and context.project.module_file(module):
            return name, src.import_edit(f"from {module} import {name}")
    return None


def _statement_of(src: SourceModule, call: cst.Call) -> cst.SimpleStatementLine | None:
    """The one-statement line whose statement is this call, or ``x.append(<this call>)``."""
    node: cst.CSTNode = call
    parent = src.parent(node)
    if isinstance(parent, cst.Arg):
        outer = src.parent(parent)
        if not (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Attribute)
            and outer.func.attr.value == "append"
            and len(outer.args) == 1
        ):
            return None
        node, parent = outer, src.parent(outer)
    if not isinstance(parent, cst.Expr) or parent.value is not node:
        return None
    line = src.parent(parent)
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        if isinstance(src.parent(line), cst.IndentedBlock):
            return line
    return None


def _has_multiline_string(src: SourceModule, node: cst.CSTNode) -> bool:
    for inner in _walk(node):
        if isinstance(inner, (cst.SimpleString, cst.FormattedString)):
            where = src.range(inner)
            if where.start.line != where.end.line:
                return True
    return False


def _text(src: SourceModule, node: cst.CSTNode) -> str:
    where = src.range(node)
    return _slice(src, where.start.line, where.start.column, where.end.line, where.end.column)


def _slice(src: SourceModule, line: int, column: int, end_line: int, end_column: int) -> str:
    """Source text between two 1-based-line, 0-based-column positions."""
    if line == end_line:
        return src.lines[line - 1][column:end_column]
    parts = [src.lines[line - 1][column:]]
    parts += src.lines[line : end_line - 1]
    parts.append(src.lines[end_line - 1][:end_column])
    return "".join(parts)


def _reindent(text: str, unit: str) -> str:
    """Indent every line after the first by one more level (the first line is placed by
    the caller); blank lines stay blank."""
    lines = text.splitlines(keepends=True)
    return "".join([lines[0]] + [(unit + line) if line.strip() else line for line in lines[1:]]) if lines else text


def _shift(text: str, old: str, new: str) -> str:
    """Move the continuation lines of ``text`` from indentation ``old`` to ``new``."""
    lines = text.splitlines(keepends=True)
    out = lines[:1]
    for line in lines[1:]:
        if not line.strip():
            out.append(line)
        elif new.startswith(old):
            out.append(new[len(old):] + line)
        elif old.startswith(new) and line.startswith(old):
            out.append(line[len(old) - len(new):])
        else:
            out.append(line)
    return "".join(out)


def _plain(subject: str) -> bool:
    """A name, attribute or subscript by a name or literal: safe to evaluate twice."""
    if not subject:
        return False
    try:
        node = cst.parse_expression(subject)
    except cst.ParserSyntaxError:
        return False

    def plain(expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return True
        if isinstance(expr, cst.Attribute):
            return plain(expr.value)
        if isinstance(expr, cst.Subscript):
            return (
                plain(expr.value)
                and len(expr.slice) == 1
                and isinstance(expr.slice[0].slice, cst.Index)
                and (isinstance(expr.slice[0].slice.value, (cst.Integer, cst.SimpleString)) or plain(expr.slice[0].slice.value))
            )
        return False

    return plain(node)


def _is_view(finding: Finding) -> bool:
    return any(VIEW_NOTE in step.note for step in finding.trace)
