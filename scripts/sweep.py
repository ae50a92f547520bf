"""Run ``bufferlint check`` over the interpreter's standard library and site-packages and
report internal errors: real code of every shape, as a robustness sweep (not a test).

    python scripts/sweep.py [DIR ...]      # default: the stdlib, then each site-packages

Each directory is checked as its own project in a fresh process (``--format json``).
Prints, per directory: Python files, seconds, findings, files that could not be analysed
(invalid or too large files are expected in a stdlib: test data) and internal errors, each
of which is listed. Exit 1 when there is any internal error or a run without a report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def default_dirs() -> list[Path]:
    paths = sysconfig.get_paths()
    dirs = [Path(paths["stdlib"])]
    for key in ("purelib", "platlib"):
        if Path(paths[key]) not in dirs:
            dirs.append(Path(paths[key]))
    return dirs


def reported_files(directory: Path) -> int:
    """How many files ``bufferlint check DIR`` reports on (its own discovery and excludes)."""
    sys.path.insert(0, str(REPO))
    from bufferlint.config import load_settings
    from bufferlint.discovery import expand_paths

    files, _ = expand_paths([directory], directory, load_settings(directory, None))
    return len(files)


def sweep(directory: Path) -> tuple[int, float, int, list[str], list[str]]:
    """(files, seconds, findings, unanalysable files, internal errors) of one directory."""
    files = reported_files(directory)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("BUFFERLINT_DEBUG", None)
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "bufferlint", "check", "--format", "json", "--exit-zero", "--no-cache",
         "--project-root", str(directory), str(directory)],
        capture_output=True, text=True, env=env, cwd=directory,
    )
    seconds = time.perf_counter() - start
    try:
        report = json.loads(run.stdout)
    except ValueError:
        return files, seconds, 0, [], [f"no report (exit {run.returncode}): {run.stderr.strip()[-500:]}"]
    errors = [f"{e['path']}: {e['message']}" for e in report["errors"]]
    internal = [e for e in errors if "internal error" in e] + [line for line in run.stderr.splitlines() if "internal error" in line]
    return files, seconds, len(report["findings"]), [e for e in errors if e not in internal], internal


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", type=Path, metavar="DIR",
                        help="directories to check, each as its own project (default: the stdlib, then each site-packages)")
    dirs = [d.resolve() for d in parser.parse_args().dirs] or default_dirs()  # each run has its directory as cwd
    for directory in dirs:
        if not directory.is_dir():
            parser.error(f"{directory}: not a directory")
    failed = False
    for directory in dirs:
        files, seconds, findings, unanalysable, internal = sweep(directory)
        print(f"{directory}: {files} files, {seconds:.1f} s, {findings} findings, "
              f"{len(unanalysable)} files not analysable, {len(internal)} internal errors", flush=True)
        for line in unanalysable:
            print(f"    not analysable: {line}")
        for line in internal:
            print(f"    INTERNAL ERROR: {line}")
        failed |= bool(internal)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
