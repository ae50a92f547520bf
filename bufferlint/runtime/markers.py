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
import warnings
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


def _has_memory(tensor: Any) -> bool:
    """Whether a tensor owns addressable bytes that a producer could reuse.

    Sparse (COO/CSR/...), MKLDNN and nested tensors, meta tensors and the fake and functional
    tensors of ``torch.compile`` tracing have no single strided storage: asking them for
    ``data_ptr()`` raises (or warns), and no buffer of theirs can be a borrowed view."""
    torch = _torch()
    if tensor.layout is not torch.strided or tensor.is_nested or tensor.is_meta:
        return False
    if type(tensor) is not torch.Tensor:
        for module, cls in (("torch._subclasses.fake_tensor", "FakeTensor"),
                            ("torch._subclasses.functional_tensor", "FunctionalTensor")):
            kind = getattr(sys.modules.get(module), cls, None)
            if kind is not None and isinstance(tensor, kind):
                return False
    is_functional = getattr(torch, "_is_functional_tensor", None)
    return not (is_functional is not None and is_functional(tensor))


def memory_extent(obj: Any) -> Optional[Extent]:
    """The bytes a tensor or ndarray reads, as ``(space, start, end)``; None for anything else,
    for empty objects, and for tensors without memory (sparse, nested, meta, fake, ...).
    Never raises: an object that fails to describe its memory has none we can track."""
    try:
        return _memory_extent(obj)
    except Exception:
        return None


def _memory_extent(obj: Any) -> Optional[Extent]:
    if is_tensor(obj):
        if not _has_memory(obj):
            return None
        ptr = obj.data_ptr()
        if ptr == 0:
            return None
        es = obj.element_size()
        ext = _strided_extent(ptr, obj.shape, [s * es for s in obj.stride()], es)
        return None if ext is None else (str(obj.device), ext[0], ext[1])
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
        if not _has_memory(obj):
            return obj, None
        storage = obj.untyped_storage()
        ptr, n = storage.data_ptr(), storage.nbytes()
        if ptr == 0 or n == 0:
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
        if not self._entries:  # nothing registered (a dict's truth is read atomically)
            return None
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
    try:
        owner, extent = _buffer_owner_and_extent(obj)
    except Exception:  # a tensor that cannot describe its storage has none to track
        return
    if extent is not None:
        _registry.add(owner, extent, label)


def mark_borrowed(tensor: Any, marker: Optional[str] = DEFAULT_MARKER, *, name: Optional[str] = None) -> Any:
    """Declare ``tensor`` (a torch tensor or numpy array) a view of a buffer its producer reuses.

    Sets ``marker`` on the object when it can take attributes (torch tensors can, ndarrays
    cannot), recognises ``marker`` from then on (:func:`register_marker`), and registers the
    memory of its whole underlying buffer, so that every view of it -- including views made
    from the buffer before or after marking -- is borrowed. ``name`` is used in error messages.
    Returns ``tensor`` so producers can write ``yield n, mark_borrowed(t)``.

    Raises TypeError for anything but a tensor or array, a marker that is not None or an
    attribute name, or a name that is not a string: a mistyped call must not silently mark
    nothing.
    """
    if not (is_tensor(tensor) or is_ndarray(tensor)):
        raise TypeError(f"mark_borrowed marks a torch tensor or numpy array, got {type(tensor).__name__}")
    if marker is not None:
        if not isinstance(marker, str) or not marker.isidentifier():
            raise TypeError(f"mark_borrowed: marker must be an attribute name or None, got {marker!r}")
        register_marker(marker)
        try:
            setattr(tensor, marker, True)
        except (AttributeError, TypeError):
            pass
    if name is not None and not isinstance(name, str):
        raise TypeError(f"mark_borrowed: name must be a string or None, got {type(name).__name__}")
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
        _register_memory(obj, _describe(obj))


def borrow_reason(obj: Any) -> Optional[str]:
    """Why a single tensor/array is borrowed (a marker attribute or an overlapping registered
    buffer), or None when it is not. Never raises: whatever torch hands over (sparse, nested,
    fake tensors, subclasses whose attributes raise) is not borrowed unless a marker says so."""
    try:
        if not (is_tensor(obj) or is_ndarray(obj)):
            return None
    except Exception:
        return None
    attr = _marker_on(obj)
    if attr is None and is_tensor(obj):
        try:
            base = obj._base
        except Exception:
            base = None
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


