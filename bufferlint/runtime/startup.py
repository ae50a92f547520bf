"""Load shims in every Python process of a deployment, without editing the application.

Serving stacks load weights in worker processes they spawn (tensor-parallel schedulers,
``multiprocessing`` spawn or forkserver children, ``subprocess`` launches), where a shim
imported by the launcher never runs. The wheel ships ``bufferlint-runtime.pth`` into
site-packages; Python executes its one line at start-up in every process, and that line
only reads two environment variables. When ``BUFFERLINT_SHIM`` or ``BUFFERLINT_SANITIZE`` is
set it calls :func:`run`, which imports :mod:`bufferlint.runtime` (turning the sanitizer on
when asked) and loads each shim named in ``BUFFERLINT_SHIM``: a comma-separated list of
``.py`` file paths or module names (importable from ``sys.path``, else found in the working
directory: at start-up neither it nor the script's folder is on ``sys.path`` yet). Children
inherit the environment, so every process of the deployment loads them. Forked children
inherit the parent's patches and import hook directly.

A start-up hook must never stop or disturb the application, so:

* nothing a shim raises leaves :func:`run` -- not ``SystemExit``, not ``KeyboardInterrupt``
  (either would end interpreter start-up: ``Fatal Python error: init_import_site``);
* a shim file runs as a module with a private name (``_bufferlint_shim_<stem>_<digest>``),
  never under its file's stem, and its folder is not put on ``sys.path``: a shim called
  ``json.py`` cannot replace the application's ``json``;
* what the hook has to say (one line per shim that cannot be loaded) goes to stderr, or
  nowhere when there is none (a process started with stderr closed), never to stdout, where
  the application may write data (an LSP stream, a JSON report);
* a process started *while* the shims load (a shim that runs a Python subprocess) finds
  ``BUFFERLINT_SHIM_LOADING`` set and does not load them again, which would recurse; set
  ``BUFFERLINT_SHIM_REENTRY=1`` to have such children load them too. Processes started
  after loading (the deployment's workers) load them as usual.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import List, Optional

ENV_SHIM = "BUFFERLINT_SHIM"
ENV_LOADING = "BUFFERLINT_SHIM_LOADING"  # set (to the loading process' id) while shims load
ENV_REENTRY = "BUFFERLINT_SHIM_REENTRY"  # "1": children started meanwhile load them too

#: Shims loaded in this process (as named in ``BUFFERLINT_SHIM``), in order.
loaded: List[str] = []
_ran = False


def load_shim(name: str) -> ModuleType:
    """Load a shim: a ``.py`` file (or any path) executed as a module under a private name, or
    a module name imported from ``sys.path``, else from the working directory. Raises
    FileNotFoundError, IsADirectoryError or ModuleNotFoundError naming what was looked for."""
    if name.endswith(".py") or os.sep in name or "/" in name:
        return _load_file(os.path.abspath(name), _private_name(os.path.abspath(name)))
    if "." in name or importlib.util.find_spec(name) is not None:
        return importlib.import_module(name)
    found = importlib.machinery.PathFinder.find_spec(name, [os.getcwd()])
    if found is None or found.origin is None:
        raise ModuleNotFoundError(f"no module named {name!r} on sys.path or in the working directory {os.getcwd()}",
                                  name=name)
    return _load_file(found.origin, name)


def _private_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    digest = hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"_bufferlint_shim_{''.join(c if c.isalnum() else '_' for c in stem)}_{digest}"


def _load_file(path: str, module_name: str) -> ModuleType:
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory; a shim is a .py file or a module name")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module (a .py file is expected)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses, pickling and typing look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def shim_names(value: str) -> List[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def say(message: str) -> None:
    """One line on stderr; nowhere when the process has no stderr (never on stdout)."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(f"bufferlint: {message}\n")
        stream.flush()
    except Exception:  # a closed or broken stderr: the hook has nowhere to speak
        pass


def _error(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run() -> None:
    """The start-up hook's entry point (see the module docstring). Runs once per process: site
    can process the same .pth twice (a virtualenv's ``lib64`` symlink to ``lib``). Never
    raises anything, ``SystemExit`` and ``KeyboardInterrupt`` included."""
    global _ran
    if _ran:
        return
    _ran = True
    try:
        _run()
    except BaseException as exc:  # noqa: BLE001 - nothing may end interpreter start-up
        say(f"start-up hook failed: {_error(exc)}")


def _run() -> None:
    importlib.import_module("bufferlint.runtime")  # honours BUFFERLINT_SANITIZE

    names = shim_names(os.environ.get(ENV_SHIM, ""))
    if not names or (os.environ.get(ENV_LOADING) and os.environ.get(ENV_REENTRY) != "1"):
        return  # started by a shim while it loads: loading it again would recurse
    previous: Optional[str] = os.environ.get(ENV_LOADING)
    os.environ[ENV_LOADING] = str(os.getpid())
    try:
        for name in names:
            try:
                load_shim(name)
            except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: the shim's, not ours
                say(f"{ENV_SHIM}: cannot load shim {name!r}: {_error(exc)}")
                continue
            loaded.append(name)
    finally:
        if previous is None:
            os.environ.pop(ENV_LOADING, None)
        else:
            os.environ[ENV_LOADING] = previous
