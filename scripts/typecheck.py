"""The type-check ratchet: mypy on the whole package, error counts per module against a baseline.

mypy runs with the settings of ``[tool.mypy]`` in pyproject.toml over every module of
``bufferlint``. Its errors are counted per module and compared with the committed baseline
(``.ci/typecheck-baseline.json``: each module's errors, line numbers left out so that edits
elsewhere in a file do not churn it). The check fails when

* a module has more errors than its baseline (the module is named, with the errors that are
  not in its baseline: the new ones, as far as the messages tell);
* a module that is not in the baseline (a new file) has errors, unless ``--update`` accepts
  code moved there from another module without raising the total;
* the total rises.

``--update`` rewrites the baseline after the same comparison, so counts only go down: it
refuses to record a module with more errors than before, and records a new module's errors
only when the total does not rise (code moved between modules). Modules at 0 stay at 0.

Usage (in a venv with the ``dev`` extra): ``python scripts/typecheck.py [--update]``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASELINE = REPO / ".ci" / "typecheck-baseline.json"
PACKAGE = "bufferlint"
# "bufferlint/x/y.py:12: error: Message  [code]" (notes and the summary line are not errors)
_ERROR = re.compile(r"^(?P<path>[^:\n]+\.py):(?P<line>\d+): error: (?P<message>.*)$")


def modules() -> list[str]:
    """Every module of the package, dotted ("bufferlint.analysis.flow.cfg")."""
    return sorted(_module_of(path.relative_to(REPO).as_posix()) for path in (REPO / PACKAGE).rglob("*.py"))


def _module_of(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def run_mypy() -> str:
    """mypy's report on the package (its settings come from pyproject.toml)."""
    command = [sys.executable, "-m", "mypy", "--no-incremental", "--no-error-summary", "--no-pretty",
               "--show-error-codes", "-p", PACKAGE]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode not in (0, 1) or done.stderr.strip():
        sys.exit(f"typecheck: mypy failed to run (exit {done.returncode}):\n{done.stderr or done.stdout}")
    return done.stdout


def errors_by_module(report: str, names: list[str]) -> dict[str, list[str]]:
    """Each module's error messages (sorted, without line numbers); every module is listed."""
    found: dict[str, list[str]] = {name: [] for name in names}
    for line in report.splitlines():
        match = _ERROR.match(line)
        if match:
            found.setdefault(_module_of(match["path"]), []).append(match["message"].strip())
    return {name: sorted(messages) for name, messages in sorted(found.items())}


def compare(baseline: dict[str, list[str]], current: dict[str, list[str]]) -> list[str]:
    """Why ``current`` is worse than ``baseline`` (empty: it is not)."""
    problems = []
    for module, messages in current.items():
        before = baseline.get(module)
        if before is None:
            if messages:
                problems.append(f"{module}: a new module with {len(messages)} error(s) (if the code moved here from "
                                f"another module, `--update` records it while the total does not rise):"
                                + "".join(f"\n    {m}" for m in messages))
        elif len(messages) > len(before):
            new = Counter(messages) - Counter(before)
            problems.append(f"{module}: {len(messages)} error(s), the baseline allows {len(before)}; new:"
                            + "".join(f"\n    {m}" for m in sorted(new.elements())))
    old_total, new_total = total(baseline), total(current)
    if new_total > old_total:
        problems.append(f"the total rose from {old_total} to {new_total}")
    return problems


def total(counts: dict[str, list[str]]) -> int:
    return sum(len(messages) for messages in counts.values())


def read_baseline() -> dict[str, list[str]]:
    return json.loads(BASELINE.read_text(encoding="utf-8"))["modules"]


def write_baseline(current: dict[str, list[str]]) -> None:
    body = {
        "about": "mypy errors per module of bufferlint (scripts/typecheck.py): counts may only go down",
        "total": total(current),
        "modules": current,
    }
    BASELINE.write_text(json.dumps(body, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def ratchet(baseline: dict[str, list[str]], current: dict[str, list[str]], update: bool) -> tuple[int, str, bool]:
    """(exit status, what to say, whether to write ``current`` as the new baseline)."""
    problems = compare(baseline, current)
    if update:
        rises = [p for p in problems if "a new module" not in p]
        if rises:
            return 1, "typecheck: not updating, the errors rose:\n" + "\n".join(rises), False
        return 0, f"typecheck: baseline updated: {total(baseline)} -> {total(current)} error(s)", True
    if problems:
        return 1, ("typecheck: mypy errors rose above the baseline (.ci/typecheck-baseline.json):\n"
                   + "\n".join(problems)), False
    lower = [m for m, messages in current.items() if m in baseline and len(messages) < len(baseline[m])]
    hint = f"; lower in {len(lower)} module(s): record that with --update" if lower else ""
    return 0, f"typecheck: {total(current)} mypy error(s), baseline {total(baseline)}{hint}", False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="record lower counts (never higher) in the baseline")
    args = parser.parse_args(argv)
    current = errors_by_module(run_mypy(), modules())
    if not BASELINE.exists():
        if not args.update:
            print(f"typecheck: no baseline at {BASELINE.relative_to(REPO)}; create it with --update", file=sys.stderr)
            return 2
        write_baseline(current)
        print(f"typecheck: baseline created: {total(current)} error(s)")
        return 0
    status, message, write = ratchet(read_baseline(), current, args.update)
    if write:
        write_baseline(current)
    print(message, file=sys.stderr if status else sys.stdout)
    return status


if __name__ == "__main__":
    sys.exit(main())
