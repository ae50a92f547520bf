"""``python -m bufferlint.runtime status``: which shim targets are installed, pending or failed.

Run it where the deployment runs (same environment variables, same ``sys.path``): the start-up
hook loads the shims named in ``BUFFERLINT_SHIM`` first, ``--shim`` loads more, and
``--import`` imports every pending target's module, which checks that each target resolves in
this environment (it imports the model modules, so it can be slow). Exit status 1 when a
target failed or, with ``--import``, when a module could not be imported; 0 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Dict, List, Optional, Sequence

from . import sanitizer_enabled, status
from .patch import FAILED, PENDING
from .startup import ENV_SHIM, load_shim, loaded


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bufferlint.runtime")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    show = commands.add_parser("status", help="list the shim targets and whether each is installed")
    show.add_argument("--shim", action="append", default=[], metavar="MODULE_OR_FILE",
                      help="also load this shim (a module name or a .py file)")
    show.add_argument("--import", dest="do_import", action="store_true",
                      help="import each pending target's module, to check that it resolves here")
    args = parser.parse_args(argv)
    for name in args.shim:
        try:
            load_shim(name)
        except Exception as exc:
            print(f"bufferlint: cannot load shim {name!r}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
        loaded.append(name)
    import_errors = _import_pending() if args.do_import else {}
    print(render(import_errors))
    states = [s.state for s in status()]
    return 1 if FAILED in states or import_errors else 0


def _import_pending() -> Dict[str, str]:
    """Import the module of every pending target; the import hook installs them. Returns the
    modules that could not be imported, with the error."""
    errors: Dict[str, str] = {}
    for module in sorted({s.target.split(":")[0] for s in status() if s.state == PENDING}):
        try:
            importlib.import_module(module)
        except Exception as exc:
            errors[module] = f"{type(exc).__name__}: {exc}"
    return errors


def render(import_errors: Optional[Dict[str, str]] = None) -> str:
    import_errors = import_errors or {}
    rows = status()
    counts = {state: sum(r.state == state for r in rows) for state in ("installed", "pending", "failed")}
    lines: List[str] = [
        f"shims: {', '.join(loaded) or f'none ({ENV_SHIM} is not set)'}; "
        f"sanitizer: {'on' if sanitizer_enabled() else 'off'}",
        f"{len(rows)} target(s): {counts['installed']} installed, {counts['pending']} pending, {counts['failed']} failed",
    ]
    for row in rows:
        reason = row.reason
        if row.state == PENDING:
            module = row.target.split(":")[0]
            reason = f"cannot import: {import_errors[module]}" if module in import_errors else "module not imported yet"
        lines.append(f"  {row.state:<9} {row.target} (policy {row.policy}){': ' + reason if reason else ''}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
