"""Load shims in every Python process of a deployment, without editing the application.

Serving stacks load weights in worker processes they spawn (tensor-parallel schedulers,
``multiprocessing`` spawn or forkserver children, ``subprocess`` launches), where a shim
imported by the launcher never runs. The wheel ships ``bufferlint-runtime.pth`` into
site-packages; Python executes its one line at start-up in every process, and that line
only reads two environment variables. When ``BUFFERLINT_SHIM`` or ``BUFFERLINT_SANITIZE`` is
set it calls :func:`run`, which imports :mod:`bufferlint.runtime` (turning the sanitizer on
when asked) and loads each shim named in ``BUFFERLINT_SHIM``: a comma-separated list of
module names (importable from ``sys.path``, e.g. via ``PYTHONPATH``) or ``.py`` file paths.
Children inherit the environment, so every process of the deployment loads them. Forked
children inherit the parent's patches and import hook directly.

A shim that cannot be loaded is reported on stderr in one line and the process carries on:
a start-up hook must never stop the application.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import List

ENV_SHIM = "BUFFERLINT_SHIM"

#: Shims loaded in this process (module names), in order.
loaded: List[str] = []
_ran = False


def load_shim(name: str) -> ModuleType:
    """Import a shim by module name, or execute a ``.py`` file as a module named after it."""
    if not name.endswith(".py") and os.sep not in name and "/" not in name:
        return importlib.import_module(name)
    path = os.path.abspath(name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    stem = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[stem]
        raise
    return module


def shim_names(value: str) -> List[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def run() -> None:
    """The start-up hook's entry point (see the module docstring). Runs once per process: site
    can process the same .pth twice (a virtualenv's ``lib64`` symlink to ``lib``)."""
    global _ran
    if _ran:
        return
    _ran = True
    import bufferlint.runtime  # noqa: F401  (honours BUFFERLINT_SANITIZE)

    for name in shim_names(os.environ.get(ENV_SHIM, "")):
        try:
            load_shim(name)
        except Exception as exc:
            print(f"bufferlint: {ENV_SHIM}: cannot load shim {name!r}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        loaded.append(name)
