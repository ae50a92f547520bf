"""Where the persistent cache lives and how its files are read and written.

Ruff's and mypy's caches are the anchors: a folder in the project (``.bufferlint_cache/``,
with its own ``.gitignore`` so that it never shows up in ``git status``), or the folder named
by ``BUFFERLINT_CACHE_DIR`` or the ``cache-dir`` setting; ``--no-cache`` turns it off.

Everything in it is JSON or a plain copy of a source file (``texts/``, named and checked by
its content hash), never pickle: a cache folder can come with a checkout, and reading it must
not run code. Each file records the format, a key (the tool's own code, the Python that
runs it, the vocabulary and the settings that shape the analysis) and a digest of its body;
a file that is unreadable, corrupt, edited since it was written or written under another key
is ignored and rebuilt, never trusted and never a crash. Writes go to a temporary file
renamed over the old one, so concurrent runs see one whole file or the other; the temporary
file is locked while it is written, so a later run can tell (and remove) the leftovers of a
run killed in between (``remove_leftovers``). What is cached and when it may be reused is
``bufferlint.analysis.incremental.cached``'s business.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

FORMAT = 2  # 2: documents carry a digest of their body
DIRECTORY = ".bufferlint_cache"
ENVIRONMENT = "BUFFERLINT_CACHE_DIR"
PACKAGE = Path(__file__).resolve().parent


def cache_directory(root: Path, configured: Path | None = None) -> Path:
    """``BUFFERLINT_CACHE_DIR`` first (as Ruff's ``RUFF_CACHE_DIR``), then the ``cache-dir``
    setting, then ``.bufferlint_cache`` in the project root."""
    environment = os.environ.get(ENVIRONMENT)
    if environment:
        return Path(environment).expanduser().absolute()
    return configured if configured is not None else root / DIRECTORY


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """A hash of bufferlint's own code and shipped packs: a cache written by another build
    (even an unreleased edit of the same version) is never reused."""
    digest = hashlib.blake2b(digest_size=16)
    shipped = [PACKAGE / "_packs", PACKAGE.parent / "rules"]
    for path in sorted(PACKAGE.rglob("*.py")) + sorted(p for d in shipped if d.is_dir() for p in d.glob("*.toml")):
        digest.update(str(path.relative_to(path.parents[1])).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def python_fingerprint() -> list[str]:
    """The Python that runs the analysis: what ``ast.parse`` and ``compile`` accept (and so
    every syntax error and parsed tree) depends on its version and implementation, and
    pre-commit's environment is often another Python than the project's."""
    return [sys.implementation.name, sys.implementation.cache_tag or "", sys.version]


def fingerprint(*parts: Any) -> str:
    """A stable hash of plain data and dataclasses (sets in sorted order, so the same
    vocabulary gives the same key in every process whatever the hash seed)."""
    return hashlib.blake2b(json.dumps(_canonical(parts), sort_keys=True).encode(), digest_size=16).hexdigest()


def _canonical(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__, {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}]
    if isinstance(value, dict):
        return sorted(([_canonical(k), _canonical(v)] for k, v in value.items()), key=repr)
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)  # compiled patterns, paths


class Cache:
    """JSON documents under one key in the cache folder."""

    def __init__(self, directory: Path, key: str) -> None:
        self.directory = directory
        self.key = key
        self.problems: list[str] = []  # why something could not be written, for the run's notices

    def load(self, name: str) -> dict | None:
        """The document ``name`` written under this key, or None (absent, corrupt, foreign)."""
        return self._read(self.directory / f"{name}.json")

    def _read(self, path: Path, digest: str | None = None) -> dict | None:
        """The body of the document at ``path`` (and, given ``digest``, only if its body has
        that digest)."""
        try:
            data = path.read_bytes()
        except OSError:
            return None
        # The layout ``_encode`` writes: the header's fields, then the body's bytes, whose
        # digest the header holds (a body edited, truncated or swapped is not this one).
        cut = data.find(BODY)
        if cut < 0 or not data.endswith(b"}"):
            return None
        body_bytes = data[cut + len(BODY):-1]
        try:
            header = json.loads(data[:cut] + b"}")
            if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("key") != self.key:
                return None
            if header.get("digest") != content_hash(body_bytes) or digest not in (None, header["digest"]):
                return None
            body = json.loads(body_bytes)
        except (ValueError, RecursionError):
            return None
        return body if isinstance(body, dict) else None

    def save(self, name: str, body: dict) -> None:
        """Write ``name`` atomically; a folder that cannot be written costs the cache, not the run."""
        data = self._encode(body)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                _replace(ignore, b"# Created by bufferlint: the cache is not part of the project.\n*\n")
            _replace(self.directory / f"{name}.json", data)
        except OSError as exc:
            self.problems.append(f"cache not written to {self.directory}: {exc.strerror or exc}")

    def _encode(self, body: dict) -> bytes:
        """One JSON object: format, key, the body's digest, then the body (``_read``)."""
        return self._encoded(body)[0]

    def _encoded(self, body: dict) -> tuple[bytes, bytes]:
        """``_encode``'s bytes, and their header (which holds the body's digest)."""
        body_bytes = json.dumps(body, separators=(",", ":")).encode()
        header = json.dumps({"format": FORMAT, "key": self.key, "digest": content_hash(body_bytes)}, separators=(",", ":"))
        head = header[:-1].encode()
        return head + BODY + body_bytes + b"}", head

    def remove_leftovers(self) -> None:
        """Remove the temporary files of writes that never finished (a run killed between
        writing one and renaming it): those no live writer holds locked (``_replace``)."""
        for folder in (self.directory, self.directory / "replay", self.directory / "texts"):
            try:
                names = [entry.path for entry in os.scandir(folder) if entry.name.endswith(".tmp")]
            except OSError:
                continue
            for name in names:
                if _abandoned(name):
                    try:
                        os.unlink(name)
                    except OSError:
                        pass

    # Documents per parsed file (``folder/<content hash>.json``): the logs of its analyses.

    def load_document(self, folder: str, name: str, digest: str) -> dict | None:
        """The document ``name`` if its body's digest is ``digest`` (the one ``save_documents``
        reported: a document another run wrote since is not this one)."""
        return self._read(self.directory / folder / f"{name}.json", digest)

    def save_documents(self, folder: str, documents: dict[str, dict]) -> dict[str, str]:
        """Keep exactly these documents in ``folder`` (written atomically, as ``save``);
        their bodies' digests, by name. A document already there with the same bytes is not
        written again: after an edit most files' documents are the ones the last run wrote."""
        place = self.directory / folder
        digests = {}
        try:
            place.mkdir(parents=True, exist_ok=True)
            for old in place.glob("*.json"):
                if old.stem not in documents:
                    old.unlink(missing_ok=True)
            for name, body in documents.items():
                data, head = self._encoded(body)
                digests[name] = json.loads(head + b"}")["digest"]
                path = place / f"{name}.json"
                if _contents(path) != data:
                    _replace(path, data)
        except OSError as exc:
            self.problems.append(f"cache not written to {place}: {exc.strerror or exc}")
        return digests

    # Texts of the files the last analysis parsed, by content hash: a warm run compares an
    # edited file with the version it analysed (``analysis.interface``).

    def load_text(self, digest: str) -> bytes | None:
        """The text stored under ``digest``, if it is there and still has that hash."""
        try:
            data = (self.directory / "texts" / f"{digest}.text").read_bytes()
        except OSError:
            return None
        return data if content_hash(data) == digest else None

    def save_texts(self, texts: dict[str, bytes | None]) -> None:
        """Keep exactly these texts (hash -> bytes, or None for one that was not read this
        run: kept if it is stored): write the new ones, remove the others."""
        folder = self.directory / "texts"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            present = {p.stem for p in folder.glob("*.text")}
            for digest, data in texts.items():
                if digest not in present and data is not None:
                    _replace(folder / f"{digest}.text", data)
            for digest in present - set(texts):
                (folder / f"{digest}.text").unlink(missing_ok=True)
        except OSError as exc:
            self.problems.append(f"cache not written to {folder}: {exc.strerror or exc}")


BODY = b',"body":'
ABANDONED_AFTER_S = 3600  # without file locks (not POSIX), a temporary file this old is a leftover


def _contents(path: Path) -> bytes | None:
    """The bytes of the file at ``path`` (None: there is none)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def _replace(path: Path, data: bytes) -> None:
    for attempt in range(3):
        try:
            _write_and_rename(path, data)
            return
        except FileNotFoundError:
            # ``remove_leftovers`` took the temporary file between its creation and its lock.
            if attempt == 2 or not path.parent.is_dir():
                raise


def _write_and_rename(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            _lock(handle.fileno(), blocking=True)  # held until closed: this write is alive
            handle.write(data)
            os.fchmod(handle.fileno(), 0o644)  # mkstemp makes it private; a cache is not a secret
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _lock(fd: int, blocking: bool) -> bool:
    """An exclusive advisory lock on ``fd`` (released when it closes, or its process dies);
    True where file locks exist and it was taken."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def _abandoned(name: str) -> bool:
    """Is the temporary file ``name`` a dead write's? Nobody holds its lock (or, with no file
    locks, it is an hour old)."""
    try:
        fd = os.open(name, os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            import fcntl  # noqa: F401
        except ImportError:
            return time.time() - os.fstat(fd).st_mtime > ABANDONED_AFTER_S
        return _lock(fd, blocking=False)
    finally:
        os.close(fd)
