"""`bufferlint server` end to end: a real LSP client (pytest-lsp) talks to
`python -m bufferlint server` over stdin/stdout, on a copy of the bundled example."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import REPO
from test_server_api import EXAMPLE, FIXED_GUARD

TIMEOUT = 60  # seconds for one analysis to be published (a loaded CI machine)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    root = tmp_path / "runai_loader"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", ".bufferlint_cache"))
    return root


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "bufferlint", "server"],
    server_env={**os.environ, "PYTHONPATH": str(REPO)},
))
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        lsp_client.applied.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp_client.applied = []
    lsp_client.texts = {}
    lsp_client.versions = {}
    yield
    await lsp_client.shutdown_session()


async def initialize(client: LanguageClient, example: Path, editor: str = "visual-studio-code") -> None:
    """Start the session as ``editor`` does (its recorded capabilities)."""
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(editor),
        root_uri=from_fs_path(str(example)),
        workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(example)), name="example")],
    ))


# -- what an editor does ------------------------------------------------------------------

def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = from_fs_path(str(path))
    client.texts[uri] = path.read_text() if text is None else text
    client.versions[uri] = 1
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=client.texts[uri])))
    return uri


def change(client: LanguageClient, uri: str, text: str) -> None:
    client.texts[uri] = text
    client.versions[uri] += 1
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=client.versions[uri]),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def apply(client: LanguageClient, edit: types.WorkspaceEdit) -> None:
    """Apply a workspace edit as an editor does: change the documents, tell the server."""
    if client.capabilities.workspace.workspace_edit.document_changes:
        assert edit.changes is None
        for document_edit in edit.document_changes:
            uri = document_edit.text_document.uri
            assert document_edit.text_document.version == client.versions[uri]
            change(client, uri, edited(client.texts[uri], document_edit.edits))
    else:
        assert edit.document_changes is None
        for uri, edits in edit.changes.items():
            change(client, uri, edited(client.texts[uri], edits))


def edited(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with LSP edits applied (the example is ASCII: UTF-16 units are characters)."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        return sum(len(line) for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def diagnostics(client: LanguageClient, uri: str, codes: list[str]) -> list[types.Diagnostic]:
    """Wait until the diagnostics published for ``uri`` have these codes."""

    async def published() -> list[types.Diagnostic]:
        while True:
            found = client.diagnostics.get(uri)
            if found is not None and sorted(str(d.code) for d in found) == sorted(codes):
                return list(found)
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    try:
        return await asyncio.wait_for(published(), TIMEOUT)
    except TimeoutError:
        pytest.fail(f"{uri}: expected {codes}, last published {client.diagnostics.get(uri)}; "
                    f"server log: {[m.message for m in client.log_messages]}")


async def actions_at(client: LanguageClient, uri: str, diagnostic: types.Diagnostic) -> dict[str, types.CodeAction]:
    found = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    return {action.title: action for action in found}


# -- the tests ------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_findings_with_their_trace_then_a_fix_removes_them_in_every_open_file(client: LanguageClient,
                                                                                    example: Path) -> None:
    await initialize(client, example)
    package = example / "streamloader"
    models = open_file(client, package / "models.py")

    [bl001] = await diagnostics(client, models, ["BL001"])  # the guard's file is not open: not reported
    assert bl001.severity == types.DiagnosticSeverity.Error and bl001.source == "bufferlint"
    assert (bl001.range.start.line, bl001.range.start.character) == (14, 16)  # models.py:15:17
    # the example declares no streamer version: the versions it is a hazard under come first
    assert bl001.message.startswith("with runai-model-streamer<0.17 only (nothing declares runai-model-streamer, "
                                    "raise the floor: `runai-model-streamer>=0.17`): borrowed buffer view reaches "
                                    "async sink `maybe_submit` without a guard")
    docs = Path(to_fs_path(bl001.code_description.href))
    assert docs.name == "BL001.md" and docs.read_text().startswith("# BL001 borrowed-value-to-async-sink")
    trace = [(Path(to_fs_path(r.location.uri)).name, r.location.range.start.line + 1, r.message)
             for r in bl001.related_information]
    assert trace == [
        ("weights.py", 10, "`streamer.get_tensors(...)` hands out borrowed views of a reused buffer "
                           "with runai-model-streamer<0.17"),
        ("weights.py", 13, "yielded to the caller"),
        ("loader.py", 5, "returned by `stream_safetensors(...)`"),
        ("loader.py", 5, "passed to `model.load_weights(...)`: `TinyModel.load_weights` by name, like every "
                         "project method of that name (none is in a module imported from here)"),
        ("models.py", 13, "element taken by `for name, loaded_weight in ...`"),
        ("models.py", 15, "passed to `maybe_submit(...)`"),
        ("executor_utils.py", 14, "consumed asynchronously by `executor.submit`"),
    ]
    unsafe = await actions_at(client, models, bl001)
    assert [t for t in unsafe if t.startswith("Unsafe fix BL001: Hand over a copy")], list(unsafe)

    guard = open_file(client, package / "executor_utils.py")
    [bl002] = await diagnostics(client, guard, ["BL002"])
    assert bl002.severity == types.DiagnosticSeverity.Error and bl002.related_information
    await diagnostics(client, models, [])  # the guard's finding stands for the call it decides
    # the first (cold) analysis was shown as progress, begun and ended
    [shown, *_] = client.progress_reports.values()
    assert shown[0].title.startswith("bufferlint: analysing") and isinstance(shown[-1], types.WorkDoneProgressEnd)

    offered = await actions_at(client, guard, bl002)
    fix = next(a for title, a in offered.items() if title.startswith("Fix BL002: Return False from `should_async_load`"))
    assert fix.is_preferred and fix.kind == types.CodeActionKind.QuickFix
    assert "Suppress BL002 with # noqa: BL002" in offered
    assert "Fix all safe bufferlint fixes in this file" in offered

    apply(client, fix.edit)
    await diagnostics(client, guard, [])
    await diagnostics(client, models, [])
    assert client.texts[guard].count("_sglang_runai_streamer_tensor") == 2
    assert (package / "executor_utils.py").read_text() == (EXAMPLE / "streamloader" / "executor_utils.py").read_text()


@pytest.mark.asyncio
async def test_noqa_quick_fix_and_a_syntax_error_in_the_buffer(client: LanguageClient, example: Path) -> None:
    await initialize(client, example, "neovim@v0.10.0")  # takes plain `changes`, not versioned document edits
    models = open_file(client, example / "streamloader" / "models.py")
    original = client.texts[models]
    [bl001] = await diagnostics(client, models, ["BL001"])
    apply(client, (await actions_at(client, models, bl001))["Suppress BL001 with # noqa: BL001"].edit)
    await diagnostics(client, models, [])
    assert client.texts[models].splitlines()[14].endswith("  # noqa: BL001")

    # The project is warm now: typing is analysed without a save or a command.
    broken = original.replace("for name, loaded_weight in weights:", "for name, loaded_weight in weights")
    change(client, models, broken)
    [error] = await diagnostics(client, models, ["None"])
    assert error.severity == types.DiagnosticSeverity.Error
    assert error.message.startswith("syntax error at line 13") and error.range.start.line == 12
    change(client, models, original)  # the server is still up and analyses the next text
    await diagnostics(client, models, ["BL001"])


@pytest.mark.asyncio
async def test_a_save_in_another_module_refreshes_the_files_that_depend_on_it(client: LanguageClient,
                                                                           example: Path) -> None:
    await initialize(client, example)
    models = open_file(client, example / "streamloader" / "models.py")
    await diagnostics(client, models, ["BL001"])
    saved = example / "streamloader" / "executor_utils.py"
    saved.write_text(FIXED_GUARD)  # edited and saved in the editor
    guard = open_file(client, saved)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=guard)))
    await diagnostics(client, models, [])
    await diagnostics(client, guard, [])


@pytest.mark.asyncio
@pytest.mark.parametrize("editor", ["visual-studio-code", "emacs"])
async def test_fix_all_applies_the_verified_safe_fixes(client: LanguageClient, example: Path, editor: str) -> None:
    await initialize(client, example, editor)
    guard = open_file(client, example / "streamloader" / "executor_utils.py")
    [bl002] = await diagnostics(client, guard, ["BL002"])
    # Typed since (analysed yet or not): fix all is still offered, and fixes the current text.
    change(client, guard, client.texts[guard] + "# typed, not saved\n")
    offered = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=guard), range=bl002.range,
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
    [chosen] = offered
    assert chosen.title == "Fix all safe bufferlint fixes in this file"
    if editor == "visual-studio-code":  # resolves an action's edit when it is chosen
        assert chosen.kind == "source.fixAll.bufferlint" and chosen.edit is None
        apply(client, (await client.code_action_resolve_async(chosen)).edit)
    else:  # cannot: runs the command, and the server sends the edit
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=chosen.command, arguments=chosen.arguments))
        [edit] = client.applied
        apply(client, edit)
    await diagnostics(client, guard, [])
    assert client.texts[guard].count("_sglang_runai_streamer_tensor") == 2
    assert client.texts[guard].endswith("# typed, not saved\n")


@pytest.mark.asyncio
async def test_a_saved_configuration_applies_to_the_open_files(client: LanguageClient, example: Path) -> None:
    await initialize(client, example)
    models = open_file(client, example / "streamloader" / "models.py")
    guard = open_file(client, example / "streamloader" / "executor_utils.py")
    await diagnostics(client, models, [])  # the guard's BL002 stands for the call
    await diagnostics(client, guard, ["BL002"])
    pyproject = example / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[tool.bufferlint]\n", '[tool.bufferlint]\nignore = ["BL002"]\nextend-exclude = ["streamloader/models.py"]\n'))
    config = from_fs_path(str(pyproject))
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=config, language_id="toml", version=1, text=pyproject.read_text())))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=config)))
    await diagnostics(client, guard, [])  # BL002 ignored
    await diagnostics(client, models, [])  # excluded
    assert config not in client.diagnostics  # TOML is not analysed as Python

    original = (EXAMPLE / "pyproject.toml").read_text()
    pyproject.write_text(original.replace("[tool.bufferlint]\n", "[tool.bufferlint]\nselect = 3\n"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=config)))
    while not client.messages:
        await client.wait_for_notification(types.WINDOW_SHOW_MESSAGE)
    [message] = client.messages
    assert message.type == types.MessageType.Error and "select" in message.message and "\n" not in message.message
    pyproject.write_text(original)  # mended: everything is analysed again
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=config)))
    [bl002] = await diagnostics(client, guard, ["BL002"])
    # both files open: the guard's BL002 stands for the loader's call (a step of its trace)
    assert any(r.location.uri == models for r in bl002.related_information)
    await diagnostics(client, models, [])
