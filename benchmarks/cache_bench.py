"""Benchmark the persistent cache on a real tree (a copy of an unpacked sglang wheel).

Prints wall seconds of fresh `bufferlint check` processes (text output, as pre-commit and CI
run it): cold without the cache, cold writing it, warm with nothing changed, warm after an
edit to a file the analysis does not read (a docstring in a non-loader module) and after one
to a file it reads (a model's `load_weights` module), and the pre-commit shape (one changed
file on the command line) warm. Not a test: figures for the README and closing notes.
Every run uses PYTHONHASHSEED=0: on large trees the trace shown for a few findings still
depends on the hash seed (a known problem, see docs/architecture.md), and the outputs are
compared byte for byte.

    python benchmarks/cache_bench.py                      # sglang 0.5.16 (downloaded once)
    python benchmarks/cache_bench.py --version 0.5.23
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyzer_bench import unpack_wheel  # noqa: E402

READ = "sglang/srt/models/llama.py"  # its load_weights is reached by name from the loaders


def unread_file(tree: Path) -> str:
    """The largest module under sglang/srt/ the last analysis did not parse."""
    parsed = set(json.loads((tree / ".bufferlint_cache" / "run.json").read_text())["body"]["parsed"])
    candidates = [p for p in (tree / "sglang" / "srt").rglob("*.py") if p.relative_to(tree).as_posix() not in parsed]
    return max(candidates, key=lambda p: p.stat().st_size).relative_to(tree).as_posix()


def run(tree: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bufferlint", "check", "--exit-zero", "--no-color", *args],
                          cwd=tree, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bufferlint failed in {tree}:\n{proc.stderr[-2000:]}")
    return seconds, proc.stdout


def reused(tree: Path) -> str:
    record = json.loads((tree / ".bufferlint_cache" / "run.json").read_text())
    return "reused" if record["body"]["reused"] else "analysed"


def touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited by cache_bench\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.16")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(unpack_wheel(args.version), tree)
        rows = []
        seconds, cold = run(tree, "--no-cache", ".")
        rows.append(("cold, no cache", seconds, "-"))
        seconds, first = run(tree, ".")
        rows.append(("cold, writing the cache", seconds, reused(tree)))
        seconds, warm = run(tree, ".")
        rows.append(("warm, nothing changed", seconds, reused(tree)))
        assert cold == first == warm, "the cache changed the output"
        unread = unread_file(tree)
        touch(tree / unread)
        seconds, _ = run(tree, ".")
        rows.append((f"warm, {unread} edited", seconds, reused(tree)))
        touch(tree / unread)
        seconds, _ = run(tree, unread)
        rows.append((f"pre-commit: {unread} edited, alone", seconds, reused(tree)))
        touch(tree / READ)
        seconds, _ = run(tree, READ)
        rows.append((f"pre-commit: {READ} edited, alone", seconds, reused(tree)))
        seconds, _ = run(tree, READ)
        rows.append((f"pre-commit: {READ} again, unchanged", seconds, reused(tree)))
    print(f"sglang {args.version}")
    for name, seconds, how in rows:
        print(f"  {name:<58} {seconds:>6.1f} s  {how}")
    print(f"  warm no-change / cold: {rows[2][1] / rows[0][1]:.0%}")


if __name__ == "__main__":
    main()
