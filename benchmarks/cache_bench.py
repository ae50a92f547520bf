"""Benchmark the persistent cache on a real tree (a copy of an unpacked sglang wheel).

Prints wall seconds of fresh `bufferlint check` processes (text output, as pre-commit and CI
run it): cold without the cache, cold writing it, warm with nothing changed, warm after an
edit to a file the analysis does not read (a docstring in a non-loader module), and the
pre-commit shape (one changed file on the command line) warm: that file, then a model file
the analysis reads (llama.py, whose `load_weights` is reached by name from the loaders) with
a comment added, with a line added to a function the analysis did not interpret
(`forward`: only the findings' lines move, checked against a cold run, which is timed too:
pre-commit without a cache), and with a line added to `load_weights` (interpreted by the
analysis: its recorded analyses are replayed; checked against a cold run too), then a call
added there (a question the recorded analyses never asked: analysed again). Not a test:
figures for the README and notes.
Every run uses PYTHONHASHSEED=0 (the command pins it itself unless one is set; set here
so that the runs do not depend on that): on large trees the trace shown for a few findings
follows set order (a known problem, see docs/architecture.md), and the outputs are
compared byte for byte.

    python benchmarks/cache_bench.py                      # sglang 0.5.16 (downloaded once)
    python benchmarks/cache_bench.py --version 0.5.23
"""

from __future__ import annotations

import argparse
import ast
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
    record = json.loads((tree / ".bufferlint_cache" / "run.json").read_text())["body"]
    if not record["reused"]:
        return "analysed"
    if record.get("replayed"):
        return "reused, edited functions replayed"
    return "reused, lines moved" if record.get("moved") else "reused"


def touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited by cache_bench\n")


def add_line(path: Path, function: str, statement: str = "edited_by_cache_bench = None") -> None:
    """Add a statement before the last one of the first method called ``function``."""
    text = path.read_text()
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == function)
    last = node.body[-1]
    lines = text.split("\n")
    indent = lines[last.lineno - 1][: last.col_offset]
    lines.insert(last.lineno - 1, f"{indent}{statement}")
    path.write_text("\n".join(lines))


def measure(source: Path) -> list[tuple[str, float, str]]:
    """The runs above on a scratch copy of the unpacked tree ``source``: (what, seconds, how
    the cache served it)."""
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(source, tree)
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
        rows.append((f"pre-commit: {READ}, comment added, alone", seconds, reused(tree)))
        add_line(tree / READ, "forward")
        seconds, warm = run(tree, READ)
        rows.append((f"pre-commit: {READ}, line added to forward(), alone", seconds, reused(tree)))
        seconds, cold = run(tree, "--no-cache", READ)
        rows.append((f"pre-commit: {READ} alone, cold (no cache)", seconds, "-"))
        assert warm == cold, "moving the findings' lines changed the output"
        seconds, _ = run(tree, READ)
        rows.append((f"pre-commit: {READ} again, unchanged", seconds, reused(tree)))
        add_line(tree / READ, "load_weights")
        seconds, warm = run(tree, READ)
        rows.append((f"pre-commit: {READ}, line added to load_weights(), alone", seconds, reused(tree)))
        _, cold = run(tree, "--no-cache", READ)
        assert warm == cold, "replaying load_weights() changed the output"
        add_line(tree / READ, "load_weights", "print(len(params_dict))")
        seconds, _ = run(tree, READ)
        rows.append((f"pre-commit: {READ}, a call added to load_weights(), alone", seconds, reused(tree)))
    return rows


def show(name: str, rows: list[tuple[str, float, str]]) -> None:
    print(name)
    for what, seconds, how in rows:
        print(f"  {what:<66} {seconds:>6.1f} s  {how}")
    print(f"  warm no-change / cold: {rows[2][1] / rows[0][1]:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.16")
    args = parser.parse_args()
    show(f"sglang {args.version}", measure(unpack_wheel(args.version)))


if __name__ == "__main__":
    main()
