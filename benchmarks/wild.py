"""Findings on real trees as the streamer's version changes them: our own precision benchmark.

Runs ``bufferlint check --no-cache --format json`` on each tree once per constraint on
``runai-model-streamer`` (nothing declared; sglang's own ``>=0.15.7``; ``>=0.17``, where the
streamer hands out owned tensors), stated through ``assume-versions`` in a configuration
given with ``--config`` (the trees are unpacked wheels: they declare nothing themselves),
and prints a table: findings by rule, how many groups (producers) they come from, and the
run's time. The figures and the judgement of each finding are in docs/benchmarks.md.

A tree that does not exist and is named like ``sglang-0.5.23`` is fetched first with
``pip download --no-deps sglang==0.5.23`` and unpacked there.

    python benchmarks/wild.py /work/wheels/sglang-0.5.16 /work/wheels/sglang-0.5.23 [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "runai-model-streamer"
CONSTRAINTS = ("", ">=0.15.7", ">=0.17")  # "": nothing declared (any version)
RULES = ("BL001", "BL002", "BL003", "BL004", "BL005")
_WHEEL_DIR = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>\d[\w.]*)$")


@dataclass(frozen=True)
class Run:
    tree: str
    constraint: str
    rules: Counter
    groups: int
    seconds: float

    @property
    def findings(self) -> int:
        return sum(self.rules.values())


def fetch(tree: Path) -> None:
    """Download and unpack the wheel a missing tree is named after (``name-version``)."""
    match = _WHEEL_DIR.match(tree.name)
    if match is None:
        raise SystemExit(f"{tree}: no such tree, and its name is not `package-version` to download it")
    with tempfile.TemporaryDirectory() as scratch:
        requirement = f"{match['name']}=={match['version']}"
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--dest", scratch, requirement], check=True)
        wheels = list(Path(scratch).glob("*.whl"))
        if len(wheels) != 1:
            raise SystemExit(f"pip download {requirement}: expected one wheel, got {[w.name for w in wheels]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(tree)


def check(tree: Path, constraint: str, scratch: Path, keep: Path | None = None) -> Run:
    """One cold run on ``tree`` with the streamer's versions stated as ``constraint``; with
    ``keep``, its JSON report is written there too (``TREE.CONSTRAINT.json``)."""
    name = re.sub(r"[^0-9a-z]+", "_", constraint) or "any"
    config = scratch / f"streamer-{name}.toml"
    versions = f'assume-versions = {{ "{PACKAGE}" = "{constraint}" }}\n' if constraint else ""
    config.write_text("[tool.bufferlint]\n" + versions, encoding="utf-8")
    command = [sys.executable, "-m", "bufferlint", "check", "--no-cache", "--exit-zero", "--format", "json",
               "--config", str(config), "."]
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=tree, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"bufferlint failed on {tree} ({constraint or 'nothing declared'}):\n{proc.stderr[-2000:]}")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{tree.name}.{name}.json").write_text(proc.stdout, encoding="utf-8")
    findings = json.loads(proc.stdout)["findings"]
    return Run(tree.name, constraint, Counter(f["rule"] for f in findings), len({f["group"] for f in findings}), seconds)


def table(runs: list[Run]) -> str:
    """The runs as a Markdown table, one row per tree and constraint."""
    head = ["tree", f"`{PACKAGE}`", "findings", *RULES, "groups", "time"]
    lines = ["| " + " | ".join(head) + " |", "| --- | --- | " + " | ".join(["---:"] * (len(head) - 2)) + " |"]
    for run in runs:
        cells = [run.tree, f"`{run.constraint}`" if run.constraint else "nothing declared", str(run.findings),
                 *(str(run.rules[rule]) for rule in RULES), str(run.groups), f"{run.seconds:.0f} s"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path, help="unpacked wheels (fetched when missing and named package-version)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="also write each run's JSON report to DIR")
    args = parser.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for tree in args.trees:
            tree = tree.resolve()
            if not tree.exists():
                fetch(tree)
            for constraint in CONSTRAINTS:
                run = check(tree, constraint, Path(scratch), args.keep)
                print(f"{run.tree} {constraint or '(nothing declared)'}: {run.findings} findings, {run.groups} groups, "
                      f"{run.seconds:.0f} s", file=sys.stderr)
                runs.append(run)
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
