"""Real public bug fixes, before and after: does bufferlint find each bug, and fall silent once fixed?

Why: the fixtures say what the engine does on code we wrote; the judge of a linter is the bugs
other people shipped and fixed. Each fix is a manifest entry in ``benchmarks/real_fixes/*.toml``
naming the distribution on PyPI, a release with the bug (``before``), the first release with
the fix (``after``), the file and function where the bug is, and the rule that should report it.
Nothing of the projects is stored here: each release is downloaded with ``pip download
--no-deps`` (a wheel, else the source archive) into a cache folder and unpacked there.

For every entry the script runs ``bufferlint check --no-cache --format json`` on the file's
package folder (``scope``) of both releases, out of the box and, when the entry has one,
with the declaration the docs show (``config``: the body of a ``[tool.bufferlint]`` table), and
prints whether the bug was found before its fix and whether the finding is gone after it. A
finding is the fix's when it is of the fix's rule and reported in the fix's function, or its
trace starts there (the producer's site: a kept view is reported where it is kept).

    python benchmarks/real_fixes.py [--only ID ...] [--cache DIR] [--keep DIR] [--manifests DIR]

Manifest entry (TOML)::

    [[fix]]
    id = "project-pr-1234"            # unique
    url = "https://github.com/owner/project/pull/1234"
    rule = "BL005"
    package = "project"               # the PyPI distribution
    before = "1.2.0"                  # a release with the bug
    after = "1.2.1"                   # the first release with the fix
    path = "project/utils/copy.py"    # the bug's file, relative to the unpacked release
    function = "move_to_host"         # the function holding the report site or its source (last name part)
    scope = "project"                 # optional: what to check (default: `path`'s top folder); what
                                      # the project's developers would check, callers included
    after_path = "..."                # optional: where the file is in `after`, if it moved
    config = '''declarations...'''    # optional: a documented declaration ([tool.bufferlint] body)
    note = "what the bug is"
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MANIFESTS = Path(__file__).parent / "real_fixes"
DEFAULT_CACHE = Path(os.environ.get("BUFFERLINT_REAL_FIXES_CACHE", Path.home() / ".cache" / "bufferlint-real-fixes"))
REQUIRED = ("id", "url", "rule", "package", "before", "after", "path", "function")


@dataclass(frozen=True)
class Fix:
    id: str
    url: str
    rule: str
    package: str
    before: str
    after: str
    path: str
    function: str
    scope: str
    after_path: str
    config: str
    note: str

    @classmethod
    def from_table(cls, table: dict, where: Path) -> "Fix":
        missing = [key for key in REQUIRED if not isinstance(table.get(key), str)]
        if missing:
            raise SystemExit(f"{where}: entry {table.get('id', '?')!r} lacks {', '.join(missing)}")
        return cls(
            table["id"], table["url"], table["rule"], table["package"], table["before"], table["after"], table["path"],
            table["function"], table.get("scope") or table["path"].split("/")[0], table.get("after_path") or table["path"],
            table.get("config", ""), table.get("note", ""),
        )


def load_manifests(folder: Path = MANIFESTS) -> list[Fix]:
    fixes: list[Fix] = []
    for manifest in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise SystemExit(f"{manifest}: not valid TOML: {exc}") from None
        fixes += [Fix.from_table(table, manifest) for table in data.get("fix", [])]
    seen: set[str] = set()
    for fix in fixes:
        if fix.id in seen:
            raise SystemExit(f"two manifest entries are called {fix.id!r}")
        seen.add(fix.id)
    return fixes


def release(package: str, version: str, cache: Path) -> Path:
    """The unpacked release (downloaded on first use): a wheel's files, or a source archive's
    top folder."""
    tree = cache / f"{package}-{version}"
    if (tree / ".complete").exists():
        return tree
    with tempfile.TemporaryDirectory() as scratch:
        requirement = f"{package}=={version}"
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", scratch, requirement]
        if subprocess.run(pip + ["--only-binary", ":all:"], capture_output=True).returncode != 0:
            proc = subprocess.run(pip + ["--no-binary", ":all:", "--no-build-isolation"], capture_output=True, text=True)
            if proc.returncode != 0 and not any(Path(scratch).iterdir()):
                raise SystemExit(f"pip download {requirement} failed:\n{proc.stderr[-1500:]}")
        archives = sorted(Path(scratch).iterdir())
        if not archives:
            raise SystemExit(f"pip download {requirement}: nothing downloaded")
        tree.mkdir(parents=True, exist_ok=True)
        unpack(archives[0], tree)
    (tree / ".complete").write_text("", encoding="utf-8")
    return tree


def unpack(archive: Path, tree: Path) -> None:
    """Python sources only (compiled extensions are of no use to a static analyser)."""
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(tree, [n for n in zipped.namelist() if not n.endswith((".so", ".pyd", ".dll"))])
        return
    with tarfile.open(archive) as tarred:
        members = [m for m in tarred.getmembers() if m.isfile() and m.name.endswith((".py", ".pyi", ".toml"))]
        for member in members:
            member.name = member.name.split("/", 1)[-1]  # the archive's top folder (name-version/)
        tarred.extractall(tree, members, filter="data")


def checker_env() -> dict[str, str]:
    """The environment the check runs in: this ``PYTHONPATH`` made absolute, since the check
    runs in the release's folder (``PYTHONPATH=.`` in a worktree would otherwise load the
    release's folder, and the installed bufferlint, not the worktree's)."""
    paths = [str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": os.pathsep.join(paths)}


def findings(tree: Path, scope: str, config: str, scratch: Path) -> list[dict]:
    command = [sys.executable, "-m", "bufferlint", "check", "--no-cache", "--exit-zero", "--format", "json"]
    if config:
        path = scratch / "declared.toml"
        path.write_text("[tool.bufferlint]\n" + config, encoding="utf-8")
        command += ["--config", str(path)]
    root = tree / scope
    if not root.exists():
        raise SystemExit(f"{root}: not in the release (check the entry's scope/path)")
    proc = subprocess.run(command + [scope], cwd=tree, capture_output=True, text=True, env=checker_env())
    if proc.returncode != 0:
        raise SystemExit(f"bufferlint failed on {root}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)["findings"]


def function_lines(tree: Path, path: str, function: str) -> list[range]:
    """The lines of every function called ``function`` in ``tree / path``."""
    module = ast.parse((tree / path).read_text(encoding="utf-8"))
    return [
        range(node.lineno, (node.end_lineno or node.lineno) + 1)
        for node in ast.walk(module)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function
    ]


def reported(found: list[dict], fix: Fix, path: str, lines: list[range]) -> list[dict]:
    """The findings of the fix's rule in its function, or whose source (the trace's first step)
    is in it: a BL003 is reported where a view is kept, which for a producer that only re-yields
    its library's views (a weights iterator) is a caller in another module, and the fix in the
    iterator is what silences it."""
    def in_function(f: dict) -> bool:
        return f["path"] == path and f["function"].replace(":", ".").split(".")[-1] == fix.function

    def sourced_in_function(f: dict) -> bool:
        source = (f.get("trace") or [{}])[0]
        return source.get("path") == path and any(source.get("line") in span for span in lines)

    return [f for f in found if f["rule"] == fix.rule and (in_function(f) or sourced_in_function(f))]


@dataclass(frozen=True)
class Verdict:
    fix: Fix
    declared: bool
    found_before: int
    left_after: int

    @property
    def cells(self) -> list[str]:
        return [self.fix.id, self.fix.rule, "declared" if self.declared else "out of the box",
                f"yes ({self.found_before})" if self.found_before else "no",
                "n/a" if not self.found_before else ("yes" if not self.left_after else f"no ({self.left_after} left)")]


def judge(fix: Fix, cache: Path, keep: Path | None) -> list[Verdict]:
    before, after = release(fix.package, fix.before, cache), release(fix.package, fix.after, cache)
    for tree, path in ((before, fix.path), (after, fix.after_path)):
        if not (tree / path).is_file():  # else a moved file would read as a fixed bug
            raise SystemExit(f"{fix.id}: {path} is not in {tree.name} (set `path` / `after_path`)")
    verdicts = []
    with tempfile.TemporaryDirectory() as scratch:
        for declared, config in ((False, ""), (True, fix.config)) if fix.config else ((False, ""),):
            old = findings(before, fix.scope, config, Path(scratch))
            new = findings(after, fix.scope, config, Path(scratch))
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                tag = "declared" if declared else "plain"
                (keep / f"{fix.id}.{tag}.before.json").write_text(json.dumps(old, indent=1), encoding="utf-8")
                (keep / f"{fix.id}.{tag}.after.json").write_text(json.dumps(new, indent=1), encoding="utf-8")
            verdicts.append(Verdict(
                fix, declared,
                len(reported(old, fix, fix.path, function_lines(before, fix.path, fix.function))),
                len(reported(new, fix, fix.after_path, function_lines(after, fix.after_path, fix.function))),
            ))
    return verdicts


def table(verdicts: list[Verdict]) -> str:
    head = ["fix", "rule", "how", "found before the fix", "silent after it"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * len(head)) + " |"]
    lines += ["| " + " | ".join(v.cells) + " |" for v in verdicts]
    return "\n".join(lines)


def summary(verdicts: list[Verdict]) -> str:
    """Per fix, its best way (out of the box, else declared): found, and silent after."""
    best: dict[str, Verdict] = {}
    for verdict in verdicts:
        known = best.get(verdict.fix.id)
        if known is None or (not known.found_before and verdict.found_before):
            best[verdict.fix.id] = verdict
    found = [v for v in best.values() if v.found_before]
    silent = [v for v in found if not v.left_after]
    plain = [v for v in found if not v.declared]
    return (f"found before the fix: {len(found)} of {len(best)} ({len(plain)} out of the box); "
            f"silent after the fix: {len(silent)} of {len(found)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="judge these entries only")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"where releases are unpacked ({DEFAULT_CACHE})")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="also write each run's findings to DIR")
    parser.add_argument("--manifests", type=Path, default=MANIFESTS, metavar="DIR", help=f"the manifests' folder ({MANIFESTS})")
    args = parser.parse_args(argv)
    fixes = load_manifests(args.manifests)
    if args.only:
        unknown = set(args.only) - {fix.id for fix in fixes}
        if unknown:
            raise SystemExit(f"no manifest entry called {', '.join(sorted(unknown))}")
        fixes = [fix for fix in fixes if fix.id in args.only]
    verdicts = []
    for fix in fixes:
        print(f"{fix.id}: {fix.package} {fix.before} -> {fix.after}", file=sys.stderr)
        verdicts += judge(fix, args.cache, args.keep)
    print(table(verdicts))
    print()
    print(summary(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
