"""The LSP lifecycle as the specification has it, on top of pygls' protocol.

* Before ``initialize`` a request is answered with -32002 (ServerNotInitialized) and a
  notification other than ``exit`` is dropped.
* After ``shutdown`` a request is answered with -32600 (InvalidRequest) and a notification
  other than ``exit`` is dropped.
* ``exit`` ends the session with code 0 after ``shutdown``, 1 without (``exit_code``), at once.
* ``didChange``/``didClose`` of a document that is not open is logged and ignored (pygls
  raises a KeyError that the client shows as an error popup).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method

from bufferlint.server.transport import INVALID_REQUEST, error

logger = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002


class BufferlintProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False
        self.exit_code: int | None = None
        self.stop = asyncio.Event()

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        is_request = method is not None and getattr(message, "id", None) is not None
        if method is not None and method != types.EXIT:
            if not self.initialize_received and method != types.INITIALIZE:
                if is_request:
                    error(self, message.id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized yet")
                else:
                    logger.info("dropped %s before initialize", method)
                return
            if self._shutdown:
                if is_request:
                    error(self, message.id, INVALID_REQUEST, f"{method}: the server is shutting down")
                else:
                    logger.info("dropped %s after shutdown", method)
                return
            if method == types.INITIALIZE:
                self.initialize_received = True
        super().handle_message(message)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        """End the session: 0 after ``shutdown``, else 1 (the specification's codes)."""
        self.exit_code = 0 if self._shutdown else 1
        self.stop.set()
        yield from ()

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        if self._is_open(types.TEXT_DOCUMENT_DID_CHANGE, params.text_document.uri):
            yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        if self._is_open(types.TEXT_DOCUMENT_DID_CLOSE, params.text_document.uri):
            yield from super().lsp_text_document__did_close(params)

    def _is_open(self, method: str, uri: str) -> bool:
        """Whether ``uri`` is open (else ``method`` about it is logged, and ignored)."""
        if any(document.uri == uri for document in self.workspace.text_documents.values()):
            return True
        logger.warning("%s for %s, which is not open: ignored", method, uri)
        return False
