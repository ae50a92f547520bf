"""Time `bufferlint server` on a pathological file: a loader with a BL001 finding and a
generated sum of TERMS terms (LibCST needs over a minute to parse 6,000), as an editor uses it:
open, wait for the diagnostics, ask for code actions (at once and again a few seconds later),
edit and save, wait for the new diagnostics. Prints the seconds of each answer; exits 1 when
one took more than --limit seconds (the server's start-up, timed with ``initialize``, aside).

    python scripts/lsp_budget_check.py [--terms 6000] [--limit 2]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bufferlint.server.transport import Frames  # noqa: E402

LOADER = '''import concurrent.futures

from runai_model_streamer import SafetensorsStreamer


def load(files, params):
    with SafetensorsStreamer() as streamer, concurrent.futures.ThreadPoolExecutor() as ex:
        streamer.stream_files(files)
        for name, t in streamer.get_tensors():
            ex.submit(params[name].copy_, t)
'''


class Server:
    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "bufferlint", "server"], cwd=cwd,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env={**os.environ, "PYTHONPATH": str(ROOT)})
        self.messages: queue.Queue = queue.Queue()
        frames = Frames(lambda: self.process.stdout.read1(65536))
        threading.Thread(target=lambda: [self.messages.put(json.loads(b)) for b in iter(frames.next, None)],
                         daemon=True).start()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def until(self, wanted) -> dict:
        while True:
            message = self.messages.get(timeout=600)
            if "id" in message and "method" in message:  # a request of the server's: accept it
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            if wanted(message):
                return message


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=6000)
    parser.add_argument("--limit", type=float, default=2.0)
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="bufferlint-budget-"))
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    text = LOADER + "\nTOTAL = " + " + ".join(["1"] * args.terms) + "\n"
    (project / "m.py").write_text(text)
    uri = (project / "m.py").as_uri()
    server = Server(project)
    timings: list[tuple[str, float]] = []

    def timed(label: str, send: dict | None, wanted) -> dict:
        start = time.perf_counter()
        if send is not None:
            server.send(send)
        message = server.until(wanted)
        timings.append((label, time.perf_counter() - start))
        return message

    capabilities = {"textDocument": {"codeAction": {"disabledSupport": True}}}
    timed("start + initialize", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"processId": None, "rootUri": project.as_uri(), "capabilities": capabilities}},
          lambda m: m.get("id") == 1)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    published = timed("open -> diagnostics", {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}},
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
    diagnostics = published["params"]["diagnostics"]
    ask = {"textDocument": {"uri": uri}, "range": diagnostics[0]["range"], "context": {"diagnostics": diagnostics}}
    first = timed("code action at once", {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": ask},
                  lambda m: m.get("id") == 2)
    time.sleep(3)
    later = timed("code action 3 s later", {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction",
                                             "params": ask}, lambda m: m.get("id") == 3)
    edited = text.replace("TOTAL = ", "TOTAL = 2 + ", 1)
    server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]}})
    (project / "m.py").write_text(edited)
    timed("save -> diagnostics", {"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {
        "textDocument": {"uri": uri}}},
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == 2)
    timed("shutdown", {"jsonrpc": "2.0", "id": 4, "method": "shutdown"}, lambda m: m.get("id") == 4)
    server.send({"jsonrpc": "2.0", "method": "exit"})
    start = time.perf_counter()
    code = server.process.wait(timeout=60)
    timings.append((f"exit (code {code})", time.perf_counter() - start))
    print(f"{args.terms}-term file, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for label, seconds in timings:
        print(f"  {label:<28} {seconds:6.2f} s")
    for label, message in (("at once", first), ("3 s later", later)):
        print(f"  actions {label}: " + "; ".join(
            a["title"] + (f" [disabled: {a['disabled']['reason']}]" if a.get("disabled") else "")
            for a in message["result"]))
    slow = [label for label, seconds in timings if seconds > args.limit and label != "start + initialize"]
    print(f"over {args.limit:g} s: {', '.join(slow) or 'none'}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
