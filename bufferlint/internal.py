"""How a bug in bufferlint itself is told to the user: one line, never a traceback.

An internal error costs the function or file it happened in, not the run: the rest is
still analysed and reported, and the run exits 2 so that CI notices. The line names the
exception and asks for a report; ``BUFFERLINT_DEBUG=1`` re-raises for the traceback.
"""

from __future__ import annotations

import os

MAX_CAUSE = 200  # characters of the exception's message kept on the line

PLEASE_REPORT = "please report this bufferlint bug (BUFFERLINT_DEBUG=1 shows the traceback)"


def debugging() -> bool:
    """Whether internal errors should be re-raised instead of reported."""
    return os.environ.get("BUFFERLINT_DEBUG") == "1"


def cause(exc: BaseException) -> str:
    """``Type: first line of the message``, shortened to one readable line."""
    try:  # a KeyError on a syntax node renders the whole subtree, or recurses past the limit
        text = str(exc)[: MAX_CAUSE * 4]
    except Exception:
        text = ""
    lines = text.strip().splitlines()
    message = lines[0] if lines else ""
    if len(message) > MAX_CAUSE:
        message = message[: MAX_CAUSE - 3] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def internal_error(where: str, exc: BaseException) -> str:
    """The message for an internal error while working on ``where`` (a function, a file)."""
    return f"internal error while analysing {where}: {cause(exc)}; {PLEASE_REPORT}"
