"""Benchmark `bufferlint server` on a real tree (a copy of an unpacked sglang wheel).

An LSP client (pygls) starts `python -m bufferlint server` over stdio, opens one model file
and waits for its diagnostics (cold: the first analysis of the project, writing its cache),
then saves edits the way an editor does (didChange, the file written, didSave) and prints
the wall seconds from didSave to the diagnostics published for that version, and the CPU
seconds the server process spent meanwhile (from /proc: less sensitive to other jobs on a
shared machine; its worker processes not included):

* a model file the analysis reads (`deepseek_v4.py`, with BL001 findings), edited three
  ways: a comment added at the end, and a line added to a function the analysis did not
  interpret (`forward`): the cache reuses the last analysis with the findings' lines moved;
  a line added to `load_weights`, which it interpreted: the project is analysed again;
* a model file the analysis does not read: the cache reuses the last analysis and only
  the saved file's own syntax check runs.

Not a test: figures for docs/editors.md. Every run uses PYTHONHASHSEED=0 (see cache_bench).

    python benchmarks/server_bench.py                      # sglang 0.5.16 (downloaded once)
    python benchmarks/server_bench.py --version 0.5.23 --saves 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyzer_bench import unpack_wheel  # noqa: E402
from cache_bench import add_line  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
READ = "sglang/srt/models/deepseek_v4.py"


class Client:
    """Opens, edits and saves documents; waits for the diagnostics of one version."""

    def __init__(self) -> None:
        self.lsp = LanguageClient("server-bench", "1")
        self.published: dict[str, tuple[int | None, list]] = {}
        self.arrived = asyncio.Event()
        self.versions: dict[str, int] = {}

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (params.version, list(params.diagnostics))
            self.arrived.set()

        @self.lsp.feature(types.WINDOW_LOG_MESSAGE)
        def log(params: types.LogMessageParams) -> None:
            if "analysed" in params.message or params.type <= types.MessageType.Warning:
                print("    server:", params.message.removeprefix("bufferlint: ").split(" (")[0][:60],
                      "|", params.message.rsplit(")", 1)[-1].strip())

    def cpu(self) -> float:
        """CPU seconds (user + system) of the server process so far."""
        fields = Path(f"/proc/{self.lsp._server.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def start(self, tree: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}
        await self.lsp.start_io(sys.executable, "-m", "bufferlint", "server", env=env, cwd=str(tree))
        await self.lsp.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(tree))))
        self.lsp.initialized(types.InitializedParams())

    async def diagnostics(self, uri: str, version: int) -> list:
        while self.published.get(uri, (None,))[0] != version:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 600)
        return self.published[uri][1]

    async def open(self, path: Path) -> tuple[float, float, list]:
        uri = from_fs_path(str(path))
        self.versions[uri] = 1
        start, cpu = time.perf_counter(), self.cpu()
        self.lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=path.read_text())))
        found = await self.diagnostics(uri, 1)
        return time.perf_counter() - start, self.cpu() - cpu, found

    async def save_edit(self, path: Path, n: int, function: str | None = None) -> tuple[float, float, list]:
        """Save ``path`` with a comment added at its end, or with a line added to the first
        method called ``function`` (cache_bench.add_line)."""
        uri = from_fs_path(str(path))
        if function is None:
            text = path.read_text() + f"# edited by server_bench ({n})\n"
        else:
            add_line(path, function)
            text = path.read_text()
        self.versions[uri] += 1
        version = self.versions[uri]
        self.lsp.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        path.write_text(text)
        start, cpu = time.perf_counter(), self.cpu()
        self.lsp.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        found = await self.diagnostics(uri, version)
        return time.perf_counter() - start, self.cpu() - cpu, found

    async def stop(self) -> None:
        await self.lsp.shutdown_async(None)
        self.lsp.exit(None)
        await self.lsp.stop()


def unread_model(tree: Path) -> str:
    """The largest model module the last analysis did not parse."""
    parsed = set(json.loads((tree / ".bufferlint_cache" / "run.json").read_text())["body"]["parsed"])
    models = [p for p in (tree / "sglang" / "srt" / "models").glob("*.py") if p.relative_to(tree).as_posix() not in parsed]
    return max(models, key=lambda p: p.stat().st_size).relative_to(tree).as_posix()


async def bench(tree: Path, saves: int) -> list[tuple[str, float, float, int]]:
    client = Client()
    await client.start(tree)
    rows = []
    try:
        seconds, cpu, found = await client.open(tree / READ)
        rows.append((f"open {READ} (cold, writing the cache)", seconds, cpu, len(found)))
        unread = unread_model(tree)
        for name in (READ, unread):
            if name != READ:
                seconds, cpu, found = await client.open(tree / name)
                rows.append((f"open {name}", seconds, cpu, len(found)))
            for n in range(saves):
                seconds, cpu, found = await client.save_edit(tree / name, n)
                rows.append((f"save {name}, comment added ({n + 1})", seconds, cpu, len(found)))
            if name == READ:
                for function in ("forward", "load_weights"):
                    seconds, cpu, found = await client.save_edit(tree / name, 0, function)
                    rows.append((f"save {name}, line added to {function}()", seconds, cpu, len(found)))
    finally:
        await client.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.16")
    parser.add_argument("--saves", type=int, default=3, help="saves of each file (default: 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(unpack_wheel(args.version), tree)
        rows = asyncio.run(bench(tree, args.saves))
    print(f"sglang {args.version}: from the request to the published diagnostics (load average "
          f"{os.getloadavg()[0]:.1f} at the end)")
    for name, seconds, cpu, count in rows:
        print(f"  {name:<72} {seconds:>6.2f} s wall {cpu:>6.2f} s CPU  {count} diagnostics")


if __name__ == "__main__":
    main()
