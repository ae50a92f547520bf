"""LSP over stdin/stdout, so that one bad message costs that message and nothing more.

pygls' own loop reads a body of the announced length and hands its JSON to a decoder that
raises: a body that is not JSON, or whose params do not fit the method, gets no response (the
client waits forever), and a wrong ``Content-Length`` shifts every later frame. Here:

* framing resynchronises on the next header: a body is cut where a ``Content-Length: N``
  header line begins inside it (raw CR LF cannot occur inside JSON, so that is never a
  body's own text), and text before a header (the rest of a body announced too short) is
  skipped;
* a body that is not JSON is answered with -32700 (id null); JSON that is not a JSON-RPC
  message with -32600; a request whose params do not fit its method with -32602 (its id):
  each logged, none shown as a popup;
* reading runs in a daemon thread, so ``exit`` ends the loop at once: the process exits
  without waiting for stdin or for an analysis in flight.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import Any, BinaryIO, Callable

from pygls.exceptions import JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol

logger = logging.getLogger(__name__)

HEADER_END = b"\r\n\r\n"
LENGTH = re.compile(rb"content-length:[ \t]*(\d+)", re.IGNORECASE)
HEADER_LINE = re.compile(rb"content-length:[ \t]*\d+\r\n", re.IGNORECASE)
HEADER_LOOKBACK = 64  # bytes of a header line that may have arrived before the rest of it

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class Frames:
    """Message bodies from a byte stream (``read`` returns what is available, b"" at its end)."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read
        self._buffer = bytearray()

    def _fill(self) -> bool:
        chunk = self._read()
        self._buffer += chunk
        return bool(chunk)

    def next(self) -> bytes | None:
        """The next body, or None at the end of the stream."""
        while True:
            end = self._buffer.find(HEADER_END)
            if end < 0:
                if not self._fill():
                    return None
                continue
            lengths = list(LENGTH.finditer(self._buffer, 0, end))
            if not lengths:
                logger.warning("skipped %d bytes without a Content-Length header", end + len(HEADER_END))
                del self._buffer[:end + len(HEADER_END)]
                continue
            if lengths[-1].start():
                logger.warning("skipped %d bytes before a header", lengths[-1].start())
            length = int(lengths[-1].group(1))
            del self._buffer[:end + len(HEADER_END)]
            return self._body(length)

    def _body(self, length: int) -> bytes:
        searched = 0  # where the search for a header resumes after more bytes came (a large body is scanned once)
        while True:
            header = HEADER_LINE.search(self._buffer, max(0, searched - HEADER_LOOKBACK))
            if header is not None and header.start() < length:
                length = header.start()  # announced too long: the next message starts here
                break
            searched = len(self._buffer)
            if searched >= length or not self._fill():
                break
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body


def error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    """Send a JSON-RPC error response (``msg_id`` None: the request's id is unknown)."""
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def handle_body(protocol: JsonRPCProtocol, body: bytes) -> None:
    """Decode one body and hand the message to ``protocol``; answer what cannot be decoded."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        logger.warning("message is not JSON: %s", exc)
        error(protocol, None, PARSE_ERROR, f"Parse error: the message is not JSON ({exc})")
        return
    msg_id = data.get("id") if isinstance(data, dict) else None
    if not (isinstance(data, dict) and data.get("jsonrpc") == "2.0"
            and (isinstance(data.get("method"), str) or "result" in data or "error" in data)):
        logger.warning("not a JSON-RPC 2.0 message: %.200s", body)
        error(protocol, msg_id if isinstance(msg_id, (int, str)) else None, INVALID_REQUEST,
              "Invalid Request: not a JSON-RPC 2.0 request, notification or response")
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcInvalidParams as exc:
        cause = exc.__cause__ or exc
        logger.warning("invalid params for %s: %s", data.get("method"), cause)
        if "method" in data and "id" in data:
            error(protocol, msg_id, INVALID_PARAMS, f"Invalid params for {data['method']}: {_first_line(cause)}")
        return
    except Exception as exc:  # a message pygls cannot decode: answered, never fatal
        logger.warning("cannot decode message: %s", exc)
        if "method" in data and "id" in data:
            error(protocol, msg_id, INVALID_REQUEST, f"Invalid Request: {_first_line(exc)}")
        return
    protocol.handle_message(message)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def serve(protocol: JsonRPCProtocol, stop: asyncio.Event, stdin: BinaryIO | None = None,
          stdout: BinaryIO | None = None) -> None:
    """Read messages until the stream ends or ``stop`` is set (by ``exit``)."""
    source = stdin or sys.stdin.buffer
    protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    frames = Frames(lambda: source.read1(65536))

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def deliver(body: bytes | None) -> None:
            if body is None:
                stop.set()
                return
            try:
                handle_body(protocol, body)
            except Exception:  # a bug handling one message must not end the session
                logger.exception("cannot handle a message")

        def reader() -> None:
            while True:
                try:
                    body = frames.next()
                except (OSError, ValueError):
                    body = None
                loop.call_soon_threadsafe(deliver, body)
                if body is None:
                    return

        threading.Thread(target=reader, name="bufferlint-lsp-reader", daemon=True).start()
        await stop.wait()

    asyncio.run(main())
