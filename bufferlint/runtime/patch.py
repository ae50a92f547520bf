"""``patch``/``unpatch``: apply ``sync_on_marker`` to loaders by name, without editing their source.

Targets are written ``package.module:Qualified.name`` -- the module to import, a colon, then the
attribute path inside it: a function (``pkg.loader:load_weights``), a method, staticmethod or
classmethod (``pkg.models.llama:LlamaForCausalLM.load_weights``), or a nested class's method.
Nested functions (``pkg.mod:outer.<locals>.inner``) exist only while ``outer`` runs and cannot be
patched by name: patch ``outer`` instead (its submissions are made from the same thread).

A patch replaces the attribute on its owner (module or class). Code that already holds a
reference to the original function (``from pkg.loader import load_weights`` executed *before*
the patch) keeps the original: import the shim at start-up, before the loaders are imported.
"""

from __future__ import annotations

import importlib
import inspect
import re
import threading
import types
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .errors import PatchError
from .policies import check_policy
from .sync import sync_on_marker

_TARGET = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_<][\w<>]*(\.[A-Za-z_<][\w<>]*)*$")
_MISSING = object()


@dataclass
class _Patch:
    target: str
    owner: Any
    name: str
    original: Any  # the raw attribute (function / staticmethod / classmethod) or _MISSING if inherited
    replacement: Any
    policy: str
    base: Any  # what the replacement wraps


_lock = threading.RLock()
_patches: Dict[str, _Patch] = {}


def _split(target: str) -> tuple:
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


def _resolve(target: str) -> tuple:
    module_name, qualname = _split(target)
    try:
        owner: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise PatchError(f"cannot patch {target!r}: no module named {exc.name!r}") from exc
    except Exception as exc:
        raise PatchError(f"cannot patch {target!r}: importing {module_name!r} failed: {exc!r}") from exc
    parts = qualname.split(".")
    walked = module_name
    for part in parts[:-1]:
        try:
            owner = getattr(owner, part)
        except AttributeError as exc:
            raise PatchError(f"cannot patch {target!r}: {walked!r} has no attribute {part!r}") from exc
        walked += (":" if walked == module_name else ".") + part
    name = parts[-1]
    try:
        raw = inspect.getattr_static(owner, name)
    except AttributeError as exc:
        raise PatchError(f"cannot patch {target!r}: {walked!r} has no attribute {name!r}") from exc
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


def patch(*targets: str, policy: str = "sync", sanitize: bool = False) -> List[str]:
    """Wrap each ``package.module:Qualified.name`` target in :func:`sync_on_marker` (in place).
    Patching an already patched target again replaces its policy. All targets are resolved
    before any is patched, so an error leaves nothing half applied. Returns the targets."""
    check_policy(policy)
    resolved = []
    for target in targets:
        with _lock:
            existing = _patches.get(target)
        if existing is not None:
            resolved.append((target, existing.owner, existing.name, existing.original, existing.base))
            continue
        owner, name, raw, own = _resolve(target)
        _check_patchable(target, owner, raw)
        resolved.append((target, owner, name, raw if own else _MISSING, raw))
    with _lock:
        for target, owner, name, original, base in resolved:
            replacement = sync_on_marker(base, policy=policy, sanitize=sanitize)
            setattr(owner, name, replacement)
            _patches[target] = _Patch(target, owner, name, original, replacement, policy, base)
    return [t for t, *_ in resolved]


def unpatch(*targets: str) -> List[str]:
    """Undo :func:`patch` for the given targets (all patched targets when none are given).
    Returns the targets restored; a well-formed target that is not patched is skipped, a
    malformed one raises PatchError."""
    restored = []
    with _lock:
        names = list(targets) if targets else list(_patches)
        for target in names:
            _split(target)
            entry = _patches.pop(target, None)
            if entry is None:
                continue
            if entry.original is _MISSING:
                try:
                    delattr(entry.owner, entry.name)
                except AttributeError:
                    pass
            else:
                setattr(entry.owner, entry.name, entry.original)
            restored.append(target)
    return restored


def patched() -> Dict[str, str]:
    """Currently patched targets and their policies."""
    with _lock:
        return {t: p.policy for t, p in _patches.items()}


def resolve(target: str) -> Optional[Any]:
    """The object a target names (for tooling); raises PatchError like ``patch``."""
    owner, name, raw, _ = _resolve(target)
    return raw
