"""The pygls wiring: LSP messages in, diagnostics and edits out.

Analyses run in one worker thread (``bufferlint.api`` calls are serialised anyway), so
the server keeps answering code-action requests while a large project is analysed. What
an analysis publishes is for the document text (and version) it read; code actions are
offered only while the document still has that text.

Nothing the server is sent ends it: a file that does not parse is a diagnostic (the
report's file error), a project whose configuration is broken is one message, and an
internal error in one analysis is logged and shown, and the next request is served.
"""

from __future__ import annotations

import asyncio
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from bufferlint import __version__
from bufferlint.discovery import PYTHON_SUFFIXES
from bufferlint.fixes import budget
from bufferlint.server import actions, transport
from bufferlint.server.diagnostics import file_diagnostics
from bufferlint.server.documents import Documents
from bufferlint.server.positions import Positions, text_edit
from bufferlint.server.progress import AnalysisProgress
from bufferlint.server.protocol import BufferlintProtocol
from bufferlint.server.scheduler import Scheduler
from bufferlint.server.session import Session, analyse, fix_all, plan_fixes

TYPING_DELAY = 0.3  # seconds without a keystroke before a warm project is analysed again
PLANNING_WAIT = 0.8  # seconds a code action waits for the fixes being planned (then answers without)


class BufferlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("bufferlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=BufferlintProtocol)
        self.session = Session()
        self.documents = Documents()
        self.analyses = ThreadPoolExecutor(1, thread_name_prefix="bufferlint-analysis")
        self.scheduler = Scheduler(self.analyse, self.internal_error)
        self.said: set[str] = set()  # messages shown once

    @property
    def show_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    @property
    def client(self) -> actions.Client:
        return actions.Client.of(self.client_capabilities)

    # -- documents and analyses -------------------------------------------------------------

    def texts(self, root: Path) -> dict[Path, tuple[str, int | None]]:
        """The current text and version of the project's open documents."""
        out = {}
        for path in self.session.documents(root):
            document = self.workspace.get_text_document(self.documents.uri(path))
            out[path] = (document.source, document.version)
        return out

    async def analyse(self, root: Path) -> None:
        current = self.texts(root)
        if not current:
            return
        last = self.session.last.get(root)
        if last is not None:
            last.cancel.set()  # its fixes are for texts this analysis replaces: do not wait for them
        texts = {path: text for path, (text, _) in current.items()}
        shown = self.show_progress and not self.session.warm(root)
        progress = AnalysisProgress(self, root) if shown else None
        if progress is not None:
            await progress.begin()
        try:
            analysed = await asyncio.get_running_loop().run_in_executor(
                self.analyses, analyse, root, texts, progress.hear if progress is not None else None)
        finally:
            if progress is not None:
                progress.end()
        report = analysed.report
        if report.error is not None:
            self.log(types.MessageType.Error, f"{root}: {report.error}", show=True)
        for notice in report.notices:
            self.log(types.MessageType.Warning, f"{root}: {notice}", show=False)
        self.session.last[root] = analysed
        self.log(types.MessageType.Log, f"analysed {root} ({len(texts)} open files, {report.files_seen} files seen, "
                                        f"{report.files_parsed} parsed) in {analysed.seconds:.2f} s; cache: {report.cache}")
        edited = False
        for path, (text, version) in current.items():
            if self.session.roots.get(path) != root:
                continue  # closed meanwhile
            uri = self.documents.uri(path)
            edited |= self.workspace.get_text_document(uri).version != version
            # Published for the version analysed, even when the document moved on since:
            # better than nothing on a project too slow to analyse while typing (clients
            # drop or move them; the next analysis replaces them).
            diagnostics = file_diagnostics(report, path, Positions(text, self.workspace.position_codec),
                                           self.documents.uri)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))
        # After publishing: the planning thread would hold the interpreter lock meanwhile.
        analysed.planned = asyncio.get_running_loop().run_in_executor(self.analyses, plan_fixes, analysed)
        if edited and self.session.warm(root):
            self.scheduler.request(root, TYPING_DELAY)  # typing while this was analysed (when cold)

    def internal_error(self, root: Path, exc: Exception) -> None:
        """A bug must not take the editor's linter down: say it, and serve the next request."""
        self.log(types.MessageType.Error, f"internal error analysing {root}: {type(exc).__name__}: {exc}\n"
                                          f"{''.join(traceback.format_exception(exc))}", show=True)

    def log(self, level: types.MessageType, message: str, show: bool = False) -> None:
        self.window_log_message(types.LogMessageParams(type=level, message=f"bufferlint: {message}"))
        if show and message not in self.said:
            self.said.add(message)
            self.window_show_message(types.ShowMessageParams(type=level, message=f"bufferlint: {message.splitlines()[0]}"))

    def path(self, uri: str) -> Path | None:
        """The path standing for the document ``uri`` (``documents``)."""
        return self.documents.path(uri, Path(self.workspace.root_path or Path.cwd()))

    def track(self, uri: str) -> Path | None:
        """Start tracking an opened document; its project root (None: nothing to analyse)."""
        path = self.path(uri)
        if path is None:
            return None
        root = self.session.open(path)
        if isinstance(root, str):
            self.log(types.MessageType.Error, root, show=True)
            return None
        return root


server = BufferlintServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: BufferlintServer, params: types.DidOpenTextDocumentParams) -> None:
    document = params.text_document
    if document.language_id != "python" and not document.uri.endswith(PYTHON_SUFFIXES):
        return  # a client sending every document (a TOML file is no Python to analyse)
    root = ls.track(document.uri)
    if root is not None:
        ls.scheduler.request(root)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: BufferlintServer, params: types.DidChangeTextDocumentParams) -> None:
    path = ls.path(params.text_document.uri)
    root = ls.session.roots.get(path) if path is not None else None
    if root is None:
        return
    text = ls.workspace.get_text_document(params.text_document.uri).source
    if text in ls.session.expected.pop(path, ()):
        ls.scheduler.request(root)  # an action the server offered was applied
    elif ls.session.warm(root):
        ls.scheduler.request(root, TYPING_DELAY)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: BufferlintServer, params: types.DidSaveTextDocumentParams) -> None:
    """A saved file may matter to every open document of its project (and a saved
    configuration may change which project a document is in, or exclude it)."""
    path = ls.path(params.text_document.uri)
    if path is None:
        return
    concerned = {doc for root in ls.session.projects_seeing(path) for doc in ls.session.documents(root)}
    concerned |= ls.session.waiting  # their configuration may have changed
    if path in ls.session.roots:
        concerned.add(path)
    roots = set()
    for doc in sorted(concerned):
        uri = ls.documents.uri(doc)
        root = ls.track(uri)
        if root is None:  # excluded now, or its configuration is broken (said once)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        else:
            roots.add(root)
    for root in sorted(roots):
        ls.scheduler.request(root)


@server.feature(types.SHUTDOWN)
def shutdown(ls: BufferlintServer, params: None) -> None:
    """Do not make the client wait for queued work at exit (a running analysis still ends)."""
    ls.analyses.shutdown(wait=False, cancel_futures=True)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: BufferlintServer, params: types.DidCloseTextDocumentParams) -> None:
    path = ls.path(params.text_document.uri)
    if path is not None:
        ls.documents.forget(path)
    if path is not None and ls.session.close(path) is not None:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=True))
async def code_action(ls: BufferlintServer, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
    path = ls.path(params.text_document.uri)
    analysed = ls.session.analysed(path) if path is not None else None
    if analysed is None:
        return []
    pending = None
    try:  # the fixes of this analysis' findings, if they are planned in time
        await asyncio.wait_for(asyncio.shield(analysed.planned), PLANNING_WAIT)
    except asyncio.TimeoutError:
        pending = "its fix is still being planned: ask again in a moment"
        ls.log(types.MessageType.Log, f"{path}: code actions answered before the fixes were planned")
    except Exception as exc:
        ls.internal_error(path, exc)  # the actions without fixes are still offered
    document = ls.workspace.get_text_document(params.text_document.uri)
    # edited since the analysis: the findings' edits would land in the wrong place
    current = analysed.texts.get(path) == document.source
    text = Positions(document.source, ls.workspace.position_codec) if current else None
    offered, results = actions.code_actions(ls.client, document.uri, document.version, path, analysed.report, text,
                                            params.range, params.context.only, params.context.diagnostics,
                                            ls.documents.uri, pending)
    ls.session.expected.setdefault(path, set()).update(results)
    return offered


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: BufferlintServer, action: types.CodeAction) -> types.CodeAction:
    """Fix all, chosen by a client that resolves edits: compute the edit now."""
    data = action.data if isinstance(action.data, dict) else {}
    if action.kind == actions.FIX_ALL_KIND and isinstance(data.get("uri"), str):
        action.edit = await fixed_file(ls, data["uri"], data.get("version"))
    return action


@server.command(actions.FIX_ALL)
async def fix_all_command(ls: BufferlintServer, uri: str, version: int | None) -> None:
    """Fix all, chosen by a client that does not resolve edits: send the edit."""
    edit = await fixed_file(ls, uri, version)
    if edit is not None:
        await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="bufferlint: fix all"))


async def fixed_file(ls: BufferlintServer, uri: str, version: int | None) -> types.WorkspaceEdit | None:
    """The edit applying the document's safe fixes, verified on its current text (None: there
    is nothing to apply, or the document changed meanwhile; the user is told which)."""
    path = ls.path(uri)
    root = ls.session.roots.get(path) if path is not None else None
    if root is None:
        return None
    texts = {p: text for p, (text, _) in ls.texts(root).items()}
    new = await asyncio.get_running_loop().run_in_executor(ls.analyses, fix_all, root, path, texts)
    if ls.workspace.get_text_document(uri).version != version:
        ls.log(types.MessageType.Info, f"{path}: edited while the fixes were verified; ask again", show=True)
        return None
    if new is None:
        ls.log(types.MessageType.Info, f"{path}: no safe fix could be applied", show=True)
        return None
    ls.session.expected.setdefault(path, set()).add(new)
    return ls.client.edit(uri, version, [text_edit(Positions(texts[path], ls.workspace.position_codec), new)])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: BufferlintServer, params: types.DidChangeConfigurationParams) -> None:
    """bufferlint reads its settings from the project (pyproject.toml, setup.cfg), as the
    command does, so an editor's settings change nothing; a saved configuration file is
    picked up on save. Accepted quietly (no "unknown method" in the editor's log)."""
    ls.log(types.MessageType.Log, "workspace/didChangeConfiguration: settings come from the project's "
                                  "configuration files (pyproject.toml), re-read when one is saved")


def serve() -> int:
    """Serve on stdin/stdout until the client says exit: 0 after ``shutdown``, else 1 (also
    when the client goes away without ``exit``)."""
    transport.serve(server.protocol, server.protocol.stop)
    budget.stop_workers()
    code = server.protocol.exit_code
    return 1 if code is None else code
