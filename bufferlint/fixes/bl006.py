"""The BL006 fix: make the host wait for the device before it writes the pinned buffer again.

One candidate: ``torch.cuda.synchronize()`` on its own line before the statement holding the
write, when ``torch`` is imported there and the statement is one a line can precede each time
it runs (not a ``while`` test or an ``elif``). ``unsafe``: the host waits for all the device's
queued work, which serialises the pipeline the non-blocking copy was meant to overlap (an
event recorded after the copy is usually what is wanted), and a copy issued to another device
than the current one is not covered.
"""

from __future__ import annotations

import libcst as cst

# The catalog rule this fix repairs, re-exported: fixes/planners.py looks fixers up by it.
from bufferlint.catalog.bl006 import RULE as RULE
from bufferlint.findings import Edit, Finding, Fix
from bufferlint.fixes.base import UNSAFE, FixContext

SYNCHRONISE = "cuda.synchronize()"


def candidates(finding: Finding, source_text: str, context: FixContext) -> list[Fix]:
    src = context.source(source_text)
    write = src.node_at_span(cst.CSTNode, finding)
    if write is None:
        return []
    statement = write if isinstance(write, cst.SimpleStatementLine) else next(
        (a for a in src.ancestors(write) if isinstance(a, (cst.SimpleStatementLine, cst.BaseCompoundStatement))), None
    )
    torch = src.local_name_for("torch")
    if statement is None or torch is None or isinstance(statement, cst.While):
        return []
    if isinstance(statement, cst.If) and isinstance(src.parent(statement), cst.If):
        return []  # an `elif` test: no line can precede it alone
    line = src.range(statement).start.line
    text = f"{src.indent_of(line)}{torch}.{SYNCHRONISE}{src.newline}"
    return [Fix(UNSAFE, f"Synchronise before the write: `{torch}.{SYNCHRONISE}`", (Edit(line, 1, line, 1, text),))]
