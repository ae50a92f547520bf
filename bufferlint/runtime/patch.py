"""``patch``/``unpatch``/``status``: apply ``sync_on_marker`` to loaders by name, lazily.

Targets are written ``package.module:Qualified.name`` -- the module to import, a colon, then the
attribute path inside it: a function (``pkg.loader:load_weights``), a method, staticmethod or
classmethod (``pkg.models.llama:LlamaForCausalLM.load_weights``), or a nested class's method.
Nested functions (``pkg.mod:outer.<locals>.inner``) exist only while ``outer`` runs and cannot be
patched by name: patch ``outer`` instead (its submissions are made from the same thread).

Each target is installed when its module is imported (at once if it already is): ``patch``
never imports a model module itself, so a shim naming loaders of every model can be loaded at
start-up of any process, and a target whose module is never imported just stays *pending*. A
target that cannot be resolved once its module is there (a renamed method) is *failed*: a
:class:`PatchWarning` names it and every other target is still installed. ``strict=True`` is
the all-or-nothing mode for tests: every module is imported now and any problem raises
:class:`PatchError` with nothing applied. :func:`status` says which targets are installed,
pending or failed, and why.

A patch replaces the attribute on its owner (module or class). Code that already holds a
reference to the original function (``from pkg.loader import load_weights`` executed *before*
the patch) keeps the original: load the shim at start-up, before the loaders are imported.
"""

from __future__ import annotations

import importlib
import inspect
import re
import threading
import types
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from . import imports
from .errors import PatchError, PatchWarning
from .policies import check_policy
from .sync import sync_on_marker

_TARGET = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_<][\w<>]*(\.[A-Za-z_<][\w<>]*)*$")
_MISSING = object()

INSTALLED, PENDING, FAILED = "installed", "pending", "failed"


@dataclass(frozen=True)
class TargetStatus:
    """One target of :func:`patch`: ``state`` is ``installed``, ``pending`` (its module has not
    been imported in this process) or ``failed`` (``reason`` says why)."""

    target: str
    state: str
    policy: str
    reason: str = ""


@dataclass
class _Installed:
    owner: Any
    name: str
    original: Any  # the raw attribute (function / staticmethod / classmethod) or _MISSING if inherited
    replacement: Any


@dataclass
class _Entry:
    target: str
    module: str
    qualname: str
    policy: str
    sanitize: bool
    state: str = PENDING
    reason: str = ""
    installed: Optional[_Installed] = None

    def on_import(self, module: types.ModuleType) -> None:
        """The post-import callback: (re)install on the module just executed, never raising
        into the import."""
        with _lock:
            if _entries.get(self.target) is not self:
                return
            _restore(self)  # a policy change, or the module executed again
            try:
                _install(self, _walk(self.target, module, self.qualname))
            except PatchError as exc:
                _fail(self, str(exc))
            except TypeError as exc:  # what sync_on_marker refuses (an async function)
                _fail(self, f"cannot patch {self.target!r}: {exc}")


_lock = threading.RLock()
_entries: Dict[str, _Entry] = {}


def _split(target: str) -> Tuple[str, str]:
    if not isinstance(target, str) or not _TARGET.match(target):
        raise PatchError(
            f"bad patch target {target!r}: expected 'package.module:Qualified.name', e.g. "
            f"'sglang.srt.model_loader.loader:DefaultModelLoader.load_weights_and_postprocess'"
        )
    module, qualname = target.split(":")
    if "<locals>" in qualname.split("."):
        outer = qualname.split(".<locals>")[0]
        raise PatchError(
            f"cannot patch {target!r}: it is a nested function, created anew each time its outer "
            f"function runs. Patch the outer function instead: '{module}:{outer}'"
        )
    return module, qualname


def _import(target: str, module_name: str) -> types.ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise PatchError(f"cannot patch {target!r}: no module named {exc.name!r}") from exc
    except Exception as exc:
        raise PatchError(f"cannot patch {target!r}: importing {module_name!r} failed: {exc!r}") from exc