# ---------------------------------------------------------------------------
# Looking inside a submission

#: How many values one question (``is_borrowed``, or one executor submission) inspects at most.
#: Tensors, arrays and memoryviews are inspected; tuples, lists, dicts (values), sets,
#: ``functools.partial`` objects and memoryviews are looked inside, at any depth; every other
#: object (ints, strings, user objects) counts as one value and is not looked inside. So a
#: submission costs at most this many steps whatever the size of its plain data (a list of a
#: million ints costs the same as one of ten thousand). Past the limit the rest is not
#: inspected, and the answer takes the safe side: ``is_borrowed`` says True, a guarded
#: submission runs synchronously (policies ``sync`` and ``copy``) or raises (``raise``), and an
#: :class:`InspectionLimitWarning` says so.
INSPECTION_LIMIT = 10_000


class InspectionLimitWarning(RuntimeWarning):
    """A submission held more values than ``INSPECTION_LIMIT``: the rest was not inspected
    (and the question was answered on the safe side)."""


class Inspection:
    """The budget of one question (``INSPECTION_LIMIT`` values, shared by the walks that answer
    it, e.g. a call's args, kwargs and partial) and whether every value was looked at. A caller
    that passes one to the walks decides what an incomplete inspection means and says so."""

    def __init__(self) -> None:
        self.left = INSPECTION_LIMIT
        self.complete = True


def warn_limit(what: str, stacklevel: int) -> None:
    """Say that a question was cut short by the limit, and ``what`` was done about it."""
    warnings.warn(
        f"bufferlint: a submission holds more than {INSPECTION_LIMIT} values; the rest was not "
        f"inspected for borrowed views (bufferlint.runtime.markers.INSPECTION_LIMIT): {what}",
        InspectionLimitWarning, stacklevel=stacklevel + 1,
    )


_PLAIN = frozenset({int, float, complex, bool, str, bytes, bytearray, type(None), range})
_ARRAY = object()


def _children(value: Any) -> Any:
    """``_ARRAY`` for a tensor/array, an iterator of ``(segment, child)`` for a container we
    look inside, else None. Uses the base types' own iteration, so a container subclass that
    overrides ``__iter__`` or ``items`` cannot run code (or raise) here."""
    kind = type(value)
    if kind in _PLAIN:
        return None
    if is_tensor(value) or is_ndarray(value):
        return _ARRAY
    if isinstance(value, list):
        return enumerate(list.__iter__(value))
    if isinstance(value, tuple):
        return enumerate(tuple.__iter__(value))
    if isinstance(value, dict):
        return dict.items(value).__iter__()
    if isinstance(value, frozenset):
        return ((_SET, v) for v in frozenset.__iter__(value))
    if isinstance(value, set):
        return ((_SET, v) for v in set.__iter__(value))
    if isinstance(value, functools.partial):
        return iter(((".args", value.args), (".keywords", value.keywords)))
    if isinstance(value, memoryview):
        return iter(((".obj", value.obj),))
    return None


_SET = object()


def _segment(segment: Any) -> str:
    if segment is _SET:
        return "{}"
    if isinstance(segment, int):
        return f"[{segment}]"
    if isinstance(segment, str) and segment.startswith("."):
        return segment
    try:
        text = repr(segment)
    except Exception:
        text = f"<{type(segment).__name__}>"
    return f"[{text if len(text) <= 60 else text[:57] + '...'}]"


