"""Writing a file safely: every file bufferlint writes (fixes, baselines, noqa edits, shims)
goes through here, so a reader or a crash never sees half a file, and a write never does
more than it says.

* A new version goes to a temporary file beside the target (through symlinks), takes over
  the target's permission bits (and owner, when the process may set it), and is renamed
  over it: readers see the old file or the new one.
* A file with other hard links is rewritten in place instead, through its inode, so every
  link sees the new text (a rename would leave the other links on the old text). That write
  is not atomic; if it fails part-way the old bytes are written back.
* A read-only file (no write permission bit, or not writable by this process) is never
  replaced: :class:`ReadOnlyError` says so, and the caller reports it.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


class ReadOnlyError(PermissionError):
    """The file is read-only: it was not rewritten."""


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` as described in the module docstring. ``mode``: permission
    bits for a new file; by default an existing file keeps its own. Raises OSError (with a
    one-line ``strerror``) when the file cannot or must not be written."""
    target = Path(os.path.realpath(path))
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
            raise ReadOnlyError(
                errno.EACCES, f"the file is read-only (mode {stat.S_IMODE(info.st_mode):04o}): not rewritten; make it writable first"
            )
        if info.st_nlink > 1:
            _write_in_place(target, data)
            return
        if mode is None:
            mode = stat.S_IMODE(info.st_mode)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".bufferlint-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        if info is not None and hasattr(os, "chown"):
            try:
                os.chown(temp, info.st_uid, info.st_gid)
            except OSError:  # not ours to give away: the new file stays the writer's
                pass
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _write_in_place(target: Path, data: bytes) -> None:
    with open(target, "r+b") as handle:
        old = handle.read()
        try:
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        except BaseException:
            handle.seek(0)
            handle.write(old)
            handle.truncate()
            raise
