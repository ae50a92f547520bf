"""BL002 fix: make the guard reject marked values first.

Inserts, as the guard's first statement (after its docstring)::

    if getattr(<param>, <MARKER>, False):
        return False

followed by a blank line, where ``<MARKER>`` is a module-level name bound to the marker
string when the module has one (defined there, or imported from a project module that
defines it), else the string literal. The docstring gains a paragraph saying why; a guard
without a docstring gets a comment above the check instead. This is the shape of the
upstream SGLang fix (PR #32896). The fix is ``safe``: it only changes what the guard
answers for marked values, which is the bug.
"""

from __future__ import annotations

import textwrap

import libcst as cst

# The catalog rule these fixes repair, re-exported: fixes/planners.py looks fixers up by it.
from bufferlint.catalog.bl002 import RULE as RULE
from bufferlint.catalog.words import kind_markers
from bufferlint.findings import Edit, Finding, Fix
from bufferlint.fixes.base import SAFE, FixContext, SourceModule

NOTE = (
    "Values marked `{marker}` are zero-copy views into a reused buffer. "
    "They must be consumed synchronously before their producer refills it."
)
COMMENT = "# Values marked `{marker}` view a reused buffer: consume them synchronously."
DOC_WIDTH = 79


def candidates(finding: Finding, source_text: str, context: FixContext) -> list[Fix]:
    fix = plan_fix(finding, source_text, context)
    return [fix] if fix is not None else []


def plan_fix(finding: Finding, source_text: str, context: FixContext) -> Fix | None:
    markers = list(kind_markers(finding, context.vocab))  # the guard's kind's, never another's
    if not markers:
        return None
    src = context.source(source_text)
    function = _guard_def(src, finding)
    if function is None or not isinstance(function.body, cst.IndentedBlock) or not function.body.body:
        return None
    param = _inspected_param(src, function, finding, context)
    if param is None:
        return None
    marker, marker_expr = _marker_expression(src, markers, context)

    body = function.body.body
    first = body[0]
    indent = src.indent_of(src.range(first).start.line)
    if not indent or src.indent_of(src.range(function).start.line) == indent:
        return None
    nl = src.newline
    check = f"{indent}if getattr({param}, {marker_expr}, False):{nl}{indent}{src.indent_unit}return False{nl}"

    edits: list[Edit] = []
    docstring = _docstring(first)
    doc_edit = _docstring_edit(src, docstring, indent, NOTE.format(marker=marker)) if docstring is not None else None
    if doc_edit is not None:
        edits.append(doc_edit)
        line = src.range(first).end.line + 1
    else:
        if docstring is not None:  # a docstring we cannot extend: the check goes after it
            line = src.range(first).end.line + 1
        else:
            line = src.range(first).start.line - len(first.leading_lines)
        check = f"{indent}{COMMENT.format(marker=marker)}{nl}" + check
    if src.line_text(line).strip():
        check += nl  # a blank line between the check and the code it protects
    edits.append(Edit(line, 1, line, 1, check))
    name = function.name.value
    return Fix(
        SAFE,
        f"Return False from `{name}` for values marked `{marker}` (check the marker first)",
        tuple(edits),
    )


def _guard_def(src: SourceModule, finding: Finding) -> cst.FunctionDef | None:
    name = finding.function.rpartition(":")[2].rpartition(".")[2] or None
    for node in src.walk(cst.FunctionDef):
        if src.range(node.name).start.line == finding.span.line and (name is None or node.name.value == name):
            return node
    return None


def _inspected_param(src: SourceModule, function: cst.FunctionDef, finding: Finding, context: FixContext) -> str | None:
    """The name of the parameter the guard inspects: the configured position (0 for guards
    found by use), after the receiver of a method."""
    qualname = finding.function.replace(":", ".")
    index = 0
    for spec in context.vocab.guards:
        if any(pattern.qualname == qualname for pattern in spec.calls):
            index = spec.param
            break
    parent = src.parent(function)
    in_class = isinstance(parent, cst.IndentedBlock) and isinstance(src.parent(parent), cst.ClassDef)
    decorators = {_decorator_name(d) for d in function.decorators}
    if in_class and "staticmethod" not in decorators:
        index += 1
    params = list(function.params.posonly_params) + list(function.params.params)
    if index >= len(params):
        return None
    return params[index].name.value


def _decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""


def _marker_expression(src: SourceModule, markers: list[str], context: FixContext) -> tuple[str, str]:
    """(marker, the expression to write for it): a module-level name bound to the marker
    string when the module has one, else the string literal."""
    bindings = src.top_level_bindings()
    imported = src.imported_names()
    for marker in markers:
        for name, node in bindings.items():
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and _string_value(node.value) == marker:
                return marker, name
        for local, qualname in imported.items():
            if "." in qualname and context.project.constant_value(qualname) == marker:
                return marker, local
    return markers[0], _string_literal(src, markers[0])


def _string_value(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower() and "f" not in node.prefix.lower():
        try:
            value = node.evaluated_value
        except Exception:
            return None
        return value if isinstance(value, str) else None
    return None


def _string_literal(src: SourceModule, value: str) -> str:
    """``value`` quoted the way the module mostly quotes strings (double quotes by default)."""
    double = single = 0
    for node in src.walk(cst.SimpleString):
        quote = node.quote
        if quote == '"':
            double += 1
        elif quote == "'":
            single += 1
    quote = "'" if single > double and "'" not in value else '"'
    return f"{quote}{value}{quote}" if quote not in value and "\\" not in value else repr(value)


def _docstring(stmt: cst.BaseStatement) -> cst.BaseExpression | None:
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        return stmt.body[0].value
    return None


def _docstring_edit(src: SourceModule, node: cst.BaseExpression, indent: str, note: str) -> Edit | None:
    """Append ``note`` as a new paragraph at the end of a triple-quoted docstring; inserted
    before the trailing whitespace that precedes the closing quotes, which stays as it is
    (so ``\"\"\"One line.\"\"\"`` becomes a multi-line docstring closed on its own line)."""
    if not isinstance(node, cst.SimpleString) or node.quote not in ('"""', "'''"):
        return None
    if any(c in node.prefix.lower() for c in "bf"):
        return None
    where = src.range(node)
    code = src.code(node)
    body = code[len(node.prefix) + 3 : -3]
    content = body.rstrip()
    if not content.strip():
        return None
    tail = body[len(content):]
    nl = src.newline
    longest = max((len(indent) + len(line.strip()) for line in content.splitlines()), default=0)
    width = max(DOC_WIDTH, min(longest, 100)) - len(indent)
    lines = textwrap.wrap(note, width=max(width, 40), break_on_hyphens=False, break_long_words=False)
    text = nl + nl + (nl).join(indent + line for line in lines)
    if "\n" not in tail and "\r" not in tail:
        text += nl + indent
    # position just after the docstring's last non-blank character
    prefix_lines = (code[: len(node.prefix) + 3] + content).split("\n")
    line = where.start.line + len(prefix_lines) - 1
    column = (where.start.column if len(prefix_lines) == 1 else 0) + len(prefix_lines[-1].replace("\r", ""))
    if "\r" in code and "\n" not in code:  # old Mac line endings: count \r as the break
        return None
    if "\n" in tail or "\r" in tail:
        return Edit(line, column + 1, line, column + 1, text)
    # single-line docstring: also replace the spaces before the closing quotes
    return Edit(line, column + 1, line, column + 1 + len(tail), text)
