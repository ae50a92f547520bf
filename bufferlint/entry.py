"""The ``bufferlint`` command's entry point: pin the hash seed, run the CLI, and end the
process without freeing what its one run built (``bufferlint.lifetime``).

Which of two equally valid traces a finding shows can depend on the order the analysis
meets them, and that order follows ``set`` iteration, which follows string hashes: with
Python's random hash seed per process, the same tree gave three different JSON reports in
eight runs (one BL003 of sglang 0.5.16's ``fused_moe_triton/layer.py``, 11 or 12 steps, or
another route of 12). Users need one answer (SARIF uploads, review bots, the cache's cold and
warm runs), so the command re-executes itself with ``PYTHONHASHSEED=0`` when no seed was
chosen, before anything heavy is imported. A seed the user set is kept. Known problem: on
Python 3.11, ``hash(None)`` still follows the address of ``None``, so a trace can rarely
still differ between runs; 3.12 made it a constant.
"""

from __future__ import annotations

import os
import sys


def pin_hash_seed() -> None:
    """Re-execute this process with ``PYTHONHASHSEED=0`` unless a seed is already set (or
    the platform cannot replace a process in place)."""
    if os.environ.get("PYTHONHASHSEED") is not None or os.name != "posix" or not sys.executable:
        return
    argv = list(getattr(sys, "orig_argv", ()))
    if not argv:
        return
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *argv[1:]], environment)
    except OSError:
        return  # run on with the random seed: only the choice between equal traces may vary


def main() -> int:
    pin_hash_seed()
    from bufferlint import lifetime
    from bufferlint.cli import main as run

    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    if command != "server":  # the language server lives on: it frees what it is done with
        lifetime.exit_frees_memory()
    return lifetime.exit_now(run())
