"""Borrow tracking: which tensors (and numpy arrays) are views of a buffer their producer reuses.

A producer marks what it yields. SGLang does it with an attribute on the tensor object
(``setattr(tensor, "_sglang_runai_streamer_tensor", True)``), but an attribute lives on one
Python object: ``narrow``, slicing, ``view``, ``reshape`` and ``detach`` all return new objects
over the same memory, and the marker is gone. So besides the attributes, ``mark_borrowed``
records the *memory* of the marked tensor (its untyped storage's address range) in a registry,
and ``is_borrowed(view)`` is true when the view's bytes overlap a registered range.

The registry never keeps memory alive: an entry is dropped by a ``weakref.finalize`` on the
storage (torch) or on the array that owns the memory (numpy), i.e. when the last view dies.

This module never imports torch or numpy: an object can only be a tensor if torch has been
imported by someone already, so it looks them up in ``sys.modules``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import sys
import threading
import weakref
from typing import Any, Iterable, Iterator, List, Optional, Tuple

#: The attribute ``mark_borrowed`` sets by default.
DEFAULT_MARKER = "_bufferlint_borrowed"

#: Attributes that mark an object as a borrowed view. Extend with :func:`register_marker`.
#: ``_sglang_runai_streamer_tensor`` is what SGLang's ``runai_safetensors_weights_iterator``
#: sets. Markers declared by bufferlint's rule packs (``markers = [...]``) are added on first use.
KNOWN_MARKERS: List[str] = [DEFAULT_MARKER, "_sglang_runai_streamer_tensor"]

_packs_loaded = False


def register_marker(name: str) -> None:
    """Recognise another attribute name as a borrow marker (e.g. a team's own producer's)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a marker is an attribute name, got {name!r}")
    if name not in KNOWN_MARKERS:
        KNOWN_MARKERS.append(name)


def _load_pack_markers() -> None:
    """Merge the markers of bufferlint's shipped rule packs into KNOWN_MARKERS (once, best effort)."""
    global _packs_loaded
    _packs_loaded = True
    try:
        from bufferlint.packs import builtin_vocabulary

        for name in sorted(builtin_vocabulary().markers):
            register_marker(name)
    except Exception:  # the packs are optional here: the list above is the floor
        pass


def _torch() -> Any:
    return sys.modules.get("torch")


def _numpy() -> Any:
    return sys.modules.get("numpy")