def _walk(obj: Any, finished: Optional[List[Any]] = None,
          inspection: Optional[Inspection] = None) -> Iterator[Tuple[List[Any], Any, str]]:
    """Depth-first search of ``obj`` for borrowed tensors/arrays: ``(frames, value, reason)``
    where ``frames`` is the stack of ``[container, iterator, segment]`` leading to ``value``
    (valid only until the next item). Iterative, so depth is unbounded; cycles and shared
    containers are visited once; at most ``inspection.left`` values (``INSPECTION_LIMIT``
    when no inspection is given; past it ``inspection.complete`` is False). Never raises: a
    container that fails while being iterated (changed size, ...) is left.
    ``finished``: receives each container once it has been looked through entirely, in
    post-order (a container after everything inside it, cycles aside).
    """
    if inspection is None:
        inspection = Inspection()
    frames: List[List[Any]] = []
    seen = set()
    value = obj
    while True:
        inspection.left -= 1
        try:
            children = _children(value)
        except Exception:
            children = None
        if children is _ARRAY:
            reason = borrow_reason(value)
            if reason is not None:
                yield frames, value, reason
        elif children is not None and id(value) not in seen:
            seen.add(id(value))
            frames.append([value, children, None])
        while frames:
            if inspection.left <= 0:
                inspection.complete = False
                return
            frame = frames[-1]
            try:
                frame[2], value = next(frame[1])
            except StopIteration:
                if finished is not None:
                    finished.append(frame[0])
                frames.pop()
                continue
            except Exception:
                frames.pop()
                continue
            break
        else:
            return


def iter_borrowed(obj: Any, path: str = "arg", inspection: Optional[Inspection] = None
                  ) -> Iterator[Tuple[str, Any, str]]:
    """Every borrowed tensor/array inside ``obj`` as ``(path, value, reason)``.

    Looks inside tuples, lists, sets, dict values, memoryviews and ``functools.partial``
    objects (their args and keywords) at any depth, within ``INSPECTION_LIMIT`` values, so
    a submission's ``(fn, args, kwargs)`` can be asked about as a whole. Without an
    ``inspection`` of the caller's, a walk cut short by the limit warns.
    """
    own = inspection is None
    seen = Inspection() if inspection is None else inspection
    for frames, value, reason in _walk(obj, inspection=seen):
        yield path + "".join(_segment(frame[2]) for frame in frames), value, reason
    if own and not seen.complete:
        warn_limit("the borrowed views listed are those found before it", stacklevel=2)


def borrowed_values(obj: Any, finished: List[Any]) -> List[Any]:
    """The borrowed values inside ``obj``; ``finished`` receives the containers looked through,
    each after the containers inside it (the order in which the ``copy`` policy rebuilds them)."""
    return [value for _, value, _ in _walk(obj, finished)]


def is_borrowed(obj: Any) -> bool:
    """True when ``obj`` is, or (for tuples, lists, dicts, sets, memoryviews and partials)
    contains, a view of a borrowed buffer: it carries a known marker, or its memory overlaps a
    marked buffer. Never raises; costs at most ``INSPECTION_LIMIT`` steps. An object too big to
    inspect whole is answered True (it may hold one: the caller takes the safe path), with an
    :class:`InspectionLimitWarning`."""
    inspection = Inspection()
    for _ in _walk(obj, inspection=inspection):
        return True
    if not inspection.complete:
        warn_limit("answered as borrowed (the safe side)", stacklevel=2)
        return True
    return False


def borrowed_in_call(fn: Any, args: tuple, kwargs: dict,
                     inspection: Optional[Inspection] = None) -> List[Tuple[str, Any, str]]:
    """The borrowed values a call ``fn(*args, **kwargs)`` would receive, with their paths,
    found within one inspection's budget (``inspection.complete`` says whether that was all)."""
    inspection = Inspection() if inspection is None else inspection
    found = list(iter_borrowed(args, "args", inspection))
    if inspection.complete:
        found += iter_borrowed(kwargs, "kwargs", inspection)
    if inspection.complete and isinstance(fn, functools.partial):
        found += iter_borrowed(fn, "fn", inspection)
    return found


def _describe(obj: Any) -> str:
    try:
        return _description(obj)
    except Exception:
        return type(obj).__name__


def _description(obj: Any) -> str:
    if is_tensor(obj):
        where = f"{obj.data_ptr():#x}" if _has_memory(obj) else "none"
        layout = "" if obj.layout is _torch().strided else f", layout={obj.layout}"
        shape = "nested" if obj.is_nested else tuple(obj.shape)
        return f"tensor(shape={shape}, dtype={obj.dtype}{layout}, data_ptr={where})"
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
