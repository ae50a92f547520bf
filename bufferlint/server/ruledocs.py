"""Where a diagnostic's rule code links to (LSP ``codeDescription``).

The rule documentation ships inside bufferlint (``bufferlint rule BL001`` prints it); it
is not published on the web yet (``reporters.sarif.DOCS_URL`` is where it would be, and
is used when set). So the server writes each rule's page once, as Markdown, to a folder
named after bufferlint's own code (another build never shows stale pages), and links the
``file:`` URI: every editor opens it, offline.
"""

from __future__ import annotations

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


@lru_cache(maxsize=1)
def _pages() -> Path | None:
    folder = Path(tempfile.gettempdir()) / f"bufferlint-rules-{tool_fingerprint()[:16]}"
    try:
        folder.mkdir(exist_ok=True)
        for rule in RULES.values():
            page = folder / f"{rule.code}.md"
            if not page.is_file():
                write_atomic(page, f"# {rule.code} {rule.name}\n\n{rule.summary}\n\n{rule.doc}".encode())
    except OSError:
        return None
    return folder
