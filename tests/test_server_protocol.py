"""`bufferlint server` follows the protocol: the JSON-RPC error cases, the lifecycle and its
exit codes, framing that survives a wrong Content-Length, document sync for documents that
are not (or not yet) files. pytest-lsp drives what a well-formed client can send; a raw pipe
sends what no client library will (bad JSON, bad framing, requests out of order)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from conftest import REPO
from bufferlint.server.transport import Frames
from test_server import EXAMPLE, client, diagnostics, example, initialize, open_file  # noqa: F401, F811  (fixtures)

LOADER = (EXAMPLE / "streamloader" / "models.py").read_text()


class Pipe:
    """The server over raw stdin/stdout: frames written as given, messages read as they come."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "bufferlint", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd,
                                        env={**os.environ, "PYTHONPATH": str(REPO)})
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        frames = Frames(lambda: self.process.stdout.read1(65536))
        while (body := frames.next()) is not None:
            self.messages.put(json.loads(body))

    def raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict, length_delta: int = 0) -> None:
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % (len(body) + length_delta) + body)

    def reply(self, msg_id: object, timeout: float = 30) -> dict:
        """The response to ``msg_id`` (None: an error response to an unidentified message)."""
        while True:
            message = self.messages.get(timeout=timeout)
            if "method" not in message and message.get("id") == msg_id:
                return message

    def initialize(self, root: Path) -> None:
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})
        assert "result" in self.reply(1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def exit_code(self) -> int:
        self.send({"jsonrpc": "2.0", "method": "exit"})
        return self.process.wait(timeout=30)


def code_action(msg_id: int, uri: str) -> dict:
    zero = {"line": 0, "character": 0}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/codeAction",
            "params": {"textDocument": {"uri": uri}, "range": {"start": zero, "end": zero}, "context": {"diagnostics": []}}}


@pytest.fixture
def pipe(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    session = Pipe(tmp_path)
    yield session
    if session.process.poll() is None:
        session.process.kill()
        session.process.wait()


def test_a_request_before_initialize_is_refused_with_32002(pipe, tmp_path):
    pipe.send(code_action(7, (tmp_path / "m.py").as_uri()))
    assert pipe.reply(7)["error"]["code"] == -32002
    pipe.initialize(tmp_path)  # and the session can still start


def test_malformed_messages_are_answered_and_the_session_goes_on(pipe, tmp_path):
    pipe.initialize(tmp_path)
    pipe.raw(b"Content-Length: 9\r\n\r\n{not json")
    assert pipe.reply(None)["error"]["code"] == -32700
    pipe.send({"jsonrpc": "2.0", "id": 2, "result_of": "nothing"})  # JSON, not a JSON-RPC message
    assert pipe.reply(2)["error"]["code"] == -32600
    pipe.send([1, 2])
    assert pipe.reply(None)["error"]["code"] == -32600
    pipe.send(code_action(3, (tmp_path / "m.py").as_uri()))
    assert pipe.reply(3)["result"] == []


@pytest.mark.parametrize("delta", [+40, -5])
def test_a_wrong_content_length_costs_one_message(pipe, tmp_path, delta):
    pipe.initialize(tmp_path)
    uri = (tmp_path / "m.py").as_uri()
    pipe.send(code_action(2, uri), length_delta=delta)  # announced too long, or too short
    pipe.send(code_action(3, uri))
    assert pipe.reply(3)["result"] == []  # the next message is read whole


def test_a_cancelled_request_still_gets_one_response(pipe, tmp_path):
    """$/cancelRequest: the request is answered all the same, with its result or -32800."""
    pipe.initialize(tmp_path)
    uri = (tmp_path / "m.py").as_uri()
    pipe.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}})
    pipe.send(code_action(2, uri))
    pipe.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}})
    answer = pipe.reply(2)
    assert answer.get("result") == [] or answer["error"]["code"] == -32800
    pipe.send(code_action(3, uri))
    assert pipe.reply(3)["result"] == []


def test_after_shutdown_requests_get_32600_and_exit_is_0(pipe, tmp_path):
    pipe.initialize(tmp_path)
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    assert pipe.reply(2)["result"] is None
    pipe.send(code_action(3, (tmp_path / "m.py").as_uri()))
    assert pipe.reply(3)["error"]["code"] == -32600
    assert pipe.exit_code() == 0


def test_exit_without_shutdown_is_1_and_does_not_wait_for_stdin(pipe, tmp_path):
    pipe.initialize(tmp_path)
    assert pipe.exit_code() == 1  # stdin is still open: the server does not wait for it to close


# -- with a real client (pytest-lsp) --------------------------------------------------------

@pytest.mark.asyncio
async def test_invalid_params_get_32602_and_no_popup(client: LanguageClient, example: Path) -> None:
    await initialize(client, example)
    uri = open_file(client, example / "streamloader" / "models.py")
    answer: Future = Future()  # typed clients cannot send it: the message goes out raw
    client.protocol._request_futures["bad"] = answer
    client.protocol._send_data({"jsonrpc": "2.0", "id": "bad", "method": types.TEXT_DOCUMENT_CODE_ACTION,
                                "params": {"textDocument": {"uri": uri}}})  # no range, no context
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(asyncio.wrap_future(answer), 30)
    assert raised.value.code == -32602
    await diagnostics(client, uri, ["BL001"])  # the session goes on
    assert client.messages == []  # window/showMessage: nothing shown to the user


