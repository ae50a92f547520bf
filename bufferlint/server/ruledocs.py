"""Where a diagnostic's rule code links to (LSP ``codeDescription``).

The rule documentation ships inside bufferlint (``bufferlint rule BL001`` prints it); it
is not published on the web yet (``reporters.sarif.DOCS_URL`` is where it would be, and
is used when set). So the server writes each rule's page once, as Markdown, to a folder
named after bufferlint's own code (another build never shows stale pages), and links the
``file:`` URI: every editor opens it, offline.

The folder is the user's own: ``$XDG_CACHE_HOME/bufferlint/rules-<fingerprint>`` (``~/.cache``
by default), created with mode 0700 and used only when it is a real folder owned by this
user that no one else can write to; otherwise a fresh ``tempfile.mkdtemp`` folder (unique,
0700). Never a predictable name in a shared temp folder, which another local user could
create first and fill with pages of their choosing.
"""

from __future__ import annotations

import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path

from pygls.uris import from_fs_path

from bufferlint.atomic import write_atomic
from bufferlint.cache import tool_fingerprint
from bufferlint.catalog import RULES
from bufferlint.reporters import sarif


def rule_docs_uri(code: str) -> str | None:
    """The URI of ``code``'s documentation, or None for an unknown code (or an unwritable folder)."""
    if code not in RULES:
        return None
    if sarif.DOCS_URL:
        return f"{sarif.DOCS_URL.rstrip('/')}/{code}"
    folder = _pages()
    return from_fs_path(str(folder / f"{code}.md")) if folder is not None else None


def cache_folder() -> Path:
    """The user's cache folder for bufferlint's rule pages (XDG base directories)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "bufferlint" / f"rules-{tool_fingerprint()[:16]}"


def private(folder: Path) -> bool:
    """Whether ``folder`` is a real folder (not a link) owned by this user, that no one else
    can write to or list."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    owner = os.getuid() if hasattr(os, "getuid") else info.st_uid  # Windows: ACLs, not modes
    return stat.S_ISDIR(info.st_mode) and info.st_uid == owner and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)


def _own_folder() -> Path:
    folder = cache_folder()
    try:
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix="bufferlint-rules-"))
    return folder if private(folder) else Path(tempfile.mkdtemp(prefix="bufferlint-rules-"))


@lru_cache(maxsize=1)
def _pages() -> Path | None:
    try:
        folder = _own_folder()
        for rule in RULES.values():
            page = folder / f"{rule.code}.md"
            if not page.is_file():
                write_atomic(page, f"# {rule.code} {rule.name}\n\n{rule.summary}\n\n{rule.doc}".encode())
    except OSError:
        return None
    return folder
