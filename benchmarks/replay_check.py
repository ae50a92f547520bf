"""Check the cache's replay of edited functions against cold runs on a real tree.

On a scratch copy of an unpacked tree: one cold run writes the cache; then, for a sample of
the functions that analysis interpreted, one statement picked by a seeded random choice is
edited (``--edit add``: a statement added before it; ``call``: a call of ``print`` added
before it; ``pass``: it becomes ``pass``), the whole tree is checked warm (the replay
decides whether the recorded analysis holds) and cold (``--no-cache``), the two outputs are
compared, and the file is restored. Prints, per function, whether the edit was replayed and
whether warm and cold agree; any disagreement is a bug (the exit code says so). Not a test:
a cold run of a large tree takes many seconds, so this is run by hand and its figures go in
the closing notes.

    python benchmarks/replay_check.py TREE [--functions 20] [--seed 0] [--edit add|call|pass]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STATEMENT = "_added_by_replay_check = None"
CALL = 'print("added by replay_check")'  # a call of a name outside the project


def run(tree: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bufferlint", "check", "--exit-zero", "--no-color", *args, "."],
                          cwd=tree, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"bufferlint failed in {tree}:\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start, proc.stdout


def record(tree: Path) -> dict:
    return json.loads((tree / ".bufferlint_cache" / "run.json").read_text())["body"]


def edited(text: str, first: int, last: int, rng: random.Random, how: str) -> str | None:
    """``text`` with a statement of the function at lines first..last edited: STATEMENT
    added before it (``add``: nothing the analysis sees changes but the lines), CALL added
    before it (``call``), or the statement (one line long) made ``pass`` (``pass``: what the
    function does may change)."""
    tree = ast.parse(text)
    function = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.lineno == first and n.end_lineno == last), None)
    if function is None:
        return None
    statements = [s for s in ast.walk(function) if isinstance(s, ast.stmt) and s is not function
                  and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if not statements:
        return None
    target = rng.choice(statements)
    lines = text.split("\n")
    line = lines[target.lineno - 1]
    if line[:target.col_offset].strip():  # not the first statement on its line (``a; b``)
        return None
    if how in ("add", "call"):
        lines.insert(target.lineno - 1, line[:target.col_offset] + (STATEMENT if how == "add" else CALL))
    elif target.end_lineno == target.lineno and not isinstance(target, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
        lines[target.lineno - 1] = line[:target.col_offset] + "pass"
    else:
        return None
    out = "\n".join(lines)
    try:
        ast.parse(out)
    except SyntaxError:  # before an ``elif``, say
        return None
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--functions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--edit", choices=("add", "call", "pass"), default="add",
                        help="add a statement that changes nothing but lines, or a call of `print`, "
                             "or make one statement `pass`")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    scratch = Path(tempfile.mkdtemp(prefix="replay-check-")) / "tree"
    shutil.copytree(options.tree, scratch, ignore=shutil.ignore_patterns(".bufferlint_cache", "__pycache__"))
    try:
        seconds, _ = run(scratch)
        print(f"cold run writing the cache: {seconds:.1f} s")
        analysed = sorted((key, qualname, tuple(lines)) for key, functions in record(scratch)["analysed"].items()
                          for qualname, lines in functions.items() if not qualname.endswith(".<module>"))
        rng.shuffle(analysed)
        counts = {"replayed": 0, "analysed": 0, "differ": 0}
        done = 0
        for key, qualname, (first, last) in analysed:
            if done == options.functions:
                break
            path = scratch / key
            original = path.read_text()
            text = edited(original, first, last, rng, options.edit)
            if text is None:
                continue
            done += 1
            path.write_text(text)
            warm_seconds, warm = run(scratch)
            how = "replayed" if record(scratch).get("replayed") else "analysed"
            cold_seconds, cold = run(scratch, "--no-cache")
            same = warm == cold
            counts[how] += 1
            counts["differ"] += not same
            print(f"{how:8} {'same' if same else 'DIFFER'}  warm {warm_seconds:5.1f} s  cold {cold_seconds:5.1f} s  {qualname}")
            path.write_text(original)
            if how == "analysed":  # that run recorded the edited tree: record the original again
                shutil.rmtree(scratch / ".bufferlint_cache")
                run(scratch)
        print(f"{done} functions edited: {counts['replayed']} replayed, {counts['analysed']} analysed again, "
              f"{counts['differ']} warm runs differing from the cold run")
        return 1 if counts["differ"] else 0
    finally:
        shutil.rmtree(scratch.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