def _walk(target: str, module: types.ModuleType, qualname: str) -> Tuple[Any, str, Any, bool]:
    """(owner, attribute name, raw attribute, whether the owner defines it itself)."""
    owner: Any = module
    parts = qualname.split(".")
    walked = module.__name__
    for part in parts[:-1]:
        try:
            owner = getattr(owner, part)
        except AttributeError as exc:
            raise PatchError(f"cannot patch {target!r}: {walked!r} has no attribute {part!r}") from exc
        walked += (":" if walked == module.__name__ else ".") + part
    name = parts[-1]
    try:
        raw = inspect.getattr_static(owner, name)
    except AttributeError as exc:
        raise PatchError(f"cannot patch {target!r}: {walked!r} has no attribute {name!r}") from exc
    _check_patchable(target, owner, raw)
    own = isinstance(owner, type) and name in owner.__dict__ or not isinstance(owner, type)
    return owner, name, raw, own


def _check_patchable(target: str, owner: Any, raw: Any) -> None:
    if isinstance(raw, (staticmethod, classmethod)):
        return
    if isinstance(owner, type):
        if not isinstance(raw, types.FunctionType):
            raise PatchError(f"cannot patch {target!r}: it is a {type(raw).__name__}, not a method")
    elif not callable(raw):
        raise PatchError(f"cannot patch {target!r}: it is a {type(raw).__name__}, not a function")
    if isinstance(raw, type):
        raise PatchError(f"cannot patch {target!r}: it is a class; patch its loading method instead")


def _restore(entry: _Entry) -> None:
    """Put the original back, unless someone replaced our wrapper since."""
    done, entry.installed = entry.installed, None
    if done is None or inspect.getattr_static(done.owner, done.name, None) is not done.replacement:
        return
    if done.original is _MISSING:
        delattr(done.owner, done.name)
    else:
        setattr(done.owner, done.name, done.original)


def _install(entry: _Entry, resolved: Tuple[Any, str, Any, bool]) -> None:
    owner, name, raw, own = resolved
    replacement = sync_on_marker(raw, policy=entry.policy, sanitize=entry.sanitize)
    setattr(owner, name, replacement)
    entry.installed = _Installed(owner, name, raw if own else _MISSING, replacement)
    entry.state, entry.reason = INSTALLED, ""


def _fail(entry: _Entry, reason: str) -> None:
    entry.state, entry.reason = FAILED, reason
    warnings.warn(f"bufferlint: {reason}; the other targets are unaffected", PatchWarning, stacklevel=3)


def patch(*targets: str, policy: str = "sync", sanitize: bool = False, strict: bool = False) -> List[str]:
    """Wrap each ``package.module:Qualified.name`` target in :func:`sync_on_marker` (in place)
    when its module is imported, at once if it already is. Patching a target again replaces
    its policy. Malformed targets raise :class:`PatchError` before anything is applied; a
    target that cannot be resolved is a :class:`PatchWarning` and shows as failed in
    :func:`status`. ``strict=True`` imports every module now and raises :class:`PatchError`
    if any target cannot be patched, leaving nothing applied. Returns the targets."""
    check_policy(policy)
    parsed = [(target, *_split(target)) for target in targets]
    if strict:
        for target, module_name, qualname in parsed:
            _walk(target, _import(target, module_name), qualname)
    for target, module_name, qualname in parsed:
        with _lock:
            old = _entries.get(target)
            entry = _Entry(target, module_name, qualname, policy, bool(sanitize))
            if old is not None:
                entry.installed = old.installed
                imports.forget(old.module, old.on_import)
            _entries[target] = entry
        imports.when_imported(module_name, entry.on_import)
    return [target for target, *_ in parsed]


def unpatch(*targets: str) -> List[str]:
    """Undo :func:`patch` for the given targets (all targets when none are given): installed
    ones are restored, pending ones are no longer watched. Returns the targets undone; a
    well-formed target that is not patched is skipped, a malformed one raises PatchError."""
    undone = []
    with _lock:
        for target in list(targets) if targets else list(_entries):
            _split(target)
            entry = _entries.pop(target, None)
            if entry is None:
                continue
            imports.forget(entry.module, entry.on_import)
            _restore(entry)
            undone.append(target)
    return undone


def patched() -> Dict[str, str]:
    """Installed targets and their policies."""
    with _lock:
        return {t: e.policy for t, e in _entries.items() if e.state == INSTALLED}


def status() -> List[TargetStatus]:
    """Every target given to :func:`patch` in this process, in the order given: installed,
    pending (module not imported yet) or failed (with the reason)."""
    with _lock:
        return [TargetStatus(e.target, e.state, e.policy, e.reason) for e in _entries.values()]
