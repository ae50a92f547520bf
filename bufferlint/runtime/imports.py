"""Post-import hooks: run a callback when a named module has been executed, without importing it.

``patch`` must not import the model modules it names: in a serving stack a shim is loaded at
start-up, long before (and sometimes in processes other than where) the loaders are imported,
and importing a module the deployment never uses can fail or be slow. Instead a finder at the
front of ``sys.meta_path`` watches the named modules; when one is imported it lets the real
finder locate it, runs the real loader, and then the callbacks, before the importer continues
(so ``from pkg.mod import loader`` executed right after already gets the patched function).

A module imported again (``importlib.reload``, or deleted from ``sys.modules`` and imported
anew) runs the callbacks again. The finder is on ``sys.meta_path`` only while something is
watched; it costs one dictionary lookup per import.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional

Callback = Callable[[ModuleType], None]

_lock = threading.RLock()
_callbacks: Dict[str, List[Callback]] = {}
_searching = threading.local()  # names this thread is locating (a finder that recurses)


def when_imported(name: str, callback: Callback) -> None:
    """Call ``callback(module)`` every time module ``name`` has been executed, and at once if it
    is already in ``sys.modules``. Exceptions from the callback propagate only in the
    immediate call; during an import they would break the application, so callbacks must
    handle their own errors."""
    with _lock:
        _callbacks.setdefault(name, []).append(callback)
        _install()
    module = sys.modules.get(name)
    if module is not None:
        callback(module)


def forget(name: str, callback: Callback) -> None:
    """Stop calling ``callback`` for ``name`` (no error if it was not registered)."""
    with _lock:
        callbacks = _callbacks.get(name, [])
        if callback in callbacks:
            callbacks.remove(callback)
        if not callbacks:
            _callbacks.pop(name, None)
        if not _callbacks:
            _uninstall()


def _fire(name: str, module: ModuleType) -> None:
    with _lock:
        callbacks = list(_callbacks.get(name, ()))
    for callback in callbacks:
        callback(module)


class _Loader(importlib.abc.Loader):
    """Wraps the real loader for one import; the module keeps the real loader as ``__loader__``."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, attr: str) -> Any:  # get_source, get_resource_reader, is_package, ...
        return getattr(self._loader, attr)

    def create_module(self, spec: Any) -> Optional[ModuleType]:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        self._loader.exec_module(module)
        _fire(module.__name__, module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _callbacks:
            return None
        searching = _searching.__dict__.setdefault("names", set())
        if fullname in searching:
            return None
        searching.add(fullname)
        try:
            spec = _find_elsewhere(self, fullname, path, target)
        finally:
            searching.discard(fullname)
        if spec is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader)
        return spec


def _find_elsewhere(me: Any, fullname: str, path: Any, target: Any) -> Any:
    for finder in list(sys.meta_path):
        if finder is me:
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


_finder = _Finder()


def _install() -> None:
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def _uninstall() -> None:
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
