"""Code actions from a report: what the editor offers on a finding, and "fix all".

For each finding under the cursor (or in the selection):

* its fix, if it has one: ``Fix BL002: <what the fix does>``; a fix that may change
  behaviour is titled ``Unsafe fix BL001: ...`` and is never the preferred action, nor
  listed before a safe one or a suppression (eglot applies the first action when none is
  preferred) (Ruff's applicability levels, as ``--unsafe-fixes``). The edit is the fix as planned on the
  analysed text, verified on its own as every report's fixes are (``api.plan_fixes``:
  one that leaves its finding is never offered);
* ``Suppress BL001 with # noqa: BL001``: the directive ``--add-noqa`` would add
  (``noqa.noqa_text``), when one can be placed.

And once per file with a safe fix: ``Fix all safe bufferlint fixes in this file``
(``source.fixAll.bufferlint``): the safe fixes applied with verification (``api.fix``,
``write=False``, on the editor's text). That costs analyses, so it is computed only when
chosen: through ``codeAction/resolve`` when the client can resolve an action's edit (VS
Code, Neovim), else as the command ``bufferlint.fixAll``, after which the server sends the
edit (``workspace/applyEdit``).

Edits are versioned ``documentChanges`` when the client takes them (a stale edit is then
refused by the client), else plain ``changes``.

Applying an action re-analyses: the server remembers the text each offered action
produces, and a change that turns the document into one of them is analysed at once
(typing is analysed only in warm projects, after a pause). That works with every client,
unlike a command attached to the action (which some LSP libraries, lsprotocol's among them,
mistake for a bare ``Command``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lsprotocol import types

from bufferlint.api import Report
from bufferlint.fixes.apply import apply_edits
from bufferlint.fixes.planners import planners
from bufferlint.fixes.runner import applicable
from bufferlint.noqa import noqa_text
from bufferlint.server.diagnostics import file_uri, finding_diagnostic
from bufferlint.server.positions import Positions, text_edit

FIX_ALL = "bufferlint.fixAll"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.bufferlint"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL_KIND]
FIX_ALL_TITLE = "Fix all safe bufferlint fixes in this file"


@dataclass(frozen=True)
class Client:
    """What the client said it supports (``initialize``) that changes the actions' shape."""

    document_changes: bool = False  # workspace.workspaceEdit.documentChanges
    resolves_edits: bool = False  # textDocument.codeAction.resolveSupport has "edit"
    shows_disabled: bool = False  # textDocument.codeAction.disabledSupport

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities) -> Client:
        workspace_edit = capabilities.workspace and capabilities.workspace.workspace_edit
        code_action = capabilities.text_document and capabilities.text_document.code_action
        resolve = code_action and code_action.resolve_support
        return cls(bool(workspace_edit and workspace_edit.document_changes),
                   bool(resolve and "edit" in resolve.properties),
                   bool(code_action and code_action.disabled_support))

    def edit(self, uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        if self.document_changes:
            document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
        return types.WorkspaceEdit(changes={uri: edits})


def code_actions(client: Client, uri: str, version: int | None, path: Path, report: Report, text: Positions | None,
                 where: types.Range, only: list[str] | None = None,
                 asked: list[types.Diagnostic] | None = None,
                 uri_of: Callable[[Path], str] = file_uri, pending: str | None = None
                 ) -> tuple[list[types.CodeAction | types.Command], set[str]]:
    """The actions for the findings of ``path`` that ``where`` touches or that the client
    names in ``asked`` (the request's ``context.diagnostics``: Neovim asks with the cursor at
    column 0 and the line's diagnostics), and "fix all"; and the texts the quick fixes
    produce. Safe fixes come first, then the suppressions, and unsafe fixes last: a client
    that applies the first or preferred action never applies an unsafe edit. ``text``: the
    document's text if it is still the one the report was made from; else (None) only "fix
    all" is offered, which is computed on the text of the moment it is chosen. A fix that
    was not planned (``pending``: planning is still running; a finding's ``fix_error``: it
    ran out of its budget) is a disabled action saying why, last, for clients that show them."""
    safe_fixes: list[types.CodeAction | types.Command] = []
    suppressions: list[types.CodeAction | types.Command] = []
    unsafe_fixes: list[types.CodeAction | types.Command] = []
    missing: list[types.CodeAction | types.Command] = []
    results: set[str] = set()
    findings = report.findings_in(path)
    named = {_identity(d) for d in asked or ()}
    for finding in findings if text is not None else ():
        diagnostic = finding_diagnostic(finding, text, uri_of)
        if not _touches(diagnostic.range, where) and not named & _identities(diagnostic):
            continue
        if finding.fix is not None:
            edits = [types.TextEdit(range=text.range(e.line, e.column, e.end_line, e.end_column), new_text=e.replacement)
                     for e in finding.fix.edits]
            safe = applicable(finding.fix, unsafe=False)
            title = f"{'Fix' if safe else 'Unsafe fix'} {finding.rule}: {finding.fix.message}"
            (safe_fixes if safe else unsafe_fixes).append(_action(title, client.edit(uri, version, edits), diagnostic, safe))
            results.add(apply_edits(text.text, finding.fix.edits))
        elif (pending or finding.fix_error) and client.shows_disabled and finding.rule in planners():
            missing.append(types.CodeAction(title=f"Fix {finding.rule}", kind=types.CodeActionKind.QuickFix,
                                            diagnostics=[diagnostic],
                                            disabled=types.CodeActionDisabled(reason=pending or finding.fix_error)))
        suppressed = noqa_text(text.text, [finding])
        if suppressed is not None and suppressed != text.text:
            title = f"Suppress {finding.rule} with # noqa: {finding.rule}"
            suppressions.append(_action(title, client.edit(uri, version, [text_edit(text, suppressed)]), diagnostic, False))
            results.add(suppressed)
    out = safe_fixes + suppressions + unsafe_fixes + missing
    if only:
        out = [a for a in out if any(a.kind == kind or a.kind.startswith(f"{kind}.") for kind in only)]
    if any(applicable(f.fix, unsafe=False) for f in findings) and (
            not only or any(FIX_ALL_KIND == kind or FIX_ALL_KIND.startswith(f"{kind}.") for kind in only)):
        if client.resolves_edits:
            out.append(types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, data={"uri": uri, "version": version}))
        else:
            out.append(types.Command(title=FIX_ALL_TITLE, command=FIX_ALL, arguments=[uri, version]))
    return out, results


def _identity(diagnostic: types.Diagnostic) -> tuple:
    """How a diagnostic the client sends back is recognised: by its ``data`` (the finding's
    key) when the client kept it, else by its code and range."""
    if isinstance(diagnostic.data, str):
        return ("data", diagnostic.data)
    r = diagnostic.range
    return ("range", str(diagnostic.code), r.start.line, r.start.character, r.end.line, r.end.character)


def _identities(diagnostic: types.Diagnostic) -> set[tuple]:
    r = diagnostic.range
    return {("data", diagnostic.data),
            ("range", str(diagnostic.code), r.start.line, r.start.character, r.end.line, r.end.character)}


def _action(title: str, edit: types.WorkspaceEdit, diagnostic: types.Diagnostic, preferred: bool) -> types.CodeAction:
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                            is_preferred=preferred or None, edit=edit)


def _touches(span: types.Range, where: types.Range) -> bool:
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(span.start) <= key(where.end) and key(where.start) <= key(span.end)

