"""Writing a file atomically: every file bufferlint writes (fixes, baselines, noqa edits,
shims) goes through here, so a reader or a crash never sees half a file."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to a temporary file beside ``path`` (through symlinks) and rename it over
    ``path``. ``mode``: permission bits; by default those of the file being replaced."""
    target = Path(os.path.realpath(path))
    if mode is None and target.exists():
        mode = stat.S_IMODE(os.stat(target).st_mode)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".bufferlint-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
