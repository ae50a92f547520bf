"""Check that every fix bufferlint offers works on its own, on a real tree.

On a scratch copy of the tree: ``bufferlint check --format sarif`` lists the findings and
their fixes; then each fix, alone, is applied to the SARIF ``replacements`` of its file, the
tree is checked again (warm: the cache replays the edited function), and the fix passes
when its finding is gone (one fewer finding of its rule in its function and file); the file
is restored before the next fix. Prints one line per fix and a total; exits 1 when any fix
offered does not remove its finding. Not a test for large trees (one analysis per fix):
run by hand, figures in the closing notes; tests/test_example.py runs it on the example.

With ``--counts`` it also checks that the fixes counted are the fixes applied: the number
``check --statistics`` counts as fixable (with and without ``--unsafe-fixes``) against the
number of fixes ``check --fix`` applies with the same flags.

    python benchmarks/fix_check.py TREE [--counts] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from bufferlint import api
from bufferlint.reporters import statistics


@dataclass(frozen=True)
class OfferedFix:
    rule: str
    path: str  # relative to the tree, as SARIF's %SRCROOT% URIs are
    function: str
    line: int
    applicability: str
    replacements: tuple[tuple[int, int, int, int, str], ...]  # 1-based lines and columns, end exclusive


def bufferlint(tree: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "bufferlint", "check", "--exit-zero", *args, "."], cwd=tree,
                          capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"bufferlint failed in {tree}:\n{proc.stderr[-2000:]}")
    return proc.stdout


def offered_fixes(sarif: dict) -> list[OfferedFix]:
    out = []
    for result in sarif["runs"][0]["results"]:
        location = result["locations"][0]
        function = location["logicalLocations"][0]["fullyQualifiedName"]
        for fix in result.get("fixes", []):
            [change] = fix["artifactChanges"]
            replacements = tuple(
                (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"], r["deletedRegion"]["endLine"],
                 r["deletedRegion"]["endColumn"], r.get("insertedContent", {}).get("text", ""))
                for r in change["replacements"]
            )
            out.append(OfferedFix(result["ruleId"], unquote(change["artifactLocation"]["uri"]), function,
                                  location["physicalLocation"]["region"]["startLine"],
                                  fix["properties"]["applicability"], replacements))
    return out


def apply(text: str, replacements) -> str:
    """The text with SARIF replacements (code point columns) applied, last first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    for line, column, end_line, end_column, new in sorted(replacements, reverse=True):
        text = text[: offset(line, column)] + new + text[offset(end_line, end_column):]
    return text


def findings(tree: Path) -> Counter:
    """(rule, path, function) -> how many findings, as ``bufferlint check`` reports them
    (in this process, through the API: no fixes planned, the tree's cache used)."""
    report = api.check(api.CheckOptions(paths=(tree,)))
    if report.error is not None:
        raise SystemExit(f"bufferlint cannot check {tree}: {report.error}")
    return Counter((f.rule, f.path.relative_to(tree).as_posix(), f.function) for f in report.findings)


def fix_counts(tree: Path, unsafe: bool) -> tuple[int, int]:
    """(findings with a fix ``--statistics`` counts as fixable, fixes ``--fix`` applies),
    with or without ``--unsafe-fixes`` (through the API the command uses; nothing written)."""
    options = api.CheckOptions(paths=(tree,), fixes=True)
    fixable = len(statistics.fixable(api.check(options), unsafe))
    fixed = api.fix(dataclasses.replace(options, fixes=False), unsafe=unsafe, write=False)
    return fixable, fixed.outcome.applied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path, help="the project to check (copied first; never changed)")
    parser.add_argument("--counts", action="store_true", help="also compare --statistics' fixable with --diff")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="fix-check-"))
    tree = scratch / args.tree.resolve().name
    try:
        shutil.copytree(args.tree, tree, symlinks=True, ignore=shutil.ignore_patterns(".bufferlint_cache"))
        start = time.perf_counter()
        fixes = offered_fixes(json.loads(bufferlint(tree, "--format", "sarif")))
        print(f"{len(fixes)} fixes offered ({time.perf_counter() - start:.1f} s)")
        before = findings(tree)
        failures = 0
        for fix in fixes:
            path = tree / fix.path
            original = path.read_bytes()
            path.write_text(apply(original.decode("utf-8"), fix.replacements), encoding="utf-8")
            try:
                after = findings(tree)
            finally:
                path.write_bytes(original)
            key = (fix.rule, fix.path, fix.function)
            removed = after[key] < before[key]
            failures += not removed
            print(f"{'ok  ' if removed else 'FAIL'} {fix.path}:{fix.line} {fix.rule} ({fix.applicability})")
        print(f"{len(fixes) - failures} of {len(fixes)} fixes remove their finding alone "
              f"({time.perf_counter() - start:.1f} s)")
        if args.counts:
            for unsafe in (False, True):
                fixable, applied = fix_counts(tree, unsafe)
                failures += fixable != applied
                print(f"{'ok  ' if fixable == applied else 'FAIL'} {'--unsafe-fixes' if unsafe else 'safe fixes'}: "
                      f"--statistics counts {fixable} fixable, --fix applies {applied} fixes")
        return 1 if failures else 0
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
