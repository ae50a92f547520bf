"""BL005 fixes: make the host wait for the device-to-host copy before it reads the tensor.

Offered only when the copy is issued in the function where the finding is (the read there,
or the call of a helper that reads it): a copy issued by a helper is shared by the helper's
other callers. Two candidates, in this order:

1. Copy blocking: drop ``non_blocking=True`` from the copy (``t.to("cpu", non_blocking=True)``
   -> ``t.to("cpu")``). ``safe``: the tensor holds the same bytes, now before the call returns;
   only the overlap of the copy with the host's work is lost.
2. Synchronise before the read: ``torch.cuda.current_stream().synchronize()`` on its own line
   before the statement holding the read, when ``torch`` is imported and that statement comes
   after the copy's (not in an ``elif`` or ``while`` test, which a line before cannot precede
   each time). ``unsafe``: it waits for all the stream's work, and a copy issued on another
   stream is not covered by synchronising the current one.
"""

from __future__ import annotations

import libcst as cst

# The catalog rule these fixes repair, re-exported: fixes/planners.py looks fixers up by it.
from bufferlint.catalog.bl005 import RULE as RULE
from bufferlint.findings import Edit, Finding, Fix
from bufferlint.fixes.base import SAFE, UNSAFE, FixContext, SourceModule

SYNCHRONISE = "cuda.current_stream().synchronize()"


def plan_fix(finding: Finding, source_text: str, context: FixContext) -> Fix | None:
    found = candidates(finding, source_text, context)
    return found[0] if found else None


def candidates(finding: Finding, source_text: str, context: FixContext) -> list[Fix]:
    if not finding.trace or finding.trace[0].path != finding.span.path:
        return []
    src = context.source(source_text)
    read = src.node_at_span(cst.BaseExpression, finding)
    function = next((a for a in src.ancestors(read) if isinstance(a, cst.FunctionDef)), None) if read else None
    if function is None:
        return []
    copy = _copy_call(src, function, finding.trace[0].line, read)
    if copy is None:
        return []
    fixes = [Fix(SAFE, "Copy blocking: drop `non_blocking=True`", _drop_non_blocking(src, copy))]
    statement = next((a for a in src.ancestors(read) if isinstance(a, (cst.SimpleStatementLine, cst.BaseCompoundStatement))), None)
    torch = src.local_name_for("torch")
    if statement is not None and torch is not None and _can_precede(src, statement, copy):
        line = src.range(statement).start.line
        text = f"{src.indent_of(line)}{torch}.{SYNCHRONISE}{src.newline}"
        fixes.append(Fix(UNSAFE, f"Synchronise before the read: `{torch}.{SYNCHRONISE}`", (Edit(line, 1, line, 1, text),)))
    return fixes


def _copy_call(src: SourceModule, function: cst.FunctionDef, line: int, read: cst.CSTNode) -> cst.Call | None:
    """The non-blocking copy on ``line`` of this function's own body: the one holding the read
    when several are on the line (``a.to(...) or b.to(...)`` as a test), else the only one."""
    found = []
    for call in src.walk(cst.Call):
        if src.range(call).start.line != line or _non_blocking(call) is None:
            continue
        owner = next((a for a in src.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        if owner is function:
            found.append(call)
    holding = [call for call in found if read is call or call in set(src.ancestors(read)) or read in set(src.ancestors(call))]
    if len(holding) == 1:
        return holding[0]
    return found[0] if len(found) == 1 else None


def _non_blocking(call: cst.Call) -> int | None:
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "non_blocking" and isinstance(arg.value, cst.Name) and arg.value.value == "True":
            return i
    return None


def _drop_non_blocking(src: SourceModule, call: cst.Call) -> tuple[Edit, ...]:
    position = _non_blocking(call)
    args = list(call.args)
    removed = args.pop(position)
    if args and position == len(args):  # it was the last: the one before takes its comma (or none)
        args[-1] = args[-1].with_changes(comma=removed.comma)
    where = src.range(call)
    text = src.code(call.with_changes(args=args))
    return (Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, text),)


def _can_precede(src: SourceModule, statement: cst.CSTNode, copy: cst.Call) -> bool:
    """A line inserted before ``statement`` runs after the copy and before the read, once."""
    if src.range(statement).start.line <= src.range(copy).end.line:
        return False
    if isinstance(statement, cst.While):
        return False
    return not (isinstance(statement, cst.If) and isinstance(src.parent(statement), cst.If))