def is_tensor(obj: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(obj, torch.Tensor)


def is_ndarray(obj: Any) -> bool:
    np = _numpy()
    return np is not None and isinstance(obj, np.ndarray)


# ---------------------------------------------------------------------------
# Memory extents

Extent = Tuple[str, int, int]  # (address space, start, end) with end exclusive


def _strided_extent(ptr: int, shape: Iterable[int], strides_bytes: Iterable[int], itemsize: int) -> Optional[Tuple[int, int]]:
    lo = hi = 0
    for size, stride in zip(shape, strides_bytes):
        if size == 0:
            return None
        if stride > 0:
            hi += (size - 1) * stride
        else:
            lo += (size - 1) * stride
    return ptr + lo, ptr + hi + itemsize


def memory_extent(obj: Any) -> Optional[Extent]:
    """The bytes a tensor or ndarray reads, as ``(space, start, end)``; None for anything else,
    for empty objects and for tensors without memory (meta)."""
    if is_tensor(obj):
        device = obj.device
        if device.type == "meta":
            return None
        ptr = obj.data_ptr()
        if ptr == 0:
            return None
        es = obj.element_size()
        ext = _strided_extent(ptr, obj.shape, [s * es for s in obj.stride()], es)
        return None if ext is None else (str(device), ext[0], ext[1])
    if is_ndarray(obj):
        ptr = obj.__array_interface__["data"][0]
        if ptr == 0 or obj.size == 0:
            return None
        ext = _strided_extent(ptr, obj.shape, obj.strides, obj.itemsize)
        return None if ext is None else ("cpu", ext[0], ext[1])
    return None


def _buffer_owner_and_extent(obj: Any) -> Tuple[Any, Optional[Extent]]:
    """The object whose death frees the buffer ``obj`` views, and that whole buffer's extent."""
    if is_tensor(obj):
        storage = obj.untyped_storage()
        ptr, n = storage.data_ptr(), storage.nbytes()
        if ptr == 0 or n == 0 or obj.device.type == "meta":
            return storage, None
        return storage, (str(obj.device), ptr, ptr + n)
    if is_ndarray(obj):
        np = _numpy()
        root = obj
        while isinstance(root.base, np.ndarray):
            root = root.base
        return root, memory_extent(root)
    return obj, None


# ---------------------------------------------------------------------------
# Registry


class _Registry:
    """Borrowed address ranges, per address space, sorted by start for overlap queries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)
        self._ranges: dict = {}  # space -> sorted list of (start, token, end)
        self._maxlen: dict = {}  # space -> longest registered range (bounds the search window)
        self._entries: dict = {}  # token -> (space, start, end, label)
        self._by_owner: dict = {}  # id(owner) -> token, while the owner lives

    def add(self, owner: Any, extent: Extent, label: str) -> bool:
        """Register ``extent`` until ``owner`` dies. False if that owner is already registered."""
        space, start, end = extent
        with self._lock:
            if id(owner) in self._by_owner:
                return False
            token = next(self._tokens)
            self._by_owner[id(owner)] = token
            self._entries[token] = (space, start, end, label)
            bisect.insort(self._ranges.setdefault(space, []), (start, token, end))
            self._maxlen[space] = max(self._maxlen.get(space, 0), end - start)
        try:
            weakref.finalize(owner, self._remove, token, id(owner))
        except TypeError:  # not weak-referenceable: keep the entry for the process lifetime
            pass
        return True

    def _remove(self, token: int, owner_id: int) -> None:
        with self._lock:
            entry = self._entries.pop(token, None)
            if self._by_owner.get(owner_id) == token:
                del self._by_owner[owner_id]
            if entry is None:
                return
            space, start, end, _ = entry
            ranges = self._ranges.get(space, [])
            i = bisect.bisect_left(ranges, (start, token, end))
            if i < len(ranges) and ranges[i][1] == token:
                del ranges[i]

    def find(self, extent: Extent) -> Optional[str]:
        """The label of a registered range overlapping ``extent``, or None."""
        space, start, end = extent
        with self._lock:
            ranges = self._ranges.get(space)
            if not ranges:
                return None
            lo = bisect.bisect_left(ranges, (start - self._maxlen[space] + 1,))
            hi = bisect.bisect_left(ranges, (end,))
            for _r_start, token, r_end in ranges[lo:hi]:
                if r_end > start:
                    return self._entries[token][3]
        return None

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._ranges.clear()
            self._maxlen.clear()
            self._entries.clear()
            self._by_owner.clear()


_registry = _Registry()


def registered_count() -> int:
    """How many borrowed buffers are currently registered (for tests and diagnostics)."""
    return len(_registry)


# ---------------------------------------------------------------------------
# Public API


def _register_memory(obj: Any, label: str) -> None:
    owner, extent = _buffer_owner_and_extent(obj)
    if extent is not None:
        _registry.add(owner, extent, label)


def mark_borrowed(tensor: Any, marker: Optional[str] = DEFAULT_MARKER, *, name: Optional[str] = None) -> Any:
    """Declare ``tensor`` (a torch tensor or numpy array) a view of a buffer its producer reuses.

    Sets ``marker`` on the object when it can take attributes (torch tensors can, ndarrays
    cannot) and registers the memory of its whole underlying buffer, so that every view of it
    -- including views made from the buffer before or after marking -- is borrowed. ``name``
    is used in error messages. Returns ``tensor`` so producers can write ``yield n, mark_borrowed(t)``.
    """
    if marker is not None:
        try:
            setattr(tensor, marker, True)
        except (AttributeError, TypeError):
            pass
    label = name or _describe(tensor)
    _register_memory(tensor, label)
    return tensor


def _marker_on(obj: Any) -> Optional[str]:
    if not _packs_loaded:
        _load_pack_markers()
    for attr in KNOWN_MARKERS:
        try:
            if getattr(obj, attr, False):
                return attr
        except Exception:
            continue
    return None


def note_attribute_set(obj: Any, name: str, value: Any) -> None:
    """Called by the executor hook's ``Tensor.__setattr__`` interceptor: a producer that marks
    with a plain ``setattr`` (as SGLang does) gets its buffer registered at that moment, so views
    taken before anything asked about the tensor are recognised too."""
    if value and name in KNOWN_MARKERS:
        try:
            _register_memory(obj, _describe(obj))
        except Exception:  # never break the producer's setattr
            pass


def borrow_reason(obj: Any) -> Optional[str]:
    """Why a single tensor/array is borrowed (a marker attribute or an overlapping registered
    buffer), or None when it is not."""
    if not (is_tensor(obj) or is_ndarray(obj)):
        return None
    attr = _marker_on(obj)
    if attr is None and is_tensor(obj):
        base = obj._base
        if base is not None:
            attr = _marker_on(base)
            if attr is not None:
                _register_memory(base, _describe(base))
    extent = memory_extent(obj)
    if attr is not None:
        # Marked by someone else (e.g. SGLang's setattr): register the memory now so that
        # views made from here on are recognised too.
        _register_memory(obj, _describe(obj))
        label = _registry.find(extent) if extent is not None else None
        named = label is not None and not label.startswith(("tensor(", "ndarray("))
        return f"marked {attr}" + (f", buffer of {label}" if named else "")
    if extent is None:
        return None
    label = _registry.find(extent)
    if label is not None:
        return f"views the borrowed buffer of {label}"
    return None


_MAX_DEPTH = 6


def iter_borrowed(obj: Any, path: str = "arg") -> Iterator[Tuple[str, Any, str]]:
    """Every borrowed tensor/array inside ``obj`` as ``(path, value, reason)``.

    Looks inside tuples, lists, sets, dict values and ``functools.partial`` objects (their
    args and keywords), a few levels deep, so a submission's ``(fn, args, kwargs)`` can be
    asked about as a whole.
    """
    stack = [(obj, path, 0)]
    seen = set()
    while stack:
        value, where, depth = stack.pop()
        if is_tensor(value) or is_ndarray(value):
            reason = borrow_reason(value)
            if reason is not None:
                yield where, value, reason
            continue
        if depth >= _MAX_DEPTH or id(value) in seen:
            continue
        if isinstance(value, (tuple, list)):
            seen.add(id(value))
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, dict):
            seen.add(id(value))
            stack.extend((v, f"{where}[{k!r}]", depth + 1) for k, v in reversed(list(value.items())))
        elif isinstance(value, (set, frozenset)):
            seen.add(id(value))
            stack.extend((v, f"{where}{{}}", depth + 1) for v in value)
        elif isinstance(value, functools.partial):
            seen.add(id(value))
            stack.append((value.keywords, f"{where}.keywords", depth + 1))
            stack.append((value.args, f"{where}.args", depth + 1))


def is_borrowed(obj: Any) -> bool:
    """True when ``obj`` is, or (for tuples, lists, dicts, sets and partials) contains, a view of
    a borrowed buffer: it carries a known marker, or its memory overlaps a marked buffer."""
    for _ in iter_borrowed(obj):
        return True
    return False


def borrowed_in_call(fn: Any, args: tuple, kwargs: dict) -> List[Tuple[str, Any, str]]:
    """The borrowed values a call ``fn(*args, **kwargs)`` would receive, with their paths."""
    found = list(iter_borrowed(args, "args"))
    found += iter_borrowed(kwargs, "kwargs")
    if isinstance(fn, functools.partial):
        found += iter_borrowed(fn, "fn")
    return found


def _describe(obj: Any) -> str:
    if is_tensor(obj):
        return f"tensor(shape={tuple(obj.shape)}, dtype={obj.dtype}, data_ptr={obj.data_ptr():#x})"
    if is_ndarray(obj):
        return f"ndarray(shape={obj.shape}, dtype={obj.dtype}, data={obj.__array_interface__['data'][0]:#x})"
    return type(obj).__name__


def describe(obj: Any) -> str:
    """A short human description of a tensor/array for error messages."""
    return _describe(obj)


def mark_iter(iterable: Iterable[Any], marker: Optional[str] = DEFAULT_MARKER) -> Iterator[Any]:
    """Wrap a producer so every tensor/array it yields (alone, or inside a tuple such as
    ``(name, tensor)``) is marked borrowed. For zero-copy producers that do not mark, e.g.
    ``SafetensorsStreamer.get_tensors()`` after ``stream_files(..., owned=False)``."""
    for item in iterable:
        if isinstance(item, tuple):
            name = next((x for x in item if isinstance(x, str)), None)
            for x in item:
                if is_tensor(x) or is_ndarray(x):
                    mark_borrowed(x, marker, name=name)
        elif is_tensor(item) or is_ndarray(item):
            mark_borrowed(item, marker)
        yield item
