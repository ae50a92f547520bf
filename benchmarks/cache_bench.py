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

``--matrix`` times instead the edits commits make (issue 31's edit matrix), each checked warm
as pre-commit runs it (the edited file alone; the whole tree for a deleted file and for a
checkout of another release, where pre-commit has no file to name) and the same command with
``--no-cache``, whose output must be identical: a comment; a neutral statement in
``load_weights``; a line there that keeps the weight (a new finding); that line removed (the
finding gone); a parameter added to ``default_weight_loader``, which most model files call; a
new model file with a loader that hands weights to a pool; a model file deleted; the tree
replaced by another release's (``--other``, default the next one).
Every run uses PYTHONHASHSEED=0 (the command pins it itself unless one is set; set here
so that the runs do not depend on that): on large trees the trace shown for a few findings
follows set order (a known problem, see docs/architecture.md), and the outputs are
compared byte for byte.

    python benchmarks/cache_bench.py                      # sglang 0.5.16 (downloaded once)
    python benchmarks/cache_bench.py --version 0.5.23
    python benchmarks/cache_bench.py --matrix --version 0.5.16 --other 0.5.17
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

NEXT = {"0.5.16": "0.5.17", "0.5.17": "0.5.23", "0.5.23": "0.5.17"}  # --matrix's default checkout
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


HELPER = "sglang/srt/model_loader/weight_utils.py"  # default_weight_loader, called by most model files
DELETED = "sglang/srt/models/llama_eagle.py"
NEW_FILE = "sglang/srt/models/cache_bench_new.py"
NEW_LOADER = """\
from concurrent.futures import ThreadPoolExecutor

from sglang.srt.model_loader.weight_utils import default_weight_loader, runai_safetensors_weights_iterator


def load_in_background(params, files):
    with ThreadPoolExecutor(4) as pool:
        for name, weight in runai_safetensors_weights_iterator(files):
            pool.submit(default_weight_loader, params[name], weight)
"""


def insert_in_first_loop(path: Path, function: str, statement: str) -> None:
    """Add ``statement`` as the first statement of the first ``for`` loop of ``function``."""
    text = path.read_text()
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == function)
    loop = next(n for n in ast.walk(node) if isinstance(n, ast.For))
    first = loop.body[0]
    lines = text.split("\n")
    indent = lines[first.lineno - 1][: first.col_offset]
    lines.insert(first.lineno - 1, f"{indent}{statement}")
    path.write_text("\n".join(lines))


def add_parameter(path: Path, function: str, parameter: str) -> None:
    """Add ``parameter`` (with its default) after the last positional parameter of ``function``."""
    text = path.read_text()
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == function)
    last = node.args.args[-1]
    lines = text.split("\n")
    line = lines[last.end_lineno - 1]
    lines[last.end_lineno - 1] = f"{line[: last.end_col_offset]}, {parameter}{line[last.end_col_offset:]}"
    path.write_text("\n".join(lines))


def replace_tree(tree: Path, other: Path) -> None:
    """The tree's files replaced by ``other``'s (the cache directory kept), as a checkout does."""
    shutil.rmtree(tree / "sglang")
    shutil.copytree(other / "sglang", tree / "sglang")


def matrix(source: Path, other: Path) -> list[tuple[str, float, float, str]]:
    """The edit matrix on a scratch copy of ``source``, the cache warm before each edit:
    (edit, warm seconds, ``--no-cache`` seconds, how the cache served it)."""
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        shutil.copytree(source, tree)
        run(tree, ".")  # writes the cache
        rows = []

        def check(what: str, *paths: str) -> None:
            warm_seconds, warm = run(tree, *paths)
            how = reused(tree)
            cold_seconds, cold = run(tree, "--no-cache", *paths)
            if warm != cold:
                raise SystemExit(f"{what}: the warm run's output differs from --no-cache")
            rows.append((what, warm_seconds, cold_seconds, how))

        model = tree / READ
        model.write_text(model.read_text() + "\n# a comment\n")
        check("a comment", READ)
        add_line(model, "load_weights")
        check("a neutral statement in load_weights()", READ)
        before = model.read_text()
        insert_in_first_loop(model, "load_weights", "self._kept = loaded_weight")
        check("a kept weight in load_weights() (a new finding)", READ)
        model.write_text(before)
        check("that line removed (the finding gone)", READ)
        add_parameter(tree / HELPER, "default_weight_loader", "cache_bench: bool = False")
        check("a parameter added to default_weight_loader()", HELPER)
        (tree / NEW_FILE).write_text(NEW_LOADER)
        check("a new model file with a loader", NEW_FILE)
        (tree / DELETED).unlink()
        check(f"{DELETED} deleted (whole tree)", ".")
        replace_tree(tree, other)
        check(f"a checkout of {other.name} (whole tree)", ".")
    return rows


def show_matrix(name: str, rows: list[tuple[str, float, float, str]]) -> None:
    print(name)
    print(f"  {'edit':<58} {'warm':>7} {'no cache':>9} {'warm/no cache':>14}  served")
    for what, warm, cold, how in rows:
        print(f"  {what:<58} {warm:>6.1f}s {cold:>8.1f}s {warm / cold:>14.2f}  {how}")


def show(name: str, rows: list[tuple[str, float, str]]) -> None:
    print(name)
    for what, seconds, how in rows:
        print(f"  {what:<66} {seconds:>6.1f} s  {how}")
    print(f"  warm no-change / cold: {rows[2][1] / rows[0][1]:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.16")
    parser.add_argument("--matrix", action="store_true", help="time the edit matrix instead")
    parser.add_argument("--other", help="the release checked out in the matrix's last row (default: the next one)")
    args = parser.parse_args()
    if args.matrix:
        other = args.other or NEXT.get(args.version)
        if other is None:
            raise SystemExit(f"no release known after {args.version}: give --other")
        show_matrix(f"sglang {args.version} (then {other})", matrix(unpack_wheel(args.version), unpack_wheel(other)))
    else:
        show(f"sglang {args.version}", measure(unpack_wheel(args.version)))


if __name__ == "__main__":
    main()
