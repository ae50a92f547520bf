"""Which path stands for an editor's document, and which URI stands for a path.

An open document is analysed from the editor's text (an overlay), so it needs a path but not
a file: a ``file:`` URI names its path whether or not the file exists (a new file not saved
yet, one deleted or moved while open), decoded byte for byte (``%FF`` stays the byte 0xFF, as
the file system has it); any other scheme (``untitled:Untitled-1``, a remote or virtual
document) gets a stand-in path in the workspace folder, so it is analysed with that project.
Diagnostics go back under the URI the client opened the document with, never one rebuilt
from the path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlparse

from pygls.uris import from_fs_path

from bufferlint.discovery import absolute


class Documents:
    def __init__(self) -> None:
        self._uris: dict[Path, str] = {}

    def path(self, uri: str, base: Path) -> Path | None:
        """The path of the document ``uri`` names (remembering its URI); None if unusable."""
        parsed = urlparse(uri)
        if parsed.scheme == "file":
            if not parsed.path:
                return None
            path = absolute(Path(os.fsdecode(unquote_to_bytes(parsed.path))))
        elif parsed.scheme:
            name = re.sub(r"[^\w.-]+", "_", uri).strip("_")
            path = absolute(base / (name if name.endswith(".py") else f"{name}.py"))
        else:
            return None
        self._uris[path] = uri
        return path

    def uri(self, path: Path) -> str:
        """The URI a path's diagnostics go under: the client's own for an open document."""
        return self._uris.get(path) or from_fs_path(str(path)) or path.as_uri()

    def forget(self, path: Path) -> None:
        self._uris.pop(path, None)