@pytest.mark.asyncio
async def test_a_change_to_a_document_not_open_is_ignored(client: LanguageClient, example: Path) -> None:
    await initialize(client, example)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=(example / "nowhere.py").as_uri(), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="#")]))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"bufferlint": {}}))
    uri = open_file(client, example / "streamloader" / "models.py")
    await diagnostics(client, uri, ["BL001"])
    assert client.messages == []
    assert any("didChangeConfiguration" in m.message for m in client.log_messages)


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["unsaved_models.py", "bad\udcff\udcfename.py"])
async def test_a_document_not_on_disk_or_with_a_non_utf8_name_is_analysed_from_its_text(
        client: LanguageClient, example: Path, name: str) -> None:
    await initialize(client, example)
    folder = (example / "streamloader").as_uri()  # the file is never written: a new one, not saved yet
    uri = f"{folder}/{name}" if name.isascii() else f"{folder}/bad%FF%FEname.py"
    client.texts[uri], client.versions[uri] = LOADER, 1
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=LOADER)))
    [bl001] = await diagnostics(client, uri, ["BL001"])  # published under the URI it was opened with
    assert "(from `streamer.get_tensors(...)` at weights.py:10)" in bl001.message


@pytest.mark.asyncio
async def test_an_untitled_document_is_analysed_with_the_workspace(client: LanguageClient, example: Path) -> None:
    await initialize(client, example)
    uri = "untitled:Untitled-1"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=LOADER)))
    [bl001] = await diagnostics(client, uri, ["BL001"])
    assert "(from `streamer.get_tensors(...)` at streamloader/weights.py:10)" in bl001.message


@pytest.mark.asyncio
async def test_code_actions_for_the_diagnostics_in_the_context_unsafe_last(client: LanguageClient,
                                                                           example: Path) -> None:
    """Neovim asks with the cursor at column 0 and the line's diagnostics in the context."""
    await initialize(client, example, editor="neovim")
    uri = open_file(client, example / "streamloader" / "models.py")
    [bl001] = await diagnostics(client, uri, ["BL001"])
    line = bl001.range.start.line
    cursor = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0))
    for _ in range(60):  # asked before its fix was planned, a finding has only its suppression
        found = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=cursor,
            context=types.CodeActionContext(diagnostics=[bl001])))
        titles = [a.title for a in found]
        if len(titles) > 1:
            break
        await asyncio.sleep(0.5)
    assert titles[0] == "Suppress BL001 with # noqa: BL001" and titles[1].startswith("Unsafe fix BL001")
    assert not any(a.is_preferred for a in found)


# -- framing, in process -------------------------------------------------------------------

def frames(data: bytes) -> list[bytes]:
    stream = io.BytesIO(data)
    reader = Frames(lambda: stream.read1(7))  # a few bytes at a time: headers split anywhere
    out = []
    while (body := reader.next()) is not None:
        out.append(body)
    return out


def test_frames_resynchronise_on_the_next_header():
    good = b'{"a": 1}'
    assert frames(b"Content-Length: 8\r\n\r\n" + good) == [good]
    too_long = b"Content-Length: 30\r\n\r\n" + good + b"Content-Length: 8\r\n\r\n" + good
    assert frames(too_long) == [good, good]
    too_short = b"Content-Length: 5\r\n\r\n" + good + b"Content-Length: 8\r\n\r\n" + good
    assert frames(too_short) == [good[:5], good]
    with_type = b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: 8\r\n\r\n" + good
    assert frames(with_type + b"garbage\r\n\r\n" + b"Content-Length: 8\r\n\r\n" + good) == [good, good]


def test_frames_wait_for_a_body_split_across_reads():
    body = json.dumps({"text": "x" * 1000}).encode()
    assert frames(b"Content-Length: %d\r\n\r\n" % len(body) + body) == [body]


def test_nothing_in_a_body_is_taken_for_a_header():
    body = json.dumps({"text": "Content-Length: 3\r\n\r\nabc"}).encode()  # escaped: no raw CR LF
    assert frames(b"Content-Length: %d\r\n\r\n" % len(body) + body) == [body]


@pytest.mark.asyncio
async def test_a_fix_not_planned_is_a_disabled_action_saying_why(client: LanguageClient, example: Path) -> None:
    """A generated 1,500-term sum: the file is never planned (LibCST would take minutes), so the
    finding's fix is an action the editor shows greyed out, with the reason."""
    await initialize(client, example)  # VS Code's capabilities: it shows disabled actions
    path = example / "streamloader" / "generated.py"
    uri = open_file(client, path, LOADER + "\nTOTAL = " + " + ".join(["1"] * 1_500) + "\n")
    [bl001] = await diagnostics(client, uri, ["BL001"])
    for _ in range(60):  # asked before planning ended, the action says that instead
        found = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=bl001.range,
            context=types.CodeActionContext(diagnostics=[bl001])))
        [disabled] = [a for a in found if a.disabled is not None]
        if disabled.disabled.reason != "its fix is still being planned: ask again in a moment":
            break
        await asyncio.sleep(0.5)
    assert disabled.title == "Fix BL001" and disabled.disabled.reason.startswith("not planned: the file nests code")
    assert found[-1] is disabled and found[0].title == "Suppress BL001 with # noqa: BL001"
